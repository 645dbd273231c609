"""Issue 36, round 57 of its hunt through the public interfaces: classes 2 (the breaker under concurrency: a prolog
stopped mid-claim), 4 (evidence kept until acted on: every drain's repair owed, after the latest of them) and 9 (time:
clocks stepped forward and back, drains stamped in the future). Each test names the practice it follows (Slurm's
prolog semantics, NVSentinel's breaker and return-to-service rules, NVIDIA's Xid catalog)."""
from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet import history as fleet_history
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _gpu, _nccl, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, history, kernlog, repair, slurm
from verify.prolog.config import Interrupted
from verify.prolog.deadline import Overran

pytestmark = pytest.mark.unit

UNDRAIN_ENV = {"SLURMD_NODENAME": "n1"}


def _undrain(state: str) -> list[str]:
    return ["--state-dir", state, "--no-kernel-log", "--revalidate", "--node", "n1"]


def _two_drains(tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, first: float, second: float,
                boot: str = "boot-b") -> str:
    """An ECC drain (NVIDIA's catalog: reset or reboot) and a second prolog's "already drained by torchimages" drain
    of the same boot, Slurm's reason stamped at the first."""
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", first))
    state = str(tmp_path / "state")
    facts = {"gpus": 8, "boot_id": boot, "action": "reboot", "check": "gpu"}
    history.record(state, "n1", "drain", "ECC_UNCORRECTABLE", "x", now=first, extra=facts)
    history.record(state, "n1", "drain", "ECC_UNCORRECTABLE", "already drained by torchimages: x", now=second,
                   extra=facts)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    return state


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _clock(monkeypatch: pytest.MonkeyPatch, boot: str, booted: float) -> None:
    now = time.time()
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(boot, 5000.0, booted, now))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: booted)


# ---- class 9 (and 3): a stepped clock's btime is no reboot where a drain recorded this very boot

def test_nvidia_xid_catalog_no_reboot_is_read_from_a_stepped_clock_when_a_drain_recorded_this_boot(tmp_path, fake,
                                                                                                  monkeypatch, capsys):
    """NVIDIA's Xid catalog asks a reset or a reboot for an uncorrectable ECC error; return to service must see it.
    When the history's last drain was not the reason's own (a second prolog recorded "already drained" 15 minutes
    later), the boot id was dropped and /proc/stat's btime decided: btime is now - uptime, so a clock stepped forward
    after the drain (NTP setting a clock that was behind) moved the boot past the drain and the node was resumed in
    the very boot both drains recorded. Now every drain since the node was last in service names its boot: this one."""
    t0 = time.time() - 3600
    state = _two_drains(tmp_path, fake, monkeypatch, t0, t0 + 900)
    _clock(monkeypatch, "boot-b", t0 + 60)          # btime after the drain's stamp: the clock was stepped forward
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 5
    assert fake.nodes["n1"][0] == "drained" and "same boot (boot-b)" in capsys.readouterr().err


def test_nvidia_xid_catalog_another_boot_still_resumes_after_two_drains(tmp_path, fake, monkeypatch):
    """The same two drains, and a reboot since (another boot id, begun after both): resumed."""
    t0 = time.time() - 3600
    state = _two_drains(tmp_path, fake, monkeypatch, t0, t0 + 900)
    _clock(monkeypatch, "boot-c", t0 + 1000)
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


# ---- class 4: the repair must come after the latest fault recorded, not only the first

def test_nvidia_xid_catalog_a_reset_before_a_later_drain_repairs_no_fault_recorded_after_it(tmp_path, fake,
                                                                                          monkeypatch, capsys):
    """NVSentinel's return to service owes the repair of every drain since the node was last in service. A GPU reset
    recorded between the first drain and a second prolog's drain (another ECC error, 400 s later: past the 300 s that
    tie a history line to Slurm's reason) counted as the repair of both: the node was resumed with a fault logged after
    its only reset. Now the reset must follow the latest drain."""
    t0 = time.time() - 3600
    state = _two_drains(tmp_path, fake, monkeypatch, t0, t0 + 400)
    _clock(monkeypatch, "boot-b", t0 - 600)
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(t0 + 100, "gpu-aaaaaaaa", True)], ""))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 5
    assert fake.nodes["n1"][0] == "drained" and "no GPU reset recorded since" in capsys.readouterr().err
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(t0 + 500, "gpu-aaaaaaaa", True)], ""))
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


