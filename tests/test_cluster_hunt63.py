# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Round 63 of the cluster hunt (issue 36).

Class 6, facts that cannot be true. How a launcher numbers a group's ranks. torchrun (and mpirun's and srun's local
ids) number each launcher's processes 0..n-1 on its node (PyTorch's elastic agent: LOCAL_RANK in
[0, nproc_per_node)), and the trainer drives cuda:<LOCAL_RANK>: a record whose local ranks on a node skip one, or
whose one launcher on a node ran more ranks than the GPUs it saw, is no group that ran (verify/FACTS.md's rule:
refused, naming the fields, never judged and never a pass). And what the prolog passes (Slurm's prolog semantics:
exit 0 starts the job here) is its own verify's report of this node: no other schema, no other node, no lost GPU.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
from tests.verify_handmade import (
    assert_refused,
    gpu_facts,
    handmade_train_facts,
    judged_both_ways,
    nccl_facts,
    variant,
)
from verify.prolog import cli
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit


def _laid_out(layout: list[tuple[str, int]], gpus: int = 8) -> dict[str, Any]:
    """A healthy group (GPUs over NCCL; gpus 0: CPUs over gloo) with one rank per (node, local rank) of `layout`, as
    torchrun's rank 0 records it."""
    facts = handmade_train_facts(gpu=gpus > 0)
    first = facts["ranks"][0]
    facts["ranks"] = [{**copy.deepcopy(first), "rank": i, "node": node, "local_rank": local}
                      for i, (node, local) in enumerate(layout)]
    world = len(layout)
    facts.update(world_size=world, nodes=len({n for n, _ in layout}), gpus=gpus,
                 mode=f"torchrun group: rank 0 of {world}, n1:29500")
    return facts


def test_torchrun_numbers_a_nodes_local_ranks_from_zero_a_gap_is_refused() -> None:
    """n1 holds local rank 9 and none of 0..8: a launcher that ran it ran nine more ranks no record shows."""
    assert_refused("train", _laid_out([("n1", 0), ("n2", 9)]), "local rank 9", "local rank 8 0 time(s)")


def test_one_launcher_on_eight_gpus_runs_no_twelfth_rank_over_nccl() -> None:
    """Rank 0's node ran local ranks 0..11 under one launcher that saw 8 GPUs: cuda:8 to cuda:11 are no GPUs (NCCL
    runs one rank per GPU); the record passed at 16 ranks on 2 nodes of 8 GPUs."""
    layout = [("n1", i) for i in range(12)] + [("n2", i) for i in range(4)]
    assert_refused("train", _laid_out(layout), "local rank 11", "gpus 8")


def test_two_launchers_on_one_node_are_still_judged() -> None:
    """srun --ntasks-per-node=2 with torchrun --nproc-per-node=4 on CPU nodes: each task's local ranks are 0..3 on
    the same node name. A real group: judged, never refused."""
    layout = [("n1", i % 4) for i in range(8)] + [("n2", i % 4) for i in range(8)]
    live, replayed = judged_both_ways("train", _laid_out(layout, gpus=0))
    assert replayed.code != "FACTS_INVALID" and live.code != "MEASUREMENT_INVALID", replayed.summary


def test_a_group_with_a_failed_rank_is_not_held_to_whole_numbering() -> None:
    """A rank that failed leaves its local rank unrecorded: the gap is the failure's, judged as one."""
    facts = _laid_out([("n1", 0), ("n2", 0), ("n2", 1)])
    lost = facts["ranks"].pop(1)
    facts["failures"] = [{"rank": lost["rank"], "node": "n2", "phase": "train", "type": "RuntimeError",
                          "message": "boom"}]
    _, replayed = judged_both_ways("train", facts)
    assert (replayed.status, replayed.code) == ("fail", "TRAIN_FAILED"), replayed.summary



