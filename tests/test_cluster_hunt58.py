"""Round 58 of issue 36's hunt: the three low defects left open, and classes 6 and 8 deeper.

Each test names the practice it follows: NCCL's one rank per GPU (a rank drives cuda:<local rank>), the
fault-isolation rule of scripts/fleet/isolate.py (a node is cleared or named by evidence, never by a partner's
flakiness), NVSentinel's checker rule (a streak of hung runs is evidence, counted in the boot it ran in, whatever the
wall clock did meanwhile), Slurm's prolog semantics (the last line is the verdict; our trouble never drains).
"""
from __future__ import annotations

import copy
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.isolate import Outcome, plan_done
from scripts.fleet.isolate_run import exit_status
from tests.prolog_fakes import STEP_ENV, FakeSlurm, _args, _verify_writes, install_fake
from verify.prolog import cli, history, kernlog

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
THREE_BY_EIGHT = ROOT / "tests/data/real-world/a100-3x8-four-hdr-allreduce-96-busbw-at-nic-line-rate/facts/nccl.json"


# ------------------------------------------------------------------------- (a) more ranks than nodes x GPUs

def _nccl(**change: Any) -> dict[str, Any]:
    record = json.loads(THREE_BY_EIGHT.read_text(encoding="utf-8"))
    record["facts"].update(change)
    return record


def _judge_nccl(record: dict[str, Any]) -> Any:
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    return judging.judge(CHECKS["nccl"], copy.deepcopy(record["facts"]), Options())


@pytest.mark.parametrize(("nodes", "gpus"), [(2, 8), (1, 8), (3, 4), (3, 7)])
def test_nccl_one_rank_per_gpu_more_ranks_than_nodes_times_gpus_is_refused(nodes, gpus):
    """24 ranks over NCCL on fewer than 24 GPUs (2 nodes x 8): two ranks on one GPU is NCCL's "Duplicate GPU", so
    the record cannot be of a run that passed; refused, never judged (FACTS.md)."""
    result = _judge_nccl(_nccl(nodes=nodes, gpus=gpus))
    assert (result.status, result.code) == ("fail", "MEASUREMENT_INVALID"), (result.status, result.code)
    assert "more ranks than" in result.summary and f"nodes {nodes}" in result.summary


def test_nccl_the_corpus_record_of_three_by_eight_is_still_judged():
    result = _judge_nccl(_nccl())
    assert result.code != "MEASUREMENT_INVALID", result.summary


def test_nccl_more_ranks_than_gpus_as_verify_from_facts_replays_it(tmp_path):
    """`python -m verify --from-facts` (verify/replay.py, in-process) on such a record: no pass, and the prolog's
    rule takes the report as the measurement's trouble (not assessed), never a pass."""
    from verify import replay
    from verify.prolog import verdict
    from verify.report import build_report
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "nccl.json").write_text(json.dumps(_nccl(nodes=2, world_size=24)), encoding="utf-8")
    (facts / "host.json").write_bytes((THREE_BY_EIGHT.parent / "host.json").read_bytes())
    folder = replay.load(str(facts), None, {})
    results = [replay.judge(r, folder.options) for r in folder.records]
    report = json.loads(json.dumps(build_report(results, {}, {}, None), default=vars))
    nccl = next(c for c in report["checks"] if c["name"] == "nccl")
    assert nccl["status"] == "fail" and nccl["code"] in ("MEASUREMENT_INVALID", "FACTS_INVALID"), nccl
    assert "more ranks than 16 GPUs" in json.dumps(nccl)
    assert verdict.decide(report).kind != verdict.PASS


@pytest.mark.parametrize(("world", "local", "nodes"), [("16", "8", 2), ("12", "8", 2), ("20", "16", 2), ("8", "8", 1)])
def test_the_probe_counts_a_node_for_the_ranks_left_over(monkeypatch, world, local, nodes):
    """12 ranks with 8 here: another node runs the other 4 (torchrun's LOCAL_WORLD_SIZE is per node). Rounded down
    it read as one node, and a real run's record claimed more ranks than that node's GPUs."""
    from verify.checks.nccl import probing
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("MASTER_ADDR", "n1")
    monkeypatch.setenv("WORLD_SIZE", world)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", local)
    assert probing._nodes() == nodes


# ------------------------------------------------------------------------- (b) two flaky nodes, a healthy third

