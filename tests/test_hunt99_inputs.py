"""Hunt 99: bad input on the fleet side (make fleet-report's reader, the report rule it shares with the prolog and
make isolate, make report's attestations), issue 36 classes 6, 8 and 9.

Each finding, its rating, repro and fix:

1. (high, a healthy node listed to drain) A train failure across nodes drained the node that wrote it. make slurm's
   collective runs `--checks nccl,train` from global rank 0; verify's train judge writes its `nodes` as the sorted
   names of its ranks' nodes, the nccl judge as a count, and scripts/fleet/collective.group_nodes read only a count.
   Repro: rank 1 on n2 diverges at step 6 (verify's own judge: TRAIN_REPLICA_MISMATCH, owner host, data nodes
   ["n1", "n2"], divergence on n2), written by rank 0 on n1: `make fleet-report` listed `n1:
   torchimages:TRAIN_REPLICA_MISMATCH ...` to drain, the one node whose replica agreed with the majority. The other
   way too: a per-node check (gpu GPU_LOST) carrying a `nodes` of 2 in its data was read as a collective and its drain
   withheld. Practice: NVSentinel's isolation rule (a failure of a group names no member until a pair against
   known-good partners does: make isolate). Fix: group_nodes reads the nodes of the checks verify runs across nodes
   (nccl, train: a count or a list of names); any other check judged the node that wrote it.
2. (medium, a fact that cannot be true passed both readers) An nccl pass whose `mode` says verify spawned its ranks on
   this node ("8 local process(es), one per GPU") while its `nodes` says 2 (or it carries a launcher's `rank`) passed
   the fleet report and the prolog's report rule: issue 36 class 6's NCCL record, written as a report. Ranks verify
   spawns run on the node that spawned them (verify/checks/nccl/probing.py: `nodes` 1, no rank; its facts contract
   refuses the rest, verify/shared/grouplayout._local), so the pass claimed a fabric crossed that never was. Repro:
   the H100 report's nccl data nodes 2: `fleet: PASSING`. Fix: ranks._spawned_problem (scripts/fleet and
   verify/prolog, one text).
3. (medium, a failure hidden by a pass) A train pass listing a replica whose last loss is NaN, "nan", negative or past
   verify's ceiling (verify fails a loss that is no number: TRAIN_LOSS_NOT_FINITE, the host's), or a replica whose
   last step is not the run's `steps` (5 of 30: verify passes only ranks that recorded the same steps) passed both
   readers. Repro: the handmade train report with replicas[0].loss NaN: `fleet: PASSING`. Fix:
   passfacts._replica_problem (both twins).
4. (medium, an input silently ignored) The fleet report read a time-to-first-step phase of -5 s, NaN, "3", 1e300 s,
   or a list in place of the phases object as "not measured" without a word (issue 36 class 8: "a negative figure is
   dropped silently"); verify writes each phase as null or seconds, 0 or more (verify/cli.py _phases,
   verify/scheduler.py). Fix: reports._phases_problem: the report is invalid (not assessed, no drain), named.
5. (medium, stale evidence believed) make report and make gate believed an attestation whose signed report's
   `created` is a time no clock writes (2026-02-30, hour 24: the report schema's pattern holds it): MAX_AGE judged the
   signature's time alone, so a months-old report signed today passed as fresh, where make fleet-report refuses the
   same report. Practice: evidence from the future, or of no time, is not evidence (issue 36 class 9; SLSA/in-toto
   freshness is the evidence's). Fix: scripts/publish/report.refuse_future: not believed, and being the newest it
   decides NO.
6. (medium, an input silently ignored) A variable misspelt on make's command line was dropped without a word:
   `make fleet-report DIR=job MAXAGE=7d` (or `max_age=7d`: make's variables are case-sensitive) believed reports of
   any age and said `fleet: PASSING`; `METRICSDIR=`, `STATEDIR=`, `CLOCKSKEW=` alike (the job knobs' TORCHIMAGES_*
   typos were said already, scripts/fleet/job_knobs.misspelt). Practice: a misspelt option is refused or said, never
   read as the default (Slurm's prolog semantics: issue 36 class 1, "no typo ..."). Fix: scripts/settings
   .misspelt_variables, read by the CLI's one boundary for every target: each command-line variable (MAKEFLAGS) no
   part of the Makefile reads and close to one that does is said on stderr; a name close to none (DOCKER_BUILDKIT=1,
   for a tool's environment) is not.
7. (medium, a healthy fleet failed) make slurm's job writes each node's local checks (every check but nccl, train
   among them: node-<node>.json) and the collective's (`--checks nccl,train` across the nodes: nccl.json, from global
   rank 0). Rank 0's node then held a train check in two reports, and Fleet.duplicates (one node, one check in two
   reports) called it "reported twice": every healthy multi-node GPU job ended `fleet: NOT PASSING: 1 node(s)
   reported twice`. Repro: node-n1.json and node-n2.json (gpu, train on one node) and nccl.json (nccl, train across
   n1 and n2) written by n1: exit 1. Fix: scripts/fleet/fleet.duplicates compares checks at their scope (on the node
   alone, or across nodes: collective.group_nodes, kept as Node.across); two local runs or two collective runs of one
   node are still duplicates.
8. (high, a drain line naming a hostlist) A report that names no node (no hostname, no scheduler node) is named after
   its file, and only a name the report gives was held to one host name (reports._not_a_node_now): a failing report
   in `n[1-4],x y.json` listed `n[1-4],x y: torchimages:GPU_LOST ...` to drain (scontrol drains n1-n4 and x on that
   name: a partition), and one in `evil<newline>NODE n9 pass.json` printed a line of its own into the table's notes.
   Practice: Slurm's drain takes one node's name; files the tooling reads are hostile (issue 36 class 8). Fix: the
   file's stem is held to the same rule (NODE_NAME); such a report is invalid, not assessed, never a drain.
9. (medium, a failure hidden by a pass) make slurm's collective runs `--checks nccl,train --expect-gpus N`; verify's
   train judge fails a run over gloo (on no GPU) when told to expect GPUs (GPU_NOT_VISIBLE), as the nccl judge does,
   and the host side refused only the nccl check's pass over gloo: a train pass over gloo beside expect_gpus 8 passed
   the fleet report and make gate's rule. Fix: plausible._expected_problem holds the train check to it too.
10. (medium, an unbounded resource) A report is read up to 64 MiB, and the schema's validator spends some 10 us on
   each JSON value: four 60 MB reports whose gpu check's details list held 12 million "x" each took make
   fleet-report 5 min 28 s (one file of 64 MiB, minutes). Fix: reports._values counts a report's values (to just
   past MAX_VALUES, 1,000,000: verify's ceiling of 4,096 GPUs is ~850,000, an 8-GPU node's ~1,700) before the
   validator: such a report is invalid, not assessed, in a second. Likewise Fleet.duplicates compared every report
   with every other (8,192 reports of a 4,096-node job: 2 s; one saved log of 100,000 report blocks: minutes): now
   by node and check, once each.

Tried and held (no defect): a report's node renamed onto another's with its own GPUs (listed twice), one GPU UUID in
two nodes' reports by case or without its GPU- prefix (refused), negative, -0 and 1e300 figures, created in the
future or with a -23:59 offset; RDMA_RESOURCE at nvidia.com/GPU, memory, hugepages-2Mi, kubernetes.io names (refused);
an attestation signed ahead of CLOCK_SKEW (refused); a train pass on one rank, with a loss of 0 -> 0 (verify writes
both).
"""
from __future__ import annotations

