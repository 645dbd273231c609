"""One rule for "a report verify could have written", held by its three readers.

The prolog (verify/prolog/verdict.py, inside verify), the fleet report and `make isolate`'s runner (both through
scripts/fleet/plausible.py: the host side never imports verify) each refuse a report no verify writes. They used to
differ (a warning without a code passed the prolog and the fleet report, and was refused by `make isolate`); one
table now holds them to one answer. verify's report schema 2 is the letter: a code of its catalog on exactly what
did not pass, one result per check, a report status that is "fail" exactly when a check failed, every figure a
finite number, and no pass its own figures contradict.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from scripts.fleet import isolate_run, plausible, reports
from scripts.fleet.plausible import report_problem
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit

UUIDS = [f"GPU-{i:08x}-0000-0000-0000-000000000000" for i in range(8)]


def _written() -> dict[str, Any]:
    """A report as verify writes one: a passing gpu check on 8 GPUs, a warning and a skip, each coded."""
    g = {"name": "gpu", "status": "pass", "code": None, "owner": None, "summary": "8 GPUs",
           "metrics": {"nvml_devices": {"value": 8.0, "unit": "count"}, "torch_devices": {"value": 8.0, "unit": "count"}},
           "data": {"devices": [{"index": i, "uuid": u} for i, u in enumerate(UUIDS)]}}
    s = {"name": "shm", "status": "warn", "code": "SHM_TOO_SMALL_FOR_LOADER", "owner": "job", "summary": "small",
           "metrics": {"shm_bytes": {"value": 67108864.0, "unit": "B"}}}
    n: dict[str, Any] = {"name": "nccl", "status": "skip", "code": "FACTS_INCOMPLETE", "owner": None, "summary": "not exercised",
            "metrics": {}}
    return {"schema_version": 2, "status": "warn", "checks": [g, s, n]}


def _check(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def find(d: dict[str, Any]) -> dict[str, Any]:
        return next(c for c in d["checks"] if c["name"] == name)
    return find


gpu, shm, nccl = _check("gpu"), _check("shm"), _check("nccl")  # each: the report's check of that name


def _nccl_pass(**metrics: float) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        nccl(d).update(status="pass", code=None, metrics={k: {"value": v, "unit": "x"} for k, v in metrics.items()})
    return change


REFUSED: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("a warning without a code", lambda d: shm(d).update(code=None)),
    ("a skip without a code", lambda d: nccl(d).update(code=None)),
    ("a failure without a code", lambda d: (shm(d).update(status="fail", code=None), d.update(status="fail"))),
    ("a pass with a code", lambda d: gpu(d).update(code="GPU_LOST")),
    ("a code outside the catalog", lambda d: shm(d).update(code="BANANA")),
    ("a lower-case code", lambda d: shm(d).update(code="shm_too_small")),
    ("a status none of verify's", lambda d: shm(d).update(status="maybe")),
    ("a check held twice", lambda d: d["checks"].append(copy.deepcopy(gpu(d)))),
    ("a failed report with no failure", lambda d: d.update(status="fail")),
    ("a passing report with a failure", lambda d: (shm(d).update(status="fail"), d.update(status="pass"))),
    ("a report status none of verify's", lambda d: d.update(status="great")),
    ("no checks at all", lambda d: d.update(checks=[])),
    ("a check name no check has", lambda d: gpu(d).update(name="GPU!")),
    ("a NaN figure on a warning", lambda d: shm(d)["metrics"]["shm_bytes"].update(value=float("nan"))),
    ("an infinite figure on a failure", lambda d: (shm(d).update(status="fail"), d.update(status="fail"),
                                                    shm(d)["metrics"]["shm_bytes"].update(value=float("inf")))),
    ("a figure that is a string", lambda d: gpu(d)["metrics"]["nvml_devices"].update(value="8")),
    ("a figure that is true", lambda d: gpu(d)["metrics"]["nvml_devices"].update(value=True)),
    ("an all-reduce passing with wrong elements", _nccl_pass(wrong=5, busbw_max=100)),
    ("an all-reduce passing at 4x its baseline", _nccl_pass(wrong=0, busbw_ratio=4.0)),
    ("an all-reduce passing above any link", _nccl_pass(wrong=0, busbw_max=1e300)),
    ("a gpu pass on no NVML device", lambda d: gpu(d)["metrics"]["nvml_devices"].update(value=0.0)),
    ("a gpu pass on 1e15 devices", lambda d: gpu(d)["metrics"]["torch_devices"].update(value=1e15)),
    ("a gpu pass on 7.5 devices", lambda d: gpu(d)["metrics"]["torch_devices"].update(value=7.5)),
    ("a gpu pass listing one UUID twice", lambda d: gpu(d)["data"]["devices"][1].update(uuid=UUIDS[0].lower())),
    ("a gpu pass listing 7 of 8 devices", lambda d: gpu(d)["data"]["devices"].pop()),
    # NVIDIA's Xid catalog: an uncorrectable ECC error and a lost GPU are the node's, and a lost GPU never a warning
    ("an uncorrectable ECC error given to the job", lambda d: (gpu(d).update(status="fail", code="ECC_UNCORRECTABLE",
                                                                             owner="job"), d.update(status="fail"))),
    ("a lost GPU as a warning", lambda d: gpu(d).update(status="warn", code="GPU_LOST", owner="host")),
    ("a lost GPU as a skip", lambda d: gpu(d).update(status="skip", code="GPU_LOST", owner="host")),
    ("a loader's shared memory given to the host", lambda d: shm(d).update(owner="host")),
]
KEPT: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("the report as written", lambda d: None),
    ("a coded failure with its owner", lambda d: (shm(d).update(status="fail", code="SHM_TOO_SMALL", owner="host"),
                                                  d.update(status="fail"))),
    ("an all-reduce passing within every bound", _nccl_pass(wrong=0, busbw_max=480.0, busbw_ratio=1.02)),
    ("a failed gpu check with no device", lambda d: (gpu(d).update(status="fail", code="GPU_LOST", owner="host"),
                                                     gpu(d)["metrics"]["nvml_devices"].update(value=0.0),
                                                     d.update(status="fail"))),
    ("an application's Xid the job's, as a warning", lambda d: gpu(d).update(status="warn", code="XID_ERROR",
                                                                             owner="job")),
    ("a lifetime ECC count as a warning", lambda d: gpu(d).update(status="warn", code="ECC_UNCORRECTABLE",
                                                                  owner="host")),
]


def _prolog_refuses(report: dict[str, Any]) -> bool:
    return decide(report).code == "REPORT_INVALID"


@pytest.mark.parametrize("what,change", REFUSED, ids=[w for w, _ in REFUSED])
def test_a_report_no_verify_writes_is_refused_by_the_prolog_the_fleet_report_and_make_isolate(what, change):
    """Slurm's prolog semantics: a report no verify writes is not assessed (no drain, no pass); the fleet report lists
    it invalid; `make isolate` clears no pair on it. One rule, one answer from each of the three readers."""
    report = _written()
    change(report)
    fleet, prolog = report_problem(report), _prolog_refuses(report)
    assert fleet is not None and prolog, (what, fleet, decide(report))


@pytest.mark.parametrize("what,change", KEPT, ids=[w for w, _ in KEPT])
def test_a_report_verify_writes_is_believed_by_all_three(what, change):
    report = _written()
    change(report)
    assert report_problem(report) is None and not _prolog_refuses(report), (what, report_problem(report), decide(report))


def test_the_fleet_report_and_make_isolate_read_reports_by_the_one_rule():
    """Not two copies on the host side: the fleet report's refusal and the runner's are plausible.report_problem."""
    report = _written()
    shm(report).update(code=None)
    assert vars(isolate_run)["report_problem"] is plausible.report_problem
    assert str(report_problem(report)) in str(reports._forged(report))
    pair = isolate_run.outcome(("a", "b"), report, 0, 1.0, 8)
    assert not pair.ok and "without a code" in pair.why
