"""Issue 36, a hundred-and-fourth hunt through the public interfaces: the earlier hunts' classes rerun with new
variants, then classes 7 (`make isolate`) and 10 (launchers).

Found:
1. (high, a broken node passed; class 6, an NCCL record whose nodes/ranks/GPUs contradict) The report readers (the
   fleet report, `make isolate`'s, and the prolog's, one rule: ranks.ranks_problem on both sides) checked an
   all-reduce's group against its GPUs on one node only. A passing nccl check across several nodes whose data verify's
   own judge refuses (grouplayout.contradiction: MEASUREMENT_INVALID, a failure) was believed by the fleet report:
   32 (or 17) ranks over NCCL on 2 nodes where its gpu check counted 8 GPUs (`nodes` is ceil(world / local world),
   so this node ran 16 ranks on 8 GPUs), rank 8 of a world of 8, a torchrun `mode` of another rank or world than its
   data; and 8 ranks on 0 nodes passed both the fleet report and the prolog (`prolog: PASS 3 check(s) passed`).
   Repro: a replayed 8-GPU pass with the nccl check's data {"world_size": 32, "nodes": 2, "rank": 0}, then
   `make fleet-report`: the node listed passing. Practice: facts that cannot be true are refused, never a pass (issue
   36 class 6: nodes, local ranks and GPUs). Fix (verify/prolog/ranks.py and scripts/fleet/ranks.py, one text:
   _group_problem): refused, not assessed, never a drain.
2. (medium, a wrong printed instruction; class 10, the multi-node RDMA request default) `make k8s-verify NODES=2`
   with IMAGE naming a CUDA image and then a CPU image printed the RDMA note of the last image alone: with
   RDMA_RESOURCE=rdma/rdma_shared_device_a "RDMA_RESOURCE=... is not requested: pods without GPUs ..." while the CUDA
   job's manifest requests it (the pods pend where no plugin advertises it, unsaid), and with none the CUDA job's
   "the pods request no RDMA device, so NCCL crosses the nodes over TCP sockets" was not printed at all. Practice:
   a launcher says what the job it wrote does (issue 36 class 10). Fix (scripts/commands/fleet.py cmd_k8s): the note
   is said of each job it is true of, named when there are several.
3. (high, a broken node passed; class 6, local ranks on GPUs across nodes) hunt103's rule on a train pass over NCCL
   held the ranks against the gpu check's GPUs only where every replica ran on one node: 16 of 17 replicas on the
   report's own node beside its 8 GPUs (2 of 3 on the one-GPU VM), the 17th on another node, was believed by the
   fleet report and the prolog's reader. Repro: the real H100 train report (host "vm", 1 GPU) with world_size 3 and
   replicas on ["vm", "vm", "vm2"], then `make fleet-report`: PASSING. Practice: facts that cannot be true are
   refused (issue 36 class 6: nodes, local ranks and GPUs). Fix (passfacts._gpus_problem, both sides, one text; the
   report's own names from plausible.own_names / verdict.own_names): the replicas on the report's own node (its
   hostname or scheduler node, short or long, any case) are at most the GPUs its gpu check counted; another node's
   are not held (its GPUs are not counted there).

Found, not fixed: (low) a SIGTERM, SIGINT or SIGHUP that reaches torchimages-prolog between its `trap '' TERM INT
HUP` and verify.prolog's own handlers (about 5 to 100 ms: the version probe, Python's start) is ignored and lost: the
run goes on to its verdict (a pass, within its cap) instead of stopping PROLOG_INTERRUPTED. No child is left and no
file half-written; a fix needs the signals blocked, not ignored, across exec (sigprocmask), which sh cannot do.

Tried and held (no change): RDMA_RESOURCE nvidia.com/gpu in any case, nvidia.com/gpu.shared, nvidia.com/mig-1g.10gb,
amd.com/gpu, cpu, hugepages-2Mi and `a b` (each refused in one line), nvidia.com/hostdev and vpc.amazonaws.com/efa
(requested); a job's working folder holding verify.py, verify/, runpy.py, sitecustomize.py and usercustomize.py
beside PYTHONSTARTUP, through the images' `verify` (none imported; a job's PYTHONPATH does reach the checks the
`verify` command starts, by design: it verifies the environment it is run in, and the launchers unset it).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from tests.judging import replayed_report
from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _nccl, _report, _shm, _verify_writes, history_events, install_fake
from verify.prolog import cli, verdict

pytestmark = pytest.mark.unit

HANDMADE = Path(__file__).resolve().parent / "data" / "facts-handmade" / "h100-8gpu-handmade"

# ------------------------------------------------------------------ 1. an all-reduce's group no verify lets pass

GROUPS: dict[str, tuple[dict[str, Any], str]] = {
    "32 ranks on 2 nodes of 8 GPUs": ({"world_size": 32, "nodes": 2, "rank": 0}, "more ranks than 16 GPUs"),
    "17 ranks on 2 nodes of 8 GPUs": ({"world_size": 17, "nodes": 2, "rank": 3}, "more ranks than 16 GPUs"),
    "rank 8 of 8": ({"world_size": 8, "nodes": 2, "rank": 8}, "ranks are 0 to 7"),
    "a torchrun mode of 16 beside a world of 8": (
        {"world_size": 8, "nodes": 2, "rank": 0, "mode": "torchrun group: rank 0 of 16, n1:29500"}, "one count"),
    "a torchrun mode of rank 3 beside rank 0": (
        {"world_size": 8, "nodes": 2, "rank": 0, "mode": "torchrun group: rank 3 of 8, n1:29500"}, "one rank"),
    "8 ranks on 0 nodes": ({"world_size": 8, "nodes": 0}, "across 0 nodes"),
}


def _group(data: dict[str, Any]) -> dict[str, Any]:
    """verify's real 8-GPU pass (its replay), its nccl check's group laid out as `data` says."""
    report = replayed_report(HANDMADE)
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    nccl = next(c for c in report["checks"] if c["name"] == "nccl")
    if "rank" in data:          # a launcher's rank: verify's torchrun mode, unless the case gives another
        data = {"mode": f"torchrun group: rank {data['rank']} of {data['world_size']}, n1:29500", **data}
    nccl["data"].update(data)
    nccl["metrics"]["world_size"]["value"] = float(data["world_size"])
    return report


@pytest.mark.parametrize("case", list(GROUPS))
def test_facts_that_cannot_be_true_an_nccl_pass_whose_nodes_ranks_and_gpus_contradict_is_refused(
        tmp_path: Path, case: str) -> None:
    data, said = GROUPS[case]
    report = _group(data)
    why = report_problem(report)
    assert why is not None and said in why, why
    assert verdict.decide(report).code == "REPORT_INVALID"                 # the prolog's reader: the same rule
    (tmp_path / "n1.json").write_text(json.dumps(report))
    found = fleet(tmp_path)
    assert not found.ok and not found.nodes and not found.drains and said in found.invalid[0][1]


@pytest.mark.parametrize("data", [{"world_size": 16, "nodes": 2, "rank": 0},
                                  {"world_size": 8, "nodes": 2, "rank": 7,
                                   "mode": "torchrun group: rank 7 of 8, n1:29500"},
                                  {"world_size": 8, "nodes": 1}])
def test_a_group_of_at_most_one_rank_per_gpu_on_each_node_is_still_believed(data: dict[str, Any]) -> None:
    report = _group(data)
    assert report_problem(report) is None


def test_the_same_group_failing_is_no_refusal(tmp_path: Path) -> None:
    """verify's judge writes the data of a group it refused beside its failure (MEASUREMENT_INVALID): that report is
    verify's, read as written."""
    report = _group({"world_size": 8, "nodes": 0})
    nccl = next(c for c in report["checks"] if c["name"] == "nccl")
    nccl.update(status="fail", code="MEASUREMENT_INVALID", owner="tool", summary="the facts contradict each other")
    report["status"] = "fail"
    why = report_problem(report)
    assert why is None or "0 nodes" not in why, why


