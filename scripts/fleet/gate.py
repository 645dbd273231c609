"""The node gate: REQUIRE over trusted attestations, and the image's driver floor against the host's driver.

Pure logic here (parse_require, unmet, driver_fits, fitting_tag, gate_line); the reads (the registry, the host's
driver) are in `run_gate` and `host_driver`.

REQUIRE is words `key<op>value`, all of which one trusted attestation must meet:
    verdict=pass            verdict=pass,warn       (the verdict recomputed from the checks)
    gpu=H100                (every GPU the report saw has a model name containing H100, case-insensitive)
    gpus>=8                 driver>=570   driver>=580.65.06   torch=2.15.0   cuda>=13.0   node=gpu-node-7
    signer=release.pub      (the TRUST file, or a keyid prefix, that signed)
    age<=7d                 (made at most 7 days ago: s, m, h, d, w; as MAX_AGE=7d)
node= and signer= choose whose attestations count; the newest of those decides (an older pass never hides a newer
failure).
"""
from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..durations import parse_duration, shown
from ..errors import UserError
from ..plan.spec import LABEL_PREFIX, ImageSpec
from ..versions import version_key
from .plausible import node_key

DRIVER_LABEL = f"{LABEL_PREFIX}.cuda.driver-min"
CUDA_LABEL = f"{LABEL_PREFIX}.cuda"          # "none" on a CPU image, which alone has no driver floor
KEYS = {"verdict": ("=",), "gpu": ("=",), "gpus": ("=", ">=", ">", "<=", "<"), "driver": ("=", ">=", ">", "<=", "<"),
        "torch": ("=", ">=", ">", "<=", "<"), "cuda": ("=", ">=", ">", "<=", "<"), "node": ("=",), "signer": ("=",),
        "age": ("<=", "<")}
SELECTORS = ("node", "signer")      # they pick whose evidence counts; of that, the newest attestation decides
WORD = re.compile(r"^([a-z]+)(>=|<=|=|>|<)(.+)$")
VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value}"


def parse_require(text: str) -> list[Requirement]:
    """REQUIRE's words; a UserError naming the first word that is not one (see the module's docstring)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UserError(f"REQUIRE={text!r} cannot be split into words ({exc})") from None
    found = []
    for word in words:
        match = WORD.match(word)
        if not match or match.group(1) not in KEYS:
            raise UserError(f"REQUIRE: {word!r} is not key<op>value with a key of {', '.join(KEYS)} "
                            f"(e.g. REQUIRE=\"verdict=pass gpu=H100 driver>=570\")")
        key, op, value = match.groups()
        if op not in KEYS[key]:
            raise UserError(f"REQUIRE: {word!r}: {key} takes {' or '.join(KEYS[key])}")
        if key in ("driver", "torch", "cuda") and op != "=" and not VERSION.match(value):
            raise UserError(f"REQUIRE: {word!r}: {value!r} is not a version (digits and dots)")
        if key == "age":
            parse_duration(value, f"REQUIRE {word}")
        if key == "gpus" and not re.fullmatch(r"[0-9]{1,5}", value, re.ASCII):     # isdigit() passes '²' and '٨'
            raise UserError(f"REQUIRE: {word!r}: {value!r} is not a whole number (ASCII digits)")
        if key == "verdict" and not set(value.split(",")) <= {"pass", "warn", "fail", "skip"}:
            raise UserError(f"REQUIRE: {word!r}: a verdict is pass, warn, fail or skip (several: pass,warn)")
        found.append(Requirement(key, op, value))
    return found


def node_spelling(wanted: str, nodes: Iterable[str]) -> str | None:
    """The hint when REQUIRE's node= selects nothing but an attestation names the same first label (n7 against
    n7.cluster.example, or the reverse), or None. Never a match: a short name is not its FQDN (RFC 1035: n7 may be
    n7 of any domain), so another cluster's n7 never decides; the hint says how the attestations spell it."""
    label = node_key(wanted).split(".", 1)[0]
    near = sorted({n for n in nodes if node_key(n).split(".", 1)[0] == label and node_key(n) != node_key(wanted)})
    if not near:
        return None
    return (f"node= is one host name as the attestation spells it, up to case (a short name is not its fully "
            f"qualified one); the attestations name {', '.join(near[:3])}: give node={near[0]} if that is this host")


def compare(found: tuple[int, ...], op: str, wanted: tuple[int, ...]) -> bool:
    """Version comparison on the parts given: driver>=570 is met by 570.86.10 (570 == 570), =13.0 by 13.0.2."""
    width = len(wanted)
    head = found[:width] + (0,) * max(0, width - len(found))
    return {"=": head == wanted, ">=": head >= wanted, ">": head > wanted, "<=": head <= wanted,
            "<": head < wanted}[op]


