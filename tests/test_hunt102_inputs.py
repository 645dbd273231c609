"""Issue 36, a hundred-and-second hunt through the public interfaces: classes 1 (our settings), 2 (the breaker and
others' reasons), 3 (return to service) and 4 (kernel-log evidence).

Found:
- Class 1, an empty knob in slurmd's environment put the default over the operator's settings file (medium: the
  operator's breaker, hang count or metrics folder silently not applied). "An empty knob is unset" (the shell's
  ${X:-default}), but an unset variable lets the state folder's `settings` file speak, and an empty one did not: a
  systemd drop-in's `Environment=TORCHIMAGES_BREAKER=` over a file's `TORCHIMAGES_BREAKER=0` (drain nothing during a
  roll-out) ran on 0.10 and drained, said only as "its default holds". Repro: settings `TORCHIMAGES_BREAKER=0`,
  slurmd's `TORCHIMAGES_BREAKER=`, a lost GPU: `DRAINED n1`. Fix (verify/prolog/settings.py pick, blank_over_file):
  an empty variable gives way to the file's value, said in one line.
- Class 1, the trace of a run that could not parse went nowhere where TORCHIMAGES_STATE_DIR was empty or relative
  (medium: silent loss of the trace). The run itself reads such a knob as a bad one whose default holds
  (/var/lib/torchimages); the trace (cli._trace) read it as given, and a blank or relative folder is no place for
  a history, so a `--bugdet 3` typo in slurm.conf left no not-assessed event and no metrics for node_exporter. Repro:
  `TORCHIMAGES_STATE_DIR=' '` (or `state`) in slurmd's environment, `--bugdet 3`: no history line. Fix
  (verify/prolog/cli.py trace_state): the folder the run would have used; an empty TORCHIMAGES_METRICS_DIR is unset
  there too (the settings file's is salvaged).
- Class 4, a wall-stamped kernel-log line longer than a held line's bound lost its stamp when kept (high: a healthy
  node drained on evidence outside the lookback, or from the future). kernlog._short kept only the kernel's
  `[ 1234.5]` stamp ahead of the driver's words, so a long `2026-12-02T10:00:00+00:00 host kernel: NVRM: Xid ...`
  line (journalctl -o short-iso, dmesg --time-format iso) was held stampless: a watched Xid 94 logged 23 h before the
  first read was aged from that read, and two more two hours later made "3 on one device within the lookback"
  (XID_REPEATED) of Xids 25 h apart; and a drain-worthy line stamped an hour ahead (a clock stepped back) was deferred
  stampless and read as evidence on the next run, the clock still behind it. Fix (verify/prolog/kernformat.py stamp):
  a cut line keeps its stamp in either format.

- Class 2, a node someone else took out of service without a drain was drained over their reason (high: a broken
  node resumed). The claim refused only a node already drained with another reason; one an operator set FAIL
  (`scontrol update nodename=n1 state=fail reason="PSU fan, RMA 4711"`: expected to fail soon) or DOWN while a job's
  prolog or first step ran got our drain, which replaced their reason with ours, and `make undrain NODE=n1` then
  resumed it: Slurm's resume clears FAIL and DOWN too, so the node they had taken out came back on a preflight that
  never tested their fault. Repro: sinfo lists n1 `fail|PSU fan ...`, a lost GPU: `DRAINED n1`. Fix
  (verify/prolog/slurm.py NodeRow.taken_out, drain._claim): left so, the refusal on record, the evidence kept.

- Classes 3 and 4, a GPU reset stood for the node reboot the driver asked for (high: a broken node passed or
  resumed). NVIDIA's Xid 154 names the recovery the GPU needs (nvmlDeviceGpuRecoveryAction_t): 0x1 a GPU reset,
  0x2 a node reboot, 0x7 a system reboot. Every drain-worthy Xid was "a reset or a reboot": at the gate a GPU reset
  recorded since spent a held `Xid 154 ... to 0x2 (Node Reboot Required)` (the node passed), and `make undrain`
  took NVSentinel's reset record as the repair of a drain that stood on one (resumed without the reboot). Repro: an
  Xid 154 to 0x2 on GPU 3 (0000:13:00) held behind someone else's drain, then `GPU reset executed: <GPU 3>,
  success: true` and the node back in service: `prolog: PASS`; or drained for it, the same record, then make
  undrain: `RESUMED`. Fix: verify/shared/xidcatalog.py reboot_only (by the action's number or its words);
  xid.Finding.reboot; kernlog.spent_before keeps such an event; the drain records `reboot_only` (also where the
  report's GPU says NVML's recovery action `reboot`: repair.reboot_asked) and repair.repair_problem accepts only a
  reboot for it.
- Class 3, a garbled drain line whose proof fields were of another type was read as a drain without them (medium:
  the repair asked less than the drain did). `"faulted": "0000:13:00"` (a text, not the list the prolog writes) was
  ignored (any GPU's reset stood for GPU 3's), and `"reboot_only": "yes"` read as no reboot asked. Fix
  (verify/prolog/history.py _proof_typed): such a line is garbled, which return to service refuses on, said.
- Class 4, a held wall-stamped Xid was dropped when the clock was stepped back (high: a broken node passed). The
  kept state's events are believed only where no line is from the future (kernlog.believable), judged against now:
  an Xid 79 read in wall time and held behind the breaker, then NTP set back a clock that had run two hours fast,
  was "stamped in the future" on the next run and dropped, while its line, read before, was behind the cursor: lost
  for good. Repro: kernlog.advance of `<wall stamp> NVRM: Xid (...): 79` at the right time, then of the same log
  with the clock 2 h back: no finding. Fix: a wall-stamped held event is judged against when its read took it
  (`read`, kept with it by that read's clock), never against a clock that moved since.

Practices: Slurm's Prolog= semantics (a setting of ours never drains and always leaves a trace); NVSentinel's rules
(never undo a cordon that is not ours; return to service proves the repair); NVIDIA's Xid catalog (its actions,
reset or reboot, seen done; "3 on one device within the lookback"); evidence from the future is refused until its time has come.
"""
from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, history, kernlog, repair, unparsed, xid

