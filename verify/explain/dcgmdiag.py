"""`dcgmi diag -r N`: DCGM's diagnostic report (dcgmi/Diag.cpp), a boxed table of `| name | result |` rows under the
sections Metadata (DCGM and driver versions, `GPU Device IDs Detected`), Deployment, Integration, Hardware and Stress.
A test's row holds its result (DCGM 2.x/3.x: `Pass - All`, `Pass - GPU: 1` and `Fail - GPUs: 0, 2` on the rows below;
4.x: lowercase test names, `GPU0: Pass` per GPU), then its details: `Warning`, `Error` and `Info` (4.x: `Warning:
GPU0`), each message cut into rows of exactly 45 characters, mid-word ("Rese" / "t GPU"): a detail is joined back by
that width, never with spaces. A message is DCGM's own (dcgmlib/dcgm_errors.h) and names its GPU (`GPU 0 Error using
CUDA API cuCtxCreate ...`, 2.x `GPU 0GPU 0's NvLink link 3 is currently down`, joined with `, `) unless the row does.

Read into the gpu facts by DCGM's messages and nothing else: what the health watch also says (links down, ECC,
pending retirement, remapped rows) as explain/dcgmhealth.py reads it; a CUDA context or call DCGM could not get on a
GPU as that GPU's failed kernel (its test ran none); a CUDA test the GPU passed as a kernel that ran without an error
(no result compared); the PCIe test's pinned copy rates (`GPU 1 Host to GPU bandwidth: 13.15 GB/s`) as its figures.
DCGM's Pass/Fail word is not a verdict: the judges decide. A Fail or a Warning nothing above reads (faulty memory,
PCIe replays, persistence mode, a test skipped for a cause) is said by `unread`; a `Skip` row is no fault."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..figures import HOST_GBPS
from .dcgmhealth import READ, device

CUT = 45                   # DATA_INFO_TAG_LEN: the characters of a message each row holds
MAX_GPUS = 32              # DCGM_MAX_NUM_DEVICES: a higher GPU number is garbled text, not DCGM's
_HEADER = re.compile(r"^\|\s*Diagnostic\s*\|\s*Result\s*\|")
_SECTION = re.compile(r"^[|+]-{3,}\s+(Metadata|Deployment|Integration|Hardware|Stress)\s+-+[+|]")
_DETAIL = re.compile(r"^(Warning|Error|Info)(?::\s*GPU\s?(\d+))?$")
_WORD = r"(Pass|Fail|Warn|Skip|Not Run)"
_RESULT = re.compile(rf"^{_WORD}(?: - (?:(All)|GPUs?: ([\d, ]+)))?$")                      # 2.x/3.x, a test's row
_CUT_RESULT = re.compile(r"^(Fail|Warn)\b")       # a GPU list the cell cut with `...`, or a garbled row: still said
_ENTITY = re.compile(rf"^([A-Za-z]+)\s?(\d+): {_WORD}$")                                  # 4.x, one per entity
_DRIVER = re.compile(r"^\d{3}\.\d{2,3}(?:\.\d{2,3})?$")
_DEVICE_ID = re.compile(r"^[0-9a-fA-F]{4}$")
_GPU_NAMED = re.compile(r"\bGPU\s?(\d+)")       # the GPU a message names first (2.x/3.x lead with it)
# a CUDA context DCGM could not create on a GPU (3.x's memory plugin: `Unable to create CUDA context`;
# DCGM_FR_CUDA_CONTEXT), then a CUDA call that failed on it (DCGM_FR_CUDA_API `Error using CUDA API %s`,
# DCGM_FR_API_FAIL(_GPU) `API call %s failed[ for GPU %u]: '%s'`, of `cu`/`cuda` calls only: NVML's are no kernel's)
_CONTEXT = re.compile(r"Unable to create CUDA context|failed to create a CUDA context")
_CUDA_CALL = re.compile(r"Error using CUDA API cu\w*|API call cu\w* failed")
_BANDWIDTH = re.compile(r"(?:GPU\s?(\d+)\s+)?(GPU to Host|Host to GPU) bandwidth:\s*(\d{1,6}(?:\.\d+)?)\s*GB/s")
_PART = re.compile(r",\s+(?=GPU\s?\d)")          # 2.x joins a GPU's messages with ", ", each naming its GPU
_BOILERPLATE = re.compile(r"(?<!\s)\s*Check DCGM and system logs for errors\. Reset GPU\. Restart DCGM\. Rerun diagnostics\.")
# the plugins that run CUDA work, by 3.x's and 4.x's names: a row whose section header is above the excerpt
_CUDA_TESTS = {"pcie", "gpu memory", "memory", "memory bandwidth", "memory_bandwidth", "diagnostic", "targeted stress",
               "targeted_stress", "targeted power", "targeted_power", "memtest", "pulse test", "pulse_test", "sm stress",
               "sm_stress", "context create", "context_create", "nvbandwidth", "eud"}
# 3.x's deployment check of pending page retirements and row remaps (DCGM_FR_PENDING_PAGE_RETIREMENTS,
# DCGM_FR_PENDING_ROW_REMAP, DCGM_FR_ROW_REMAP_FAILURE): its Pass, for every GPU, is a health field read
_REMAP_CHECK = {"page retirement/row remap", "page retirement"}
_FAULT = ("Warning", "Error", "?")    # `?`: rows an excerpt starts in the middle of, their label cut off


@dataclass
class Detail:
    kind: str                           # Warning, Error, Info, or ? (its label above the excerpt)
    gpu: int | None
    test: str | None
    chunks: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.chunks).strip()

    def parts(self) -> list[str]:
        return [p.strip() for p in _PART.split(self.text) if p.strip()]

    def gpu_of(self, part: str) -> int | None:
        """The row's GPU (4.x), else the one the message names (a catalog message names its GPU)."""
        m = _GPU_NAMED.search(part)
        return self.gpu if self.gpu is not None else _gpu(m.group(1)) if m else None


