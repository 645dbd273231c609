"""Facts recorded on real GPUs (tests/data/gpu/<model>-<date>/) replay to the verdicts that hardware earned.

Each folder holds what the lent machine gave back (report, `nvidia-smi -q`, the `--save-facts` folder) and an
`expected.json`: the verdict per check. A rule change that turns a real healthy H100 into a fail (or a fail into a
pass) shows here first.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import ROOT
from verify import replay

pytestmark = pytest.mark.unit

RUNS = sorted(p for p in (ROOT / "tests" / "data" / "gpu").iterdir() if (p / "facts").is_dir())


def test_there_are_real_runs():
    assert RUNS, "tests/data/gpu/ holds no run"


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_a_real_gpu_run_replays_to_its_verdicts(run: Path):
    expected = json.loads((run / "expected.json").read_text())
    folder = replay.load(str(run / "facts"), None, {})
    assert {r.schema for r in folder.records} == {expected["schema"]}
    got = {r.name: replay.judge(r, folder.options) for r in folder.records}
    assert {k: {"status": v.status, "code": v.code} for k, v in got.items()} == expected["verdicts"]
    assert "NVIDIA H100 80GB HBM3" in (run / "nvidia-smi-q.txt").read_text()


def test_the_real_train_run_is_judged_against_the_h100_peak():
    run = ROOT / "tests" / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train"
    folder = replay.load(str(run / "facts"), ["train"], {})
    result = replay.judge(folder.records[0], folder.options)
    mfu = result.metrics["mfu"].value
    assert result.status == "pass" and 0.1 < mfu < 0.5, (result.summary, mfu)
    steps = json.loads((run / "facts" / "train.json").read_text())["facts"]["ranks"][0]["steps"]
    assert steps[-1]["loss"] < 0.5 * steps[0]["loss"]