pytestmark = pytest.mark.unit

LOST = {"name": "gpu", "status": "fail", "code": "GPU_LOST", "owner": "host", "summary": "GPU 3 lost", "metrics": {}}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _operators_settings(state: Path, text: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "settings").write_text(text)
    state.chmod(0o755)
    (state / "settings").chmod(0o644)


@pytest.mark.parametrize("blank", ["", "  "])
def test_slurm_prolog_semantics_an_empty_knob_leaves_the_settings_file_s_value(tmp_path: Path, fake: Any,
                                                                               monkeypatch: pytest.MonkeyPatch,
                                                                               capsys: pytest.CaptureFixture[str],
                                                                               blank: str) -> None:
    """The operator's file says drain nothing (TORCHIMAGES_BREAKER=0); slurmd's environment gives the knob empty, which
    is unset: the file's 0 holds (not drained, exit 0 under Prolog=), and the empty variable is said."""
    state = tmp_path / "state"
    _operators_settings(state, "TORCHIMAGES_BREAKER=0\n")
    _verify_writes(monkeypatch, json.dumps(_report(LOST)).encode())
    rc = cli.main(["--state-dir", str(state), "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_BREAKER": blank})
    assert rc == 0 and fake.nodes["n1"] == ("idle", "none")
    assert ("drain-refused", "GPU_LOST") in history_events(tmp_path)
    assert "TORCHIMAGES_BREAKER is empty: read as unset" in capsys.readouterr().err


