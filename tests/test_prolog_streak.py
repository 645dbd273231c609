"""Issue 36, class 5 (a third hunt): a hung checker is evidence after a few runs, and only a true streak of them.

NVSentinel's checker rule: a health check that stalls run after run on one node is the node's (a degrading GPU stalls
its checker through dozens of kills), so after --hang-runs consecutive runs that hung past budget + grace the node is
drained with PREFLIGHT_HUNG, behind the breaker. What counts is a streak: one run is a single timeout no second run
confirmed (--hang-runs 1 is refused), and a run months ago, or one stamped in the future (a clock stepped back), is no
part of it. Slurm's prolog semantics: the last line a person or slurmd's log reads is the verdict's, after every note.
On `cli.main` with Slurm's commands and verify replaced in-process (tests/prolog_fakes.py, argv recorded)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history

pytestmark = pytest.mark.unit

DAY = 86400.0
# misspelt knobs, built so that no source line names one (tests/test_prolog_evidence.py reads every name the project sets)
BRAKER, HANGRUNS = "TORCHIMAGES" + "_BRAKER", "TORCHIMAGES" + "_HANGRUNS"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _hung_before(tmp_path: Path, *ages_s: float) -> None:
    """Hangs of this boot (boot_id as the prolog records it) `age` seconds ago (negative: in the future)."""
    from verify.prolog import kernlog
    boot = kernlog.host_clock(kernlog.PROC).boot_id or None
    for age in ages_s:
        history.record(str(tmp_path / "state"), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past",
                       now=time.time() - age, extra={"boot_id": boot})


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize(("argv", "env"), [(["--hang-runs", "1"], {}), ([], {"TORCHIMAGES_HANG_RUNS": "1"})])
def test_nvsentinel_checker_rule_one_hang_is_never_a_streak(tmp_path, fake, monkeypatch, capsys, argv, env):
    """--hang-runs 1 would drain on a single timeout: refused as a setting of ours (CONFIG_ERROR), never a drain; the
    knob TORCHIMAGES_HANG_RUNS=1 is not applied, its default (3) holds, said (tests/test_cluster_hunt71.py)."""
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30", *argv), {**PROLOG_ENV, **env}) == 0
    err = capsys.readouterr().err
    assert ("CONFIG_ERROR" in err) == bool(argv) and "2 or more" in err
    assert not [c for c in fake.calls if c and c[0] == "update"]
    # a job's step: the command line's is refused alike; the job's environment is no setting of the operator's, so
    # its TORCHIMAGES_HANG_RUNS=1 is ignored, said, and the default holds (tests/test_cluster_hunt59.py)
    assert cli.main(_args(tmp_path, "--budget", "30", *argv), {**STEP_ENV, **env}) == (2 if argv else 3)


@pytest.mark.parametrize("value", ["0", "2", "3", "1000"])
def test_the_hang_runs_knob_takes_zero_or_two_and_more(tmp_path, fake, value):
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--hang-runs", value)), STEP_ENV)
    assert cfg.hang_runs == int(value)


def test_nvsentinel_checker_rule_hangs_older_than_the_flap_window_are_no_streak(tmp_path, fake, monkeypatch):
    """Two hangs 200 and 300 days ago, in one long boot, and one now: the node is not drained (they drained it)."""
    _hung_before(tmp_path, 300 * DAY, 200 * DAY)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and not fake.calls


def test_nvsentinel_checker_rule_a_hang_stamped_in_the_future_is_no_streak(tmp_path, fake, monkeypatch):
    """A clock stepped back: a hang recorded 30 days ahead of now is no evidence, and ends the streak."""
    _hung_before(tmp_path, 60.0, -30 * DAY)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and not fake.calls


def test_nvsentinel_checker_rule_recent_hangs_still_drain_behind_the_breaker(tmp_path, fake, monkeypatch, capsys):
    """Two hangs within the window and one now drain with PREFLIGHT_HUNG; the line before says the count so far."""
    _hung_before(tmp_path, 2 * DAY, 60.0)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert "hung past its budget on 3 runs in a row" in capsys.readouterr().out


def test_a_hang_s_line_says_how_many_runs_in_a_row_hung(tmp_path, fake, monkeypatch, capsys):
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3
    assert "1 of 3 runs in a row hung" in capsys.readouterr().out


def test_the_streak_reads_its_window_and_the_clock():
    def ev(age: float) -> dict[str, Any]:
        return {"event": "not-assessed", "code": "PREFLIGHT_TIMEOUT", "epoch": 1e9 - age, "time": "t"}
    assert history.streak([ev(3 * DAY), ev(DAY), ev(60)], cli.HANG_CODES, now=1e9, window_s=7 * DAY) == 3
    assert history.streak([ev(8 * DAY), ev(DAY), ev(60)], cli.HANG_CODES, now=1e9, window_s=7 * DAY) == 2
    assert history.streak([ev(DAY), ev(-DAY), ev(60)], cli.HANG_CODES, now=1e9, window_s=7 * DAY) == 1
    assert history.streak([ev(DAY), ev(-60)], cli.HANG_CODES, now=1e9, window_s=7 * DAY, skew_s=300) == 2


def test_slurm_s_prolog_semantics_the_drained_line_is_the_last_line_after_every_note(tmp_path, fake, monkeypatch,
                                                                                    capsys):
    """A misspelt knob and a garbled history are said, but before the verdict: the last line is DRAINED."""
    target = history.path(str(tmp_path / "state"), "n1")
    Path(target).parent.mkdir(parents=True)
    Path(target).write_text("not json\n")
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, BRAKER: "0.5"}) == 1
    lines = _lines(capsys)
    assert any(BRAKER in ln for ln in lines) and any("garbled" in ln for ln in lines)
    assert lines[-1].startswith("torchimages-prolog: DRAINED n1: GPU_LOST"), lines


@pytest.mark.parametrize(("body", "last"), [(None, "NOT ASSESSED on n1"), (b"pass", "")], ids=["not-assessed", "pass"])
def test_slurm_s_prolog_semantics_no_note_follows_the_verdict(tmp_path, fake, monkeypatch, capsys, body, last):
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode() if body else None, rc=0 if body else 1)
    cli.main(_args(tmp_path), {**STEP_ENV, HANGRUNS: "5"})
    lines = _lines(capsys)
    if last:
        assert HANGRUNS in lines[0] and last in lines[-1], lines
    else:
        assert lines and all(HANGRUNS in ln for ln in lines), lines   # said before the PASS line


def test_slurm_s_prolog_semantics_a_refused_undrain_ends_with_its_refusal(tmp_path, fake, capsys):
    fake.nodes["n1"] = ("drained", "an operator's reason")
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {BRAKER: "1"}) == 5
    lines = _lines(capsys)
    assert lines[-1].startswith("torchimages-prolog: REFUSED n1"), lines


def test_a_knob_with_its_prefix_misspelt_is_said_and_pytorch_s_own_are_not():
    """The hang knob as TORCHIMAGE_HANG_RUNS (the prefix's S dropped) was silently ignored: said, its default holds."""
    from verify.prolog import config
    prefix = "TORCHIMAGE" + "_HANG_RUNS"
    said = config.misspelt({prefix: "5", "TORCH_CUDA_ARCH_LIST": "9.0", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
                            "TORCHELASTIC_RUN_ID": "x", "TORCH_HOME": "/x"})
    assert said == [f"{prefix} is no setting of the prolog's: did you mean TORCHIMAGES_HANG_RUNS? (ignored; its "
                    "default holds)"]


def test_a_grace_too_small_to_confirm_is_our_setting_never_a_hang(tmp_path, fake, monkeypatch):
    """--budget 10 --grace 1: a check that timed out in a run of the whole budget leaves the cap no time to confirm
    it. That is the setting's fault (BUDGET_TOO_SMALL, which ends a streak), never PREFLIGHT_TIMEOUT: three such runs
    drained a healthy node as PREFLIGHT_HUNG. NVSentinel's checker rule counts the checker's stalls, not ours."""
    now = [0.0]
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--budget", "10", "--grace", "1")), STEP_ENV,
                     clock=lambda: now[0])
    now[0] = 9.5                                    # the first verify ran its budget
    timed = _report(_gpu("fail", code="CHECK_TIMEOUT", owner="host"))
    v, _ = cli._confirm(cfg, timed)
    assert (v.code, v.drains) == ("BUDGET_TOO_SMALL", False) and "raise --grace" in v.summary, v
    _hung_before(tmp_path, 120.0, 60.0)
    assert history.streak(history.read(cfg.state_dir, "n1").events + [{"event": "not-assessed", "code": v.code,
                          "epoch": time.time(), "time": "t"}], cli.HANG_CODES) == 0
    # with the default grace the same run has the time, and a hang that is no setting's stays PREFLIGHT_TIMEOUT
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--budget", "30")), STEP_ENV, clock=lambda: now[0])
    now[0] = 9.5 + 85.0                             # a cap of 90 s nearly spent by verify itself
    assert cli._confirm(cfg, timed)[0].code == "PREFLIGHT_TIMEOUT"