@dataclass
class Result:
    test: str
    section: str | None
    gpus: tuple[int, ...] | None        # None: `- All`; (): not per GPU (a Deployment check, 4.x's overall word, a CPU)
    word: str                           # Pass, Fail, Warn, Skip, Not Run
    said: str                           # the row as DCGM wrote it


@dataclass
class Report:
    driver: str | None = None
    count: int | None = None            # GPU Device IDs Detected, when the list is whole
    results: list[Result] = field(default_factory=list)
    details: list[Detail] = field(default_factory=list)
    named: set[int] = field(default_factory=set)

    def gpus(self) -> list[int]:
        """The GPUs the diag ran on: those it names; without -g/-i, DCGM's ids 0..n-1 of the IDs it lists."""
        if self.count is not None and all(g < self.count for g in self.named):
            return list(range(self.count))
        return sorted(self.named)


def _gpu(number: str) -> int | None:
    n = int(number)
    return n if n < MAX_GPUS else None


def detect(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines()]
    return any(_HEADER.match(line) or _SECTION.match(line) for line in lines) and any(
        len(line.split("|")) >= 3 and line.startswith("|") for line in lines)


def _cell(line: str) -> tuple[str, str] | None:
    """A row's name and its result cell as printed (the cell's own blanks kept: they are the message's)."""
    if not line.startswith("|"):
        return None
    parts = line.split("|")
    if len(parts) < 3:
        return None
    cell = "|".join(parts[2:-1] if line.endswith("|") and len(parts) > 3 else parts[2:])
    return parts[1].strip(), cell


def _chunk(cell: str) -> str:
    """One row's share of a message: the cell less its margin, padded back to the fixed width a paste may trim."""
    body = (cell[1:] if cell.startswith(" ") else cell).rstrip()
    return body.ljust(CUT) if len(body) <= CUT else body


def read(text: str) -> Report:
    report = Report()
    section: str | None = None
    test: str | None = None
    detail: Detail | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if m := _SECTION.match(line):
            section, test, detail = m.group(1), None, None
            continue
        row = _cell(line)
        if row is None:
            if not line.startswith("+"):            # text between tables (`[...]`, a prompt): what follows is
                section, test, detail = None, None, None    # another excerpt, not this test's rows
            continue
        name, cell = row
        value = cell.strip()
        if _HEADER.match(line):
            continue
        if name in ("DCGM Version", "Driver Version Detected", "GPU Device IDs Detected") or section == "Metadata":
            _metadata(report, name, value)
            detail = None
            continue
        if m := _DETAIL.match(name):
            gpu = _gpu(m.group(2)) if m.group(2) else None
            detail = Detail(m.group(1), gpu, test, [_chunk(cell)])
            report.details.append(detail)
        elif name:
            test, detail = name, None
            _result(report, test, section, value)
        elif _RESULT.match(value) or _ENTITY.match(value) or (test is not None and _CUT_RESULT.match(value)):
            detail = None
            if test is not None:
                _result(report, test, section, value)
        elif detail is not None:
            detail.chunks.append(_chunk(cell))
        elif value:                                 # the excerpt starts inside a message: its label is cut off
            detail = Detail("?", None, test, [_chunk(cell)])
            report.details.append(detail)
    for d in report.details:
        report.named.update(g for g in (d.gpu_of(p) for p in d.parts()) if g is not None)
    return report


