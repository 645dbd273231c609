"""Issue 36, class 7 (a third hunt): `make isolate`'s runner, through its own entry (`python -m
scripts.fleet.isolate_run`, as the batch script starts it), never clears a node it saw fail and never ends unanswered.

The practice followed is scripts/fleet/isolate.py's fault-isolation rule (a node is cleared only by evidence; NVSentinel
and Meta's GCM alike treat a flapping check as a fault to investigate, not as health) and Slurm's allocation: a node
name is one host name `scontrol show hostnames` prints, never a hostlist srun would widen. A flaky node, a node failing
only beside one partner, a report nested 100,000 deep, a forged bus bandwidth, a knob that is no number: each ends
with the answer or one line, never exit 0 as clean and never a traceback. srun and scontrol are stand-ins on PATH
(Python scripts that record their argv and write the pair's report as verify would), so the runner's own process,
rounds and files are real; the plan and verdict it prints are isolate.py's."""
from __future__ import annotations

import json
from typing import Any

import pytest

from scripts.fleet.isolate_run import PORTS, outcome, port_for
from scripts.fleet.plausible import BUSBW_MAX_GBPS
from tests.isolate_fakes import NODES, _isolate


@pytest.mark.host
@pytest.mark.parametrize("flaky", NODES)
def test_a_flaky_node_is_named_or_intermittent_never_clean(tmp_path, flaky):
    """The node fails every other all-reduce it joins (its first): named, or intermittent, and the exit is not 0."""
    status, lines = _isolate(tmp_path, NODES, {"flaky": [flaky]})
    assert status != 0 and flaky in lines[-1] and not lines[-1].startswith("isolate: no node at fault"), lines


@pytest.mark.host
def test_two_nodes_that_fail_only_together_are_intermittent(tmp_path):
    status, lines = _isolate(tmp_path, NODES[:4], {"pairbad": [["n1", "n2"]]})
    assert status == 2 and lines[-1].startswith("isolate: intermittent, undetermined: n1, n2"), lines


@pytest.mark.host
def test_the_answer_is_the_last_line_and_the_file_holds_it(tmp_path):
    status, lines = _isolate(tmp_path, NODES[:4], {"bad": ["n3"]})
    assert status == 1 and lines[-1].startswith("isolate: at fault: n3 (failing)"), lines
    assert json.loads((tmp_path / "isolate.json").read_text())["named"][0]["node"] == "n3"


@pytest.mark.host
def test_a_lone_failing_pair_says_either_node_not_a_common_cause(tmp_path):
    status, lines = _isolate(tmp_path, NODES[:2], {"bad": ["n2"]})
    assert status == 2 and "either node" in lines[-1] and "3 or more" in lines[-1], lines


@pytest.mark.host
@pytest.mark.parametrize("raw", ["[" * 100_000 + "]" * 100_000, "{", ""], ids=["deep", "cut", "empty"])
def test_a_report_no_verify_writes_is_the_pair_s_failure_never_a_traceback(tmp_path, raw):
    status, lines = _isolate(tmp_path, NODES[:4], {"raw": raw})
    assert status == 2 and "no pair passed" in lines[-1], lines


@pytest.mark.host
@pytest.mark.parametrize(("hosts", "said"), [(["n[1-2]", "n3"], "'n[1-2]'"), (["n 1", "n2"], "'n 1'"),
                                             (["n1", "n1"], "named again"), (["n1"], "at least two")])
def test_slurm_s_allocation_a_node_list_that_leaves_no_pair_is_refused_before_any_step(tmp_path, hosts, said):
    """Each entry that is no one host name (or a host again) is not assessed in its own line (round 52: the others
    are judged, tests/test_cluster_hunt52.py); with fewer than two hosts left, the last line refuses: no pair ran."""
    status, lines = _isolate(tmp_path, hosts, {})
    assert status == 2 and said in " ".join(lines) and "at least two" in lines[-1] and len(lines) <= 2, lines
    assert not (tmp_path / "scen.json.count").exists()          # no srun step ran


@pytest.mark.host
@pytest.mark.parametrize(("env", "args", "said"), [
    ({"TORCHIMAGES_ISOLATE_TIMEOUT": "abc"}, (), "TORCHIMAGES_ISOLATE_TIMEOUT='abc'"),
    ({"TORCHIMAGES_ISOLATE_TIMEOUT": "nan"}, (), "TORCHIMAGES_ISOLATE_TIMEOUT='nan'"),
    ({"TORCHIMAGES_ISOLATE_TIMEOUT": "-1"}, (), "TORCHIMAGES_ISOLATE_TIMEOUT='-1'"),
    ({}, ("--gpus", "-1"), "--gpus='-1'"), ({"RDZV_PORT": "70000"}, (), "RDZV_PORT='70000'"),
    ({"TORCHIMAGES_ISOLATE_STEP": "[[["}, (), "TORCHIMAGES_ISOLATE_STEP is not"),
    ({"TORCHIMAGES_REPORTS": "/nonexistent/reports"}, (), "is not a folder"),
    ({"TORCHIMAGES_ISOLATE_TIMEOUT": "\u0663\u0660"}, (), "TORCHIMAGES_ISOLATE_TIMEOUT="),      # Arabic-Indic digits
    ({}, ("--gpus", "\uff18"), "--gpus="), ({"RDZV_PORT": "2_0000"}, (), "RDZV_PORT='2_0000'"),
], ids=["timeout-word", "timeout-nan", "timeout-negative", "gpus-negative", "port", "step-json", "reports",
        "timeout-arabic-digits", "gpus-fullwidth", "port-underscore"])
