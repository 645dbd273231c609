"""Issue 36, a hundred-and-fifth hunt through the public interfaces: the leftovers of the last hunts, judged.

Found:
1. (high, a healthy node drained; class 2, the breaker) The breaker counted only torchimages' own drains against its
   share, so nodes already out of service by anyone else's word (drained by ops, DOWN, FAIL) left its budget whole:
   60 of 100 nodes down and a 10 % breaker let torchimages drain 10 of the 40 still up (a fabric fault taking most of
   a partition out, then every prolog draining the rest). Fix (slurm.breaker / Breaker.open, one rule for the count
   and the re-count): a node another took out of service is no capacity, as a node powered off is not (the share is
   of the nodes that could serve: 4 of the 40 up), and holds none of our places (issue 36: an operator's drain is
   not ours, so an operator's maintenance never uses up the breaker); the line says how many others are out. Docs:
   prolog.md "The breaker", prolog-and-fleet.md "The breaker".
2. (medium, a setting silently not applied; class 1) A knob misspelt by a dropped word (the clock-skew knob without
   CLOCK) drew no "did you mean" hint in the environment nor in the settings file: difflib's ratio put it below both
   cutoffs (two copies of the rule, 0.85 and 0.8), so the knob silently kept its default. Fix (verify/prolog/
   knobhint.py, one rule for both readers): close by letters, or by words (the name's words after the prefix are
   words of one knob alone, in order).
3. (medium, an impossible pass believed; class 6) A passing gpu check listing a device at 1e308 C, -1 bytes of
   memory, or a clock of 1e308 MHz, where no limit of its own rules it out (hunt103 took only a link past its maximum
   and power past twice its limit), was believed by both readers: verify's facts contract refuses such figures.
   Fix (deviceshape.RANGES, both sides, one text): each figure a reader may see held to the contract's range;
   refused, never a pass, never a drain.
5. (high, a broken node passed; class 4, kernel-log evidence kept until acted on, only once) A log read with the
   kernel's stamps, then with the wall clock's while its oldest lines wrapped out (the words of the last read's last
   lines no longer found in order, so boot time + cursor placed the switch): every wall-stamped line up to a second
   past the cursor was skipped as read (`_stale`'s margin for whole-second stamps), an Xid 79 logged just after the
   last read among them, lost for good. Fix (kernlog._stale): within the second either side of the cursor a line
   is read only if its words are among the last read's last lines (its tail); before that second, read; after, not.
6. (medium, an impossible pass believed; class 6) A train pass whose loss_first is 1e308 "fell" to any last loss
   and was believed by both readers (only a negative loss was refused, and a replica's last loss held to 0..1e4).
   Fix (passfacts._train_problem, both sides, one text): loss_first and loss_last held to verify's 0..1e4 too.
4. (medium, wrong counts; class 9, evidence from the future) The fleet report's drain history counted events stamped
   in the future (a clock ahead) among the drains and resumes "of the last 7 d" (now - epoch is negative): a drain
   that no clock has reached yet inflated the window, and the metrics. Fix (scripts/fleet/history.judge): an event
   stamped past now + CLOCK_SKEW is in no window count; the file is listed with how many (`future_events`).

Found, not fixed here:
- (medium, class 1) A bad prolog command-line option under Prolog= (`--breaker ten`, `--hang-runs 1`) is still
  CONFIG_ERROR, exit 0, the node ungated for every job, where the same bad value as a knob keeps its default and
  gates (hunt71 kept the command line so on purpose; docs/prolog.md "A bad knob"). One rule (a known option's bad
  value keeps its default and gates, said and traced; an unknown option stays CONFIG_ERROR) needs config._numbers,
  _share, _count and _folder to go through config._knob, and the tests of hunt71 and test_prolog_streak changed.
- (medium, class 4) The reverse switch (a wall-stamped read, then the kernel's stamps, its words not found) still
  skips a kernel-stamped line up to a second past the wall cursor (kernlog._read_in_wall_time's `+ 1`); the same
  words rule as _stale would fit, with a wall read's tail kept.
- (low, class 6) A replica's checksum is compared across replicas only, never held to a form (a nonsense checksum
  alike on every replica is believed); verify writes it, so the form is verify's to name before the readers hold it.
"""
from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.history import history_json, history_lines, read_state
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, config, kernlog, knobhint, settings, slurm, verdict, xid
from verify.prolog import history as prolog_history