# ---- class 9: a drain stamped in the future hides no flap

def _flapped(tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, drained_at: float) -> str:
    now = time.time()
    fake.info = {"Gres": "gpu:8"}
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "NCCL_WRONG_RESULT", "x", now=now - 7200, extra={"gpus": 8, "check": "nccl"})
    history.record(state, "n1", "resume", None, "x", now=now - 3600)
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "NCCL_WRONG_RESULT", "x", drained_at))
    history.record(state, "n1", "drain", "NCCL_WRONG_RESULT", "x", now=drained_at, extra={"gpus": 8, "check": "nccl"})
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), _nccl())).encode())     # the drained check measures again
    return state


def test_nvsentinel_flap_rule_a_drain_stamped_in_the_future_is_within_the_window(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's flap rule: a node drained again within the window of its resume needs hardware inspection. A drain
    stamped 30 days ahead (its clock ahead when it drained, set right since) put the gap past 7 days, and
    `make undrain` resumed the flapping node without inspection. Evidence from the future tells nothing of the gap:
    flagged, refused."""
    state = _flapped(tmp_path, fake, monkeypatch, time.time() + 30 * 86400)
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 5
    assert fake.nodes["n1"][0] == "drained" and "in the future" in capsys.readouterr().err
    assert history_events(tmp_path)[-1][0] == "inspect"


def test_nvsentinel_flap_rule_a_drain_within_the_clock_skew_is_timed_as_stamped(tmp_path, fake, monkeypatch):
    """Within TORCHIMAGES_CLOCK_SKEW a stamp is believed as it is: a drain stamped a minute ahead, an hour after its
    resume, is a flap within 7 d; with a tolerance of 30 d the drain 30 d ahead is believed too, and past the window."""
    state = _flapped(tmp_path, fake, monkeypatch, time.time() + 60)
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 5
    assert history.failed_again_after_resume(history.read(state, "n1").events, now=time.time(), skew_s=60.0)


def test_nvsentinel_flap_rule_the_clock_skew_knob_is_the_tolerance(tmp_path, fake, monkeypatch):
    """TORCHIMAGES_CLOCK_SKEW is the tolerance: at 3 h the drain stamped 2 h ahead is believed, past a window of 0.01 d
    (the knob stops at a day since tests/test_cluster_lows82.py; this was 31 d and a drain 30 d ahead)."""
    state = _flapped(tmp_path, fake, monkeypatch, time.time() + 2 * 3600)
    assert cli.main([*_undrain(state), "--flap-window", "0.01"], {**UNDRAIN_ENV, "TORCHIMAGES_CLOCK_SKEW": "3h"}) == 0


def test_fleet_report_flags_a_flap_whose_drain_is_stamped_in_the_future():
    """The fleet report re-reads the prolog's flap rule: the same drain from the future is flagged there too, with
    make fleet-report's CLOCK_SKEW as the tolerance."""
    now = time.time()
    lines = [{"schema": 1, "time": "t1", "epoch": now - 7200, "node": "n1", "event": "drain", "code": "X", "detail": ""},
             {"schema": 1, "time": "t2", "epoch": now - 3600, "node": "n1", "event": "resume", "code": None, "detail": ""},
             {"schema": 1, "time": "t3", "epoch": now + 30 * 86400, "node": "n1", "event": "drain", "code": "X",
              "detail": ""}]
    text = "\n".join(json.dumps(x) for x in lines)
    assert fleet_history.judge(fleet_history.parse("n1", "f", text), now).inspect
    assert not fleet_history.judge(fleet_history.parse("n1", "f", text), now, skew_s=31 * 86400).inspect


# ---- class 2: a prolog stopped between its claim and the re-count

@pytest.mark.parametrize("stop", [Interrupted(signal.SIGTERM), Overran("the prolog reached its cap")],
                         ids=["SIGTERM", "cap"])
@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["Prolog=", "first-step"])
def test_nvsentinel_breaker_a_claim_cut_short_before_its_recount_is_given_back(tmp_path, fake, monkeypatch, capsys,
                                                                             stop, env):
    """NVSentinel's breaker counts, claims and re-counts; a claim the re-count cannot verify is given back. A SIGTERM
    (Slurm's, an operator's) or the prolog's own cap between the claim and the re-count left the node drained with
    our reason, no drain in its history (make undrain: "no drain in its history") and the line "the node stays in
    service". Now the claim is given back and said; the history has the refusal."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    real, claimed, stopped = fake.run, list[str](), list[object]()

    def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if claimed and argv[0].endswith("sinfo") and not stopped:
            stopped.append(stop)          # one stop: a second signal is ignored while the first is handled
            raise stop
        out = real(argv, dry_run, quiet)
        claimed.extend(a for a in argv if a == "state=drain")
        return out
    monkeypatch.setattr(slurm, "run", run)
    status = cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], env)
    assert status in (0, 3, 128 + signal.SIGTERM)
    assert claimed and fake.nodes["n1"] == ("idle", "none"), fake.nodes["n1"]
    assert ("drain-refused", "GPU_LOST") in history_events(tmp_path)
    assert "the claim was given back" in capsys.readouterr().err


def test_nvsentinel_breaker_a_cut_claim_slurm_will_not_give_back_is_a_drain_on_record(tmp_path, fake, monkeypatch):
    """The give-back refused by Slurm: the node stays drained with our reason, so that is a drain on record (with
    what return to service must prove), never "given back"."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    real, claimed, stopped = fake.run, list[str](), list[object]()

    def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if claimed and argv[0].endswith("sinfo") and not stopped:
            stopped.append(1)
            raise Interrupted(signal.SIGTERM)
        if "state=resume" in argv:
            return 1, "slurm_update error: Invalid node state specified"
        out = real(argv, dry_run, quiet)
        claimed.extend(a for a in argv if a == "state=drain")
        return out
    monkeypatch.setattr(slurm, "run", run)
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], PROLOG_ENV) == 0
    assert fake.nodes["n1"][0] == "drained" and history_events(tmp_path)[-2:] == [
        ("drain", "GPU_LOST"), ("not-assessed", "PROLOG_INTERRUPTED")]


