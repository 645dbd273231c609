"""Round 65 of issue 36's hunt: the lows left on purpose, and what a new hunt found.

Slurm's prolog semantics: Slurm prints a job's GPUs as its bitmap's ranges ("0-3,5" in SLURM_JOB_GPUS and
SLURM_STEP_GPUS); read as a CONFIG_ERROR, a whole partition of healthy 8-GPU nodes ran its jobs ungated. NVSentinel's
isolation rule: a pair whose own check judged its all-reduce slow (BANDWIDTH_LOW) is evidence against its nodes,
never a pass that clears them. Impossible facts: a T4 "training" at 1,500 TFLOP/s was held to the fastest GPU's peak.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.isolate import decide
from scripts.fleet.isolate_run import exit_status, outcome
from scripts.fleet.slurm import Job, _docker_step
from tests.verify_handmade import assert_refused, gpu_facts, handmade_train_facts, judged_both_ways, variant
from verify.prolog import config
from verify.prolog.config import UsageError

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------- Slurm's GPU lists, as Slurm prints them

@pytest.mark.parametrize(("ids", "count"), [("0-3,5", 5), ("0-7", 8), ("0,1,2,3", 4), ("2-2", 1), ("0-3,2", 4)])
def test_slurm_prolog_semantics_a_gpu_list_in_range_form_is_counted(ids: str, count: int) -> None:
    assert config.expected_gpus({"SLURM_JOB_GPUS": ids}) == count


@pytest.mark.parametrize("ids", ["3-1", "0-", "-1", "0-x", "0,,1", "0-2000", "0-3-5", "\u00b2-3"])
def test_a_gpu_list_no_slurm_prints_is_still_one_line(ids: str) -> None:
    with pytest.raises(UsageError, match="SLURM_JOB_GPUS"):
        config.expected_gpus({"SLURM_JOB_GPUS": ids})


@pytest.fixture
def gpu_spec(test_specs: Any) -> Any:
    return next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")


@pytest.mark.host
@pytest.mark.parametrize(("ids", "device"), [("0-3,5", "0,1,2,3,5"), ("1,3", "1,3"),
                                             ("GPU-1a2b-3c4d", "GPU-1a2b-3c4d")])
def test_slurm_step_semantics_the_docker_launcher_spells_out_slurms_gpu_ranges(tmp_path: Path, gpu_spec: Any,
                                                                                ids: str, device: str) -> None:
    """docker's --gpus device= takes a list: "0-3,5" passed through gave the container no GPU at all."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(f'#!/bin/sh\nfor a in "$@"; do echo "$a"; done >> {tmp_path}/calls\n')
    (bin_dir / "docker").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TORCHIMAGES_IMAGE": "torchimages:t",
           "SLURM_JOB_ID": "1", "SLURMD_NODENAME": "n1", "TORCHIMAGES_REPORTS": str(tmp_path),
           "TORCHIMAGES_NODE_SCRIPT": "true", "TORCHIMAGES_T0": "1", "SLURM_STEP_GPUS": ids}
    proc = subprocess.run(["bash", "-c", _docker_step(Job(gpu_spec, "torchimages:t", 1, 8, "docker"))], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f'"device={device}"' in (tmp_path / "calls").read_text().splitlines()


# ----------------------------------------------------------- make isolate: a pair judged slow is evidence

def _pair_report(status: str, code: str | None, busbw: float = 40.0) -> dict[str, Any]:
    check: dict[str, Any] = {"name": "nccl", "status": status, "code": code, "owner": "host" if code else None,
             "summary": "peak busbw low" if code else "ok", "details": [], "remedy": None, "duration_s": 1.0,
             "metrics": {"busbw_max": {"value": busbw, "unit": "GB/s"}, "wrong": {"value": 0, "unit": ""}},
             "data": {"nodes": 2, "world_size": 16}}
    return {"schema_version": 2, "status": "warn" if status == "warn" else status, "created": "2026-12-01T00:00:00Z",
            "checks": [check]}


@pytest.mark.parametrize("code", ["BANDWIDTH_LOW", "FABRIC_BANDWIDTH_LOW"])
def test_nvsentinel_isolation_a_pair_its_check_judged_slow_clears_neither_node(code: str) -> None:
    pair = ("n1", "n2")
    slow = outcome(pair, _pair_report("warn", code), 0, 1.0, 8)
    assert not slow.ok and code in slow.why
    fine = ("n3", "n4")
    decision = decide(["n1", "n2", "n3", "n4"], [(1, slow), (1, outcome(fine, _pair_report("pass", None), 0, 1.0, 8))])
    assert exit_status(decision) != 0 and "no node at fault" not in decision.summary
    assert {"n1", "n2"} <= set(decision.undetermined) | {f.node for f in decision.named}


def test_a_pair_whose_warning_is_no_bandwidth_one_still_passes() -> None:
    assert outcome(("n1", "n2"), _pair_report("warn", "NVLS_NOT_USED"), 0, 1.0, 8).ok


# ---------------------------------------------------------- impossible facts: an older GPU's own ceiling

@pytest.mark.parametrize(("name", "tflops"), [("Tesla T4", 200.0), ("Tesla V100-SXM2-32GB", 400.0),
                                              ("Tesla P100-PCIE-16GB", 100.0)])
def test_a_train_rate_past_an_older_gpus_tensor_peak_is_refused(name: str, tflops: float) -> None:
    """Held to the fastest GPU's peak (2,500 TFLOP/s), a T4 could claim 40x what it can do."""
    facts = handmade_train_facts(gpu=True)
    facts["device_name"] = name
    high = _train_rate(facts, tflops)
    assert_refused("train", high, "physically impossible", name)


def test_a_real_t4_rate_is_still_judged_not_refused() -> None:
    facts = handmade_train_facts(gpu=True)
    facts["device_name"] = "Tesla T4"
    _, replayed = judged_both_ways("train", _train_rate(facts, 20.0))
    assert replayed.code != "FACTS_INVALID", replayed.summary


def test_a_t4_matmul_past_its_tensor_peak_is_refused() -> None:
    facts = gpu_facts()
    for d in facts["devices"]:
        d["name"] = "Tesla T4"
    for p in facts["perf"]:
        p["bf16_TFLOPs"] = 300.0
    assert_refused("gpu", facts, "bf16 matmul", "physically impossible")


def _train_rate(facts: dict[str, Any], tflops: float) -> dict[str, Any]:
    """The same record timed so that each rank's model rate is `tflops`."""
    from verify.checks.train import verdict
    found = verdict.rates(cast(Any, facts))
    assert found is not None
    scale = found["tflops_per_rank"] / tflops
    return variant(facts, ranks=[{**r, "timed_s": r["timed_s"] * scale, "wall_s": r["wall_s"] + r["timed_s"] * scale}
                                 for r in facts["ranks"]])


# ------------------------------------------- hostile files: held kernel-log evidence no job could have written

@pytest.mark.host
@pytest.mark.parametrize("how", ["owner", "folder-writable", "file-writable"])
def test_nvidia_xid_catalog_held_evidence_a_job_could_have_written_drains_nothing(tmp_path: Path, monkeypatch: Any,
                                                                                  capsys: Any, how: str) -> None:
    """NVIDIA's catalog drains on an Xid 79 the kernel log holds; a kept state in a shared folder a job can write
    (another user's file, a folder or file group/other-writable) held a believable forged Xid 79, and the next prolog
    drained a healthy node on no line of its log. Not believed, said; the same state the prolog kept itself drains."""
    import json

    from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
    from verify.prolog import cli, kernlog
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    fake = install_fake(monkeypatch)
    clock = kernlog.Clock("boot-a", 6000.0, booted=1_000_000.0, now=1_006_000.0)
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: clock)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    line = "[ 100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    state_dir = str(tmp_path / "state")
    assert kernlog.save(state_dir, "n1", kernlog.State("boot-a", 100.0, held=[{"line": line, "mono": 100.0}])) is None
    target = Path(kernlog.state_path(state_dir, "n1"))
    {"owner": lambda: os.chown(target, 65534, 65534), "folder-writable": lambda: target.parent.chmod(0o777),
     "file-writable": lambda: target.chmod(0o666)}[how]()
    drained = lambda: [a for a in fake.calls if a[:1] == ["update"] and "state=drain" in a]  # noqa: E731
    assert cli.main(["--state-dir", state_dir], PROLOG_ENV) == 0 and not drained()
    assert "a job could have written it" in capsys.readouterr().err
    assert kernlog.save(state_dir, "n1", kernlog.State("boot-a", 100.0, held=[{"line": line, "mono": 100.0}])) is None
    target.parent.chmod(0o755)
    target.chmod(0o644)
    assert cli.main(["--state-dir", state_dir], PROLOG_ENV) == 1 and drained()


@pytest.mark.host
@pytest.mark.parametrize("how", ["owner", "folder-writable", "file-writable"])
def test_nvsentinel_return_to_service_a_history_a_job_could_have_written_is_no_evidence(tmp_path: Path,
                                                                                          how: str) -> None:
    """The drain history decides hang streaks (a drain of its own) and what `--revalidate` must prove: one in a shared
    folder a job can write could forge either. Not believed, said (its events unknown, never none); the same file
    kept by the prolog itself is read."""
    from verify.prolog import history
    if os.geteuid() != 0:
        pytest.skip("another user's file needs root to make")
    state_dir = str(tmp_path / "state")
    history.record(state_dir, "n1", "drain", "GPU_HUNG", "forged", now=1_000_000.0)
    assert history.read(state_dir, "n1").events
    target = Path(history.path(state_dir, "n1"))
    {"owner": lambda: os.chown(target, 65534, 65534), "folder-writable": lambda: target.parent.chmod(0o777),
     "file-writable": lambda: target.chmod(0o666)}[how]()
    past = history.read(state_dir, "n1")
    assert past.events == [] and past.error and "a job could have written it" in past.error
