"""Issue 36, a sixty-sixth hunt: the classes the earlier hunts touched least.

- Class 7, NVSentinel's isolation rule (a node is cleared only by a measurement of the link it shares with a
  known-good partner): a pair's report whose nccl check ran on one node, with fewer ranks than the pair, across more
  nodes than the pair, or stamped outside its step's time (before it began; in the future past
  TORCHIMAGES_CLOCK_SKEW) measured no link of that pair now: the pair is not assessed, never a pass that clears both
  nodes (it ended "no node at fault", exit 0).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.errors import UserError
from scripts.fleet.isolate import decide
from scripts.fleet.isolate_facts import skew
from scripts.fleet.isolate_run import exit_status, outcome

pytestmark = pytest.mark.unit

NODES = ["n1", "n2", "n3", "n4"]


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _pair_report(nodes: int | None = 2, world: int | None = 2, created: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"backend": "nccl"}
    if nodes is not None:
        data["nodes"] = nodes
    if world is not None:
        data["world_size"] = world
    check: dict[str, Any] = {"name": "nccl", "status": "pass", "code": None, "owner": None, "summary": "ok", "details": [],
             "remedy": None, "duration_s": 1.0, "data": data,
             "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}, "wrong": {"value": 0, "unit": ""}}}
    report: dict[str, Any] = {"schema_version": 3, "status": "pass", "checks": [check]}
    if created is not None:
        report["created"] = created
    return report


def _judged(report: dict[str, Any], began: float) -> tuple[int, str]:
    """Every pair of a 4-node isolation wrote `report`: the exit status and the answer."""
    results = [(1, outcome(pair, report, 0, 5.0, 8, began)) for pair in (("n1", "n2"), ("n3", "n4"))]
    decision = decide(NODES, results)
    return exit_status(decision), decision.summary


@pytest.mark.parametrize(("nodes", "world", "said"), [
    (1, 8, "across 1 node(s), not the pair's 2"),      # each node all-reduced over its own NVLink
    (3, 24, "across 3 node(s), not the pair's 2"),     # a report of another group
    (None, 1, "1 rank(s), fewer than the pair's 2 nodes"),
])
def test_nvsentinel_isolation_a_report_that_measured_no_link_of_the_pair_clears_neither_node(nodes, world, said):
    now = time.time()
    single = outcome(("n1", "n2"), _pair_report(nodes, world, _stamp(now)), 0, 5.0, 8, now)
    assert not single.ok and single.ours and said in single.why
    status, summary = _judged(_pair_report(nodes, world, _stamp(now)), now)
    assert status == 2 and not summary.startswith("no node at fault") and said in summary


@pytest.mark.parametrize(("offset", "said"), [(86400.0 * 365, "after its step ended"),
                                              (3600.0, "after its step ended"),
                                              (-86400.0 * 30, "before its step began")])
def test_nvsentinel_isolation_a_report_stamped_outside_its_step_is_no_evidence(offset, said):
    now = time.time()
    status, summary = _judged(_pair_report(created=_stamp(now + offset)), now)
    assert status == 2 and said in summary, summary


def test_a_report_stamped_within_the_step_and_the_clock_tolerance_still_clears_the_pair():
    now = time.time()
    for at in (now, now + 4.0, now + 200.0, now - 1.0):      # created is whole seconds; clocks differ by minutes
        assert outcome(("n1", "n2"), _pair_report(created=_stamp(at)), 0, 5.0, 8, now).ok
    assert _judged(_pair_report(created=_stamp(now)), now)[0] == 0
    # a verify of before `nodes` (no data.nodes): judged on its figures as before
    assert outcome(("n1", "n2"), _pair_report(None, None, _stamp(now)), 0, 5.0, 8, now).ok


@pytest.mark.parametrize("value", ["-5", "nan", "5 min", "0", "400d", "1e9"])
def test_the_isolation_s_clock_tolerance_refuses_a_value_no_clock_needs(value):
    with pytest.raises(UserError, match="TORCHIMAGES_CLOCK_SKEW"):
        skew({"TORCHIMAGES_CLOCK_SKEW": value})
    assert skew({"TORCHIMAGES_CLOCK_SKEW": "10m"}) == 600.0 and skew({}) == 300.0


@pytest.mark.host
def test_make_isolate_s_runner_says_a_single_node_pair_in_its_answer(tmp_path: Path) -> None:
    """Through the runner's own entry (srun and scontrol as stand-ins): a launcher that ran each pair's all-reduce on
    one node ends "undetermined", exit 2, with the pairs not assessed in the answer, never "no node at fault"."""
    from tests.isolate_fakes import _isolate
    report = _pair_report(1, 8, _stamp(time.time()))
    status, lines = _isolate(tmp_path, NODES, {"raw": json.dumps(report)})
    assert status == 2 and "not assessed" in lines[-1] and "across 1 node(s)" in lines[-1], lines[-3:]
    answer = json.loads((tmp_path / "isolate.json").read_text())
    assert all(p["verdict"] == "not-assessed" for p in answer["pairs"])
    status, lines = _isolate(tmp_path, NODES, {"raw": json.dumps(report)},
                             env={"TORCHIMAGES_CLOCK_SKEW": "forever"})
    assert status == 2 and "TORCHIMAGES_CLOCK_SKEW" in lines[-1]


# ------------------------------------------------------- launchers: a knob given and not applied is said

@pytest.mark.parametrize(("nodes", "gpus", "said"), [(1, 8, "single-node"), (2, 0, "gloo")])
def test_kubernetes_launcher_an_rdma_request_it_does_not_apply_is_said(nodes, gpus, said):
    """RDMA_RESOURCE given for a single-node job or GPU-less pods: no RDMA device is requested there (nothing
    crosses a fabric over RDMA), and the note says so instead of dropping the knob without a word."""
    from scripts.fleet.cluster import rdma_hint
    hint = rdma_hint(nodes, gpus, "rdma/rdma_shared_device_a")
    assert hint is not None and "RDMA_RESOURCE=rdma/rdma_shared_device_a is not requested" in hint and said in hint


def _cli(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in the environment), its job under tmp_path."""
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), "LOCAL_IMAGE": "1", "IMAGE": CUDA_TAG,
                               "GPUS": "8", **env}, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