# ---- class 9: an outcome stamped in the future is no prolog beside this one

TIMEOUT = {"name": "nccl", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "ran past 15 s"}


def test_nvsentinel_checker_rule_an_outcome_from_the_future_makes_no_confirmed_hang_a_busy_host(tmp_path, fake,
                                                                                               monkeypatch, capsys):
    """NVSentinel's checker rule reruns a stalled check alone; a run that ended while the confirmation ran made it
    not alone (busy.py). A pass stamped a day ahead (the node's clock was ahead, set right since) read as "ended
    while this one ran" on every run for a day: each confirmed hang was told a busy host, not assessed. Only an
    outcome stamped between this run's start and now is a run beside it: the confirmed hang drains."""
    history.record(str(tmp_path / "state"), "n1", "pass", None, "its clock a day ahead", now=time.time() + 86400)
    bodies = [json.dumps(_report(_gpu("pass", 8), TIMEOUT)).encode(), json.dumps(_report(TIMEOUT)).encode()]

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--budget", "30"], PROLOG_ENV) == 1
    assert fake.nodes["n1"][0] == "drained" and "ended while this one ran" not in capsys.readouterr().out


# ---- class 4 and 9: a GPU reset spends the Xids logged before it by the kernel's stamps, never a stepped clock's

XID79 = "[ 5000.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
UUID = "GPU-52f37cd4-d92a-7b6d-2b9f-9ab862e27708"