def _run_flaky(count: int, flaky: tuple[str, ...], phases: tuple[int, ...]) -> Any:
    """Each flaky node fails every other all-reduce it joins (its first, or its second, by `phases`)."""
    nodes = [f"n{i + 1}" for i in range(count)]
    joined = {f: itertools.count(p) for f, p in zip(flaky, phases, strict=True)}
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            return decision
        number += 1
        for pair in pairs:
            fails = [next(joined[f]) % 2 == 0 for f in flaky if f in pair]
            ok = not any(fails)
            results.append((number, Outcome(pair, ok, 10.0 if ok else None, "" if ok else "timed out", 5.0)))


def test_fault_isolation_a_node_that_passed_a_pair_is_never_named_failing():
    """A node with a passing all-reduce on record is not broken every time: its failures may be its partners' (two
    flaky nodes met it in turn). It ends "intermittent, undetermined" (exit 2), never "at fault" (exit 1)."""
    checked = 0
    for count in range(3, 11):
        nodes = [f"n{i + 1}" for i in range(count)]
        for flaky in itertools.combinations(nodes, 2):
            for phases in itertools.product((0, 1), repeat=2):
                d = _run_flaky(count, flaky, phases)
                passed = {n for t in d.tried if t.verdict == "pass" for n in t.outcome.nodes}
                for f in d.named:
                    checked += 1
                    assert f.verdict != "failing" or f.node not in passed, (count, flaky, phases, d.summary)
                if d.failed_pairs:
                    assert exit_status(d) != 0 and not d.summary.startswith("no node at fault"), d.summary
    assert checked


def test_fault_isolation_two_flaky_nodes_one_healthy_partner_who_passed_is_not_named():
    """Six nodes, n1 and n4 flaky: n2 failed with n1, passed with another, failed with n4. Named "failing" before
    this round; now intermittent, beside the flaky pair, and the answer is not "at fault"."""
    results = [(1, Outcome(("n1", "n2"), False, None, "timed out", 5.0)),
               (1, Outcome(("n3", "n4"), True, 10.0, "", 5.0)), (1, Outcome(("n5", "n6"), True, 10.0, "", 5.0)),
               (2, Outcome(("n2", "n5"), True, 10.0, "", 5.0)), (2, Outcome(("n1", "n3"), True, 10.0, "", 5.0)),
               (3, Outcome(("n2", "n4"), False, None, "timed out", 5.0))]
    d, _ = plan_done([f"n{i}" for i in range(1, 7)], results)
    assert "n2" not in {f.node for f in d.named}, d.summary
    assert {"n1", "n4"} <= set(d.undetermined) and exit_status(d) == 2, d.summary


def test_fault_isolation_one_flaky_node_is_the_first_to_inspect_among_the_intermittent():
    """One flaky node (a pass on record) is no longer named failing on its failures; the answer still points at it:
    of the intermittent nodes, the one in the most failed pairs is said first to inspect (its partners failed once)."""
    for count in (4, 6, 8):
        d = _run_flaky(count, ("n2",), (0,))
        assert d.summary.startswith("intermittent, undetermined:") and exit_status(d) == 2, d.summary
        assert "in the most failed pairs: n2 (2 of" in d.summary, d.summary


# ------------------------------------------------------------------------- (c) a clock stepped back

@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _hangs_in_this_boot(tmp_path: Path, ahead_s: float, *ago_s: float) -> None:
    """Hangs of this boot `ago` seconds ago by /proc/uptime, stamped by a wall clock `ahead_s` ahead of now's."""
    clock = kernlog.host_clock(kernlog.PROC)
    assert clock.uptime is not None and clock.boot_id
    for ago in ago_s:
        history.record(str(tmp_path / "state"), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past",
                       now=time.time() - ago + ahead_s,
                       extra={"boot_id": clock.boot_id, "uptime": max(0.0, clock.uptime - ago),
                              "started_up": max(0.0, clock.uptime - ago - 30)})


def test_nvsentinel_checker_rule_a_clock_stepped_back_never_delays_a_hang_drain(tmp_path, fake, monkeypatch, capsys):
    """Two runs of this boot hung (their stamps an hour ahead: the clock was then stepped back by NTP's first sync)
    and this one hangs: three runs in a row by the boot's own clock, so PREFLIGHT_HUNG drains now, not three runs
    later."""
    _hangs_in_this_boot(tmp_path, 3600.0, 200.0, 100.0)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert "hung past its budget on 3 runs in a row" in capsys.readouterr().out