CUDA_TAG = "2.13.0-cuda13.0-cudnn9-runtime-debian12"


def _sidecar(tmp_path: Path) -> str:
    sqsh = tmp_path / "shared" / "x.sqsh"
    sqsh.parent.mkdir(parents=True)
    sqsh.with_name("x.sqsh.json").write_text(json.dumps({"sha256": "ab" * 32, "image_id": "sha256:1", "tag": CUDA_TAG}))
    return str(sqsh)


@pytest.mark.host
def test_slurm_launcher_make_isolate_mounts_the_squashfs_make_slurm_would(tmp_path: Path) -> None:
    """make isolate SQSH=...: the pairs run the squashfs the nodes share, checked by its recorded sha256 as make slurm
    does; it wrote a job pulling the registry's (Docker Hub's, without REGISTRY) image instead, without a word."""
    sqsh = _sidecar(tmp_path)
    status, said = _cli(tmp_path, "isolate", NODES="4", SQSH=sqsh)
    assert status == 0, said
    script = next((tmp_path / "build" / "slurm").glob("isolate-*.sbatch")).read_text()
    assert f"TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-{sqsh}}}" in script
    assert "export TORCHIMAGES_SQSH_SHA256=" + "ab" * 32 in script and "no registry" in script
    status, said = _cli(tmp_path, "isolate", NODES="4", SQSH=sqsh, LAUNCHER="docker")
    assert status == 2 and "SQSH is for LAUNCHER=pyxis" in said


@pytest.mark.host
@pytest.mark.parametrize(("target", "knob", "value"), [("isolate", "PREFLIGHT", "1"), ("isolate", "VERIFY_ARGS", "-x"),
                                                       ("isolate", "RDMA_RESOURCE", "rdma/a"),
                                                       ("slurm", "RDMA_RESOURCE", "rdma/a"),
                                                       ("k8s-verify", "SQSH", "/s/x.sqsh"),
                                                       ("k8s-verify", "LAUNCHER", "docker")])
def test_launchers_a_knob_the_target_does_not_read_is_said(tmp_path: Path, target: str, knob: str, value: str) -> None:
    status, said = _cli(tmp_path, target, NODES="2", **{knob: value})
    assert status == 0 and f"note: {knob}={value!r} is not read by make {target}" in said, said
    # the Makefile's own defaults (LAUNCHER=pyxis, every other knob empty) say nothing
    status, said = _cli(tmp_path, target, NODES="2", LAUNCHER="pyxis", PREFLIGHT="", SQSH="")
    assert status == 0 and "is not read by make" not in said, said