def _reset_record(real: float, mono: float) -> str:
    """NVSentinel's record of a GPU reset as `journalctl -o json` prints it: both of the journal's stamps."""
    return json.dumps({"__REALTIME_TIMESTAMP": str(int(real * 1e6)), "__MONOTONIC_TIMESTAMP": str(int(mono * 1e6)),
                       "_UID": "0", "SYSLOG_IDENTIFIER": repair.RESET_TAG,
                       "MESSAGE": f"GPU reset executed: {UUID}, success: true"})


def test_the_reset_record_is_read_with_both_of_the_journals_stamps():
    """`journalctl -o json` gives each record its wall-clock stamp (the drain's time is one: return to service) and
    its monotonic one (the kernel log's: the gate); a short-unix line still reads, without the latter."""
    assert repair.journal_argv()[-2:] == ["-o", "json"]
    (one,) = repair.parse_resets([_reset_record(1783669085.417257, 4000.5)])
    assert (one.uuid, one.success, one.mono) == (UUID.lower(), True, 4000.5) and abs(one.time - 1783669085.417257) < 1e-5
    short = f"1783669085.417257 n1 {repair.RESET_TAG}[42]: GPU reset executed: {UUID}, success: true"
    assert repair.parse_resets([short]) == [repair.Reset(1783669085.417257, UUID.lower(), True)]
    raw = json.loads(_reset_record(1783669085.0, 1.0))
    raw["MESSAGE"] = list(raw["MESSAGE"].replace("true", "fals\xe9").encode("latin-1"))    # no UTF-8: its bytes
    (bad,) = repair.parse_resets([json.dumps(raw)])
    assert not bad.success
    assert repair.parse_resets(['{"MESSAGE": "GPU reset executed: x"', "[" * 100000, "{}"]) == []


def test_nvidia_xid_catalog_an_xid_after_the_reset_is_evidence_whatever_the_clock_did_since(tmp_path, fake,
                                                                                          monkeypatch):
    """NVIDIA's Xid catalog: a GPU reset repairs the Xids before it, not an Xid 79 after it. The gate put each held
    Xid at /proc/stat's btime + its stamp, and btime is now - uptime: a clock stepped back an hour after the reset
    (NTP setting a clock that ran ahead) moved an Xid 79 logged 1,000 s after the reset to before it, and spent it;
    the node whose GPU fell off the bus after its repair was never drained. The journal's monotonic stamp of the
    record is compared with the kernel's own: the Xid drains."""
    booted = time.time() - 6000.0 - 3600.0            # the boot's wall time after the clock was stepped back an hour
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0, booted, time.time()))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    # logged at 4000 s since boot, when the clock read an hour ahead of what it reads now
    record = _reset_record(booted + 3600.0 + 4000.0, 4000.0)
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (repair.parse_resets([record]), ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY #")


def test_nvidia_xid_catalog_an_xid_before_the_reset_is_still_spent_by_its_stamp(tmp_path, fake, monkeypatch):
    """And the Xid 79 logged before the reset (5000 s, the reset at 5500 s) is spent by it, however the clock
    stands: the node passes."""
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0, time.time() - 6000.0, time.time()))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    record = _reset_record(time.time() - 500.0 - 7200.0, 5500.0)       # its wall stamp two hours behind
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (repair.parse_resets([record]), ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"


def test_nvidia_xid_catalog_a_reset_before_the_drain_repairs_it_by_no_stepped_clock(tmp_path, fake, monkeypatch,
                                                                                   capsys):
    """Return to service compared the reset record's wall-clock stamp with the drain's: a reset at 4,000 s since boot,
    the clock then stepped back an hour, and a drain at 4,600 s (its stamp 50 minutes before the reset's) read the
    reset as its repair, and `make undrain` resumed the Xid-drained node unrepaired. The drain records its uptime;
    in its own boot the journal's monotonic stamp decides: refused, until a reset after it."""
    real_reset = time.time() - 2000.0
    drained_at = real_reset + 600.0 - 3600.0                      # stamped by the clock stepped back an hour
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "XID_HISTORY", "Xid 79", drained_at))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "XID_HISTORY", "Xid 79", now=drained_at,
                   extra={"gpus": 8, "boot_id": "boot-a", "uptime": 4600.0, "action": "reboot", "check": "kernel-log"})
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0,
                                                                                       time.time() - 6000.0 - 3600.0,
                                                                                       time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: time.time() - 6000.0 - 3600.0)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    records = [_reset_record(real_reset, 4000.0)]
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (repair.parse_resets(records), ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    args = ["--state-dir", state, "--revalidate", "--node", "n1"]
    assert cli.main(args, UNDRAIN_ENV) == 5 and fake.nodes["n1"][0] == "drained"
    assert "no GPU reset recorded since" in capsys.readouterr().err
    records.append(_reset_record(real_reset + 900.0, 4900.0))       # a reset after the drain: its repair
    assert cli.main(args, UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_a_drain_records_the_uptime_its_repair_is_timed_against(tmp_path, fake, monkeypatch):
    """The drain's facts carry this boot's uptime beside its boot id."""
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], PROLOG_ENV) == 1
    drain = history.last_drain(history.read(str(tmp_path / "state"), "n1").events)
    assert drain is not None and (drain["boot_id"], drain["uptime"]) == ("boot-a", 6000.0)