def test_the_prolog_keeps_each_run_s_uptime_in_the_history(tmp_path, fake, monkeypatch):
    _verify_writes(monkeypatch, None, rc=None)
    cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV)
    events = history.read(str(tmp_path / "state"), "n1").events
    assert events and isinstance(events[-1].get("uptime"), float) and isinstance(events[-1].get("started_up"), float)


def test_the_streak_by_uptime_in_one_boot_and_by_the_wall_clock_otherwise():
    def ev(epoch: float, up: Any, boot: str = "b1", start: Any = None) -> dict[str, Any]:
        return {"event": "not-assessed", "code": "PREFLIGHT_TIMEOUT", "epoch": epoch, "time": "t", "boot_id": boot,
                "uptime": up, "started_up": start}
    codes = cli.HANG_CODES
    future = [ev(2e9, 100.0), ev(2e9 + 60, 200.0)]           # stamped ahead of now: a clock since stepped back
    assert history.streak(future, codes, "b1", None, 1e9, uptime=300.0, started_up=290.0) == 2
    assert history.streak(future, codes, "B1 ", None, 1e9, uptime=300.0, started_up=290.0) == 2
    # no uptime kept, another boot's, or an uptime ahead of this boot's now: the wall clock decides (no streak)
    assert history.streak([ev(2e9, None)], codes, "b1", None, 1e9, uptime=300.0) == 0
    assert history.streak([ev(2e9, 100.0, "b0")], codes, "b1", None, 1e9, uptime=300.0) == 0
    assert history.streak([ev(1e9 - 10, 900.0)], codes, "b1", None, 1e9, uptime=300.0) == 0
    for bad in (float("nan"), True, "100", -5.0, float("inf")):
        assert history.streak([ev(2e9, bad)], codes, "b1", None, 1e9, uptime=300.0) == 0, bad
    # overlap by uptime: a run that ended after the later run began is one moment's evidence, counted once
    both = [ev(1e9, 250.0, start=200.0), ev(1e9 + 1, 260.0, start=240.0)]
    assert history.streak(both, codes, "b1", None, 1e9 + 2, uptime=270.0, started_up=265.0) == 1
    # older than the window by uptime, whatever the stamp says
    assert history.streak([ev(1e9, 10.0)], codes, "b1", None, 1e9, window_s=100.0, uptime=300.0) == 0


# ------------------------------------------------------------------------- class 6: facts that cannot be true

def _judge(check: str, facts: dict[str, Any]) -> Any:
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    return judging.judge(CHECKS[check], copy.deepcopy(facts), Options())


def _refused(result: Any, *said: str) -> None:
    assert (result.status, result.code) == ("fail", "MEASUREMENT_INVALID"), (result.status, result.code, result.summary)
    for word in said:
        assert word in result.summary, (word, result.summary)


@pytest.mark.parametrize(("change", "said"), [
    ({"mode": "torchrun group: rank 9 of 8, n1:29500", "rank": 9}, "rank 9 but world_size 8"),
    ({"mode": "torchrun group: rank 0 of 16, n1:29500", "rank": 0}, "but world_size 8"),
    ({"mode": "torchrun group: rank 3 of 8, n1:29500", "rank": 0}, "but rank 0"),
    ({"nccl_available": False}, "nccl_available is false"),
    ({"backend": "gloo", "nccl_available": True}, "backend is gloo, but gpus 8"),
])
def test_nccl_a_group_no_launcher_forms_is_refused(change, said):
    """torchrun's RANK is one of 0 .. WORLD_SIZE - 1, and verify's mode names the RANK and WORLD_SIZE it ran with; the
    probe runs NCCL exactly when torch sees a GPU and NCCL is there. A record saying otherwise passed (FACTS.md)."""
    from tests.verify_handmade import nccl_facts
    _refused(_judge("nccl", {**nccl_facts(), **change}), said)


def test_train_a_gpu_shape_over_gloo_is_refused_never_an_unjudged_cpu_rate():
    """A GPU run recorded as gloo had its rate 'on CPU, not judged': the slow node's TRAIN_SLOW hidden."""
    from tests.verify_handmade import handmade_train_facts
    facts = handmade_train_facts(gpu=True)
    assert _judge("train", facts).code == "TRAIN_SLOW"
    _refused(_judge("train", {**facts, "backend": "gloo"}), "config.device_class is 'gpu'")