def unmet(requirements: Iterable[Requirement], facts: dict[str, Any]) -> list[str]:
    """The requirements `facts` (an attestation: verdict, gpus, gpu_count, driver, node, torch, cuda, signer,
    keyid) do not meet, each with what was found."""
    missing = []
    for req in requirements:
        key, op, value = req.key, req.op, req.value
        if key == "verdict":
            ok, found = str(facts.get("verdict")) in value.split(","), str(facts.get("verdict"))
        elif key == "gpu":
            names = [str(n) for n in facts.get("gpus") or []]
            ok = bool(names) and all(value.lower() in n.lower() for n in names)
            found = ", ".join(sorted(set(names))) or "no GPU"
        elif key == "gpus":
            count = int(facts.get("gpu_count") or 0)
            ok = compare((count,), op, (int(value),)) if op != "=" else count == int(value)
            found = str(count)
        elif key == "signer":
            ok = value in (Path(str(facts.get("signer") or "")).name, str(facts.get("signer") or "")) or \
                str(facts.get("keyid") or "").startswith(value)
            found = f"{Path(str(facts.get('signer') or '?')).name} ({str(facts.get('keyid') or '?')[:16]})"
        elif key == "node":       # one host however it is spelt (DNS names are case-insensitive): N1 is n1
            ok, found = node_key(str(facts.get("node"))) == node_key(value), str(facts.get("node"))
        elif key == "age":        # facts' age_s: seconds since the attestation was made
            age = facts.get("age_s")
            limit = parse_duration(value, f"REQUIRE {req}")
            ok = isinstance(age, (int, float)) and (age < limit if op == "<" else age <= limit)
            found = shown(age) if isinstance(age, (int, float)) else "no time"
        else:       # driver, torch, cuda: versions
            have = facts.get(key)
            found = str(have) if have else "none"
            if not have:
                ok = False
            elif op == "=" and not VERSION.match(value):
                ok = str(have) == value
            else:
                ok = compare(version_key(str(have)), op, version_key(value))
        if not ok:
            missing.append(f"{req} (found {found})")
    return missing


def driver_fits(driver_min: str | None, host: str | None) -> bool:
    """Whether a host driver meets an image's floor; an image without a floor (CPU) fits any host."""
    if not driver_min:
        return True
    if not host or not version_key(host):
        return False
    return version_key(host) >= version_key(driver_min)


def fitting_tag(specs: list[ImageSpec], labels: dict[str, str], host: str | None) -> str | None:
    """The tag of the matrix that would run on this host's driver, closest to the refused image: same flavor,
    distro and access, then the same torch, then the newest CUDA; None when no image's floor is met."""
    flavor, distro = labels.get(f"{LABEL_PREFIX}.flavor"), labels.get(f"{LABEL_PREFIX}.distro")
    torch = labels.get(f"{LABEL_PREFIX}.torch")
    fits = [s for s in specs if s.cuda and driver_fits(s.driver_min, host)]
    if not fits:
        return None

    def score(s: ImageSpec) -> tuple[int, int, int, tuple[int, ...], tuple[int, ...]]:
        return (s.flavor == flavor, s.distro == distro, s.torch == torch, version_key(s.cuda or "0"),
                version_key(s.torch))
    return max(fits, key=score).tag


def floor_problem(labels: dict[str, str], host: str | None, specs: list[ImageSpec]) -> str | None:
    """Why this host's driver cannot run the image (its DRIVER_LABEL), with the tag that would; None when it can.
    A missing or unreadable floor on a CUDA image (or no CUDA label at all) is a refusal: an unknown floor is no fit."""
    floor, cuda = labels.get(DRIVER_LABEL), labels.get(CUDA_LABEL)
    if cuda is None:
        return (f"the image has no {CUDA_LABEL} label: not an image of this project, or its labels were stripped; "
                f"its driver floor is unknown, so it is not admitted")
    if cuda == "none" and not floor:
        return None                         # a CPU image: no driver needed
    if not floor or floor == "none" or not VERSION.match(floor):
        return (f"the image is built for CUDA {cuda} but its driver floor label {DRIVER_LABEL} is "
                f"{'missing' if not floor else repr(floor)}: the floor is unknown, so it is not admitted (rebuild it)")
    if driver_fits(floor, host):
        return None
    instead = fitting_tag(specs, labels, host)
    have = f"driver {host}" if host else "no NVIDIA driver"
    hint = (f"; {instead} fits this driver" if instead else
            "; no image of the matrix fits it: upgrade the driver")
    return f"the image needs NVIDIA driver >= {floor} ({DRIVER_LABEL}), this host has {have}{hint}"


def host_driver(run: Any = subprocess.run) -> str | None:
    """The host's NVIDIA driver version: nvidia-smi, else /proc/driver/nvidia/version; None without one.
    (Tested on GPU hardware only.)"""
    try:
        proc = run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                   text=True, timeout=30, check=False)
        first = proc.stdout.strip().splitlines()[0].strip() if proc.returncode == 0 and proc.stdout.strip() else ""
        if VERSION.match(first):
            return first
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"Kernel Module(?: for [^ ]+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)", text)
    return match.group(1) if match else None


def image_labels(reg: Any, repo: str, digest: str) -> dict[str, str]:
    """The labels of the image config a manifest digest names (read from the registry: no pull, no container)."""
    import json
    raw, _, _ = reg.get_manifest(repo, digest)
    try:
        manifest = json.loads(raw)
        config = json.loads(reg.get_blob(repo, str(manifest["config"]["digest"]), limit=4 << 20))
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{reg.host}/{repo}@{digest[:19]}...: not an image manifest with a config (an index? give "
                        f"the platform's digest)") from None
    labels = (config.get("config") or {}).get("Labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def gate_line(reference: str, problems: list[str], passed: str) -> str:
    """The gate's one line: what is missing (the first problem, the count of the others), or what passed."""
    if not problems:
        return f"gate: ok {reference}: {passed}"
    more = f" (and {len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else ""
    return f"gate: refused {reference}: {problems[0]}{more}"