def test_nvsentinel_breaker_a_stop_while_scontrol_drains_gives_back_only_what_slurm_took(tmp_path, fake, monkeypatch):
    """A stop signal while `scontrol update state=drain` runs: a drain Slurm took is given back; one it never took
    is nothing to give back (no resume of a node that was not drained, no drain on record)."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    real = fake.run
    for took in (True, False):
        def run(argv: list[str], dry_run: bool = False, quiet: bool = False, took: bool = took) -> tuple[int, str]:
            if "state=drain" in argv:
                if took:
                    real(argv, dry_run, quiet)
                raise Interrupted(signal.SIGTERM)
            return real(argv, dry_run, quiet)
        monkeypatch.setattr(slurm, "run", run)
        fake.nodes["n1"] = ("idle", "none")
        fake.calls.clear()
        assert cli.main(["--state-dir", str(tmp_path / f"state{took}"), "--no-kernel-log"], PROLOG_ENV) == 0
        assert fake.nodes["n1"] == ("idle", "none")
        assert any("state=resume" in c for c in fake.calls) is took
        events = [(e["event"], e["code"]) for e in history.read(str(tmp_path / f"state{took}"), "n1").events]
        assert ("drain-refused", "GPU_LOST") in events and ("drain", "GPU_LOST") not in events


# ---- class 4: an Xid the breaker held is kept until acted on, however long the breaker holds

def test_nvidia_xid_catalog_an_xid_79_the_breaker_held_past_the_lookback_still_drains(tmp_path, fake, monkeypatch):
    """NVIDIA's Xid catalog asks a reset or a reboot for Xid 79; no amount of time repairs it. An Xid 79 the breaker
    kept from draining (its share held by other drains awaiting repair) was dropped with the watched Xids once older
    than --lookback (24 h): the next runs passed the node whose GPU fell off the bus. Drain-worthy evidence is now
    held until a drain, a reset or a reboot spends it; watched Xids still count within the lookback only."""
    uptime = [6000.0]
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", uptime[0]))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1))
    args = ["--state-dir", str(tmp_path / "state"), "--breaker", "0.25"]
    assert cli.main(args, STEP_ENV) == 4                    # the breaker holds it
    uptime[0] += 25 * 3600.0
    assert cli.main(args, STEP_ENV) == 4                    # a day later: still held, still refused
    fake.nodes["n2"] = ("idle", "none")
    assert cli.main(args, STEP_ENV) == 1 and fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY #")


def test_watched_xids_past_the_lookback_still_drop_out():
    """Xid 94 (watched: "3 on one device within the lookback") held a day ago no longer counts."""
    watched = "[ 5000.000001] NVRM: Xid (PCI:0000:3b:00): 94, Contained ECC error"
    state, _ = kernlog.advance(kernlog.State(), [watched], kernlog.Clock("boot-a", 6000.0), 24 * 3600.0)
    assert state.held
    later, _ = kernlog.advance(state, [], kernlog.Clock("boot-a", 6000.0 + 25 * 3600.0), 24 * 3600.0)
    assert later.held == []


def test_nvidia_xid_catalog_a_reset_stamped_ahead_of_a_clock_stepped_back_still_spends_its_xid(tmp_path, fake,
                                                                                              monkeypatch):
    """The gate believed a reset record only within TORCHIMAGES_CLOCK_SKEW of now by its wall stamp: the breaker held
    an Xid 79, the GPU was reset (recorded), the clock then stepped back an hour, and the next run read the record
    as from the future and drained the repaired node on the Xid its reset had spent. Its monotonic stamp (5,500 s,
    within this boot's uptime) says when it was: the Xid at 5,000 s is spent, the node passes."""
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0, time.time() - 6000.0, time.time()))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    record = _reset_record(time.time() + 3600.0 - 500.0, 5500.0)      # its wall stamp an hour ahead of now
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (repair.parse_resets([record]), ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    impossible = _reset_record(time.time() - 500.0, 7000.0)           # past this boot's uptime: no record of it
    monkeypatch.setattr(repair, "read_resets", lambda timeout: (repair.parse_resets([impossible]), ""))
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(
        [XID79.replace("5000.000001", "5900.0")], "journalctl"))
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 1


