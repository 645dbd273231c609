"""hunt96, class 8 (files the cluster tooling reads are hostile): a negative figure is refused, never read as measured.

Defect (medium: a report no verify writes passed). Rates (GB/s, TFLOP/s, ...), counts and sizes were held to be at
least 0, not a time, a ratio or an error's size: a report whose nccl check passed with a `busbw_ratio` of -1 x, whose
gpu check's matmul error was -0.5, or a train check's first step -1 s, passed `make fleet-report DIR=...` (exit 0,
"PASSING") and the prolog (counts and bytes kept in the table below: they were refused already). Repro: such a report saved in a folder, `make fleet-report DIR=<it>`
(`python -m scripts fleet-report`), or written by the preflight under `python -m verify.prolog`. Fix:
scripts/fleet/plausible.py and verify/prolog/verdict.py (NON_NEGATIVE, one table): a size (bytes), a count, elements,
a time (s), a ratio of two rates (x) or an error's size (abs) below 0 makes the report invalid, on any status.

Practice: Slurm's prolog semantics (a report no verify writes is not assessed: exit 0 under Prolog=, 3 as a first step,
never a drain, never a pass); the fleet report lists every input it could not believe and does not pass.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.plausible import report_problem
from tests.helpers import ROOT
from tests.prolog_fakes import STEP_ENV, _args, _verify_writes, install_fake, refused_as_a_first_step
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli
from verify.prolog.verdict import decide

pytestmark = pytest.mark.host            # make fleet-report run as a program


def _written() -> dict[str, Any]:
    """A preflight report as verify writes one on an 8-GPU H100 node, judged by verify's own judges."""
    shm: dict[str, Any] = {"name": "shm", "status": "pass", "summary": "/dev/shm ok", "details": [], "metrics": {}, "remedy": None,
           "code": None, "owner": None, "duration_s": 0.0, "output": None, "data": {}}
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": "n1", "scheduler": {"kind": "slurm", "node": "n1"}}, "options": {},
            "checks": [gpu.judge(cast(Any, gpu_facts()), Options()).to_dict(), shm,
                       nccl.judge(cast(Any, nccl_facts()), Options()).to_dict()]}


def _nccl(report: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["name"] == "nccl")


def _shm_free(report: dict[str, Any]) -> None:
    shm = next(c for c in report["checks"] if c["name"] == "shm")
    shm["metrics"] = {"free": {"value": -2.0 * 2**30, "unit": "bytes"}}


def _wrong(report: dict[str, Any]) -> None:
    _nccl(report)["metrics"]["wrong"] = {"value": -5.0, "unit": "elements"}


def _ratio(report: dict[str, Any]) -> None:
    _nccl(report)["metrics"]["busbw_ratio"] = {"value": -1.0, "unit": "x"}


def _matmul_error(report: dict[str, Any]) -> None:
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    gpu["metrics"]["matmul_max_abs_error_dev0"] = {"value": -0.5, "unit": "abs"}


def _first_step(report: dict[str, Any]) -> None:
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    gpu["metrics"]["first_step_s"] = {"value": -1.0, "unit": "s"}


NEGATIVE: dict[str, Callable[[dict[str, Any]], None]] = {
    "shm free -2 GiB": _shm_free, "nccl wrong -5 elements": _wrong, "nccl busbw_ratio -1 x": _ratio,
    "gpu matmul error -0.5": _matmul_error, "gpu first step -1 s": _first_step}


def _fleet_report(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scripts", "fleet-report"], cwd=ROOT, capture_output=True, text=True,
                          env={"DIR": str(folder), "PATH": "/usr/bin:/bin"}, timeout=120)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


@pytest.mark.parametrize("change", list(NEGATIVE))
def test_slurm_prolog_semantics_a_negative_size_count_or_ratio_is_no_report_verify_writes(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        change: str) -> None:
    """Slurm's prolog semantics: a report no verify writes is not assessed (exit 3 as a first step, the node left in
    service); the fleet report lists it invalid, names the figure, and does not pass (exit 1)."""
    report = _written()
    NEGATIVE[change](report)
    assert decide(report).code == "REPORT_INVALID" and "negative" in str(report_problem(report))
    folder = refused_as_a_first_step(tmp_path, monkeypatch, capsys, fake, report)
    done = _fleet_report(folder)
    assert done.returncode == 1 and "negative" in done.stdout, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("fleet: NOT PASSING")


def test_slurm_prolog_semantics_a_failed_check_on_a_negative_figure_never_drains(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host failure written beside a figure verify never writes is no evidence of the host: not assessed, no
    drain (only evidence that the host is at fault drains it)."""
    report = _written()
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    gpu.update(status="fail", code="GPU_LOST", owner="host")
    gpu["metrics"]["matmul_max_abs_error_dev0"] = {"value": -0.5, "unit": "abs"}
    report["status"] = "fail"
    assert decide(report).code == "REPORT_INVALID"
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    assert fake.nodes["n1"] == ("idle", "none")


def test_the_rule_refuses_no_report_verify_writes(tmp_path: Path) -> None:
    """verify's own figures at 0 (no free /dev/shm measured short, no wrong element, an exact matmul) still pass."""
    report = _written()
    next(c for c in report["checks"] if c["name"] == "shm")["metrics"] = {"free": {"value": 0.0, "unit": "bytes"}}
    _nccl(report)["metrics"]["wrong"] = {"value": 0.0, "unit": "elements"}
    assert decide(report).kind == "pass" and report_problem(report) is None
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    done = _fleet_report(folder)
    assert done.returncode == 0, done.stdout + done.stderr
