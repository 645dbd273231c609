"""Issue 36, a seventy-third hunt through the public interfaces (`python -m verify.prolog`'s main, make fleet-report's
reader), on classes 5, 6 and 9 in new shapes.

Found:
- Class 6, facts that cannot be true (high: a node passed, and counted healthy by the fleet report, on a report no
  verify writes). Round 50's rule bounded rates (RATE_MOST) and the gpu check's device counts; any other count was
  believed whatever it said. A preflight whose nccl check passes with `world_size` -8 ranks or 8.5 ranks, or whose
  data says `world_size` "8" (a string) or `nodes` "2" (read as no number, a group's run passed as this node's), or
  an all-reduce over NCCL on one node claiming 16 ranks where its own gpu check counted 8 GPUs (NCCL runs one rank per
  GPU: "Duplicate GPU detected"; verify's own nccl judge refuses such facts as MEASUREMENT_INVALID), passed the
  prolog (exit 0) and the fleet report ("fleet: PASSING"). Practice: NCCL's one rank per device, verify's report
  schema (a count is a whole number, 0 or more). Fix: verify/prolog/ranks.py (count_problem, ranks_problem) on the
  prolog's side and scripts/fleet/ranks.py on the host side, one rule: REPORT_INVALID / invalid, never a pass and never
  a drain. A collective's pass across more nodes than it had ranks (verify's grouplayout: every node runs at least
  one) is refused by the same rule.

Each test names the practice it follows.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import STEP_ENV, _args, _verify_writes, install_fake
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- class 6: counts no verify writes, and an all-reduce with more ranks than its node's GPUs

def _written() -> dict[str, Any]:
    """A preflight report as verify writes one on an 8-GPU H100 node: its gpu and nccl checks judged by verify's own
    judges from recorded facts (tests/verify_handmade.py)."""
    g = gpu.judge(cast(Any, gpu_facts()), Options()).to_dict()
    n = nccl.judge(cast(Any, nccl_facts()), Options()).to_dict()
    assert (g["status"], n["status"], n["data"]["nodes"], n["data"]["world_size"]) == ("pass", "pass", 1, 8)
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": "n1", "scheduler": {"kind": "slurm", "node": "n1"}}, "options": {},
            "checks": [g, n]}


def _nccl(d: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in d["checks"] if c["name"] == "nccl")


def _gpus(d: dict[str, Any], n: int) -> None:
    g = next(c for c in d["checks"] if c["name"] == "gpu")
    g["metrics"]["nvml_devices"]["value"] = g["metrics"]["torch_devices"]["value"] = n
    g["data"]["devices"] = g["data"]["devices"][:n]


def _ranks(n: float) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        _nccl(d)["metrics"]["world_size"]["value"] = n
        _nccl(d)["data"]["world_size"] = n
    return change


IMPOSSIBLE = {
    "16 ranks over NCCL on an 8-GPU node": _ranks(16),
    "8 ranks over NCCL where the gpu check counted 2": lambda d: _gpus(d, 2),
    "-8 ranks": lambda d: _nccl(d)["metrics"]["world_size"].update(value=-8),
    "8.5 ranks": _ranks(8.5),
    "a world size written as a string": lambda d: _nccl(d)["data"].update(world_size="8"),
    "nodes written as a string": lambda d: _nccl(d)["data"].update(nodes="2"),
    "-3 wrong elements": lambda d: _nccl(d)["metrics"]["wrong"].update(value=-3),
    "3 ranks across 4 nodes": lambda d: (_ranks(3)(d), _nccl(d)["data"].update(nodes=4)),
}


@pytest.mark.parametrize("change", list(IMPOSSIBLE))
def test_nccl_one_rank_per_gpu_a_report_no_verify_writes_passes_neither_the_prolog_nor_the_fleet(
        tmp_path, fake, monkeypatch, capsys, change):
    """NCCL runs one rank per GPU, and verify writes a count as a whole number, 0 or more: a pass that says otherwise
    is no report of verify's. It passed the prolog (exit 0) and the fleet report; now REPORT_INVALID (exit 3 as a
    first step, the node neither passed nor drained) and invalid in make fleet-report, by one rule on both sides."""
    report = _written()
    IMPOSSIBLE[change](report)
    assert decide(report).code == "REPORT_INVALID" and report_problem(report)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    assert "REPORT_INVALID" in capsys.readouterr().out and fake.nodes["n1"] == ("idle", "none")
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    found = fleet(folder)
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


@pytest.mark.parametrize("change", [None, "float counts", "no nodes said", "a CPU node over gloo"])
def test_what_verify_writes_still_passes_both(tmp_path, fake, monkeypatch, change):
    """The rule refuses no report verify writes: its own, counts as floats (result.Metric holds floats; a
    recorded world size 8.0), a nccl check of an older verify that records no `nodes`, and gloo's ranks on CPUs."""
    report = _written()
    if change == "float counts":
        _ranks(8.0)(report)
    elif change == "no nodes said":
        del _nccl(report)["data"]["nodes"]
        _ranks(16)(report)
    elif change == "a CPU node over gloo":
        _nccl(report)["data"]["backend"] = "gloo"
        _ranks(16)(report)
    assert decide(report).kind == "pass" and report_problem(report) is None
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    assert fleet(folder).ok
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0


def test_the_two_rules_are_one_text():
    """The prolog's rule and the host side's (which never imports verify) are one text below their docstrings."""
    root = Path(__file__).resolve().parents[1]
    body = [p.read_text().split('"""', 2)[2] for p in (root / "verify/prolog/ranks.py", root / "scripts/fleet/ranks.py")]
    assert body[0] == body[1]