@pytest.mark.parametrize("name", ["Tesla T4", "NVIDIA Foo 9000"])
def test_an_all_reduce_no_gpu_moves_is_refused_whatever_gpu_it_names(name: str) -> None:
    """A GPU with no busbw baseline (a T4, a name verify does not know) "moving" 3,000 GB/s on one node passed as
    "bandwidth not assessed". Like a known GPU past 3x its own baseline, it is held to the fastest one-node figure
    verify knows (never below NVLink5's 900 GB/s per GPU): refused, never a pass."""
    facts = variant(nccl_facts(peak=3000.0), device_name=name)
    assert_refused("nccl", facts, "3000.0 GB/s", "impossible")


def test_an_unknown_gpu_at_a_real_rate_is_still_not_assessed_not_refused() -> None:
    _, replayed = judged_both_ways("nccl", variant(nccl_facts(peak=150.0), device_name="NVIDIA Foo 9000"))
    assert replayed.status == "pass" and "bandwidth not assessed" in replayed.summary, replayed.summary



@pytest.mark.parametrize("name,tflops", [("NVIDIA H100 80GB HBM3", 5000.0), ("NVIDIA Foo 9000", 15_000.0)])
def test_a_matmul_rate_past_the_gpus_dense_peak_is_refused(name: str, tflops: float) -> None:
    """An H100 (dense BF16 peak 989 TFLOP/s) "measuring" 5,000 passed as "figures within baselines": a rate above
    the SKU's datasheet peak is no measurement, as the train check already holds (an unknown GPU: the fastest peak
    verify/baselines.json knows). Refused, never a pass."""
    facts = gpu_facts()
    for d in facts["devices"]:
        d["name"] = name
    for p in facts["perf"]:
        p["bf16_TFLOPs"] = tflops
    assert_refused("gpu", facts, "bf16 matmul", "physically impossible")


# ---------------------------------------------------------------------------------------------------- the prolog

def _gpu8(**data: Any) -> dict[str, Any]:
    """A passing gpu check of 8 NVML devices, each with its own UUID and bus id, as verify writes one."""
    devices = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{i:08d}-0000-0000-0000-000000000000",
                "pci_bus_id": f"00000000:{i + 16:02x}:00.0", "lost": False} for i in range(8)]
    return {**_gpu(), "data": {"devices": devices, **data}}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    f = install_fake(monkeypatch)
    f.info = {"Gres": "gpu:8"}
    return f


PROLOG_GPUS = {**PROLOG_ENV, "SLURM_JOB_GPUS": "0,1,2,3,4,5,6,7"}


@pytest.mark.parametrize("change", [
    pytest.param(lambda r: r.update(schema_version=99), id="a-schema-no-verify-writes"),
    pytest.param(lambda r: r.update(schema_version="2"), id="a-schema-version-as-text"),
    pytest.param(lambda r: r.update(environment={"scheduler": {"kind": "slurm", "node": "n2"}}), id="another-node"),
    pytest.param(lambda r: r["checks"][0]["data"]["devices"][3].update(lost=True), id="a-pass-listing-a-lost-gpu"),
])
def test_slurm_prolog_passes_only_its_own_verifys_report_of_this_node(change: Any, tmp_path: Path, fake: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's prolog semantics: exit 0 lets the job start on this node, so what passes it must be evidence of this
    node now. A report of another schema, of another node (its environment.scheduler.node), or a gpu pass listing
    a GPU NVML called lost (verify fails that: GPU_LOST) is none verify wrote here: not assessed (never a pass,
    never a drain). Before: each passed."""
    report = _report(_gpu8())
    change(report)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), PROLOG_GPUS) == 0           # Prolog=: the tool's trouble never drains
    assert fake.nodes["n1"] == ("idle", "none")
    assert history_events(tmp_path)[-1] == ("not-assessed", "REPORT_INVALID")


@pytest.mark.parametrize("node", ["n1", "N1", "n1.cluster.example.", "n1.cluster.example"])
def test_this_nodes_report_however_its_name_is_spelt_still_passes(node: str, tmp_path: Path, fake: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS names are case-insensitive (RFC 4343) and a short name is its FQDN's first label: no refusal of this
    node's own report (a false "not assessed" on every job hides the node's faults)."""
    report = {**_report(_gpu8()), "environment": {"scheduler": {"kind": "slurm", "node": node}}}
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), PROLOG_GPUS) == 0
    assert history_events(tmp_path)[-1][0] == "pass"