def test_facts_that_cannot_be_true_a_preflight_all_reduce_on_0_nodes_is_not_assessed_by_the_prolog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake = install_fake(monkeypatch)
    nccl = _nccl()
    nccl["data"] = {"backend": "nccl", "world_size": 8, "nodes": 0}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), _shm(), nccl, whole=False)).encode())
    assert cli.main(_args(tmp_path), dict(PROLOG_ENV)) == 0            # Prolog=: not assessed exits 0
    out = capsys.readouterr().out
    assert "REPORT_INVALID" in out and "across 0 nodes" in out and "PASS" not in out.replace("NOT ASSESSED", ""), out
    assert history_events(tmp_path)[-1] == ("not-assessed", "REPORT_INVALID")
    assert fake.nodes["n1"] == ("idle", "none") and "update" not in fake.verbs()


# ------------------------------------------------------------------ 3. a train pass of more ranks on its own node than its GPUs

TRAIN_REPORT = Path(__file__).resolve().parent / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train" / "report.json"


def _train(layout: list[str], host: str = "vm") -> dict[str, Any]:
    """verify's real train pass on a one-GPU H100 VM, its replicas laid out one a node name of `layout`."""
    report = json.loads(TRAIN_REPORT.read_text())
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["environment"]["hostname"] = host
    train = next(c for c in report["checks"] if c["name"] == "train")
    first = train["data"]["replicas"][0]
    train["data"].update(world_size=len(layout), nodes=sorted(set(layout)),
                         replicas=[{**first, "rank": r, "node": n} for r, n in enumerate(layout)])
    return report


@pytest.mark.parametrize("layout,host", [(["vm"] * 16 + ["vm2"], "vm"), (["vm", "vm", "vm2"], "vm"),
                                         (["vm", "vm2", "vm"], "VM.cluster.local.")])
def test_facts_that_cannot_be_true_a_train_pass_of_more_nccl_ranks_on_its_own_node_than_its_gpus_is_refused(
        tmp_path: Path, layout: list[str], host: str) -> None:
    report = _train(layout, host)
    said = report_problem(report)
    assert said is not None and "on this report's own node" in said and "counted 1 GPU" in said, said
    assert verdict.decide(report).code == "REPORT_INVALID"
    (tmp_path / "vm.json").write_text(json.dumps(report))
    found = fleet(tmp_path)
    assert not found.ok and not found.nodes and not found.drains and "NCCL runs one rank per GPU" in found.invalid[0][1]


@pytest.mark.parametrize("layout", [["vm", "vm2"], ["vm"] + ["vm2"] * 16, ["vm2", "vm3"]])
def test_one_rank_on_its_own_node_is_still_believed_whatever_another_nodes_gpus(layout: list[str]) -> None:
    """Another node's GPUs are not counted in this report: 16 ranks there may be 16 GPUs of its own."""
    report = _train(layout)
    assert report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
