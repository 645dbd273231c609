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
from typing import Any, cast

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
    # the gpu check counts its devices (len() of a list): on a failure as on a pass, 8.5, -1 or 5,000 is none (the
    # prolog drained on a failed check's 8.5 GPUs that the fleet report refused)
    ("a failed gpu check on 8.5 devices", lambda d: _gpu_lost(d, 8.5)),
    ("a failed gpu check on -1 devices", lambda d: _gpu_lost(d, -1.0)),
    ("a failed gpu check on 5,000 devices", lambda d: _gpu_lost(d, 5000.0)),
    # a rate no machine measures, or below 0 (the prolog passed both while the fleet report refused them)
    ("an all-reduce passing at -5 GB/s", lambda d: _nccl_pass(wrong=0)(d) or nccl(d)["metrics"].update(
        busbw_max={"value": -5.0, "unit": "GB/s"})),
    ("a warning at 1e13 tokens/s", lambda d: shm(d)["metrics"].update(rate={"value": 1e13, "unit": "tokens/s"})),
    ("a report status fail with no failure and no interruption", lambda d: d.update(status="fail")),
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
    # verify's report.overall: an interrupted run is "fail" though no check failed (SIGTERM while it collected the
    # environment leaves every check skipped INTERRUPTED): verify's own report, read as interrupted, never refused
    ("a run interrupted before any check ended", lambda d: _cut_before_any_check(d)),
    ("a run interrupted after its gpu check passed", lambda d: (nccl(d).update(code="INTERRUPTED", owner="job"),
                                                                d.update(status="fail", interrupted="SIGTERM"))),
]


def _gpu_lost(d: dict[str, Any], devices: float) -> None:
    gpu(d).update(status="fail", code="GPU_LOST", owner="host")
    gpu(d)["metrics"]["nvml_devices"].update(value=devices)
    gpu(d)["data"]["devices"] = []
    d.update(status="fail")


def _cut_before_any_check(d: dict[str, Any]) -> None:
    for c in d["checks"]:
        c.update(status="skip", code="INTERRUPTED", owner="job", metrics={}, data={})
    d.update(status="fail", interrupted="SIGTERM")


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


def test_a_run_verify_cut_off_is_read_as_interrupted_by_the_prolog_and_the_fleet_report(tmp_path):
    """Slurm's prolog semantics: a preflight cut off by a signal is the tool's trouble (not assessed, never a drain),
    named as the interruption it was, not as a forged report (REPORT_INVALID); the fleet report lists it interrupted."""
    import json
    import time

    from scripts.fleet.fleet import fleet
    from tests.verify_handmade import make_report
    report = _written()
    _cut_before_any_check(report)
    assert decide(report).code == "PREFLIGHT_INTERRUPTED", decide(report)
    doc = make_report()
    doc["environment"]["hostname"] = "n1"
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    _cut_before_any_check(doc)
    (tmp_path / "n1.json").write_text(json.dumps(doc))
    seen = fleet(tmp_path)
    assert [(n.node, n.verdict) for n in seen.nodes] == [("n1", "interrupted")] and not seen.ok, seen.invalid
    cut = _written()                   # `make isolate`: a cut run clears no pair, whatever its nccl check says
    _nccl_pass(wrong=0, busbw_max=480.0)(cut)
    cut.update(interrupted="SIGTERM")
    pair = isolate_run.outcome(("a", "b"), cut, 0, 1.0, 8)
    assert not pair.ok and "interrupted" in pair.why


@pytest.mark.parametrize("value", [-1.0, 0.0, 0.5, 1.0, 8.0, 8.5, 4096.0, 4097.0, 1e15])
@pytest.mark.parametrize("status", ["pass", "warn", "fail", "skip"])
@pytest.mark.parametrize("metric", ["nvml_devices", "torch_devices"])
def test_the_device_count_rule_is_one_rule_on_every_status(metric, status, value):
    """The fleet report had its own device-count rule (0 to 4096 on any status) beside the shared one (1 to 4096 on a
    pass): they disagreed on a failed check's 8.5 GPUs (the prolog drained, the fleet refused). One rule now, held by
    the prolog, the fleet report and `make isolate` alike."""
    from verify.prolog import verdict
    assert plausible.NEVER_WRITTEN.keys() == verdict.NEVER_WRITTEN.keys() and plausible.RATE_MOST == verdict.RATE_MOST
    assert plausible.CANNOT_PASS.keys() == verdict.CANNOT_PASS.keys()
    assert plausible.PASS_NEEDS.keys() == verdict.PASS_NEEDS.keys()
    report = _written()
    g = gpu(report)
    code = {"pass": None, "warn": "ECC_UNCORRECTABLE", "fail": "GPU_LOST", "skip": "FACTS_INCOMPLETE"}[status]
    g.update(status=status, code=code, owner=None if status in ("pass", "skip") else "host", data={})
    g["metrics"][metric].update(value=value)
    report["status"] = "fail" if status == "fail" else "warn"
    whole = value == int(value) and 0 <= value <= 4096
    possible = whole and (value >= 1 or status != "pass")
    assert (report_problem(report) is None) == possible == (not _prolog_refuses(report)), \
        (report_problem(report), decide(report))