def test_the_fleet_report_refuses_a_pass_listing_a_lost_gpu_too() -> None:
    """The host side holds the same rule (scripts/fleet/plausible.py beside verify/prolog/verdict.py)."""
    report = {"schema_version": 2, "status": "pass", "checks": [_gpu8()]}
    report["checks"][0]["data"]["devices"][0]["lost"] = True
    assert "listed lost" in (report_problem(report) or "")
    assert "listed lost" in (decide(report).summary or "")


# ---------------------------------------------------------------------------------------------------- attestations

def _attestation(signed: str, created: str, status: str = "pass") -> Any:
    from scripts.publish.report import Attestation
    from scripts.publish.signing import Trusted

    class Key:
        keyid = "ab" * 32
    return Attestation("sha256:" + "1" * 64, Trusted(Key(), "/keys/release.pub"), signed,
                       {"checks": [], "created": created}, status, None, {"node": "n1"})


def _judged(att: Any, max_age: float | None = None) -> Any:
    from datetime import datetime, timezone

    from scripts.publish.report import Summary, _decide, expire, order, refuse_future
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
    s = Summary("r@sha256:" + "2" * 64, attestations=[att])
    order(s)
    refuse_future(s, 300.0, now)
    _decide(s, True)
    expire(s, max_age, now, 300.0)
    return s


def test_slsa_freshness_is_the_evidences_a_month_old_report_signed_today_is_a_month_old() -> None:
    """Class 9: MAX_AGE measured the signature's time only, so a verify report a month old, signed an hour ago,
    was `verified: yes` under MAX_AGE=1d. SLSA/in-toto verification judges the evidence's time: the verify run's."""
    stale = _attestation("2026-11-25T11:00:00Z", "2026-10-25T11:00:00Z")
    s = _judged(stale, max_age=86400)
    assert not s.verified and "older than the maximum age" in s.reason, s.reason
    assert _judged(_attestation("2026-11-25T11:00:00Z", "2026-11-25T10:55:00Z"), max_age=86400).verified


def test_a_report_created_after_its_signature_is_not_believed() -> None:
    """A report dated a day after the signature over it: no report the signer saw (a wrong clock on one side), as a
    time in the future is none (CLOCK_SKEW the tolerance either way)."""
    s = _judged(_attestation("2026-11-24T11:00:00Z", "2026-11-25T11:00:00Z"))
    assert not s.verified and "after it was signed" in s.reason, s.reason
    assert _judged(_attestation("2026-11-25T11:00:00Z", "2026-11-25T11:04:00Z")).verified       # within the skew


# ---------------------------------------------------------------------------------------------------- make isolate

def _pair_report(failed: str | None = None, owner: str | None = None) -> dict[str, Any]:
    """A pair's report as verify writes it: a passing all-reduce, or its nccl check failed with `failed`."""
    check = {"name": "nccl", "status": "fail" if failed else "pass", "summary": "x", "code": failed, "owner": owner,
             "metrics": {"busbw_max": {"value": 100.0, "unit": "GB/s"}, "wrong": {"value": 0, "unit": "count"}},
             "data": {"nodes": 2, "world_size": 16}}
    return {"schema_version": 2, "status": check["status"], "created": "2026-12-01T00:00:00Z", "checks": [check]}