def _metadata(report: Report, name: str, value: str) -> None:
    if name == "Driver Version Detected" and _DRIVER.match(value):
        report.driver = value
    elif name.endswith("Device IDs Detected") and name.startswith("GPU"):
        ids = [v.strip() for v in value.split(",")]
        if ids and all(_DEVICE_ID.match(v) for v in ids):     # a list cut with `...` (too long for the cell) is no count
            report.count = len(ids)


def _result(report: Report, test: str, section: str | None, value: str) -> None:
    if m := _RESULT.match(value):
        gpus = None if m.group(2) else () if not m.group(3) else tuple(
            g for g in (_gpu(n) for n in re.findall(r"\d+", m.group(3))) if g is not None)
        report.results.append(Result(test, section, gpus, m.group(1), value))
        report.named.update(gpus or ())
    elif (m := _ENTITY.match(value)) and m.group(1) == "GPU" and (g := _gpu(m.group(2))) is not None:
        report.results.append(Result(test, section, (g,), m.group(3), value))
        report.named.add(g)
    elif m:                                         # another entity (a CPU): not a GPU, its fault still said
        report.results.append(Result(test, section, (), m.group(3), value))
    elif m := _CUT_RESULT.match(value):
        report.results.append(Result(test, section, (), m.group(1), value))


def _refusals(report: Report) -> dict[int, str]:
    """Per GPU, DCGM's first word that CUDA refused it: a context it could not create, else a CUDA call that failed."""
    found: dict[int, tuple[int, str]] = {}
    for d in report.details:
        for part in d.parts():
            for rank, pattern in enumerate((_CONTEXT, _CUDA_CALL)):
                if not pattern.search(part):
                    continue
                if (gpu := d.gpu_of(part)) is not None and (gpu not in found or rank < found[gpu][0]):
                    said = _BOILERPLATE.sub("", " ".join(part.split()))
                    found[gpu] = (rank, said[:500])
                break
    return {gpu: said for gpu, (_, said) in found.items()}


# the CUDA tests whose failure on a GPU is that GPU failing NVIDIA's own diagnostic (its compute, its memory, its
# stress): PCIe's figures and messages are read as bandwidth, and context refusals above
_GPU_WORK = _CUDA_TESTS - {"pcie", "context create", "context_create", "nvbandwidth"}


# a test that could not do its work on the GPU (memory another process holds, a limit, a timeout of its own): no
# verdict on the GPU, said as not assessed
_SETUP = re.compile(r"out of memory|(?:could ?n[o']t|unable to|failed to) allocate|insufficient|other process|"
                    r"processes? (?:are|is) running|permission|not supported|timed? ?out|skipp", re.IGNORECASE)


def _failed_work(report: Report, refused: dict[int, str]) -> dict[int, str]:
    """Per GPU, the first CUDA test that failed on it by name (`Fail - GPU: 0`, 4.x's `GPU0: Fail`), with its message
    for that GPU where one is shown: the GPU failed DCGM's own diagnostic. `Fail - All` names no GPU (one GPU's
    refusal fails the plugin for all), and a message a field reads (an ECC count) is judged by that field."""
    failed: dict[int, str] = {}
    for r in report.results:
        if r.word != "Fail" or r.test.lower() not in _GPU_WORK or not r.gpus:
            continue
        for gpu in (g for g in r.gpus if g not in failed and g not in refused):
            parts = [part for d in report.details if d.test == r.test and d.kind in _FAULT for part in d.parts()
                     if d.gpu_of(part) == gpu]
            if any(_is_read(part, gpu) or _SETUP.search(part) for part in parts):
                continue
            said = " ".join(parts[0].split())[:400] if parts else ""
            failed[gpu] = f"dcgmi diag {r.test}: Fail on GPU {gpu}{': ' + said if said else ''}"
    return failed