# ---- class 2: make undrain stopped while scontrol resumes

@pytest.mark.parametrize("took", [True, False], ids=["resumed", "not-resumed"])
def test_nvsentinel_flap_rule_a_resume_cut_short_by_a_stop_is_on_record_when_slurm_took_it(tmp_path, fake, monkeypatch,
                                                                                          took):
    """NVSentinel's flap rule reads the resume before a drain. `make undrain` stopped (SIGTERM, Ctrl-C) while scontrol
    resumed the node left it in service with no resume in its history: its next drain read as no flap, and the fault
    that came back was resumed again without inspection. A resume Slurm took is recorded; one it did not is not."""
    state = str(tmp_path / "state")
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "NCCL_WRONG_RESULT", "x", time.time() - 60))
    history.record(state, "n1", "drain", "NCCL_WRONG_RESULT", "x", now=time.time() - 60,
                   extra={"gpus": 8, "check": "nccl"})
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(), _nccl())).encode())
    real = fake.run

    def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if "state=resume" in argv:
            if took:
                real(argv, dry_run, quiet)
            raise Interrupted(signal.SIGINT)
        return real(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", run)
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 128 + signal.SIGINT
    events = [e for e, _ in history_events(tmp_path)]
    assert ("resume" in events) is took and (fake.nodes["n1"][0] == "idle") is took


# ---- class 4: a flood of kernel lines never pushes an Xid out of the read

@pytest.mark.host
def test_nvidia_xid_catalog_an_xid_79_before_a_flood_of_kernel_lines_is_still_read(tmp_path, fake, monkeypatch):
    """The kernel log is read as its newest 32 MiB (never all in memory): a flood of other kernel lines after an Xid
    79 (a job's faults, a chatty driver logging megabytes before the next prolog) pushed the Xid out of that window,
    and the node whose GPU fell off the bus passed, the Xid never read. The driver's lines (NVRM, nvidia-nvswitch) of
    what is dropped are kept (at most 4 MiB of them): the Xid drains. Here the window is 64 KiB, the flood 1 MiB."""
    import os
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = (f"#!/bin/sh\necho '{XID79}'\nawk 'BEGIN {{ for (i = 0; i < 12000; i++) printf \"[ 5001.%06d] host "
              "kernel: eth0: link flap, a line of the flood that is long enough\\n\", i }'\n")
    (bin_dir / "journalctl").write_text(script)
    (bin_dir / "journalctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(kernlog, "OUTPUT_CAP", 64 << 10)
    log = kernlog.read(10)
    assert log.lines is not None and log.lines[0] == XID79 and len(log.lines) < 12000
    assert all(line.startswith("[ 5001.") for line in log.lines[1:]), log.lines[1][:80]
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], PROLOG_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY #")