import copy
import json
import math
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from scripts.publish.report import Attestation, Summary, _decide, expire, order, refuse_future
from scripts.publish.signing import Trusted
from tests.verify_handmade import gpu_facts, handmade_train_facts, nccl_facts, variant
from verify.checks import gpu, nccl, train
from verify.options import Options
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit


def _report(checks: list[dict[str, Any]], host: str = "n1") -> dict[str, Any]:
    """A report as verify writes one around `checks` (verify's own judges' results)."""
    failed = any(c["status"] == "fail" for c in checks)
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "fail" if failed else "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": host, "scheduler": {"kind": "slurm", "node": host}}, "options": {},
            "checks": checks}


def _judged(module: Any, facts: dict[str, Any]) -> dict[str, Any]:
    return cast(dict[str, Any], module.judge(cast(Any, facts), Options()).to_dict())


def _h100(host: str = "n1") -> dict[str, Any]:
    """An 8-GPU H100 node's gpu and nccl checks, judged by verify from hand-made facts; its own boards' UUIDs."""
    facts = gpu_facts()
    for d in facts["devices"]:
        d["uuid"] = f"{d['uuid']}-{host}"
    return _report([_judged(gpu, facts), _judged(nccl, nccl_facts())], host)


def _train_facts(nodes: int) -> dict[str, Any]:
    """The handmade 2-rank CPU train run, as the probe records it: across n1 and n2 under torchrun (nodes 2), or
    spawned on n1 alone (nodes 1)."""
    facts = handmade_train_facts()
    if nodes == 1:
        for r in facts["ranks"]:
            r["node"], r["local_rank"] = "n1", r["rank"]
        facts.update(nodes=1, mode="2 local process(es), one per CPU worker")
    return facts