def _isolated(failed: str, owner: str) -> tuple[int, str]:
    """make isolate over n1..n5 where every pair holding n3 gets `failed` from verify: (exit, answer)."""
    from scripts.fleet.isolate import first_round, plan_done
    from scripts.fleet.isolate_run import exit_status, outcome
    nodes, results, number = ["n1", "n2", "n3", "n4", "n5"], [], 0
    pairs = first_round(nodes)
    while pairs:
        number += 1
        for pair in pairs:
            bad = "n3" in pair
            results.append((number, outcome(pair, _pair_report(failed if bad else None, owner if bad else None),
                                            1 if bad else 0, 1.0, 8)))
        decision, pairs = plan_done(nodes, results)
    return exit_status(decision), decision.summary


@pytest.mark.parametrize("failed,owner", [("CHECK_CRASHED", "image"), ("MEASUREMENT_INVALID", "host"),
                                          ("PACKAGE_MISSING", "image")])
def test_make_isolate_never_names_a_node_for_the_tools_own_trouble(failed: str, owner: str) -> None:
    """Class 7, the house rule the prolog follows too (our own tool's trouble is "not assessed", never a node's
    fault): verify crashing, refusing its own measurement, or the image lacking a package on every pair n3 joined
    named n3 "failing" (exit 1). Now those pairs are not assessed: n3 is undetermined, the answer says why, exit 2
    (never clean either)."""
    status, said = _isolated(failed, owner)
    assert status == 2 and "n3 (failing)" not in said and "not assessed" in said and failed in said, said


def test_make_isolate_still_names_a_node_whose_all_reduce_fails() -> None:
    status, said = _isolated("NCCL_WRONG_RESULT", "host")
    assert status == 1 and said.startswith("at fault: n3 (failing)"), said


def test_a_pair_not_assessed_beside_passes_is_no_clean_answer() -> None:
    """Every node passed in another pair, but one pair crashed the tool: no evidence either way, never exit 0."""
    from scripts.fleet.isolate import Outcome, decide
    from scripts.fleet.isolate_run import exit_status
    results = [(1, Outcome(("n1", "n2"), True, 10.0)), (1, Outcome(("n3", "n4"), True, 10.0)),
               (2, Outcome(("n1", "n3"), False, None, "CHECK_CRASHED: x", ours=True)),
               (2, Outcome(("n2", "n4"), True, 10.0))]
    decision = decide(["n1", "n2", "n3", "n4"], results)
    assert exit_status(decision) == 2 and decision.summary.startswith("undetermined: every node passed in a pair")


# ---------------------------------------------------------------------------------------------------- launchers

@pytest.mark.parametrize("value", ["nvidia.com/GPU", "NVIDIA.com/gpu", "nvidia.com/Gpu.Shared", "AMD.com/GPU"])
def test_rdma_resource_in_another_case_is_still_the_gpu_request(value: str) -> None:
    """Class 10: RDMA_RESOURCE=nvidia.com/GPU passed as an RDMA device: each pod asked for a resource no device
    plugin advertises (Kubernetes' names are case-sensitive) and pended forever. The GPU request in any case is
    refused, one line naming the cause and the fix."""
    from scripts.errors import UserError
    from scripts.settings import parse_rdma_resource
    with pytest.raises(UserError, match=r"the pod's GPU request|not a Kubernetes resource name"):
        parse_rdma_resource(value, "RDMA_RESOURCE")


@pytest.mark.parametrize("data", [{"nodes": 2, "world_size": 16}, {"rank": 3}, {"nodes": ["n1", "n2"]}])
def test_the_prologs_preflight_is_one_nodes_a_groups_report_is_not_its_evidence(
        data: dict[str, Any], tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slurm's prolog runs on one node, and its verify --preflight alone there (the job's torchrun settings
    dropped): a report whose nccl check ran across nodes, or as a launcher's rank, is a group's run. Its busbw
    past 3x the node's own baseline passed as an inter-node figure."""
    nccl = {"name": "nccl", "status": "pass", "summary": "x", "data": data,
            "metrics": {"busbw_ratio": {"value": 5.0, "unit": "x"}}}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu8(), nccl)).encode())
    assert cli.main(_args(tmp_path), PROLOG_GPUS) == 0
    assert fake.nodes["n1"] == ("idle", "none")
    assert history_events(tmp_path)[-1] == ("not-assessed", "REPORT_INVALID")