pytestmark = pytest.mark.unit

HANDMADE = Path(__file__).resolve().parent / "data" / "facts-handmade" / "h100-8gpu-handmade"
SKEW_DROPPED = "TORCHIMAGES" + "_SKEW"       # spelt apart: the project's own names are checked to be no near miss
HANG_DROPPED = "TORCHIMAGES" + "_HANG"


# ------------------------------------------------------------------ 1. the breaker counts nodes out of service

def _ours(node: str) -> tuple[str, str]:
    return "drained", slurm.reason(node, "XID_79", "Xid 79", 1795635600)


def _rows(nodes: dict[str, tuple[str, str]]) -> list[slurm.NodeRow]:
    return [slurm.NodeRow(n, state, reason) for n, (state, reason) in nodes.items()]


def test_nvsentinel_breaker_sixty_of_a_hundred_down_leave_ten_percent_of_the_forty_up() -> None:
    nodes = {f"n{i}": ("down*" if i < 60 else "idle", "Not responding" if i < 60 else "none") for i in range(100)}
    gate = slurm.breaker(_rows(nodes), "n99", 0.10)
    assert (gate.allowed, gate.drained_ours, gate.total, gate.out_others, gate.open) == (4, 0, 40, 60, False)
    assert "(60 more out of service by others: drained, DOWN or FAIL, no capacity, not counted)" in gate.line(0.10, "gpu")
    ours = {**nodes, **{f"n{i}": _ours(f"n{i}") for i in range(60, 64)}}
    assert slurm.breaker(_rows(ours), "n99", 0.10).open            # four of ours hold the four places


@pytest.mark.parametrize("state", ["drained", "draining", "down", "DOWN+DRAIN", "fail", "failing", "down*"])
def test_issue_36_an_operator_s_node_out_of_service_is_no_capacity_and_holds_none_of_our_places(state: str) -> None:
    nodes = {"n1": ("idle", "none"), "n2": (state, "ops: maintenance"), "n3": ("idle", "none"), "n4": ("idle", "none"),
             "n5": ("idle", "none"), "n6": _ours("n6")}
    gate = slurm.breaker(_rows(nodes), "n1", 0.40)
    assert (gate.total, gate.out_others, gate.allowed, gate.drained_ours, gate.open) == (5, 1, 2, 1, False)
    assert slurm.breaker(_rows(nodes), "n1", 0.20).open            # one place (of 5), held by n6: ours only


def test_the_breaker_still_counts_this_node_never_and_ours_once() -> None:
    nodes = {"n1": ("down", "Not responding"), "n2": _ours("n2"), "n3": ("idle", "none"), "n4": ("idle", "none")}
    gate = slurm.breaker(_rows(nodes), "n1", 0.50)
    assert (gate.drained_ours, gate.out_others, gate.open) == (1, 0, False)    # this node's own DOWN is not counted
    assert slurm.over(_rows({**nodes, "n1": _ours("n1")}), "n1", 0.50) is False
    assert slurm.over(_rows({**nodes, "n1": _ours("n1"), "n3": ("fail", "ops")}), "n1", 0.50) is True  # re-count
    # a node powered off is still no capacity, out of service or not
    off = {"n1": ("idle", "none"), "n2": ("down~", "ops"), "n3": ("idle", "none")}
    gate = slurm.breaker(_rows(off), "n1", 0.50)
    assert (gate.total, gate.out_others, gate.powered_off, gate.open) == (2, 0, 1, False)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


SLOW = {"name": "nccl", "status": "fail", "code": "BANDWIDTH_LOW", "owner": "host", "summary": "busbw 40 GB/s",
        "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}}}


def test_slurm_prolog_semantics_a_host_fault_on_a_partition_mostly_down_is_counted_on_the_nodes_up(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake.nodes = {"n1": ("idle", "none"), **{f"n{i}": ("down", "fabric") for i in range(2, 8)},
                  **{f"n{i}": ("idle", "none") for i in range(8, 10)}, "n10": _ours("n10")}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
    rc = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_BREAKER": "0.2"})
    err = capsys.readouterr().err
    assert rc == 0 and fake.nodes["n1"] == ("idle", "none"), err     # 4 nodes could serve: 1 place, n10's
    assert re.search(r"BREAKER BANDWIDTH_LOW on n1 .*1 of 4 node\(s\).*6 more out of service by others", err), err


def test_the_same_fault_with_the_partition_up_is_still_drained(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake.nodes = {f"n{i}": ("idle", "none") for i in range(1, 11)}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), SLOW)).encode())
    rc = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_BREAKER": "0.2"})
    err = capsys.readouterr().err
    assert rc == 1 and fake.nodes["n1"][0] == "drained", err