def _folder(tmp_path: Path, docs: dict[str, dict[str, Any]]) -> Path:
    folder = tmp_path / "job"
    folder.mkdir(parents=True)
    for name, doc in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(doc))
    return folder


# ---- 1. a failure of a group names no member: NVSentinel's isolation rule

def _diverged(nodes: int) -> dict[str, Any]:
    facts = _train_facts(nodes)
    facts["ranks"][1]["steps"][5]["checksum"] = "00000000deadbeef"
    check = _judged(train, facts)
    assert (check["status"], check["code"], check["owner"]) == ("fail", "TRAIN_REPLICA_MISMATCH", "host"), check
    return _report([check])


def test_nvsentinel_isolation_a_train_failure_across_nodes_lists_no_drain_of_its_writer(tmp_path):
    """Rank 1 on n2 diverged; rank 0 on n1 wrote the collective's report: n1 is no node to drain (make isolate names
    the node), and the fleet still does not pass."""
    found = fleet(_folder(tmp_path, {"nccl.json": _diverged(2)}))
    assert not found.ok and found.drains == {}, found.drains
    assert any("ran across 2 nodes" in n and "make isolate" in n for n in found.notes), found.notes


def test_a_host_fault_of_a_check_on_one_node_still_drains_it(tmp_path):
    """The same failure on one node is that node's; and a per-node check (gpu) is never a collective, whatever
    `nodes` its data carries: its host fault drains the node that wrote it."""
    one = fleet(_folder(tmp_path / "train", {"n1.json": _diverged(1)}))
    assert list(one.drains) == ["n1"] and "TRAIN_REPLICA_MISMATCH" in one.drains["n1"][0]
    lost = gpu_facts()
    lost["devices"][3]["lost"] = True
    check = _judged(gpu, lost)
    assert (check["status"], check["code"]) == ("fail", "GPU_LOST"), check
    check["data"]["nodes"] = 2
    found = fleet(_folder(tmp_path / "gpu", {"n1.json": _report([check])}))
    assert list(found.drains) == ["n1"] and "GPU_LOST" in found.drains["n1"][0]


# ---- 7. make slurm's layout: a node's local report beside the collective's is no duplicate

def _slurm_job(tmp_path: Path, extra: dict[str, dict[str, Any]] | None = None) -> Any:
    docs = {}
    for host in ("n1", "n2"):
        report = _h100(host)
        local = _train_facts(1)
        for r in local["ranks"]:
            r["node"] = host
        report["checks"] = [c for c in report["checks"] if c["name"] != "nccl"] + [_judged(train, local)]
        docs[f"node-{host}.json"] = report
    docs["nccl.json"] = _report([_judged(nccl, variant(nccl_facts(world=16), nodes=2, gpus=8)),
                                 _judged(train, _train_facts(2))])
    return fleet(_folder(tmp_path, {**docs, **(extra or {})}))