def test_an_empty_knob_without_the_file_s_value_keeps_its_default(tmp_path: Path, fake: Any,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """No settings file: an empty TORCHIMAGES_BREAKER is the default 0.10 (one of four nodes may drain), said so."""
    _verify_writes(monkeypatch, json.dumps(_report(LOST)).encode())
    cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_BREAKER": ""})
    assert fake.nodes["n1"][0] == "drained"
    assert "TORCHIMAGES_BREAKER is empty: read as unset, its default holds (0.1)" in capsys.readouterr().err


@pytest.mark.parametrize("knob", [" ", "state", "./var/torchimages"])
def test_slurm_prolog_semantics_a_typo_s_trace_goes_where_the_run_keeps_its_history(tmp_path: Path, fake: Any,
                                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                                    knob: str) -> None:
    """A misspelt option (CONFIG_ERROR, exit 0 under Prolog=) beside an empty or relative TORCHIMAGES_STATE_DIR (a bad
    knob whose default holds): its not-assessed event is in the default folder's history, as the run's would be, and
    its metrics where that folder's settings file names them."""
    default = tmp_path / "default"
    monkeypatch.setattr(unparsed, "DEFAULT_STATE_DIR", str(default))
    _operators_settings(default, f"TORCHIMAGES_METRICS_DIR={tmp_path / 'metrics'}\n")
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["--bugdet", "3", "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_STATE_DIR": knob})
    assert rc == 0
    assert [(e["event"], e["code"]) for e in history.read(str(default), "n1").events] == \
        [("not-assessed", "CONFIG_ERROR")]
    assert 'code="CONFIG_ERROR"' in (tmp_path / "metrics" / "torchimages_n1.prom").read_text()
    assert not (tmp_path / knob.strip() / "history").exists() if knob.strip() else True