# ------------------------------------------------------------------ 2. a knob misspelt by a dropped word

def test_a_setting_of_ours_a_knob_missing_a_word_is_named_in_the_environment() -> None:
    said = config.misspelt({SKEW_DROPPED: "600", HANG_DROPPED: "4", "TORCHIMAGES_IMAGE": "x", "TORCH_HOME": "/t"})
    assert said == [f"{HANG_DROPPED} is no setting of the prolog's: did you mean TORCHIMAGES_HANG_RUNS? (ignored; "
                    "its default holds)",
                    f"{SKEW_DROPPED} is no setting of the prolog's: did you mean TORCHIMAGES_CLOCK_SKEW? (ignored; "
                    "its default holds)"]


def test_a_setting_of_ours_a_knob_missing_a_word_is_named_in_the_settings_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    (state / "settings").write_text(f"{SKEW_DROPPED}=600\nTORCHIMAGES_BREAKER=0.2\n")
    (state / "settings").chmod(0o644)
    values, problems = settings.read(str(state))
    assert values == {"TORCHIMAGES_BREAKER": "0.2"} and len(problems) == 1, problems
    assert "did you mean TORCHIMAGES_CLOCK_SKEW?" in problems[0] and "the defaults hold" in problems[0]


@pytest.mark.parametrize("name", ["TORCHIMAGES_IMAGE", "TORCHIMAGES_NODE", "TORCHIMAGES_REPORTS", "TORCH_SKEW",
                                  "TORCHIMAGES_SKEW_CLOCK", "TORCHIMAGES_"])
def test_a_name_far_from_every_knob_draws_no_hint(name: str) -> None:
    assert knobhint.near(name, config.KNOBS, cutoff=0.85) is None


# ------------------------------------------------------------------ 3. device figures no board reads

@pytest.mark.parametrize(("field", "value"), [("temperature_c", 1e308), ("temperature_c", -273.5),
                                              ("memory_bytes", -1), ("memory_bytes", 0), ("memory_temperature_c", 1e4),
                                              ("sm_clock_mhz", 1e308), ("power_w", -5.0), ("power_limit_w", 0),
                                              ("temperature_c", float("inf"))])
def test_facts_that_cannot_be_true_a_gpu_pass_beside_a_figure_out_of_range_is_refused(field: str, value: float) -> None:
    from tests.judging import replayed_report
    report = replayed_report(HANDMADE)
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    assert gpu["status"] == "pass" and report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
    gpu["data"]["devices"][2][field] = value
    assert "NVML device 2" in str(report_problem(report)) and field in str(report_problem(report))
    decided = verdict.decide(report)
    assert decided.code == "REPORT_INVALID" and field in decided.summary


def test_figures_at_the_edges_of_their_range_still_pass() -> None:
    from tests.judging import replayed_report
    report = replayed_report(HANDMADE)
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    gpu["data"]["devices"][2].update(temperature_c=-60, memory_bytes=2 ** 50, power_w=0, sm_clock_mhz=0)
    assert report_problem(report) is None and verdict.decide(report).kind == verdict.PASS


# ------------------------------------------------------------------ 4. history from the future in no window count

NOW = 1795635600.0


def test_evidence_from_the_future_is_in_no_fleet_count_of_the_last_seven_days(tmp_path: Path) -> None:
    state = tmp_path / "state"
    rec = prolog_history.record
    rec(str(state), "n1", "drain", "XID_79", "drained", now=NOW - 3600)
    rec(str(state), "n1", "drain", "XID_79", "drained", now=NOW + 30 * 86400)       # a clock a month ahead
    rec(str(state), "n1", "resume", None, "revalidated", now=NOW + 100)              # within the skew: believed
    found = read_state(state, ["n1"], now=NOW)["n1"]
    assert (found.window["drain"], found.window["resume"], found.future) == (1, 1, 1)
    lines = "\n".join(history_lines({"n1": found}))
    assert "history/n1.jsonl: 1 event(s) stamped in the future (past now + CLOCK_SKEW: a clock ahead): not counted " \
           "in the last 7 d" in lines
    assert history_json({"n1": found})[0]["future_events"] == 1