@pytest.mark.parametrize(("field", "value", "said"), [
    ("pcie_gen", 6, "above its pcie_gen_max 5"), ("pcie_width", 32, "above its pcie_width_max 16"),
    ("name", "none", "name is 'none'"), ("name", "", "name is ''"),
])
def test_nvml_a_device_no_board_reports_is_refused(field, value, said):
    """NVML's current PCIe link never runs past its Max (nvmlDeviceGetMaxPcieLinkGeneration / Width), and a device
    NVML read (UUID, bus id) has a name: a record saying otherwise passed, a degraded link or an unknown GPU
    unjudged."""
    from tests.verify_handmade import gpu_facts
    facts = gpu_facts()
    facts["devices"][0][field] = value
    _refused(_judge("gpu", facts), said)


FABRIC = ROOT / "tests/data/real-world/a100-ibstatus-eight-hdr-active-plus-ethernet-40/facts/fabric.json"


@pytest.mark.parametrize(("change", "said"), [
    (lambda f: f["adapters"][0]["ports"][0].update(rate_gbps=100.0), "4X HDR is 200 Gb/s"),
    (lambda f: f["adapters"][0]["ports"][0].update(speed="NDR"), "4X NDR is 400 Gb/s"),
    (lambda f: f["adapters"][0]["ports"][0].update(width=0), "width 0"),
    (lambda f: f["adapters"][0]["ports"][0].update(width=64), "width 64"),
    (lambda f: f["adapters"].append(copy.deepcopy(f["adapters"][0])), "listed twice"),
    (lambda f: f["adapters"][0]["ports"].append(copy.deepcopy(f["adapters"][0]["ports"][0])), "port 1 is listed twice"),
])
def test_fabric_a_port_ibstat_never_prints_is_refused(change, said):
    """ibstat's Rate is the port's width times its speed's lane rate (IBTA: 4X HDR 200, 4X NDR 400), a link trains to
    1, 2, 4, 8 or 12 lanes, and a host lists each adapter and port once: a listing counting one twice summed its
    rate twice (a missing rail's capacity made up)."""
    facts = json.loads(FABRIC.read_text(encoding="utf-8"))["facts"]
    assert _judge("fabric", facts).status == "pass"
    change(facts)
    _refused(_judge("fabric", facts), said)


def test_explain_a_port_listed_again_by_ibv_devinfo_v_is_one_port():
    """`ibv_devinfo` then `ibv_devinfo -d mlx4_1 -i 2 -v`: the second listing fills the first, never a second port 2."""
    from verify.explain import ib
    raw = (ROOT / "tests/data/real-world/cx3-two-dual-port-hcas-port2-down-one-polling-ibv-devinfo/raw.txt").read_text()
    for adapter in ib.parse(raw)["adapters"]:
        numbers = [p["port"] for p in adapter["ports"]]
        assert len(numbers) == len(set(numbers)), (adapter["name"], numbers)


# ------------------------------------------------------------------------- class 8: hostile files

def _fleet_node(host: str, failing: bool = False) -> dict[str, Any]:
    from tests.verify_handmade import make_report
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


@pytest.mark.parametrize("cut", ["at-the-end", "by-a-second-begin"])
def test_a_report_block_cut_before_its_end_line_is_listed_and_the_fleet_does_not_pass(tmp_path, cut):
    """`kubectl logs` saved while the pod still printed (or truncated by the log's rotation): the report block has no
    END line. It may have said a fault; skipping it passed the fleet on the node's earlier block. Evidence missing
    is never a pass: listed invalid, with its file and block."""
    from scripts.fleet.cluster import REPORT_BEGIN, REPORT_END
    from scripts.fleet.fleet import fleet, fleet_json
    whole = f"{REPORT_BEGIN}\n{json.dumps(_fleet_node('n2'))}\n{REPORT_END}\n"
    partial = f"{REPORT_BEGIN}\n" + json.dumps(_fleet_node("n2"))[:60] + "\n"
    text = whole + partial if cut == "at-the-end" else partial + whole
    (tmp_path / "n2.log").write_text(text, encoding="utf-8")
    (tmp_path / "n1.json").write_text(json.dumps(_fleet_node("n1")), encoding="utf-8")
    report = fleet(tmp_path)
    assert fleet_json(report)["ok"] is False
    assert any("no ----- END VERIFY REPORT ----- line" in why for _, why in report.invalid), report.invalid


