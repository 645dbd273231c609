"""hunt95, class 6 (facts that cannot be true are refused): verify's own all-reduce is one rank per GPU torch sees.

Defect (high: a broken node passed). An nccl check that passes on fewer local ranks than the GPUs torch saw (4 of 8:
four GPUs never all-reduced over), or on a single rank (nothing crossed a link), passed the prolog and `make
fleet-report`. verify spawns one rank per GPU without a launcher (verify/checks/nccl/probing.py: world = torch's
device count, `mode` "N local process(es)", `nodes` 1, no `rank`), and skips an all-reduce on one rank
(NCCL_SINGLE_RANK, verify/checks/nccl/verdict.py _no_bandwidth). Repro: a preflight report whose nccl check says
`world_size` 4, `nodes` 1 beside a gpu check of 8 torch devices, run through `python -m verify.prolog` as Slurm's
Prolog=, or saved into a `make fleet-report DIR=` folder. Fix: verify/prolog/ranks.py and scripts/fleet/ranks.py
(`_spawned_problem`, one text): REPORT_INVALID, never a pass and never a drain.

Practice: NCCL runs one rank per GPU ("Duplicate GPU detected" for two on one), nccl-tests' one process per GPU; a
report no verify writes is no evidence (Slurm's prolog semantics: not assessed, exit 0 under Prolog=, no drain).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import STEP_ENV, _args, _verify_writes, install_fake, refused_as_a_first_step
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit

SHM: dict[str, Any] = {"name": "shm", "status": "pass", "summary": "/dev/shm ok", "details": [], "metrics": {},
                       "remedy": None, "code": None, "owner": None, "duration_s": 0.0, "output": None, "data": {}}


def _written() -> dict[str, Any]:
    """A preflight report as verify writes one on an 8-GPU H100 node, judged by verify's own judges."""
    g = gpu.judge(cast(Any, gpu_facts()), Options()).to_dict()
    n = nccl.judge(cast(Any, nccl_facts()), Options()).to_dict()
    assert (g["status"], n["status"], n["data"]["nodes"], n["data"]["world_size"]) == ("pass", "pass", 1, 8)
    assert g["metrics"]["torch_devices"]["value"] == 8
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": "n1", "scheduler": {"kind": "slurm", "node": "n1"}}, "options": {},
            "checks": [g, SHM, n]}


def _nccl(report: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["name"] == "nccl")


def _ranks(report: dict[str, Any], n: int) -> None:
    _nccl(report)["data"]["world_size"] = n
    _nccl(report)["metrics"]["world_size"]["value"] = float(n)


def _four_of_eight(report: dict[str, Any]) -> None:
    _ranks(report, 4)
    _nccl(report)["data"]["mode"] = "4 local process(es), one per GPU"


def _one_rank(report: dict[str, Any]) -> None:
    _ranks(report, 1)
    _nccl(report)["data"]["mode"] = "1 local process(es), one per GPU"


def _mode_says_eight(report: dict[str, Any]) -> None:
    _ranks(report, 4)               # torch saw 4 here too: the mode's 8 is the other count
    next(c for c in report["checks"] if c["name"] == "gpu")["metrics"]["torch_devices"]["value"] = 4.0


IMPOSSIBLE = {"4 local ranks beside 8 GPUs torch saw": _four_of_eight, "a pass on one rank": _one_rank,
              "4 ranks where its mode says 8 spawned": _mode_says_eight}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


@pytest.mark.parametrize("change", list(IMPOSSIBLE))
def test_nccl_one_rank_per_gpu_an_all_reduce_over_part_of_the_gpus_passes_neither_the_prolog_nor_the_fleet(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        change: str) -> None:
    """NCCL runs one rank per GPU and verify spawns one per GPU torch sees: a pass over fewer ranks (or one) left
    GPUs never all-reduced over. Slurm's prolog semantics: a report no verify writes is not assessed, never a pass
    and never a drain (exit 3 as a first step, the node left in service); the fleet report lists it invalid."""
    report = _written()
    IMPOSSIBLE[change](report)
    assert decide(report).code == "REPORT_INVALID" and report_problem(report)
    folder = refused_as_a_first_step(tmp_path, monkeypatch, capsys, fake, report)
    found = fleet(folder)
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


def test_nccl_one_rank_per_gpu_what_verify_writes_still_passes_both(tmp_path: Path, fake: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule refuses no report verify writes (8 local ranks on 8 GPUs; a launcher's group, its `rank` set, whose
    world is the group's), so a healthy node passes the prolog and the fleet report as before."""
    report = _written()
    assert decide(report).kind == "pass" and report_problem(report) is None
    group = _written()
    _ranks(group, 16)
    _nccl(group)["data"].update(rank=3, nodes=2, mode="torchrun group: rank 3 of 16 (local rank 3), n1:29500")
    assert report_problem(group) is None
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    assert fleet(folder).ok