def test_a_knob_that_is_wrong_is_one_line_before_any_step(tmp_path, env, args, said):
    """A timeout of nan once timed every pair out and blamed 'the image, the network, the tool'; 'abc' crashed."""
    status, lines = _isolate(tmp_path, NODES[:2], {}, env, args)
    assert status == 2 and len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "scen.json.count").exists()          # no step ran


@pytest.mark.unit
def test_a_bus_bandwidth_no_link_reaches_is_no_result():
    """One forged 1e300 GB/s pair would be every median's reference and call each healthy pair slow."""
    def report(busbw: float) -> dict[str, Any]:
        return {"status": "pass", "created": "2026-12-01T00:00:00Z",
                "checks": [{"name": "nccl", "status": "pass", "metrics": {"busbw_max": {"value": busbw},
                                                                         "wrong": {"value": 0}},
                            "data": {"nodes": 2, "world_size": 16}}]}
    assert outcome(("a", "b"), report(BUSBW_MAX_GBPS), 0, 1.0, 8).ok
    forged = outcome(("a", "b"), report(1e300), 0, 1.0, 8)
    assert not forged.ok and "busbw_max 1e+300: above any link" in forged.why, forged


@pytest.mark.unit
def test_the_rendezvous_ports_stay_ports_on_any_allocation():
    """10,000 nodes x 15 rounds from the top of make slurm's range once passed 2^16."""
    low, high = PORTS
    assert port_for(20000, 5) == 20005
    assert all(low <= port_for(39999, 15 * 10_000 + i) < high for i in range(0, 10_000, 997))


@pytest.mark.host
def test_an_empty_timeout_knob_is_its_default(tmp_path):
    status, lines = _isolate(tmp_path, NODES[:2], {}, {"TORCHIMAGES_ISOLATE_TIMEOUT": ""})
    assert status == 0 and lines[-1].startswith("isolate: no node at fault"), lines
    # and said (empty is unset: the one rule of every TORCHIMAGES_* knob, tests/test_cluster_lows36.py)
    assert "isolate: note: TORCHIMAGES_ISOLATE_TIMEOUT is empty: read as unset, its default holds (300 s)" in lines


def _pair_report(**change: Any) -> dict[str, Any]:
    check = {"name": "nccl", "status": "pass", "code": None, "summary": "x",
             "metrics": {"busbw_max": {"value": 10.0}, "wrong": {"value": 0}}, "data": {"nodes": 2, "world_size": 16}}
    check.update({k: v for k, v in change.items() if k in ("status", "code")})
    return {"status": change.get("report_status", check["status"]), "created": "2026-12-01T00:00:00Z",
            "checks": [check]}


@pytest.mark.unit
@pytest.mark.parametrize("change, said", [
    ({"code": "BANANA"}, "no code of verify's"),                       # a code outside verify/codes.py
    ({"status": "warn", "code": "nccl_wrong_result"}, "no code of verify's"),
    ({"code": "NCCL_WRONG_RESULT"}, "passes with code"),               # a pass that carries a failure's code
    ({"status": "warn"}, "warn without a code"),                       # a warning verify never leaves uncoded
    ({"report_status": "fail"}, "which its checks contradict"),       # the report fails, its one check passes
    ({"status": "passed"}, "none of verify's"),
    ({"report_status": None}, "none of verify's"),
    ({"status": ["pass"]}, "none of verify's"), ({"report_status": {}}, "none of verify's"),     # JSON of another type
])
def test_a_pair_report_no_verify_writes_is_no_result_never_a_pass(change, said):
    """verify's catalog (verify/codes.py): it codes exactly what did not pass, with one of its codes, and a report's
    status is its checks'. A pair's report outside that is no result: the pair is not cleared on it."""
    result = outcome(("a", "b"), _pair_report(**change), 0, 1.0, 8)
    assert not result.ok and "a report no verify writes" in result.why and said in result.why, result.why
    assert outcome(("a", "b"), _pair_report(), 0, 1.0, 8).ok
    twice = _pair_report()
    twice["checks"].append({**twice["checks"][0], "status": "fail", "code": "NCCL_WRONG_RESULT"})
    twice["status"] = "fail"
    assert "2 times" in outcome(("a", "b"), twice, 0, 1.0, 8).why          # the first one read was the pass


@pytest.mark.unit
@pytest.mark.parametrize("planted", ["fifo", "link to /dev/zero", "folder"])
def test_a_pair_report_that_is_no_regular_file_never_blocks_the_runner(tmp_path, planted):
    """The pair's step (the job's image) writes its report: a FIFO left there blocked the runner's open() for good,
    and the isolation never answered. Opened without blocking or following a link, it is no report: the pair's
    failure, never a wait."""
    import os

    from scripts.fleet.isolate_run import _read_report
    path = tmp_path / "round1-pair1.json"
    if planted == "fifo":
        os.mkfifo(path)
    elif planted == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    assert _read_report(path) is None


@pytest.mark.host
def test_a_link_left_where_a_pair_s_log_goes_is_never_followed(tmp_path):
    """A step's image writes into the reports folder: a link it left at round1-pair1.log made the runner truncate
    and write the file it named. The link is removed and a new file written; the file it named is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (tmp_path / "round1-pair1.log").symlink_to(victim)
    status, lines = _isolate(tmp_path, NODES[:2], {})
    assert status == 0 and victim.read_text() == "keep me\n", lines
    assert not (tmp_path / "round1-pair1.log").is_symlink()
