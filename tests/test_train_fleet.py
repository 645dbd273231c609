"""The train check in the fleet report: each node's own tokens/s against the median of the same model, and its time
to first step in the phases. The reports are verify's own, replayed from hand-made train facts (`handmade`)."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.fleet import FLEET_JSON, fleet, format_fleet
from tests.helpers import ROOT
from verify.checks.train import trainer

pytestmark = pytest.mark.host


def handmade_one_node_train_facts() -> dict[str, Any]:
    """A healthy 2-rank CPU run on one node, as the probe records it (hand-made)."""
    shape = trainer.SHAPES["cpu"]
    steps = [{"step": i + 1, "loss": 4.9 - 0.12 * i, "checksum": f"{0xfeed00 + i:016x}"} for i in range(30)]
    ranks = [{"rank": r, "local_rank": r, "node": "handmade", "steps": copy.deepcopy(steps), "bf16": False,
              "init_s": 0.4, "first_step_s": 0.25, "planned_steps": 30, "timed_steps": 27, "timed_s": 2.0,
              "wall_s": 7.0, "loader": {"file_bytes": 532480, "zero_copy": True, "sweep": []}} for r in range(2)]
    return {"distributed": True, "gpus": 0, "backend": "gloo", "emulated": False, "device_name": None,
            "config": trainer.shape_facts(shape, "cpu"), "world_size": 2, "nodes": 1, "mode": "2 local process(es)",
            "ranks": ranks, "failures": []}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> dict[str, Any]:
    where = tmp_path_factory.mktemp("train-handmade")
    facts = where / "facts"
    facts.mkdir()
    (facts / "host.json").write_text(json.dumps({"facts_schema": 2, "hostname": "handmade", "checks": ["train"]}))
    (facts / "train.json").write_text(json.dumps({"check": "train", "facts_schema": 2,
                                                  "facts": handmade_one_node_train_facts(), "result": None}))
    out = where / "r.json"
    proc = subprocess.run([sys.executable, "-m", "verify", "--from-facts", str(facts), "--json", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text())


def _node(report: dict[str, Any], host: str, scale: float = 1.0) -> dict[str, Any]:
    doc = copy.deepcopy(report)
    doc["environment"]["hostname"] = host
    doc["replay"] = None        # stands for a live node's report (a replay is no node of a job: it is refused)
    doc["environment"]["phases"] = {"import_torch": 2.0, "first_step": 0.25 / scale}
    train = next(c for c in doc["checks"] if c["name"] == "train")
    train["metrics"]["tokens_per_s"]["value"] *= scale
    return doc


def test_handmade_a_node_training_at_half_the_median_is_an_outlier_in_the_fleet(tmp_path: Path, replayed):
    tokens = next(c for c in replayed["checks"] if c["name"] == "train")["metrics"]["tokens_per_s"]["value"]
    assert tokens == pytest.approx(27 * 8 * 64 * 2 / 2.0)
    for host, scale in (("n1", 1.0), ("n2", 1.05), ("n3", 0.97), ("n4", 0.5)):
        (tmp_path / f"node-{host}.json").write_text(json.dumps(_node(replayed, host, scale)))
    report = fleet(tmp_path)
    text = format_fleet(report)
    assert "train tokens/s" in text, text
    outliers = [(n.node, f.key) for n, f in report.outliers]
    assert outliers == [("n4", "train.tokens_per_s")], text
    slow = next(n for n in report.nodes if n.node == "n4")
    assert slow.phases["first_step"] == 0.5 and slow.passing
    assert not (tmp_path / FLEET_JSON).exists()        # fleet() reads; write_fleet() writes