def test_a_verify_1x_report_which_has_no_codes_is_read_not_refused_as_forged(tmp_path):
    """Report schema 1 (verify 1.x, which the fleet report still reads) has no code and no owner on any check: its
    failed gpu check was listed as "a report no verify wrote", the node's fault hidden among forgeries. It is read
    as the failure it is, with no owner, so no drain line (Slurm's drain reason must be ours and proven)."""
    import json
    import time

    from scripts.fleet.fleet import fleet
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    failed = {"name": "gpu", "status": "fail", "summary": "GPU 3 fell off the bus", "details": [], "metrics": {},
              "remedy": "drain it", "duration_s": 1.0}
    doc = {"schema_version": 1, "tool": {"name": "verify", "version": "1.4.0"}, "created": now, "status": "fail",
           "environment": {"hostname": "n1"}, "options": {}, "checks": [failed]}
    assert report_problem(doc) is None and decide(doc).code == "OWNER_MISSING"
    (tmp_path / "n1.json").write_text(json.dumps(doc))
    seen = fleet(tmp_path)
    assert [(n.node, n.verdict, n.drain) for n in seen.nodes] == [("n1", "fail", [])] and not seen.invalid
    assert not seen.ok
    forged = {**doc, "schema_version": True}            # no version: schema 2's rule, a failure without a code
    assert report_problem(forged) is not None and decide(forged).code == "REPORT_INVALID"


@pytest.mark.parametrize("uuids,twice", [
    (["N/A", "N/A"], False), (["unknown", " none "], False), (["", "na"], False),
    (["GPU-abcd-ef01", "abcdef01"], True), (["GPU-ABCD", "gpu-abcd"], True), (["MIG-1234", "GPU-12-34"], True),
    (["GPU-0001", "GPU-0002"], False)])
def test_one_gpu_listed_twice_is_the_gpu_checks_own_rule(uuids, twice):
    """NVML gives every board its own UUID (nvmlDeviceGetUUID); when it cannot read one, nvidia-smi says N/A. The gpu
    check's judge skips such placeholders and compares UUIDs without prefix, dashes or case: a pass it wrote on two
    N/A boards was refused by the prolog forever (not assessed), and GPU-ABCD beside abcd passed. One comparison now."""
    from verify.checks.gpu import contradictions, gpuidentity
    from verify.prolog import verdict
    assert plausible.NO_UUID == verdict.NO_UUID
    judge = [u for u in uuids if gpuidentity.norm_uuid(u) not in ("", "n/a", "na", "unknown", "none")]
    assert [plausible.board_uuid(u) for u in judge] == [gpuidentity.norm_uuid(u) for u in judge]
    said = contradictions._one_gpu_twice([{"index": i, "uuid": u} for i, u in enumerate(uuids)])
    assert bool(said) == twice
    report = _written()
    gpu(report)["metrics"]["nvml_devices"].update(value=float(len(uuids)))
    gpu(report)["metrics"]["torch_devices"].update(value=float(len(uuids)))
    gpu(report)["data"]["devices"] = [{"index": i, "uuid": u} for i, u in enumerate(uuids)]
    assert (report_problem(report) is not None) == twice == _prolog_refuses(report), (report_problem(report),)


