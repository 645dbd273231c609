"""dataloader: the short form of the DataLoader advisor (`verify bench --dataloader` is the long one).

A small sweep of num_workers (0 .. the CPU quota), prefetch_factor and persistent_workers over generated JPEGs
decoded and augmented per sample; the recommended setting, its samples/s, and whether /dev/shm holds the
batches it keeps in flight.
"""
from __future__ import annotations

from typing import Any

from ...facts import DataloaderFacts
from ...options import Options, human_bytes
from ...result import FAIL, PASS, WARN, CheckResult
from ...shared import dataloader as dl

NAME = "dataloader"


def sizes_for(emulated: bool) -> dl.Sizes:
    """The quick sweep natively; a small one under CPU emulation, where the figures are reported, not judged."""
    return dl.EMULATED if emulated else dl.QUICK


def probe(options: Options) -> dict[str, Any]:
    from ...environment import emulation

    emulated = bool(emulation()["emulated"])
    facts = dl.probe(sizes_for(emulated))
    facts["emulated"] = emulated
    facts["recommendation"] = dl.recommend(facts)   # pure, but kept with the facts for the report
    return facts


def judge(facts: DataloaderFacts, options: Options) -> CheckResult:
    advice = dl.recommend(facts)
    rows = facts["measurements"]
    result = CheckResult(NAME, PASS, "", details=dl.format_report(facts, advice).splitlines(),
                         data={"measurements": rows, "recommendation": advice, "backend": facts["backend"]})
    backend = "" if facts["backend"] == "torchvision" else f"; per-sample work is the {facts['backend']} fallback"
    rec = advice.get("setting")
    if rec is None:
        result.status, result.code, result.owner = FAIL, "LOADER_FAILED", "image"
        first = next((r for r in rows if not r["ok"]), None)
        result.summary = f"no DataLoader setting worked: {first['error'] if first else 'nothing measured'}"
        result.remedy = "Run `verify bench --dataloader` and read the errors; `verify --checks shm` checks /dev/shm."
        return result
    result.metric("samples_per_s", advice["samples_per_s"], "samples/s")
    if advice.get("baseline_samples_per_s"):
        result.metric("samples_per_s_0_workers", advice["baseline_samples_per_s"], "samples/s")
    result.metric("shm_needed", advice["shm_needed_bytes"], "bytes")
    speed = f" ({advice['speedup_vs_0_workers']}x of 0 workers)" if rec["num_workers"] else ""
    summary = (f"{dl.describe(rec)}: {advice['samples_per_s']:,.0f} samples/s{speed}, needs "
               f"{human_bytes(advice['shm_needed_bytes'])} /dev/shm of {human_bytes(advice['shm_free_bytes'] or 0)} "
               f"free{backend}")
    if dl.shm_warning(advice, facts):
        result.status, result.code, result.owner = WARN, "SHM_TOO_SMALL_FOR_LOADER", "job"
        result.summary = advice["warnings"][0] + (f"; fits: {dl.describe(advice['fitting'])}" if advice.get("fitting") else "")
        result.remedy = dl.SHM_REMEDY
        return result
    if facts.get("emulated"):
        summary += "; a small sweep under CPU emulation: figures reported, not judged"
        result.details.append("a small sweep (EMULATED sizes): under CPU emulation (qemu-user) the full sweep can run "
                              "past the check's timeout, and its figures measure the emulator, not the hardware")
    result.summary = summary
    return result