def test_make_slurm_s_healthy_job_local_and_collective_train_of_one_node_passes(tmp_path):
    found = _slurm_job(tmp_path)
    assert found.ok and found.duplicates == {}, found.why_not_ok
    assert [n.across for n in found.nodes if n.report == "nccl.json"] == [("nccl", "train")]


def test_two_runs_of_one_scope_on_one_node_are_still_a_duplicate(tmp_path):
    again = _slurm_job(tmp_path / "collective", {"again/nccl.json": _report(
        [_judged(nccl, variant(nccl_facts(world=16), nodes=2, gpus=8)), _judged(train, _train_facts(2))])})
    assert not again.ok and again.duplicates == {"n1": ["again/nccl.json", "nccl.json"]}
    local = _slurm_job(tmp_path / "local", {"again/node-n2.json": _h100("n2")})
    assert not local.ok and set(local.duplicates) == {"n2"}


# ---- 2. ranks verify spawned run on the node that spawned them

SPAWNED_ACROSS = {
    "nodes 2": {"nodes": 2},
    "nodes 8, world 8": {"nodes": 8},
    "a launcher's rank": {"rank": 0},
    "the mode respelt": {"nodes": 2, "mode": " 8 Local  processes"},
}


@pytest.mark.parametrize("change", list(SPAWNED_ACROSS))
def test_verify_grouplayout_a_spawned_group_across_nodes_passes_neither_reader(tmp_path, change):
    report = _h100()
    next(c for c in report["checks"] if c["name"] == "nccl")["data"].update(SPAWNED_ACROSS[change])
    assert report_problem(report) and "spawned" in str(report_problem(report))
    assert decide(report).code == "REPORT_INVALID"
    found = fleet(_folder(tmp_path, {"n1.json": report}))
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


def test_verify_s_own_all_reduce_on_one_node_and_under_torchrun_across_two_still_passes():
    local = _h100()
    across = _report([_judged(gpu, gpu_facts()), _judged(nccl, variant(nccl_facts(world=16), nodes=2, gpus=8))])
    assert next(c for c in across["checks"] if c["name"] == "nccl")["data"]["nodes"] == 2
    for report in (local, across):
        assert report_problem(report) is None and decide(report).kind == "pass"


# ---- 3. a train pass whose replicas show what verify fails

def _train_pass() -> dict[str, Any]:
    check = _judged(train, _train_facts(1))
    assert check["status"] == "pass", check
    return _report([check])


def _replica(index: int, **changes: Any) -> Any:
    def change(report: dict[str, Any]) -> None:
        report["checks"][0]["data"]["replicas"][index].update(changes)
    return change


REPLICAS = {
    "a NaN loss on every replica": lambda r: [_replica(i, loss=math.nan)(r) for i in (0, 1)],
    "a loss written as 'nan'": lambda r: [_replica(i, loss="nan")(r) for i in (0, 1)],
    "a negative loss": lambda r: [_replica(i, loss=-1.0)(r) for i in (0, 1)],
    "a loss past verify's ceiling": lambda r: [_replica(i, loss=1e9)(r) for i in (0, 1)],
    "rank 1 stopped at step 5 of 30": _replica(1, step=5),
    "every rank at step 31 of 30": lambda r: [_replica(i, step=31)(r) for i in (0, 1)],
}


@pytest.mark.parametrize("change", list(REPLICAS))
def test_verify_train_judge_a_pass_whose_replicas_show_a_failure_passes_neither_reader(tmp_path, change):
    report = _train_pass()
    assert report_problem(report) is None and decide(report).kind == "pass"
    REPLICAS[change](report)
    assert report_problem(report) and decide(report).code == "REPORT_INVALID"
    found = fleet(_folder(tmp_path, {"n1.json": report}))
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