@pytest.mark.parametrize("factor", ["0.4", "0.99"])
def test_a_confirm_factor_below_one_is_a_setting_of_ours(tmp_path, fake, monkeypatch, capsys, factor):
    """A confirmation with less time than the budget proves no hang: refused as CONFIG_ERROR (exit 0 under Prolog=),
    where every timed-out check counted towards --hang-runs and the third drained the node."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="CHECK_TIMEOUT", owner="host"))).encode())
    for _ in range(3):
        assert cli.main(_args(tmp_path, "--confirm-factor", factor), PROLOG_ENV) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and not fake.calls


def test_nvsentinel_checker_rule_runs_at_once_are_one_run_not_a_streak():
    """Prologs of jobs starting together on one node each slow the others: three of them timing out at once is one
    moment of a busy host, not three runs in a row of a hung GPU. A run that ended after the start of the run
    counted after it overlapped it, and is not counted again; runs one after another still are."""
    def ev(started: float, ended: float) -> dict[str, Any]:
        return {"event": "not-assessed", "code": "PREFLIGHT_TIMEOUT", "epoch": ended, "time": "t", "started": started}
    at_once = [ev(1000.0, 1095.0), ev(1001.0, 1096.0)]                  # both ran while this run (from 1000) did
    assert history.streak(at_once, cli.HANG_CODES, started=1000.0) == 0
    in_a_row = [ev(700.0, 795.0), ev(850.0, 945.0)]                     # each ended before the next began
    assert history.streak(in_a_row, cli.HANG_CODES, started=1000.0) == 2
    assert history.streak([*in_a_row, *at_once], cli.HANG_CODES, started=1000.0) == 2
    # a line without its start (an older prolog's) starts at its stamp; with no start of this run, the two that
    # overlapped each other still count once
    assert history.streak([{**e, "started": None} for e in in_a_row], cli.HANG_CODES, started=1000.0) == 2
    assert history.streak(at_once, cli.HANG_CODES) == 1


def test_nvsentinel_checker_rule_three_prologs_hanging_together_do_not_drain(tmp_path, fake, monkeypatch):
    """Through cli.main: two runs of this node that ended after this run began (jobs that started together) hung;
    this one hangs too. Not PREFLIGHT_HUNG: not drained, the node stays in service (exit 3 as a first step)."""
    from verify.prolog import kernlog
    boot = kernlog.host_clock(kernlog.PROC).boot_id or None
    began = time.time()
    monkeypatch.setattr(time, "time", lambda: began)        # the run starts now
    for i in range(2):
        history.record(str(tmp_path / "state"), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past",
                       now=began + 1 + i, extra={"boot_id": boot, "started": began - 0.5})
    monkeypatch.setattr(time, "time", lambda: began + 5)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and "state=drain" not in " ".join(fake.verbs())
