"""gpu_burn (github.com/wilicc/gpu-burn) as it prints a run: its `nvidia-smi -L` (`GPU 0: NVIDIA RTX A500 Embedded
GPU (UUID: GPU-...)`), `Initialized device 0 with 3897 MB ...` (CUDA started on it), its progress lines
(`100.0%  proc'd: 30 (3519 Gflop/s)   errors: 0   temps: 53 C`, one ` - `-joined figure per client; a dead one:
`proc'd: -1 (0 Gflop/s)   errors: 32765  (DIED!)`), its end (`GPU 0: OK` / `FAULTY`), and a client's CUDA error
(`Couldn't init a GPU test: Error in load module (gpu_burn-drv.cpp:243): the provided PTX was compiled with an
unsupported toolchain.`).
Into the gpu facts: the listed devices and `nvml_error` "none", `cuda_init_error` "none" once a device initialised,
each client error as a CudaError of the device initialised last before it (judged by the one catalog), and, from the
last progress line where it has one figure per listed GPU, each GPU's `temperature_c` and, for a client that ran
and counted no error, a `kernels` entry with no figure (a translated tool's test that ran clean: FACTS.md's Kernel).
A client that counted errors, or an end that says FAULTY, is said, never judged healthy: no field holds a mismatch
count (batch 165: a clean A500 burn; a 3090 Ti's PTX built by a newer CUDA than its driver's)."""
from __future__ import annotations

import re
from typing import Any

from . import smilist

_RUN = re.compile(r"^(?:Burning for \d+ seconds\.|Initialized device \d+ with |\d+(?:\.\d+)?%\s+proc'd: )",
                  re.MULTILINE)
_INIT = re.compile(r"^Initialized device (\d+) with ")
_ERROR = re.compile(r"^Couldn't init a GPU test: (.*\S)\s*$")
_PROGRESS = re.compile(r"proc'd: (.+?)\s+errors: (.+?)\s+temps: (.*\S)\s*$")
_CLIENT = re.compile(r"^(-?\d+) \([\d.]+ Gflop/s\)$")
_END = re.compile(r"^[^\S\n]*GPU (\d+): (OK|FAULTY)\s*$", re.MULTILINE)


def detect(text: str) -> bool:
    return bool(_RUN.search(text)) and ("gpu_burn" in text or "Burning for" in text or "proc'd:" in text)


def _last_progress(text: str) -> tuple[list[str], list[str], list[str]] | None:
    last = None
    for line in text.splitlines():
        if m := _PROGRESS.search(line):
            last = m
    if last is None:
        return None
    return tuple(part.split(" - ") for part in (last.group(1), last.group(2), last.group(3)))  # type: ignore[return-value]


def _said(text: str, devices: list[dict[str, Any]]) -> list[str]:
    said = [f"gpu_burn's end says GPU {m.group(1)} FAULTY" for m in _END.finditer(text) if m.group(2) == "FAULTY"]
    progress = _last_progress(text)
    if progress:
        for n, err in enumerate(progress[1]):
            count = err.split()[0] if err.split() else ""
            if "DIED" not in err and count.isdigit() and int(count) > 0:
                said.append(f"gpu_burn counted {count} faulty results on its client {n}")
    return said


def unread(text: str) -> list[str]:
    return _said(text, [])


def parse(text: str) -> dict[str, Any]:
    facts: dict[str, Any] = {"torch": None, "nvml_error": None, "devices": None, "cuda_init_error": None,
                             **smilist.parse(text)}
    devices: list[dict[str, Any]] = facts["devices"] or []
    initialised: int | None = None
    errors: list[dict[str, Any]] = []
    for line in text.splitlines():
        if m := _INIT.match(line.strip()):
            initialised = int(m.group(1))
            facts["cuda_init_error"] = "none"
        elif m := _ERROR.match(line.strip()):
            errors.append({"index": initialised, "text": line.strip()})
    if errors:
        facts["cuda_errors"] = errors
    progress = _last_progress(text)
    if progress and devices and len(progress[0]) == len(devices) == len(progress[1]) == len(progress[2]):
        kernels = []
        for dev, done, err, temp in zip(devices, *progress, strict=True):
            t = re.match(r"^(-?\d+(?:\.\d+)?) C$", temp.strip())
            client = _CLIENT.match(done.strip())
            if t and client and int(client.group(1)) >= 0:
                dev["temperature_c"] = float(t.group(1))
            if client and int(client.group(1)) > 0 and "DIED" not in err and err.strip() == "0":
                kernels.append({"index": dev["index"]})
        if kernels and len(kernels) == len(devices):
            facts["kernels"] = kernels
    return facts