# ---- 4. the time to first step: every input read or refused, never dropped

@pytest.mark.parametrize("phases", [{"pull": -5.0, "first_step": 3.0}, {"import_torch": math.nan},
                                    {"cuda_init": "3"}, {"first_batch": True}, {"pull": 1e300}, [1.0, 2.0]],
                         ids=["negative", "nan", "a string", "a bool", "1e300 s", "a list"])
def test_a_phase_no_verify_writes_is_listed_never_dropped(tmp_path, phases):
    docs = {f"n{i}.json": _h100(f"n{i}") for i in (1, 2, 3)}
    docs["n1.json"]["environment"]["phases"] = phases
    found = fleet(_folder(tmp_path, docs))
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"], found.invalid
    assert "phase" in found.invalid[0][1]


def test_the_phases_verify_writes_are_read():
    phases = {"pull": None, "container_start": 1.5, "import_torch": 2.0, "cuda_init": 0.0, "process_group_init": None,
              "first_batch": None, "first_step": 0.25}
    report = _h100()
    report["environment"]["phases"] = copy.deepcopy(phases)
    from scripts.fleet.reports import _phases_problem
    assert _phases_problem(report) is None


# ---- 5. an attestation whose report has no time

class _Key:
    keyid = "ab" * 32


NOW = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)


def _summary(created: str) -> Summary:
    a = Attestation("sha256:" + "1" * 64, Trusted(_Key(), "/keys/release.pub"), "2026-11-25T11:00:00Z",
                    {"checks": [], "created": created}, "pass", None, {"node": "n1"})
    s = Summary("r@sha256:" + "2" * 64, attestations=[a])
    order(s)
    refuse_future(s, 300.0, NOW)
    _decide(s, True)
    expire(s, 7 * 86400.0, NOW)
    return s


@pytest.mark.parametrize("created", ["2026-02-30T11:00:00Z", "2026-11-24T24:00:00Z", "2026-11-25T10:61:00Z"])
def test_slsa_freshness_a_signed_report_created_at_no_time_is_not_believed(created):
    s = _summary(created)
    assert not s.verified and "no time a clock writes" in s.reason, s.reason


def test_a_signed_report_created_before_its_signature_is_still_believed():
    assert _summary("2026-11-25T10:59:00Z").verified


# ---- 6. a variable misspelt on make's command line is said

@pytest.mark.parametrize(("flags", "said"), [
    (" -j2 --jobserver-auth=3,4 -- MAXAGE=7d", "MAXAGE is no variable of the Makefile: did you mean MAX_AGE?"),
    ("s -- max_age=1d", "max_age is no variable of the Makefile: did you mean MAX_AGE?"),
    ("-- METRICSDIR=/tmp/a\\ b", "METRICSDIR is no variable of the Makefile: did you mean METRICS_DIR?"),
    ("s -- CLOCKSKEW=1h", "CLOCKSKEW is no variable of the Makefile: did you mean CLOCK_SKEW?"),
    ("s -- IMGAE=x", "IMGAE is no variable of the Makefile: did you mean IMAGE?"),
])
def test_slurm_prolog_semantics_a_misspelt_make_variable_is_said_never_dropped(tmp_path, capsys, flags, said):
    from scripts.cli import main
    folder = _folder(tmp_path, {f"n{i}.json": _h100(f"n{i}") for i in (1, 2, 3)})
    assert main(["fleet-report"], {"DIR": str(folder), "MAKEFLAGS": flags, "PATH": "/usr/bin:/bin"}) == 0
    assert f"note: {said}" in capsys.readouterr().err


@pytest.mark.parametrize("flags", ["", "s", " -- MAX_AGE=7d DIR=x", "-- DOCKER_BUILDKIT=1 X=a\\ b", "--no-print-directory",
                                   "-- TORCHIMAGES_ISOLATE_TIMEOUT=600 MATRIX=m.yaml"])