def test_a_typo_s_trace_with_an_empty_metrics_knob_salvages_the_file_s_folder(tmp_path: Path, fake: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty TORCHIMAGES_METRICS_DIR is unset for the trace too: the settings file's folder gets the CONFIG_ERROR,
    never node_exporter left showing the last pass."""
    state = tmp_path / "state"
    _operators_settings(state, f"TORCHIMAGES_METRICS_DIR={tmp_path / 'metrics'}\n")
    cli.main(["--bugdet", "3", "--state-dir", str(state)], {**PROLOG_ENV, "TORCHIMAGES_METRICS_DIR": " "})
    assert 'code="CONFIG_ERROR"' in (tmp_path / "metrics" / "torchimages_n1.prom").read_text()


def test_make_undrain_s_relative_state_folder_keeps_its_crash_s_trace(tmp_path: Path, fake: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`make undrain STATE_DIR=state` reads a relative folder from where it runs: its own crash's trace goes there
    (it went nowhere: a relative folder was no place for it)."""
    def crash(*args: Any) -> int:
        raise RuntimeError("boom")
    monkeypatch.setattr(cli, "_run", crash)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--revalidate", "--node", "n1", "--state-dir", "state"], {}) == 3
    assert history_events(tmp_path) == [("not-assessed", "PROLOG_CRASHED")]


# ---- class 2: a node someone else took out of service without a drain ----

@pytest.mark.parametrize("state", ["fail", "failing", "down", "down*", "idle+fail"])
def test_nvsentinel_never_undoes_a_cordon_that_is_not_ours_a_down_or_failed_node(tmp_path: Path, fake: Any,
                                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                                 capsys: pytest.CaptureFixture[str],
                                                                                 state: str) -> None:
    """An operator's `scontrol update state=fail reason=...` (or DOWN) while the prolog runs: a host fault found then
    is left so, their reason kept (never replaced by a drain of ours that make undrain would resume, clearing their
    FAIL or DOWN); not drained, exit 0 under Prolog=, the refusal on record."""
    theirs = "PSU fan, RMA 4711 [root@2026-12-02T10:00:00]"
    fake.nodes["n1"] = (state, theirs)
    _verify_writes(monkeypatch, json.dumps(_report(LOST)).encode())
    assert cli.main(_prolog_args(tmp_path), dict(PROLOG_ENV)) == 0
    assert fake.nodes["n1"] == (state, theirs)
    assert not any(a[:1] == ["update"] for a in fake.calls)
    assert history_events(tmp_path)[-1] == ("drain-refused", "GPU_LOST")
    assert "already out of service" in capsys.readouterr().err


def test_a_node_in_service_is_still_drained(tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same fault on a node in service (mixed: jobs on it) is drained, our reason given."""
    fake.nodes["n1"] = ("mixed", "none")
    _verify_writes(monkeypatch, json.dumps(_report(LOST)).encode())
    assert cli.main(_prolog_args(tmp_path), dict(PROLOG_ENV)) == 1
    assert fake.nodes["n1"][0] == "drained" and fake.nodes["n1"][1].startswith("torchimages:GPU_LOST #")


def _prolog_args(tmp_path: Path) -> list[str]:
    return ["--state-dir", str(tmp_path / "state"), "--no-kernel-log"]


# ---- class 4: a long wall-stamped kernel-log line keeps its stamp ----

NOW = 1_800_000_000.0
BOOTED = NOW - 10 * 86400
PAD = " x" * 600            # past kernlog.LINE_MAX: the line is kept cut


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _xid(t: float, code: int = 94, words: str = "Contained ECC error.") -> str:
    return f"{_iso(t)} host kernel: NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, {words}{PAD}"


def _clock(now: float) -> kernlog.Clock:
    return kernlog.Clock("boot-a", now - BOOTED, BOOTED, now)


def test_nvidia_xid_catalog_a_long_watched_xid_ages_by_its_own_stamp():
    """A watched Xid 94 logged 23 h before the first read, then two more two hours later: 25 h apart is not "3 on
    one device within the lookback" (24 h), however long its line."""
    state, _ = kernlog.advance(kernlog.State("boot-a"), [_xid(NOW - 23 * 3600)], _clock(NOW), 24 * 3600.0)
    assert kernlog.wall(state.held[0]["line"]) == NOW - 23 * 3600       # cut, but stamped
    later = NOW + 2 * 3600
    state, found = kernlog.advance(state, [_xid(NOW - 23 * 3600), _xid(later - 60), _xid(later - 30)],
                                   _clock(later), 24 * 3600.0)
    assert xid.judge(found) is None and len(state.held) == 2


def test_evidence_from_the_future_a_long_deferred_line_waits_for_its_time():
    """An Xid 79 stamped an hour ahead (the clock stepped back since) is deferred with its stamp: the next run a
    minute later still waits; once the clock has caught up it drains."""
    line = _xid(NOW + 3600, 79, "GPU has fallen off the bus.")
    state, found = kernlog.advance(kernlog.State("boot-a"), [line], _clock(NOW), 86400.0)
    assert xid.judge(found) is None and kernlog.wall(state.deferred[0]) == NOW + 3600
    state, found = kernlog.advance(state, [line], _clock(NOW + 60), 86400.0)
    assert xid.judge(found) is None
    state, found = kernlog.advance(state, [line], _clock(NOW + 3700), 86400.0)
    assert xid.judge(found) is not None and xid.judge(found)[0] == "XID_HISTORY"    # type: ignore[index]


def test_nvidia_xid_catalog_three_long_watched_xids_within_the_lookback_drain_through_the_prolog(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the prolog (Prolog=, a passing report): the first long Xid 94, 23 h old, ages out before the next two,
    so the node passes; a third within the hour drains it (the stamp is read, the count still made)."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    t0 = time.time() - 3 * 3600         # the runs' clock: the last run is now
    state, lines = tmp_path / "state", [_xid(t0 - 23 * 3600)]

    def run(now: float) -> int:
        clock = kernlog.Clock("boot-a", now - (t0 - 86400), t0 - 86400, now)
        monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: clock)
        monkeypatch.setattr(kernlog, "read", lambda timeout, seen=list(lines): kernlog.KernelLog(seen, "journalctl"))
        return cli.main(["--state-dir", str(state), "--lookback", "24"], dict(PROLOG_ENV))

    assert run(t0) == 0
    lines += [_xid(t0 + 2 * 3600 - 60), _xid(t0 + 2 * 3600 - 30)]
    assert run(t0 + 2 * 3600) == 0 and fake.nodes["n1"] == ("idle", "none")
    lines.append(_xid(t0 + 2 * 3600 + 60))
    run(t0 + 2 * 3600 + 120)
    assert fake.nodes["n1"][0] == "drained" and "XID_REPEATED" in fake.nodes["n1"][1]
    assert os.path.exists(kernlog.state_path(str(state), "n1"))


# ---- class 3: a reboot the driver asked for is never stood for by a GPU reset ----

UUIDS = [f"GPU-{i:08x}-1111-2222-3333-444444444444" for i in range(8)]
XID154 = "[ 5000.000001] NVRM: Xid (PCI:0000:13:00): 154, GPU recovery action changed from 0x0 (None) to {}"
REBOOT, RESET = "0x2 (Node Reboot Required)", "0x1 (GPU Reset Required)"


def _node(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> float:
    """This boot (9,000 s old, by the wall clock now), its kernel log read once, verify's report of 8 GPUs each
    placed by its bus id (GPU 3 on 0000:13:00); the boot time."""
    booted = time.time() - 9000
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
        "boot-a", time.time() - booted, booted, time.time()))
    logs = iter([lines])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs, []), "journalctl"))
    devices = [{"index": i, "ecc": [True, True], "uuid": UUIDS[i], "pci_bus_id": f"00000000:{0x10 + i:02X}:00.0"}
               for i in range(8)]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(data={"devices": devices}))).encode())
    return booted