def test_a_log_with_whole_blocks_only_is_read_as_before(tmp_path):
    from scripts.fleet.cluster import REPORT_BEGIN, REPORT_END
    from scripts.fleet.fleet import fleet, fleet_json
    text = f"noise\n{REPORT_BEGIN}\n{REPORT_BEGIN}\n{json.dumps(_fleet_node('n2'))}\n{REPORT_END}\ntail\n"
    (tmp_path / "n2.log").write_text(text, encoding="utf-8")
    report = fleet(tmp_path)
    assert fleet_json(report)["ok"] is True and not report.invalid, report.invalid


@pytest.mark.parametrize("plant", ["fifo", "link", "folder"])
def test_a_run_lock_planted_in_the_state_folder_is_said_never_silently_ignored(tmp_path, fake, monkeypatch, capsys,
                                                                               plant):
    """The shared run lock (STATE/history/.<node>.running) is how a timeout confirmed beside other prologs is told from
    a hung GPU (NVSentinel's rerun-alone rule). A FIFO, link or folder in its place was refused in silence: the
    operator never learnt the busy-host guard was down. Said, before the verdict (Slurm's prolog semantics)."""
    import os

    from tests.prolog_fakes import _gpu, _report
    lock = tmp_path / "state" / "history" / ".n1.running"
    lock.parent.mkdir(parents=True)
    if plant == "fifo":
        os.mkfifo(lock)
    elif plant == "link":
        os.symlink(tmp_path / "elsewhere", lock)
    else:
        lock.mkdir()
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(_args(tmp_path), STEP_ENV) == 0
    err = capsys.readouterr().err
    assert "the run lock" in err and ".n1.running" in err, err


def test_a_signed_report_no_verify_writes_is_no_attestation():
    """`make report`/`make gate` believed a signed report the prolog and the fleet report refuse: one GPU listed twice
    counted 2 (REQUIRE gpus>=2 met by one board). The one plausibility rule (scripts/fleet/plausible.py) holds for
    attestations too (make report and make gate hand it to fetch_report); a report verify writes is still believed."""
    from scripts.fleet.plausible import report_problem
    from scripts.publish.report import check_verify_report
    from tests.verify_handmade import make_report
    schemas = [json.loads((ROOT / "verify" / name).read_text()) for name in ("report.schema.json",
                                                                          "report.v1.schema.json")]
    assert check_verify_report(make_report(), schemas, report_problem) == (None, "pass")
    twice = make_report()
    twice["checks"][0]["data"]["devices"] = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1"}
                                             for i in range(2)]
    twice["checks"][0]["metrics"] = {"nvml_devices": {"value": 2.0, "unit": "count"}}
    problem, _ = check_verify_report(twice, schemas, report_problem)
    assert problem and "none verify writes" in problem and "listed twice" in problem


def test_nvsentinel_checker_rule_a_clock_stepped_back_never_excuses_a_confirmed_timeout_as_a_busy_host(
        tmp_path, monkeypatch, capsys):
    """A run of this boot that ended 100 s before this one began (by /proc/uptime), stamped an hour ahead (the wall
    clock since stepped back), "ended while this one ran" by the wall clock: a confirmed timeout alone was excused as
    a busy host and the hung GPU stayed in service. By the boot's own clock it ended before: the timeout drains."""
    from tests.prolog_fakes import PROLOG_ENV, _gpu, _report
    timeout = {"name": "nccl", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "ran past 15 s"}
    bodies = [json.dumps(_report(_gpu("pass", 8), timeout)).encode(), json.dumps(_report(timeout)).encode()]

    def times_out_twice(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0))   # the run, then its confirmation alone
        return 0, ""
    fake = install_fake(monkeypatch)
    clock = kernlog.host_clock(kernlog.PROC)
    assert clock.uptime is not None and clock.boot_id
    history.record(str(tmp_path / "state"), "n1", "pass", None, "an earlier job's prolog", now=time.time() + 3600,
                   extra={"boot_id": clock.boot_id, "uptime": max(0.0, clock.uptime - 100)})
    monkeypatch.setattr(cli, "_run_verify", times_out_twice)
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert "ended while this one ran" not in capsys.readouterr().out