def test_the_makefile_s_own_variables_and_a_tool_s_are_not_said(flags):
    from scripts.settings import misspelt_variables
    assert misspelt_variables({"MAKEFLAGS": flags}) == []


# ---- 8. a report named after its file: one host's name, or no node

@pytest.mark.parametrize("file", ["n[1-4],x y.json", "evil\nNODE n9 pass.json", "n1,n2.json", "a b.json"])
def test_slurm_drain_a_report_named_after_a_file_that_is_no_host_name_drains_nothing(tmp_path, file):
    lost = gpu_facts()
    lost["devices"][3]["lost"] = True
    report = _report([_judged(gpu, lost)])
    del report["environment"]["hostname"], report["environment"]["scheduler"]
    found = fleet(_folder(tmp_path, {file: report, "n2.json": _h100("n2")}))
    assert found.drains == {} and not found.ok and [name for name, _ in found.invalid] == [file], found.drains
    assert "no one host name" in found.invalid[0][1]


def test_a_report_named_after_a_file_of_one_host_name_still_drains_it(tmp_path):
    lost = gpu_facts()
    lost["devices"][3]["lost"] = True
    report = _report([_judged(gpu, lost)])
    del report["environment"]["hostname"], report["environment"]["scheduler"]
    found = fleet(_folder(tmp_path, {"n7.json": report}))
    assert list(found.drains) == ["n7"] and found.invalid == []


# ---- 9. told to expect GPUs, verify fails a train run on none

def test_verify_train_judge_a_pass_over_gloo_where_gpus_were_expected_is_refused(tmp_path):
    report = _train_pass()
    assert report["checks"][0]["data"]["backend"] == "gloo"
    report["options"] = {"expect_gpus": 8}
    assert "GPU_NOT_VISIBLE" in str(report_problem(report))
    found = fleet(_folder(tmp_path, {"n1.json": report}))
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]
    report["options"] = {"expect_gpus": 0}           # a CPU node's run, as verify passes it
    assert report_problem(report) is None


# ---- 10. the work on one report is bounded by its values, not its bytes alone

def test_posix_bounded_reads_a_report_of_millions_of_values_is_refused_before_the_validator(tmp_path):
    from scripts.fleet.model import MAX_VALUES
    report = _h100()
    report["checks"][0]["details"] = ["x"] * (MAX_VALUES + 1)
    started = time.monotonic()
    found = fleet(_folder(tmp_path, {"n1.json": report, "n2.json": _h100("n2")}))
    assert time.monotonic() - started < 20             # the validator alone took about 10 s a million
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]
    assert "JSON values" in found.invalid[0][1]


def test_the_values_of_verify_s_own_reports_are_far_below_the_bound():
    from scripts.fleet.model import MAX_VALUES
    from scripts.fleet.reports import _values
    assert 1_000 < _values(_h100()) < MAX_VALUES // 500
    assert _values({"a": [1, {"b": None}]}) == 7       # the object, its key, the list, 1, the object, its key, None


def test_duplicates_are_found_in_one_pass_over_a_large_fleet():
    from scripts.fleet.fleet import duplicates
    from scripts.fleet.model import Node

    def row(report: str, node: str, checks: tuple[str, ...], across: tuple[str, ...] = ()) -> Node:
        return Node(report=report, node=node, verdict="pass", code=None, owner=None, summary="", model="m",
                    replay=False, checks=checks, across=across)
    nodes = [r for i in range(6_000) for r in (row(f"node-n{i}.json", f"n{i}", ("gpu", "train")),
                                                 row(f"nccl-{i}.json", f"n{i}", ("nccl", "train"), ("nccl", "train")))]
    nodes.append(row("again/node-n7.json", "n7", ("gpu",)))
    started = time.monotonic()
    assert duplicates(nodes) == {"n7": ["node-n7.json", "again/node-n7.json"]}
    assert time.monotonic() - started < 2.5             # every report against every other: about 5 s