def _ran(report: Report, gpus: list[int]) -> set[int]:
    """The GPUs that passed a test of CUDA work (Integration, Hardware, Stress; the Deployment checks run none)."""
    passed: set[int] = set()
    for r in report.results:
        if r.word == "Pass" and (r.section in ("Integration", "Hardware", "Stress") or r.test.lower() in _CUDA_TESTS):
            passed.update(gpus if r.gpus is None else r.gpus)
    return passed


def _figures(report: Report) -> list[dict[str, Any]]:
    rates: dict[int, dict[str, float]] = {}
    for d in report.details:
        for part in d.parts():
            for m in _BANDWIDTH.finditer(part):
                gpu = _gpu(m.group(1)) if m.group(1) else d.gpu_of(part)
                if gpu is None:
                    continue
                key, rate = "d2h_GBps" if m.group(2) == "GPU to Host" else "h2d_GBps", float(m.group(3))
                if HOST_GBPS.problem(rate) is None:    # 0.00 measured nothing: DCGM's own Warning says why
                    rates.setdefault(gpu, {})[key] = max(rate, rates.get(gpu, {}).get(key, 0.0))
    return [{"index": gpu, **figures} for gpu, figures in sorted(rates.items())]


def parse(text: str) -> dict[str, Any]:
    report = read(text)
    gpus = report.gpus()
    said: dict[int, list[str]] = {}
    for d in report.details:
        if d.kind in _FAULT:
            for part in d.parts():
                if (gpu := d.gpu_of(part)) is not None:
                    said.setdefault(gpu, []).append(part)
    refused, ran = _refusals(report), _ran(report, gpus)
    failed = _failed_work(report, refused)
    kernels = [{"index": g, "max_abs_error": None, "error": refused.get(g) or failed.get(g)} for g in gpus
               if g in refused or g in ran or g in failed]
    devices = [device(g, " ".join(said.get(g, []))) for g in gpus]
    # one run whose every GPU the metadata lists: two runs' rows pasted together leave unknown whose Pass it is
    one_run = sum(1 for line in text.splitlines() if _HEADER.match(line.strip())) == 1 and report.count == len(gpus)
    if one_run and any(r.word == "Pass" and r.test.lower() in _REMAP_CHECK and not r.gpus for r in report.results):
        for dev in devices:             # DCGM's deployment check fails a pending retirement or remap, or a failed remap
            dev.setdefault("retired_pages_pending", False)
            dev.setdefault("row_remap", {"correctable": None, "uncorrectable": None, "pending": 0, "failed": 0})
    facts: dict[str, Any] = {"torch": None, "driver": report.driver, "devices": devices or None}
    if kernels:
        facts["kernels"] = kernels
    if perf := [p for p in _figures(report) if p["index"] in gpus]:
        facts["perf"] = perf
    return facts


def _is_read(part: str, gpu: int | None) -> bool:
    """Whether a field holds what the message says: a pattern reads it, about a GPU it names."""
    return gpu is not None and any(p.search(part) for p in (*READ, _CONTEXT, _CUDA_CALL))


def unread(text: str) -> list[str]:
    """What a Fail, a Warning or an Error says that no field holds: each message no pattern reads, and each GPU a
    test failed (or warned of) with no message of that test about it."""
    report = read(text)
    out: list[str] = []
    told: dict[str | None, set[int | None]] = {}
    for d in report.details:
        if d.kind not in _FAULT:
            continue
        for part in d.parts():
            told.setdefault(d.test, set()).add(g := d.gpu_of(part))
            if not _is_read(part, g):
                where = f"GPU {g}: " if g is not None and not part.startswith("GPU") else ""
                out.append(f"{d.test or 'a test above the excerpt'}: {where}{' '.join(part.split())[:300]}")
    gpus = report.gpus()
    for r in report.results:
        if r.word not in ("Fail", "Warn"):
            continue
        about = told.get(r.test, set())
        if r.gpus == () or (r.gpus is None and not gpus):   # not per GPU, or `- All` of GPUs the excerpt does not name
            if not about and not any(o.test == r.test and o.gpus and o.word in ("Fail", "Warn") for o in report.results):
                out.append(f"{r.test}: {r.said}, no cause shown")
        elif silent := [g for g in (gpus if r.gpus is None else r.gpus) if g not in about and None not in about]:
            out.append(f"{r.test}: {r.said}, no cause shown for GPU {', '.join(map(str, silent))}")
    return list(dict.fromkeys(out))