def test_a_gpu_warning_on_nvml_it_could_not_read_is_verify_s_and_hides_no_other_fault():
    """NVML's devices not recorded (a record replayed without them) and torch seeing 8 GPUs: the gpu check warns
    HEALTH_NOT_ASSESSED with nvml_devices 0, as verify really writes it (judged here from the facts). The shared rule
    refused such a warning as "a report no verify writes", and with it the whole report, a wrong all-reduce beside it
    (a host fault) included. Slurm's prolog semantics: only the node's evidence drains, and all of it does."""
    import json

    from tests.verify_handmade import gpu_facts
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    facts = gpu_facts(8)
    facts["devices"] = None                    # NVML listed nothing (gpuprobe.probe_nvml: unknown, not none)
    warned = json.loads(json.dumps(judging.judge(CHECKS["gpu"], facts, Options()).to_dict(), default=vars))
    assert (warned["status"], warned["code"], warned["metrics"]["nvml_devices"]["value"]) == \
        ("warn", "HEALTH_NOT_ASSESSED", 0.0)
    report = _written()
    report["checks"][0] = warned
    assert report_problem(report) is None and not _prolog_refuses(report), (report_problem(report), decide(report))
    nccl(report).update(status="fail", code="NCCL_WRONG_RESULT", owner="host", summary="3 wrong elements")
    report["status"] = "fail"
    assert report_problem(report) is None
    v = decide(report)
    assert (v.kind, v.code) == ("fault", "NCCL_WRONG_RESULT") and v.drains, v


@pytest.mark.parametrize("buses,twice", [
    (["00000000:18:00.0", "0000:18:00.0"], True), (["18:00.0", "00000000:18:00.0"], True),
    (["0000:18:00.0", "0000:2A:00.0"], False), (["N/A", "N/A"], False), (["0001:18:00.0", "18:00.0"], False)])
def test_one_board_listed_twice_by_its_pci_bus_id_is_refused_as_the_gpu_check_refuses_it(buses, twice):
    """NVML gives each board its own PCI bus id: a gpu pass listing one twice (written with and without its zero
    domain) is none verify writes, as its judge says (contradictions._one_gpu_twice); the report rule agrees."""
    from verify.checks.gpu import contradictions, gpuidentity
    devices = [{"index": i, "uuid": UUIDS[i], "pci_bus_id": b} for i, b in enumerate(buses)]
    assert bool(contradictions._one_gpu_twice(cast(Any, devices))) == twice
    assert [plausible.board_bus(b) for b in buses if gpuidentity.norm_bus(b) != "n/a"] == \
        [gpuidentity.norm_bus(b) for b in buses if gpuidentity.norm_bus(b) != "n/a"]
    report = _written()
    for metric in ("nvml_devices", "torch_devices"):
        gpu(report)["metrics"][metric].update(value=float(len(buses)))
    gpu(report)["data"]["devices"] = devices
    assert (report_problem(report) is not None) == twice == _prolog_refuses(report), (report_problem(report),)


def test_an_all_reduce_across_nodes_above_3x_the_inter_node_floor_is_verify_s_own_pass():
    """Across nodes the busbw baseline is a floor (verify/baselines.json: one 400 Gb/s NIC per node; an 8-rail
    fabric is several times it): verify passes 370 GB/s across 2 H100 nodes at 9.25x it. The shared rule refused that
    report as none verify writes ("over 3x its GPU's baseline"), so `make isolate` could clear no pair on such a
    fabric and the fleet report listed every node invalid. On one node 3x its NVLink baseline stays no measurement."""
    import json

    from tests.verify_handmade import nccl_facts, variant
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    across = judging.judge(CHECKS["nccl"], variant(nccl_facts(world=16, peak=370.0), nodes=2), Options())
    check = json.loads(json.dumps(across.to_dict(), default=vars))
    assert check["status"] == "pass" and check["metrics"]["busbw_ratio"]["value"] > 3 and check["data"]["nodes"] == 2
    report = {"schema_version": 2, "status": "pass", "created": "2026-12-01T00:00:00Z", "checks": [check]}
    assert report_problem(report) is None and decide(report).kind == "pass"
    pair = isolate_run.outcome(("a", "b"), report, 0, 1.0, 8)
    assert pair.ok, pair.why
    for data in ({"nodes": 1}, {"nodes": None}, {}, {"nodes": True}, {"nodes": "2"}):
        one = {**report, "checks": [{**check, "data": data}]}
        assert report_problem(one) is not None and _prolog_refuses(one), data
    torchrun = {**report, "checks": [{**check, "data": {"rank": 0}}]}     # a verify that did not say its nodes
    assert report_problem(torchrun) is None and not _prolog_refuses(torchrun)