# ---------------------------------------------------------------------------------------------------- fleet report

def _node_report(host: str, checks: list[dict[str, Any]] | None = None, expect_gpus: int = 8) -> dict[str, Any]:
    import time

    from tests.verify_handmade import make_report
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())      # stamped per test, never stale
    doc["options"] = {"expect_gpus": expect_gpus}
    if checks is not None:
        doc["checks"] = checks
    return doc


def test_fleet_report_a_node_given_gpus_whose_reports_judged_none_is_no_pass(tmp_path: Path) -> None:
    """Class 6, Slurm's prolog semantics as the fleet reads them: a node's report that says the job gave it 8 GPUs
    (--expect-gpus 8) but holds no gpu check, or only a skipped one, judged none of them; the fleet passed it. Now
    the fleet does not pass and the last line names it. A node whose local report judged them (beside rank 0's
    collective report without a gpu check) still passes."""
    from scripts.fleet.fleet import fleet
    shm: dict[str, Any] = {"name": "shm", "status": "pass", "summary": "s", "details": [], "metrics": {}, "remedy": None,
           "code": None, "owner": None, "duration_s": 1.0, "data": {}}
    (tmp_path / "a.json").write_text(json.dumps(_node_report("a")))
    (tmp_path / "a-nccl.json").write_text(json.dumps(_node_report("a", [shm])))      # beside a's own gpu check
    assert fleet(tmp_path).ok
    (tmp_path / "b.json").write_text(json.dumps(_node_report("b", [shm])))
    report = fleet(tmp_path)
    assert not report.ok and report.gpus_unjudged == ["b"], report.why_not_ok
    assert "given GPUs (--expect-gpus) whose reports judged none" in report.why_not_ok
    (tmp_path / "c.json").write_text(json.dumps(_node_report("c", [shm], expect_gpus=0)))     # a CPU node
    assert fleet(tmp_path).gpus_unjudged == ["b"]


def test_make_slurm_says_what_its_default_launcher_needs_before_sbatch(test_specs: Any) -> None:
    """Class 10: with no LAUNCHER (pyxis) and no REGISTRY, make slurm printed only `sbatch ...`; that pyxis needs
    enroot and its SPANK plugin, and looks a bare image name up on Docker Hub (where none is: every node's step
    fails), was said only inside the script. Now the lines a user reads before sbatch say both."""
    from scripts.fleet.slurm import NEEDS, Job, docker_hub_note
    spec = next(s for s in test_specs if "cuda" in s.tag)
    job = Job(spec, f"torchimages:{spec.tag}", 2, 8, "pyxis")
    assert "Docker Hub" in (docker_hub_note(job) or "")
    assert docker_hub_note(Job(spec, f"registry.example/torchimages:{spec.tag}", 2, 8, "pyxis")) is None
    assert "pyxis SPANK plugin" in NEEDS["pyxis"]


@pytest.mark.host
def test_make_slurm_prints_the_pyxis_needs_and_the_docker_hub_lookup(rendered: Any, scratch_env: Any) -> None:
    from tests.helpers import run_cli
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "IMAGE": "2.13.0-cpu-debian12", "NODES": "2", "GPUS": "0",
           "LOCAL_IMAGE": "1"}
    proc = run_cli("slurm", env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("  needs: enroot and the pyxis SPANK plugin") for line in lines), proc.stdout
    assert any(line.startswith("  first: No REGISTRY was given") for line in lines), proc.stdout
    assert lines[-1].startswith("  sbatch "), proc.stdout