def test_a_history_of_the_past_alone_lists_no_future_trouble(tmp_path: Path) -> None:
    state = tmp_path / "state"
    prolog_history.record(str(state), "n1", "drain", "XID_79", "drained", now=NOW - 3600)
    found = read_state(state, ["n1"], now=NOW)["n1"]
    assert found.future == 0 and "history files with trouble" not in "\n".join(history_lines({"n1": found}))


# ------------------------------------------------------------------ 5. a switch to wall stamps as the log wraps

BOOTED = 1_796_000_000.0
XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _kernel_read() -> kernlog.State:
    lines = [f"[{999.0:12.6f}] host kernel: eth0: link up", f"[{1000.5:12.6f}] host kernel: usb 1-1: new device"]
    state, found = kernlog.advance(kernlog.State("boot-a"), lines, kernlog.Clock("boot-a", 1001.0, BOOTED,
                                                                                  BOOTED + 1001), 86400.0)
    assert found == [] and state.mono == 1000.5 and not state.tail_wall
    return state


@pytest.mark.parametrize("after", [0.7, 1.4])
def test_evidence_is_kept_until_acted_on_an_xid_just_past_the_cursor_read_in_wall_time_is_held(after: float) -> None:
    state = _kernel_read()
    # the wall-stamped read: eth0's line wrapped out of the log (the tail's words end nowhere), usb's read before
    lines = [f"{_iso(BOOTED + 1000.5)} host kernel: usb 1-1: new device",
             f"{_iso(BOOTED + 1000.5 + after)} host kernel: {XID79}"]
    state, found = kernlog.advance(state, lines, kernlog.Clock("boot-a", 1100.0, BOOTED, BOOTED + 1100), 86400.0)
    judged = xid.judge(found)
    assert judged is not None and judged[0] == "XID_HISTORY", found
    assert [e["line"] for e in state.held] == [lines[1]]         # the usb line read once, never again


def test_a_line_read_before_the_switch_is_still_read_once() -> None:
    state = _kernel_read()
    lines = [f"{_iso(BOOTED + 1000.5)} host kernel: usb 1-1: new device", f"{_iso(BOOTED + 1050)} host kernel: x"]
    state, found = kernlog.advance(state, lines, kernlog.Clock("boot-a", 1100.0, BOOTED, BOOTED + 1100), 86400.0)
    assert found == [] and state.held == []
    # an Xid read with the kernel's stamps, then in wall time within the same second: one event, never two
    first = [f"[{999.0:12.6f}] host kernel: eth0: link up", f"[{1000.5:12.6f}] host kernel: {XID79}"]
    state, found = kernlog.advance(kernlog.State("boot-a"), first, kernlog.Clock("boot-a", 1001.0, BOOTED,
                                                                                  BOOTED + 1001), 86400.0)
    assert len(state.held) == 1
    again = [f"{_iso(BOOTED + 1000.5)} host kernel: {XID79}", f"{_iso(BOOTED + 1050)} host kernel: x"]
    state, found = kernlog.advance(state, again, kernlog.Clock("boot-a", 1100.0, BOOTED, BOOTED + 1100), 86400.0)
    assert len(state.held) == 1


# ------------------------------------------------------------------ 6. a train pass's loss out of range

TRAIN_REPORT = Path(__file__).resolve().parent / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train" / "report.json"


@pytest.mark.parametrize(("key", "value"), [("loss_first", 1e308), ("loss_last", 1e5)])
def test_facts_that_cannot_be_true_a_train_pass_of_a_loss_past_verifys_range_is_refused(key: str, value: float) -> None:
    report = json.loads(TRAIN_REPORT.read_text())
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    train = next(c for c in report["checks"] if c["name"] == "train")
    assert report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
    train["metrics"][key]["value"] = value
    assert "verify records a loss of 0 to 10000" in str(report_problem(report))
    assert verdict.decide(report).code == "REPORT_INVALID"