def _gpu3_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """NVSentinel's record of GPU 3's successful reset, now."""
    monkeypatch.setattr(repair, "read_resets", lambda timeout, t=time.time() + 1: (
        [repair.Reset(t, UUIDS[3].lower(), True)], ""))


@pytest.mark.parametrize("action, drained", [(REBOOT, True), (RESET, False)], ids=["node-reboot", "gpu-reset"])
def test_nvidia_xid_catalog_a_held_xid_154_asking_for_a_reboot_is_not_spent_by_a_gpu_reset(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, action: str, drained: bool) -> None:
    """An Xid 154 held behind someone else's drain, then GPU 3 reset and the node back in service: a reboot the driver
    asked for still stands (drained, XID_HISTORY); a reset it asked for is spent by that reset (a pass)."""
    _node(monkeypatch, [XID154.format(action)])
    fake.nodes["n1"] = ("drained", "ops: looking at it")
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, dict(PROLOG_ENV)) == 0 and history_events(tmp_path)[-1][0] == "drain-refused"
    fake.nodes["n1"] = ("idle", "none")
    _gpu3_reset(monkeypatch)
    cli.main(args, dict(PROLOG_ENV))
    assert (fake.nodes["n1"][0] == "drained") is drained
    if drained:
        assert "XID_HISTORY" in fake.nodes["n1"][1]


@pytest.mark.parametrize("action, resumed", [(REBOOT, False), (RESET, True)], ids=["node-reboot", "gpu-reset"])
def test_nvsentinel_return_to_service_a_reboot_the_driver_asked_for_is_proven_by_a_reboot_alone(
        tmp_path: Path, fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: str, resumed: bool) -> None:
    """Drained for an Xid 154, then GPU 3 reset (NVSentinel's record): `make undrain` resumes the node the driver
    asked to reset, and refuses the one it asked to reboot (exit 5), saying so; the drain keeps what it asked."""
    _node(monkeypatch, [XID154.format(action)])
    state = tmp_path / "state"
    assert cli.main(["--state-dir", str(state)], dict(PROLOG_ENV)) == 1 and fake.nodes["n1"][0] == "drained"
    drain = [e for e in history.read(str(state), "n1").events if e["event"] == "drain"][-1]
    assert drain.get("reboot_only") is (True if not resumed else None)
    _gpu3_reset(monkeypatch)
    rc = cli.main(["--state-dir", str(state), "--revalidate", "--node", "n1"], {})
    assert (rc, fake.nodes["n1"][0] == "idle") == ((0, True) if resumed else (5, False))
    if not resumed:
        assert "asked for the node's reboot" in capsys.readouterr().err


def test_a_reboot_proves_the_repair_of_an_xid_154_asking_for_one(tmp_path: Path, fake: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The same drain after the node rebooted (another boot id; when it began unread): resumed."""
    _node(monkeypatch, [XID154.format(REBOOT)])
    state = tmp_path / "state"
    cli.main(["--state-dir", str(state)], dict(PROLOG_ENV))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(
        "boot-b", 60.0, None, time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: None)
    assert cli.main(["--state-dir", str(state), "--revalidate", "--node", "n1"], {}) == 0
    assert fake.nodes["n1"] == ("idle", "none")


def test_the_catalog_reads_a_reboot_by_its_number_or_its_words():
    """Xid 154's node reboot (0x2) and system reboot (0x7), or their words as a tool quoted them; a reset, a drain of
    P2P, the IMEX domain's recovery or another Xid are none."""
    from verify.shared import xidcatalog
    assert xidcatalog.reboot_only(154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)")
    assert xidcatalog.reboot_only(154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x7 (x)")
    assert xidcatalog.reboot_only(154, "Node Reboot Required")
    for message in ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "Drain P2P",
                    "GPU recovery action changed from 0x0 (None) to 0x5 (IMEX)", ""):
        assert not xidcatalog.reboot_only(154, message), message
    assert not xidcatalog.reboot_only(79, "Node Reboot Required")


@pytest.mark.parametrize("field", [{"faulted": "0000:13:00"}, {"faulted": [3]}, {"reboot_only": "yes"},
                                   {"reboot_only": 1}], ids=["faulted-text", "faulted-number", "reboot-text",
                                                             "reboot-number"])
def test_nvsentinel_return_to_service_a_drain_line_whose_proof_is_of_another_type_is_garbled(field: dict[str, Any]):
    """A drain line whose `faulted` or `reboot_only` is of another type than the prolog writes is no drain record
    (a garbled line, which return to service refuses on), never one read as asking no GPU's reset, or no reboot."""
    line = {"schema": 1, "time": "2026-12-02T10:00:00Z", "epoch": 1796205600.0, "node": "n1", "event": "drain",
            "code": "XID_HISTORY", "detail": "x", **field}
    events, bad = history.parse(json.dumps(line) + "\n", "n1")
    assert (events, bad) == ([], [1])
    good = {**line, "faulted": ["0000:13:00"], "reboot_only": True}
    assert history.parse(json.dumps(good) + "\n", "n1")[0] == [good]


@pytest.mark.parametrize("reader", ["wall", "kernel"])
def test_evidence_is_kept_until_acted_on_a_held_wall_stamped_xid_outlives_a_clock_stepped_back(reader: str):
    """An Xid 79 read in wall time and held (the breaker kept it from draining), then the clock set back two hours
    (NTP righting a clock that ran fast): the next read, in either format, still holds and judges it; it is no line
    from the future, its read took it when its clock said so."""
    booted, xid79 = 1_796_000_000.0, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    first = [f"{_iso(booted + 4000)} host kernel: eth0: up", f"{_iso(booted + 4990)} host kernel: {xid79}"]
    state, found = kernlog.advance(kernlog.State("boot-a"), first, kernlog.Clock("boot-a", 5000.0, booted,
                                                                                  booted + 5000), 86400.0)
    assert xid.judge(found) is not None
    step = -7200.0
    lines = first + [f"{_iso(booted + step + 5500)} host kernel: usb: x"] if reader == "wall" else \
        [f"[{4000:12.6f}] host kernel: eth0: up", f"[{4990:12.6f}] host kernel: {xid79}",
         f"[{5500:12.6f}] host kernel: usb: x"]
    state, found = kernlog.advance(state, lines, kernlog.Clock("boot-a", 5600.0, booted + step,
                                                               booted + step + 5600), 86400.0)
    judged = xid.judge(found)
    assert judged is not None and judged[0] == "XID_HISTORY" and len(state.held) >= 1


def test_a_held_wall_stamped_line_past_its_own_read_is_still_refused():
    """A kept event whose wall stamp is past when its read took it (a state no read could leave) is no evidence."""
    booted = 1_796_000_000.0
    line = f"{_iso(booted + 9000)} host kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    clock = kernlog.Clock("boot-a", 5000.0, booted, booted + 5000)
    assert kernlog.believable([{"line": line, "mono": -1.0, "read": booted + 5000}], clock) == []
    assert kernlog.believable([{"line": line, "mono": -1.0, "read": booted + 9000}], clock) != []
