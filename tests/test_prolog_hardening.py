"""torchimages-prolog under attack (issue 36, the prolog's classes 1-5 and its half of 8), on its pure parts and on
`cli.main` with Slurm's commands, verify and the kernel log replaced in-process (their argv recorded): no process,
no sleep. Each test names the practice it holds the prolog to."""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, XID79, FakeSlurm, _args, _gpu, _nccl, _report, _verify_writes, install_fake
from verify.codes import CODES
from verify.prolog import cli, history, kernlog, metrics, repair, revalidate, settings, slurm, statefile, verifyrun, xid
from verify.prolog.deadline import Overran
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT, EXIT_NOT_ASSESSED, EXIT_PASS, FAULT, NOT_ASSESSED, PASS, Verdict

pytestmark = pytest.mark.unit

@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _events(tmp_path: Path, node: str = "n1") -> list[tuple[str, str | None]]:
    return [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), node).events]


# ---- 1. a setting of ours is never the node's fault

def test_nvidia_xid_catalog_a_kernel_line_in_another_script_s_digits_is_no_xid():
    """NVIDIA's Xid catalog as the kernel prints it: ASCII digits. `Xid ...: ４８` (fullwidth) drained as Xid 48."""
    assert not xid.parse(["[ 100.0] NVRM: Xid (PCI:0000:3b:00): \uff14\uff18, pid=1, DBE"])
    assert [f.code for f in xid.parse(["[ 100.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE"])] == [48]
    assert kernlog.mono("[\uff11\uff10\uff10.0] NVRM: x") is None and kernlog.mono("[ 100.0] NVRM: x") == 100.0


@pytest.mark.parametrize("argv, env", [
    (["--bugdet", "30"], {}), (["--budget", "inf"], {}), (["--hang-runs", "-1"], {}), ([], {"SLURM_GPUS_ON_NODE": "all"}),
    # digits str.isdigit() takes and int() refuses, and a count no node has: one line, never a crash
    ([], {"SLURM_GPUS_ON_NODE": "\u00b2"}), (["--hang-runs", "\u0663"], {}), ([], {"SLURM_JOB_GPUS": "0,\u00b9"}),
    ([], {"SLURM_GPUS_ON_NODE": "9" * 20}),
    # a bad TORCHIMAGES_* knob (TORCHIMAGES_BREAKER=ten, _CLOCK_SKEW=soon, '\uff11', '1e-400', '-0.0') is no option:
    # its default holds, said and traced, the node gated (tests/test_cluster_hunt71.py)
    # one ASCII grammar for every number of ours (verdict.DECIMAL): float() read '１' as a breaker of 1 and '３０' as a
    # budget, and '1e-400' and '-0.0' silently as a breaker of 0 ("never drain", which nobody wrote)
    (["--breaker", "0.1\u00a0"], {}), (["--breaker", "\uff11"], {}), (["--breaker", "1e-400"], {}),
    (["--breaker", "-0.0"], {}), (["--budget", "\uff13\uff10"], {}), (["--grace", "\u0663\u0660"], {}),
    (["--lookback", "2_4"], {}), (["--flap-window", "1e-400"], {}), (["--min-confirm", "infinity"], {}),
    # the Python that runs verify is ours: blank, missing or no executable read as verify's PREFLIGHT_NO_REPORT
    (["--python", ""], {}), (["--python", "/nonexistent/python3"], {}), (["--python", "/"], {}),
])
def test_a_bad_setting_under_prolog_exits_0_and_leaves_a_trace(tmp_path, fake, capsys, argv, env):
    """Slurm's prolog semantics: a non-zero Prolog= exit drains the node, so a typo in slurm.conf's prolog line (or a
    bad TORCHIMAGES_BREAKER) must not drain a partition: exit 0, one line, and the history and the metrics say the
    node ran ungated (CONFIG_ERROR)."""
    prom = tmp_path / "prom"
    status = cli.main([*_args(tmp_path), "--metrics-dir", str(prom), *argv], {**PROLOG_ENV, **env})
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 0 and len(err) == 1 and err[0].startswith("torchimages-prolog: NOT ASSESSED: "), err
    assert "(CONFIG_ERROR: the node stays in service, ungated)" in err[0]
    assert _events(tmp_path) == [("not-assessed", "CONFIG_ERROR")]
    text = (prom / "torchimages_n1.prom").read_text()
    assert 'code="CONFIG_ERROR"' in text and 'verdict="not-assessed"' in text
    assert not fake.calls                                          # nothing asked of Slurm
    if not set(env) & set(settings.KNOBS):  # a job's step reads no knob of the job's environment (test_cluster_hunt59)
        assert cli.main([*_args(tmp_path), *argv], {**STEP_ENV, **env}) == 2    # as a first step: exit 2, one line


@pytest.mark.parametrize("extra", [[], ["--bugdet", "3"]])
def test_slurm_s_prolog_semantics_revalidate_put_in_the_prolog_line_never_drains(tmp_path, fake, capsys, extra):
    """Slurm's prolog semantics: `make undrain`'s --revalidate put in slurm.conf's Prolog= line would refuse (exit 5)
    on every healthy node a job starts on, and Slurm would drain each: under Prolog= it is CONFIG_ERROR, exit 0."""
    assert cli.main([*_args(tmp_path), "--revalidate", *extra], PROLOG_ENV) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and not fake.calls
    assert _events(tmp_path) == [("not-assessed", "CONFIG_ERROR")]


def test_under_slurmd_s_prolog_a_forced_step_mode_never_drains_for_our_trouble(tmp_path, fake, monkeypatch):
    """Slurm's prolog semantics hold whatever --mode says: run by slurmd as Prolog= (SLURM_SCRIPT_CONTEXT), a bad
    option, verify's own trouble or the image's fault exit 0. (slurmd's Prolog= environment has no SLURM_STEP_ID:
    beside one, the context is a step's forgery, tests/test_cluster_lows36.py.)"""
    env = dict(PROLOG_ENV)
    assert cli.main([*_args(tmp_path), "--mode", "step", "--bugdet", "1"], env) == 0
    _verify_writes(monkeypatch, None, rc=1)
    assert cli.main([*_args(tmp_path), "--mode", "step"], env) == 0
    image = {"name": "shm", "status": "fail", "code": "CHECK_CRASHED", "owner": "image", "summary": "x"}
    _verify_writes(monkeypatch, json.dumps(_report(image)).encode())
    assert cli.main([*_args(tmp_path), "--mode", "step"], env) == 0 and not fake.calls


def test_a_report_no_verify_could_write_is_not_assessed(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: a report nested 200,000 deep (or larger than any verify writes) is our trouble,
    not the host's: not assessed, exit 0 under Prolog= and 3 as a step, never a traceback."""
    _verify_writes(monkeypatch, b"[" * 200_000 + b"]" * 200_000)
    assert cli.main(_args(tmp_path), STEP_ENV) == 3
    out = capsys.readouterr()
    assert out.out.startswith("prolog: NOT-ASSESSED REPORT_INVALID") and "deeper" in out.out
    monkeypatch.setattr(verifyrun, "REPORT_CAP", 1000)
    _verify_writes(monkeypatch, b'{"status": "pass", "checks": []}' + b" " * 5000)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0
    assert "more than any verify writes" in capsys.readouterr().out
    assert [e for e, _ in _events(tmp_path)] == ["not-assessed", "not-assessed"] and not fake.calls


def test_a_crash_of_ours_never_escapes_as_exit_1(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: a traceback is exit 1, a drain; our own crash is not assessed (exit 0 as Prolog=,
    3 as a step) with one line and a PROLOG_CRASHED trace."""
    def boom(cfg: cli.Config) -> Any:
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(cli, "assess", boom)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0
    assert cli.main(_args(tmp_path), STEP_ENV) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("PROLOG_CRASHED") == 2
    assert _events(tmp_path) == [("not-assessed", "PROLOG_CRASHED")] * 2


def test_slurm_s_prolog_semantics_a_dry_run_never_drains_and_keeps_the_evidence(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: --dry-run in slurm.conf's Prolog= line (a roll-out's first step) must not have Slurm
    drain the node itself (exit 1 would): exit 0 there, 4 (a host fault, not drained) as a first step. Nothing was
    drained, so the history says drain-refused (not drain) and NVIDIA's Xid 79 stays held: the next real run drains
    on it (the dry run had spent it, and the node passed)."""
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    args = ["--state-dir", str(tmp_path / "state"), "--dry-run"]
    assert cli.main(args, PROLOG_ENV) == EXIT_PASS
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER
    assert fake.nodes["n1"] == ("idle", "none")
    assert "DRY RUN XID_HISTORY on n1" in capsys.readouterr().err
    assert ("drain", "XID_HISTORY") not in _events(tmp_path) and ("drain-refused", "XID_HISTORY") in _events(tmp_path)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))   # no new line
    assert cli.main(args[:2], PROLOG_ENV) == EXIT_FAULT and fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY #")


def test_slurm_s_prolog_semantics_a_bad_node_name_is_traced_under_slurm_s_name(tmp_path, fake, capsys):
    """A hostlist typed as --node in slurm.conf's Prolog= line leaves every node ungated: exit 0, and the trace (the
    history and the metrics) under the name Slurm gives the node, so the ungated fleet is visible."""
    prom = tmp_path / "prom"
    assert cli.main([*_args(tmp_path), "--node", "n[1-4]", "--metrics-dir", str(prom)], PROLOG_ENV) == EXIT_PASS
    assert "CONFIG_ERROR" in capsys.readouterr().err and not fake.calls
    assert _events(tmp_path, "n1") == [("not-assessed", "CONFIG_ERROR")]
    assert 'code="CONFIG_ERROR"' in (prom / "torchimages_n1.prom").read_text()


@pytest.mark.parametrize("body, said", [
    (b'{"status": "pass", "checks": [{"name": "shm", "status": "pass", "duration_s": 1' + b"9" * 400 + b"}]}",
     "of 401 digits"),
    (b'{"status": "pass", "status": "pass", "checks": [{"name": "shm", "status": "pass"}]}', "duplicate key"),
])
def test_a_report_with_a_number_past_a_float_or_a_key_twice_is_not_assessed(tmp_path, fake, monkeypatch, capsys, body,
                                                                             said):
    """Slurm's prolog semantics: a report no verify writes (a 400-digit figure crashed the metrics after a pass, a
    PROLOG_CRASHED behind a recorded pass) is not assessed, REPORT_INVALID; `python -m verify.prolog.metrics` on it
    is one line, exit 1."""
    _verify_writes(monkeypatch, body)
    assert cli.main([*_args(tmp_path), "--metrics-dir", str(tmp_path / "prom")], STEP_ENV) == EXIT_NOT_ASSESSED
    out = capsys.readouterr()
    assert "NOT-ASSESSED REPORT_INVALID" in out.out and said in out.out and "Traceback" not in out.err
    assert _events(tmp_path) == [("not-assessed", "REPORT_INVALID")]
    (tmp_path / "r.json").write_bytes(body)
    assert metrics.main([str(tmp_path / "r.json"), "--node", "n1", "--dir", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("metrics: ") and said in err[0]


def test_a_metrics_failure_never_turns_a_drain_into_an_exit_0(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: under Prolog= the drain's exit 1 is what keeps the job off the broken node; the
    metrics are a side output, and their failure (any exception) is one line, never our crash's exit 0."""
    gpu_lost = _gpu("fail", code="GPU_LOST", owner="host")
    _verify_writes(monkeypatch, json.dumps(_report(gpu_lost)).encode())

    def broken(*args: Any) -> str:
        raise OverflowError("int too large to convert to float")
    monkeypatch.setattr(metrics, "write", broken)
    assert cli.main([*_args(tmp_path), "--metrics-dir", str(tmp_path / "prom")], PROLOG_ENV) == EXIT_FAULT
    assert "metrics not written" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"


def test_slurm_s_prolog_semantics_a_second_sigterm_never_breaks_the_trace(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: a second SIGTERM while the first one's trace was written raised out of the handler
    (the trace lost; in its first line's print, a traceback and exit 1: a drain). One stop is enough: the second is
    ignored, the trace kept, exit 0 under Prolog=; the handlers before are back afterwards."""
    import signal

    def stopped(cfg: cli.Config) -> Any:
        raise cli.Interrupted(signal.SIGTERM)
    real_record = history.record

    def record_under_a_second_sigterm(*args: Any, **kw: Any) -> str | None:
        os.kill(os.getpid(), signal.SIGTERM)            # ignored: the handler is SIG_IGN by now
        return real_record(*args, **kw)
    monkeypatch.setattr(cli, "assess", stopped)
    monkeypatch.setattr(history, "record", record_under_a_second_sigterm)
    before = signal.getsignal(signal.SIGTERM)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == EXIT_PASS
    assert _events(tmp_path) == [("not-assessed", "PROLOG_INTERRUPTED")] and "no trace kept" not in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_tiny_budget_is_our_setting_and_never_confirms_a_hang(tmp_path, fake, monkeypatch):
    """NVSentinel's rule that the checker's own trouble is not the node's: a confirmation limit no preflight can
    finish in (budget x factor under --min-confirm) proves nothing: not assessed, the rerun not even started."""
    seen: list[Any] = []
    timeout = {"name": "nccl", "status": "fail", "code": "NCCL_TIMEOUT", "owner": "host", "summary": "t"}
    _verify_writes(monkeypatch, json.dumps(_report(timeout)).encode(), seen)
    assert cli.main(_args(tmp_path, "--budget", "0.5"), STEP_ENV) == 3
    assert len(seen) == 1 and _events(tmp_path) == [("not-assessed", "BUDGET_TOO_SMALL")] and not fake.calls


class Clock:
    """time.monotonic injected: each test moves it by hand, nothing waits."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_slurm_s_prolog_epilog_timeout_the_whole_run_is_capped_at_three_times_the_budget(tmp_path, monkeypatch):
    """Slurm's PrologEpilogTimeout kills a prolog that runs long and drains the node: the whole run is capped at
    --budget + --grace (default grace: the budget, at least 60 s: 90 s at the default 30 s, no longer 150 s), and a
    confirmation shares that cap: it gets what is left but the drain's reserve, and none at all when that is no more
    than the largest share of the budget a check had in the first run (half of it)."""
    seen: list[Any] = []
    timeout = {"name": "shm", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "t"}
    _verify_writes(monkeypatch, json.dumps(_report(timeout)).encode(), seen)
    clock = Clock()
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV, clock)
    assert cfg.deadline.cap == 90 and cfg.deadline.reserve == 10
    assert cli.config(cli._parser().parse_args(_args(tmp_path, "--budget", "100")), STEP_ENV).deadline.cap == 200
    clock.t += 33                                             # the first run took its budget and some: 57 s are left
    verdict, _ = cli._confirm(cfg, _report(timeout))
    (cmd, limit), = seen
    assert verdict.kind == FAULT and verdict.confirmed        # shm hung again alone, with 47 s
    assert float(cmd[cmd.index("--budget") + 1]) == 47 and limit == 47
    clock.t += 35                                             # 22 s left, 12 after the reserve: not over 15 s
    seen.clear()
    verdict, _ = cli._confirm(cfg, _report(timeout))
    assert verdict.kind == NOT_ASSESSED and verdict.code == "PREFLIGHT_TIMEOUT" and not seen
    assert "cap of 90 s" in verdict.summary
    # the first run, too, gets what is left of the cap but the reserve; Slurm's commands and the lock what is left
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--budget", "10", "--grace", "100")), STEP_ENV, clock)
    clock.t += 100
    cli.preflight(cfg, 10)
    assert seen[-1][1] == 0                                    # 10 s left, the reserve (10 s) keeps them
    assert slurm.limit is not None and slurm.limit() == 10 and cfg.deadline.bound(30) == 10


def test_slurm_s_prolog_semantics_a_run_past_its_cap_is_stopped_and_not_assessed(tmp_path, fake, monkeypatch, capsys):
    """The backstop: whatever still runs at the cap (a journalctl, an scontrol, verify itself stuck past its kill) is
    interrupted by the timer; under Prolog= that is our trouble, exit 0 and PROLOG_OVERRAN in the history and the
    metrics, never a drain; as a first step, exit 3."""
    def stuck(cmd: list[str], limit: float) -> tuple[int | None, str]:
        raise Overran("the prolog reached its cap")
    monkeypatch.setattr(cli, "_run_verify", stuck)
    prom = tmp_path / "prom"
    assert cli.main([*_args(tmp_path), "--metrics-dir", str(prom)], PROLOG_ENV) == 0
    assert "PROLOG_OVERRAN" in capsys.readouterr().err and not fake.calls
    assert _events(tmp_path) == [("not-assessed", "PROLOG_OVERRAN")]
    assert 'code="PROLOG_OVERRAN"' in (prom / "torchimages_n1.prom").read_text()
    assert cli.main(_args(tmp_path), STEP_ENV) == EXIT_NOT_ASSESSED
    assert slurm.limit is None                                 # no cap kept past the run


# ---- 2. the breaker: our reasons only

def test_only_our_signed_reason_counts_as_ours():
    """NVSentinel's breaker counts only the cordons it made: an operator's hand-written `torchimages: ...`, a reason
    copied from another node or one with a bad mark is not ours."""
    ours = slurm.reason("n2", "GPU_LOST", "gpu 3 lost", 1795635600)
    assert slurm.parse_reason(ours, "n2") == ("GPU_LOST", 1795635600)
    for text, node in ((ours, "n3"), ("torchimages:GPU_LOST gpu 3 lost", "n2"), ("torchimages: replaced GPU", "n2"),
                       (ours.replace("GPU_LOST", "ECC_UNCORRECTABLE", 1), "n2"), (ours[:30], "n2"), ("", "n2")):
        assert slurm.parse_reason(text, node) is None, text
    rows = slurm.parse_sinfo(f"n2|drained|{ours}\nn3|drained|torchimages:GPU_LOST by hand\nn4|idle|none\n")
    assert [r.ours for r in rows] == [True, False, False] and rows[0].claimed == 1795635600


def test_a_claim_past_the_breaker_is_given_back(tmp_path, fake, monkeypatch):
    """NVSentinel's breaker under concurrency: after its claim the prolog counts again; when other nodes claimed at
    the same time and the partition is past the share, it resumes itself (exit 4, drain-refused)."""
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1795635600))
    real_run = fake.run

    def racing(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if os.path.basename(argv[0]) == "scontrol" and "state=drain" in argv:   # n3 claims at the same moment
            fake.nodes["n3"] = ("drained", slurm.reason("n3", "GPU_LOST", "x", 1795635601))
        return real_run(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", racing)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--breaker", "0.5")), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")) == EXIT_BREAKER
    assert fake.nodes["n1"] == ("idle", "none")
    # given back, it counts once more after a random wait (racers that all gave back claim again): n3's claim stayed
    assert fake.verbs() == ["-h", "update nodename=n1 state=drain", "-h", "update nodename=n1 state=resume", "-h"]
    assert _events(tmp_path) == [("drain-refused", "GPU_LOST")]


def test_a_drain_scontrol_refused_asks_nothing_more_of_slurm(tmp_path, fake, monkeypatch):
    """Slurm's prolog semantics: a drain scontrol refused is said and exits 1 (a host fault), with no requeue after
    it: the job is requeued only off a node that was drained."""
    real_run = fake.run

    def refusing(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        real_run(argv, dry_run, quiet)
        return (1, "scontrol: error: Invalid node name") if os.path.basename(argv[0]) == "scontrol" else \
            real_run(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", refusing)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")) == EXIT_FAULT
    assert [a[0] for a in fake.calls if a[0] in ("update", "requeue")] == ["update"]
    assert _events(tmp_path) == [("drain-refused", "GPU_LOST")]


def test_a_node_someone_else_drained_is_left_as_it_is(tmp_path, fake):
    """Return-to-service rules: a node drained by an operator is never re-drained (and so never resumed) by us."""
    fake.nodes["n1"] = ("drained", "torchimages: bios update by ops")
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")) == EXIT_BREAKER
    assert fake.nodes["n1"][1] == "torchimages: bios update by ops" and fake.verbs() == ["-h"]


# ---- 3. return to service proves the repair

def test_undrain_refuses_on_another_host():
    """NVSentinel's return to service judges the node itself: `make undrain NODE=n2` on n1 would resume n2 on n1's
    preflight. The proof is Slurm's own record (NodeHostName, which slurmd matches to the host name), never a name
    the caller can type or set."""
    here = revalidate.here_problem
    assert here("n1", "n1", {"NodeHostName": "n1"}) is None
    assert here("n1", "n1.cluster", {"NodeHostName": "n1"}) is None                  # short and full agree
    assert here("n2", "login.cluster", {"NodeHostName": "login"}) is None            # NodeName != host name
    assert here("n2", "n1", {"NodeHostName": "n2"}, slurmd_name="n2")                # SLURMD_NODENAME is no proof
    assert here("n2", "n2", {"NodeHostName": "gpu-n2"})         # a host that merely shares the node's name
    assert here("n2", "n2.lab", {"NodeHostName": "n2.prod"})   # two full names must agree whole
    assert here("n2", "n2", {})                                  # Slurm names no host for it
    assert "cannot be proven" in str(here("n2", "n2", None, "scontrol show node failed (exit 1)"))
    assert "SLURMD_NODENAME" in str(here("n2", "n2", {"NodeHostName": "n2"}, slurmd_name="n1"))   # a contradiction
    problem = here("n2", "n1.cluster", {"NodeHostName": "n2"})
    assert problem and "is not n2" in problem and "ssh n2 make undrain NODE=n2" in problem and "\n" not in problem


def test_undrain_named_by_environment_on_another_host_resumes_nothing(tmp_path, fake, monkeypatch, capsys):
    """`SLURMD_NODENAME=n2 make undrain NODE=n2` on n1: the name is the caller's, Slurm says n2 is another host."""
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "CHECK_TIMEOUT", "hung", time.time()))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    status = cli.main([*_args(tmp_path), "--revalidate", "--node", "n2"], {"SLURMD_NODENAME": "n2"})
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 5 and fake.nodes["n2"][0] == "drained" and len(err) == 1 and "is not n2" in err[0]
    assert not [a for a in fake.calls if a and a[0] == "update"]


def test_an_xid_drain_resumes_only_after_the_repair_the_catalog_names():
    """NVIDIA's Xid catalog: Xid 79 asks for a GPU reset or a reboot; the revalidation must see one (another boot
    id than the drain's, or a boot time after it)."""
    drain = {"code": "XID_HISTORY", "epoch": 1000.0, "boot_id": "a", "action": "reboot"}
    assert repair.repair_problem(drain, None, kernlog.Clock("a", 50.0), 900.0)
    assert repair.repair_problem(drain, None, kernlog.Clock("b", 50.0), 900.0) is None
    no_boot = {**drain, "boot_id": None}
    assert repair.repair_problem(no_boot, None, kernlog.Clock("", None), 999.0)
    assert repair.repair_problem(no_boot, None, kernlog.Clock("", None), 1001.0) is None
    assert repair.repair_problem(None, ("GPU_LOST", 1000), kernlog.Clock("", None), None)      # the reason alone
    assert repair.repair_problem({"code": "CHECK_TIMEOUT", "epoch": 1.0}, None, kernlog.Clock("a", 1.0), 0.0) is None


# NVSentinel's record of a GPU reset (ADR-020: `logger -t nvsentinel-gpu-reset`), as `journalctl -o short-unix` prints
# it; the UUID and host are those of NVSentinel's pull request #1475, which shows the syslog monitor acknowledging it
RESET_OK = ("1783669085.417257 aks-gpu-123-vmss00000r nvsentinel-gpu-reset[4242]: GPU reset executed: "
            "GPU-52f37cd4-d92a-7b6d-2b9f-9ab862e27708, success: true")


def test_nvidia_xid_catalog_reset_gpu_a_recorded_reset_is_the_repair_without_a_reboot():
    """NVIDIA's Xid catalog names "reset the GPU" (or reboot) for Xid 79 and the reset-required Xids: in the same
    boot, a successful reset recorded after the drain is the repair; one before it, a failed one after the success,
    or records that cannot be read are not, and the refusal says what proof is missing and how to give it."""
    drain = {"code": "XID_HISTORY", "epoch": 1783669000.0, "boot_id": "a", "action": "reboot"}
    same = kernlog.Clock("a", 50.0)
    ok = repair.parse_resets(["-- No entries --", RESET_OK, "garbage GPU reset executed: GPU-x, success: true"])
    assert ok == [repair.Reset(1783669085.417257, "gpu-52f37cd4-d92a-7b6d-2b9f-9ab862e27708", True)]
    assert repair.repair_problem(drain, None, same, None, (ok, "")) is None
    before = {**drain, "epoch": 1783669100.0}
    assert "no GPU reset recorded since" in str(repair.repair_problem(before, None, same, None, (ok, "")))
    failed = repair.parse_resets([RESET_OK, RESET_OK.replace("1783669085", "1783669090").replace("true", "false")])
    problem = str(repair.repair_problem(drain, None, same, None, (failed, "")))
    assert "the last GPU reset since failed" in problem and "same boot (a)" in problem
    unread = str(repair.repair_problem(drain, None, same, None, (None, "journalctl exited 1: no access")))
    assert "GPU resets not read (journalctl exited 1: no access)" in unread and "logger -t nvsentinel-gpu-reset" in unread
    assert repair.repair_problem({"code": "CHECK_TIMEOUT"}, None, same, None) is None     # no repair asked


def test_nvsentinel_return_to_service_an_xid_79_node_resumes_on_a_recorded_reset_only(tmp_path, fake, monkeypatch,
                                                                                      capsys):
    """NVSentinel's return to service after a GPU reset: `make undrain` on a node drained for Xid 79 in this very
    boot stays drained (exit 5, the missing proof named) until a successful reset is recorded after the drain; then
    it resumes on a passing preflight with all its GPUs."""
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    _drained(tmp_path, fake, "XID_HISTORY", boot_id=boot, action="reboot")
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([], ""))
    # an Xid drain's return to service reads the kernel log (tests/test_prolog_proof.py): no new line in it
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    args = ["--state-dir", str(tmp_path / "state"), "--revalidate", "--node", "n1"]
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 5
    err = capsys.readouterr().err
    assert "no GPU reset recorded since" in err and "nvidia-smi -r" in err and fake.nodes["n1"][0] == "drained"
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(2000.0, "gpu-1", True)], ""))
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 0
    assert "GPU reset recorded since the drain" in capsys.readouterr().err and fake.nodes["n1"][0] == "idle"


def test_a_node_without_its_gpus_never_passes_revalidation():
    """NVSentinel's return to service: the GPUs must be back, all of them (Slurm's Gres, else the drain's count)."""
    assert slurm.gres_gpus("gpu:h100:8(S:0-1)") == 8 and slurm.gres_gpus("gpu:a100:4,gpu:t4:2") == 6
    assert slurm.gres_gpus("(null)") is None and slurm.gres_gpus("gpu:8") == 8 and slurm.gres_gpus("") is None
    assert slurm.gres_gpus("gpu:\u00b2") is None                 # a digit to isdigit(), not to int()
    assert revalidate.gpu_problem(_report(_gpu("skip", None)), 8)
    assert revalidate.gpu_problem(_report(_gpu("pass", 7)), 8)
    assert revalidate.gpu_problem(_report(_gpu("pass", 8)), 8) is None and revalidate.gpu_problem(_report(), None) is None


def test_nvsentinel_return_to_service_the_drain_records_the_node_s_gpus_not_the_job_s(tmp_path):
    """The count at drain time (return to service's fallback where Slurm has no Gres for the node) is the node's:
    a job given 1 GPU of 8 (SLURM_JOB_GPUS=0) must not record 1, or a node seeing 1 GPU would resume."""
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), {**PROLOG_ENV, "SLURM_JOB_GPUS": "0"})
    lost = Verdict(FAULT, "GPU_LOST", "host", "gpu 3 lost", "gpu")
    assert cli._drain_facts(cfg, lost, _report(_gpu("fail", 8)))["gpus"] == 8
    cfg.expected_gpus = 8
    assert cli._drain_facts(cfg, lost, _report(_gpu("fail", 7)))["gpus"] == 8
    cfg.expected_gpus = None
    assert cli._drain_facts(cfg, lost, None)["gpus"] is None


def test_nvsentinel_return_to_service_two_prologs_of_one_node_owe_both_repairs(tmp_path, fake, monkeypatch, capsys):
    """Jobs starting together on one node run its prolog together: the first drains for a hang (no repair owed), the
    second finds Xid-class GPU_LOST. Slurm's reason stays the first's (scontrol is not asked again), the second's
    fault is recorded as a drain too, and return to service owes its repair (NVIDIA's Xid catalog: a reset or a
    reboot): `make undrain` in the same boot with no reset recorded is refused."""
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "CHECK_TIMEOUT", "host", "shm hung", "shm")) == EXIT_FAULT
    reason = fake.nodes["n1"][1]
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 3 lost", "gpu")) == EXIT_FAULT
    assert fake.nodes["n1"][1] == reason and fake.verbs().count("update nodename=n1 state=drain") == 1
    assert [e for e, _ in _events(tmp_path)] == ["drain", "drain"]
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([], ""))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(boot, 60.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    capsys.readouterr()
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 5
    assert "drained for GPU_LOST" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"


def test_nvsentinel_return_to_service_a_reset_record_from_the_future_is_no_repair():
    """A GPU reset record stamped a day ahead of now (a clock that was wrong when it was logged, so it may well
    predate the drain) is not the repair NVIDIA's Xid catalog asks for; within the clock skew it is."""
    now = 1783669000.0
    drain = {"code": "XID_HISTORY", "epoch": now - 600, "boot_id": "a", "action": "reboot"}
    clock = kernlog.Clock("a", 50.0, None, now)
    ahead = [repair.Reset(now + 86400, "gpu-1", True)]
    problem = repair.repair_problem(drain, None, clock, None, (ahead, ""))
    assert problem and "in the future is not believed" in problem and "\n" not in problem
    assert repair.repair_problem(drain, None, clock, None, ([repair.Reset(now + 60, "gpu-1", True)], "")) is None


def _drained(tmp_path: Path, fake: FakeSlurm, code: str = "GPU_LOST", **extra: Any) -> None:
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", code, "x", now=1000.0, extra=extra)


def test_revalidate_keeps_drained_a_node_nvml_sees_no_gpu_on(tmp_path, fake, monkeypatch):
    """NVSentinel's return to service: a node drained for a lost GPU, with Slurm's Gres gpu:8, stays drained when
    the preflight passes with no GPU at all (--expect-gpus 8 is asked of verify)."""
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    _drained(tmp_path, fake, "ECC_UNCORRECTABLE")
    seen: list[Any] = []
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("skip", None))).encode(), seen)
    status = cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"})
    assert status == EXIT_NOT_ASSESSED and fake.nodes["n1"][0] == "drained"
    assert seen[0][0][-2:] == ["--expect-gpus", "8"] and "update nodename=n1 state=resume" not in fake.verbs()


@pytest.mark.parametrize("extra, gres", [({}, ""), ({"gpus": None}, "gpu:0"), ({"gpus": 0}, "(null)")])
def test_nvsentinel_return_to_service_a_gpu_drain_with_no_known_gpu_count_stays_drained(tmp_path, fake, monkeypatch,
                                                                                       capsys, extra, gres):
    """NVSentinel's return to service proves the GPUs are back against the count the node should have: drained for
    a GPU fault with no Gres in Slurm and no count at the drain (or 0), a node whose
    NVML sees no GPU at all is refused (exit 5), not resumed on a preflight that skipped its gpu check."""
    fake.info = {"NodeHostName": "n1", "Gres": gres}
    _drained(tmp_path, fake, "ECC_UNCORRECTABLE", **extra)
    seen: list[Any] = []
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("skip", None), {"name": "shm", "status": "pass"})).encode(),
                   seen)
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 5
    assert "should have are unknown" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained" and not seen


@pytest.mark.parametrize("check, code", [("nccl", "NCCL_TIMEOUT"), ("shm", "CHECK_TIMEOUT"),
                                         ("preflight", "PREFLIGHT_HUNG")])
def test_nvsentinel_return_to_service_a_cpu_node_drained_for_a_hang_resumes_once_it_passes(tmp_path, fake, monkeypatch,
                                                                                          check, code):
    """NVSentinel's return to service: a drain the gpu check and the kernel log had no part in (a hang of shm or nccl,
    a hung preflight) is proven gone by the preflight passing again, on a node without GPUs (no Gres) too."""
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake, code, check=check)
    # a CPU node's preflight as verify writes it: its nccl check skipped NCCL_NOT_EXERCISED, the all-reduce verified
    _verify_writes(monkeypatch, json.dumps(_report({"name": "shm", "status": "pass"}, _nccl("skip"))).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 0
    assert fake.nodes["n1"][0] == "idle"


def test_nvidia_xid_catalog_an_old_drain_record_never_stands_for_the_current_xid_drain(tmp_path, fake, monkeypatch,
                                                                                      capsys):
    """NVIDIA's Xid catalog asks a reset or a reboot after an Xid drain: when the history's last drain is an older
    one (a CHECK_TIMEOUT months ago, its own line of this drain lost), Slurm's signed reason (XID_HISTORY) decides
    what repair is needed, and the old record's GPU count is not this drain's."""
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    history.record(str(tmp_path / "state"), "n1", "drain", "CHECK_TIMEOUT", "x", now=10.0,
                   extra={"check": "shm", "boot_id": "old"})
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "XID_HISTORY", "x", time.time()))
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([], ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    monkeypatch.setattr(kernlog, "boot_time", lambda proc="/proc": time.time() - 3600)   # booted before the drain
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))   # read, no new line
    args = ["--state-dir", str(tmp_path / "state"), "--revalidate", "--node", "n1"]
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 5
    err = capsys.readouterr().err
    assert "drained for XID_HISTORY, whose repair is" in err and fake.nodes["n1"][0] == "drained"


def test_nvsentinel_return_to_service_a_dry_run_resumes_nothing_and_records_no_resume(tmp_path, fake, monkeypatch, capsys):
    """`make undrain` with --dry-run: the node stays drained, and the history records no resume (one there would make
    the next drain read as a fault that came back within the flap window)."""
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake, "CHECK_TIMEOUT", check="shm")
    _verify_writes(monkeypatch, json.dumps(_report({"name": "shm", "status": "pass"})).encode())
    args = [*_args(tmp_path), "--revalidate", "--node", "n1", "--dry-run"]
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_PASS
    assert fake.nodes["n1"][0] == "drained" and "DRY RUN n1" in capsys.readouterr().err
    assert [e for e, _ in _events(tmp_path)] == ["drain"]


def test_revalidate_refuses_a_garbled_history_and_another_host(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's return to service needs the node's whole record: a garbled history is not a clean one; and the
    revalidation runs on the node itself."""
    _drained(tmp_path, fake, "CHECK_TIMEOUT")
    with open(history.path(str(tmp_path / "state"), "n1"), "a") as fh:
        fh.write('{"schema": 1, "event": "res\n')
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 5
    err = capsys.readouterr().err
    assert "garbled line(s) in the history (line 2)" in err and fake.nodes["n1"][0] == "drained"
    fake.info = {"NodeHostName": "n1"}
    monkeypatch.setattr(socket, "gethostname", lambda: "n9")
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n9"}) == 5
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not n1" in err[0] and fake.nodes["n1"][0] == "drained"


# ---- 4. kernel-log evidence: kept until acted on, and only once

def test_each_kernel_log_line_is_read_once_whatever_the_wall_clock_does():
    """NVIDIA's Xid catalog read as evidence once: the cursor is the boot id and the stamp since boot, which a clock
    stepped back does not move (journalctl -o short-monotonic, dmesg)."""
    clock = kernlog.Clock("boot-a", 6000.0)
    state, held = kernlog.advance(kernlog.State(), [XID79], clock, 3600)
    assert [f.code for f in held] == [79]
    state = kernlog.settle(state)                              # drained on it
    state, held = kernlog.advance(state, [XID79], kernlog.Clock("boot-a", 6100.0), 3600)
    assert held == []                                          # the same line again: not new evidence
    later = kernlog.Clock("boot-a", 6100.0)
    state, held = kernlog.advance(state, [XID79, XID79.replace("5000.000001", "6050.5")], later, 3600)
    assert [f.code for f in held] == [79]                      # the one new line only


def test_a_kernel_log_line_from_the_future_is_no_evidence_and_never_moves_the_cursor():
    """Evidence from the future is refused: a line stamped past this boot's uptime (read after the log) was taken as
    an Xid and moved the cursor past the uptime, so the next run found the cursor impossible and read the whole
    lookback again (an Xid already drained on, drained on twice)."""
    clock = kernlog.Clock("boot-a", 6000.0)
    state, held = kernlog.advance(kernlog.State(), [XID79], clock, 3600)
    state = kernlog.settle(state)                              # drained on it
    future = XID79.replace("5000.000001", "99999999.0")
    state, held = kernlog.advance(state, [XID79, future], clock, 3600)
    assert held == [] and state.mono == 5000.000001 and not kernlog.impossible(state, clock)
    state, held = kernlog.advance(state, [XID79, future], kernlog.Clock("boot-a", 6010.0), 3600)
    assert held == []                                          # the next run: the Xid drained on is not read again


def test_an_xid_not_acted_on_is_held_and_one_before_the_reboot_is_not_evidence():
    """NVIDIA's Xid catalog: Xid 79 asks for a reset or a reboot. Not drained (the breaker held): it stays for the
    next run. Logged before the repair reboot (another boot id): it is not evidence against the repaired node."""
    state, held = kernlog.advance(kernlog.State(), [XID79], kernlog.Clock("boot-a", 6000.0), 3600)
    state, held = kernlog.advance(state, [], kernlog.Clock("boot-a", 6100.0), 3600)
    judged = xid.judge(held)
    assert judged is not None and judged[0] == "XID_HISTORY"
    state, held = kernlog.advance(state, [], kernlog.Clock("boot-b", 30.0), 3600)
    assert held == [] and state.boot_id == "boot-b"


def test_three_watched_xids_on_one_device_count_across_runs_within_the_lookback():
    """NVIDIA's Xid catalog (via the README's watch row): 3 of Xid 94 on one device within the lookback drain,
    however many runs they were read in; older ones drop out."""
    line = "[ {t}] NVRM: Xid (PCI:0000:9b:00): 94, pid=1, Contained ECC error"
    state = kernlog.State()
    for t in (100.0, 200.0):
        state, held = kernlog.advance(state, [line.format(t=t)], kernlog.Clock("b", t + 1), 3600)
        assert xid.judge(held) is None
    state, held = kernlog.advance(state, [line.format(t=300.0)], kernlog.Clock("b", 301.0), 3600)
    assert xid.judge(held) == ("XID_REPEATED", "kernel log: Xid 94 on 0000:9b:00 3 times (contained ECC error)")
    _, late = kernlog.advance(state, [], kernlog.Clock("b", 3850.0), 3600)
    assert len(late) == 1 and xid.judge(late) is None        # 100 and 200 are past the lookback


@pytest.mark.parametrize("cursor", [7000.0, 1e308, float("inf"), float("nan")])
def test_nvidia_xid_catalog_a_cursor_past_this_boots_uptime_never_hides_an_xid_79(cursor):
    """NVIDIA's Xid catalog: Xid 79 drains. A kernel-log cursor of this boot past its uptime (a garbled or planted
    state file: no read of this boot could leave it) would hide every line before it; it is dropped and the lines
    are read again from the lookback."""
    state, held = kernlog.advance(kernlog.State("b", cursor), [XID79], kernlog.Clock("b", 6000.0), 86400)
    assert [f.code for f in held] == [79] and state.mono == 5000.000001


def test_a_wall_clock_stamped_xid_from_before_the_boot_is_not_evidence():
    """NVIDIA's Xid catalog asks for a reboot; a kernel-log tool that prints wall-clock stamps and older boots (no -b)
    must not bring back an Xid logged before it: older than the boot time, or than the lookback, it is dropped;
    one after the boot counts, once."""
    before = "2026-11-28T03:00:00+00:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, fallen off the bus"
    after = before.replace("03:00:00", "05:00:00")
    clock = kernlog.Clock("b", 100.0, booted=kernlog.wall(before.replace("03:00:00", "04:00:00")),
                          now=kernlog.wall(after))
    state, held = kernlog.advance(kernlog.State(), [before, after], clock, 86400)
    assert [f.line for f in held] == [after]
    _, again = kernlog.advance(kernlog.settle(state), [before, after], clock, 86400)
    assert again == []


@pytest.mark.parametrize("line", ["NVRM: Xid (PCI:0000:3b:00): 79,", "NVRM: Xid (PCI:0000:3b:00): 79",
                                  "[ 12.5] host kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unkn"])
def test_a_truncated_xid_79_is_still_79(line):
    """NVIDIA's Xid catalog: 79 (fallen off the bus) drains, even when the line was cut short."""
    (finding,) = xid.parse([line])
    assert (finding.code, finding.action, finding.device) == (79, xid.DRAIN, "0000:3b:00")


def test_held_kernel_evidence_survives_the_breaker_and_is_spent_by_the_drain(tmp_path, fake, monkeypatch):
    """NVSentinel's breaker + NVIDIA's Xid catalog: an Xid 79 the breaker held is drained on at the next run (no new
    line), and once drained on it is not evidence again."""
    logs = iter([[XID79], [], []])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs), "journalctl"))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1))
    args = ["--state-dir", str(tmp_path / "state"), "--breaker", "0.25"]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER
    fake.nodes["n2"] = ("idle", "none")
    assert cli.main(args, STEP_ENV) == EXIT_FAULT and fake.nodes["n1"][1].startswith("torchimages:XID_HISTORY #")
    fake.nodes["n1"] = ("idle", "none")
    assert cli.main(args, STEP_ENV) == EXIT_PASS
    drain = history.last_drain(history.read(str(tmp_path / "state"), "n1").events)
    assert drain and drain["action"] == "reboot" and drain["boot_id"]


def test_nvidia_xid_catalog_a_gpu_reset_spends_the_xid_it_repaired(tmp_path, fake, monkeypatch):
    """NVIDIA's Xid catalog: Xid 79's action is a GPU reset (or a reboot). An operator drained the node by hand (our
    drain left it so, the Xid held), reset the GPU, recorded it (NVSentinel's record) and resumed it: the held Xid
    79, logged before the reset, is spent (as a reboot spends a boot's), not drained on again; an Xid after the reset
    is evidence."""
    booted = 1_000_000.0                                    # wall time of the boot: the Xid at 5000 s is 1_005_000
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 9000.0, booted, booted + 9000))
    logs = iter([[XID79], [], [XID79.replace("5000.000001", "8000.000000")]])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs), "journalctl"))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    fake.nodes["n1"] = ("drained", "ops: bad gpu, resetting it")
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER                   # someone else's drain: left so, the Xid held
    fake.nodes["n1"] = ("idle", "none")
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(booted + 6000, "gpu-1", True)], ""))
    assert cli.main(args, STEP_ENV) == EXIT_PASS                      # reset at 6000 s: the Xid at 5000 s is spent
    assert cli.main(args, STEP_ENV) == EXIT_FAULT                     # an Xid at 8000 s, after the reset: drained
    held = kernlog.State("boot-a", held=[{"line": XID79, "mono": 5000.000001}, {"line": "x", "mono": -1.0}])
    clock = kernlog.Clock("boot-a", 9000.0, booted, booted + 9000)
    assert [e["mono"] for e in kernlog.spent_before(held, booted + 6000, clock).held] == [-1.0]   # no stamp: kept
    assert kernlog.spent_before(held, booted + 6000, kernlog.Clock("boot-a", 9000.0)).held == held.held


# ---- 5. a hung checker is evidence after a few runs

def test_a_preflight_that_hangs_run_after_run_drains_behind_the_breaker(tmp_path, fake, monkeypatch):
    """NVSentinel's users report a degrading GPU stalling its checker through dozens of kills: after --hang-runs
    (3) hung runs in a row the node is drained with PREFLIGHT_HUNG (the host's), behind the breaker."""
    _verify_writes(monkeypatch, None, rc=None)
    args = _args(tmp_path, "--budget", "30")
    assert [cli.main(args, STEP_ENV) for _ in range(2)] == [3, 3] and not fake.calls
    assert cli.main(args, STEP_ENV) == EXIT_FAULT
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert _events(tmp_path)[-2:] == [("fault", "PREFLIGHT_HUNG"), ("drain", "PREFLIGHT_HUNG")]
    assert CODES["PREFLIGHT_HUNG"].owner == "host" and CODES["PREFLIGHT_HUNG"].fix


def test_nvsentinel_checker_rule_a_cap_too_tight_for_verify_never_counts_as_a_hung_host(tmp_path, fake, monkeypatch):
    """The checker's own limit is not the node's fault (NVSentinel): with --grace so small that verify is stopped
    before 1.5 x its budget, every run is BUDGET_TOO_SMALL (our setting), never towards --hang-runs: no drain."""
    _verify_writes(monkeypatch, None, rc=None)
    args = _args(tmp_path, "--budget", "30", "--grace", "1")
    assert [cli.main(args, STEP_ENV) for _ in range(4)] == [3] * 4 and not fake.calls
    assert set(_events(tmp_path)) == {("not-assessed", "BUDGET_TOO_SMALL")}


def test_the_hang_streak_counts_only_one_cause_in_a_row():
    """A pass, another cause or a drain ends the streak; what the breaker refused does not."""
    def ev(event: str, code: str | None = None) -> dict[str, Any]:
        return {"event": event, "code": code, "epoch": 1.0, "time": "t"}
    hung = ev("not-assessed", "PREFLIGHT_TIMEOUT")
    assert history.streak([hung, hung], cli.HANG_CODES) == 2
    assert history.streak([hung, ev("pass"), hung], cli.HANG_CODES) == 1
    assert history.streak([hung, ev("not-assessed", "PREFLIGHT_NO_REPORT")], cli.HANG_CODES) == 0
    assert history.streak([hung, ev("fault", "PREFLIGHT_HUNG"), ev("drain-refused", "PREFLIGHT_HUNG")],
                          cli.HANG_CODES) == 2
    assert history.streak([hung, ev("drain", "PREFLIGHT_HUNG")], cli.HANG_CODES) == 0


def test_no_hang_evidence_from_a_budget_too_small_or_with_the_knob_off(tmp_path):
    timeout = Verdict(NOT_ASSESSED, "PREFLIGHT_TIMEOUT", None, "ran past")
    # hangs of this boot (a time after it): hangs before it are no evidence (history.streak)
    events = [{"event": "not-assessed", "code": "PREFLIGHT_TIMEOUT", "epoch": time.time(), "time": "t"}] * 5
    for extra in (["--budget", "1"], ["--hang-runs", "0"]):
        cfg = cli.config(cli._parser().parse_args(_args(tmp_path, *extra)), STEP_ENV)
        assert cli._hung(cfg, timeout, events) is timeout
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cli._hung(cfg, timeout, events).drains and cli._hung(cfg, Verdict(PASS), events).kind == PASS


# ---- 8. the history and state files are hostile

def test_a_history_that_is_a_symlink_is_refused_and_not_followed(tmp_path):
    """Files the cluster tooling reads are hostile: a symlink planted where a history should be is never followed
    (the prolog runs as root), and says so in one line."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "history").mkdir()
    os.symlink(victim, history.path(str(tmp_path), "n1"))
    problem = history.record(str(tmp_path), "n1", "pass", None, "x")
    assert problem and "symbolic link" in problem and "\n" not in problem and victim.read_text() == "precious\n"
    read = history.read(str(tmp_path), "n1")
    assert read.error and "symbolic link" in read.error
    os.symlink("/dev/zero", history.path(str(tmp_path), "n2"))
    assert history.read(str(tmp_path), "n2").error


def test_a_fifo_or_a_device_is_refused_without_hanging(tmp_path):
    """A FIFO would hang a reader and /dev/zero exhaust its memory: only regular files are read, O_NONBLOCK."""
    (tmp_path / "history").mkdir()
    os.mkfifo(history.path(str(tmp_path), "n1"))
    read = history.read(str(tmp_path), "n1")
    assert read.error and "not a regular file (a FIFO)" in read.error
    assert history.record(str(tmp_path), "n1", "pass", None, "x")
    with pytest.raises(statefile.Refused, match="character device"):
        statefile.read_tail("/dev/zero", 100)


def test_python_m_verify_prolog_metrics_reads_its_report_bounded(tmp_path, capsys):
    """`python -m verify.prolog.metrics REPORT` (the fleet side runs it) on /dev/zero exhausted its memory, a FIFO
    hung it and a report nested 200,000 deep was a traceback: one line each, exit 1; a report named through a
    symlink the operator made is read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    for path, said in (("/dev/zero", "character device"), (str(fifo), "a FIFO"), (str(deep), "nested deeper")):
        assert metrics.main([path, "--node", "n1", "--dir", str(tmp_path / "m")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and said in err[0], err
    (tmp_path / "r.json").write_text(json.dumps(_report(_gpu())))
    os.symlink(tmp_path / "r.json", tmp_path / "link.json")
    assert metrics.main([str(tmp_path / "link.json"), "--node", "n1", "--dir", str(tmp_path / "m")]) == 0


def test_the_metrics_file_never_follows_a_link_planted_at_its_temp_name(tmp_path):
    """The prolog writes its metrics as root into node_exporter's folder: prometheus_client's write_to_textfile
    opened `<file>.<pid>.<thread>` (a name anyone can plant a link at) and wrote through it. Now a temp file of an
    unguessable name, then a rename: the link's target is untouched, and no temp file stays."""
    pytest.importorskip("prometheus_client")
    import threading
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    folder = tmp_path / "prom"
    folder.mkdir()
    target = folder / "torchimages_n1.prom"
    os.symlink(victim, f"{target}.{os.getpid()}.{threading.current_thread().ident}")
    os.symlink(victim, target)
    assert metrics.write(str(folder), "n1", _report(_gpu())) == str(target)
    assert victim.read_text() == "precious\n" and not target.is_symlink() and "torchimages_" in target.read_text()
    assert sorted(p.name for p in folder.iterdir() if not p.is_symlink()) == ["torchimages_n1.prom"]


def test_the_history_is_rotated_atomically_and_read_from_its_tail(tmp_path):
    """A history that grows without bound costs every prolog its memory: past max_bytes the file keeps its last
    lines (temp file, then rename); a reader takes a bounded tail, the cut first line not counted as garbled."""
    state = str(tmp_path)
    for i in range(300):
        assert history.record(state, "n1", "pass", None, f"run {i}", now=1000.0 + i, max_bytes=20_000,
                              keep_lines=50) is None
    lines = Path(history.path(state, "n1")).read_text().splitlines()
    assert 50 <= len(lines) < 150 and json.loads(lines[-1])["detail"] == "run 299"
    assert sorted(p.name for p in (tmp_path / "history").iterdir()) == [".n1.lock", "n1.jsonl"]
    tail = history.read(state, "n1", cap=1000)
    assert tail.cut and tail.skipped == 0 and tail.events[-1]["detail"] == "run 299" and len(tail.events) < 10


def test_a_garbled_line_is_named_never_skipped_silently(tmp_path):
    state = str(tmp_path)
    history.record(state, "n1", "pass", None, "x", now=1.0)
    with open(history.path(state, "n1"), "a") as fh:
        fh.write("[" * 100_000 + "\n" + '{"schema": 1}\n')
    history.record(state, "n1", "pass", None, "y", now=2.0)
    read = history.read(state, "n1")
    assert read.bad_lines == [2, 3] and read.garbled == "2 garbled line(s) in the history (line 2, 3)"
    assert [e["detail"] for e in read.events] == ["x", "y"]


def test_the_kernel_log_state_is_hostile_too(tmp_path):
    state = str(tmp_path)
    (tmp_path / "kernlog").mkdir()
    Path(kernlog.state_path(state, "n1")).write_text("{" * 50_000)
    fresh, problem = kernlog.load(state, "n1")
    assert fresh == kernlog.State() and problem and "garbled" in problem
    os.unlink(kernlog.state_path(state, "n1"))
    os.symlink("/dev/zero", kernlog.state_path(state, "n1"))
    assert "symbolic link" in (kernlog.load(state, "n1")[1] or "")
    saved = kernlog.State("b", 12.5, ["d"], [], [{"line": XID79, "mono": 5000.000001}])
    os.unlink(kernlog.state_path(state, "n1"))
    assert kernlog.save(state, "n1", saved) is None and kernlog.load(state, "n1") == (saved, None)


def test_a_huge_xid_line_never_garbles_the_kernel_log_state(tmp_path):
    """Files the cluster tooling reads are hostile: one "Xid" line of 3 MiB (a stand-in journalctl, a corrupt
    journal) was held whole, the state outgrew its read cap, read back garbled, and every line of the lookback was
    read again (an Xid drained on counted twice). A held line keeps its stamp and the driver's words, cut short."""
    huge = "[ 5000.000001] " + "x" * (3 << 20) + " NVRM: Xid (PCI:0000:3b:00): 79, pid=1, " + "y" * (1 << 20)
    clock = kernlog.Clock("boot-a", 6000.0)
    state, found = kernlog.advance(kernlog.State(), [huge], clock, 86400.0)
    assert [(f.code, f.device) for f in found] == [(79, "0000:3b:00")]
    assert len(state.held[0]["line"]) < 1100 and state.held[0]["mono"] == 5000.000001
    assert kernlog.save(str(tmp_path), "n1", state) is None
    loaded, problem = kernlog.load(str(tmp_path), "n1")
    assert problem is None and loaded == state
    assert [f.code for f in xid.parse([e["line"] for e in loaded.held])] == [79]


def test_every_not_assessed_code_the_prolog_gives_is_declared():
    """The prolog's own codes are one list (verdict.NOT_ASSESSED_CODES, which docs/prolog.md is checked against):
    every code its modules give a not-assessed or ungated run is in it, and none of them is a check's code."""
    import re

    from verify.codes import CODES
    from verify.prolog.verdict import NOT_ASSESSED_CODES
    source = "\n".join(p.read_text() for p in (Path(__file__).parent.parent / "verify" / "prolog").glob("*.py"))
    given = set(re.findall(r'not_assessed\("([A-Z_]+)"', source)) | set(re.findall(r'ungated\([^)]*?"([A-Z_]+)"', source))
    assert given and given <= NOT_ASSESSED_CODES, given - NOT_ASSESSED_CODES
    assert not NOT_ASSESSED_CODES & set(CODES)


# ---- 6. facts that cannot be true: a first step given GPUs judges them too

@pytest.mark.parametrize("confirm", [False, True])
def test_slurm_s_gres_a_first_step_given_gpus_never_passes_a_report_without_its_gpu_check(tmp_path, fake, monkeypatch,
                                                                                         confirm):
    """Slurm's Gres: a first step (srun ... torchimages-prolog) on a node Slurm gave 8 GPUs passes only when the
    report judged them, as under Prolog=; after a confirmation run too. Not assessed (exit 3), never a pass."""
    shm = {"name": "shm", "status": "pass", "summary": "ok", "duration_s": 1.0}
    first = _report({**shm, "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host"}) if confirm else _report(shm)
    bodies = iter([json.dumps(first).encode(), json.dumps(_report(shm)).encode()])

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(next(bodies))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    env = {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}
    assert cli.main(_args(tmp_path, "--min-confirm", "1"), env) == EXIT_NOT_ASSESSED
    assert _events(tmp_path) == [("not-assessed", "GPU_NOT_ASSESSED")] and not fake.calls


def test_slurm_s_gres_a_pass_that_lists_fewer_gpus_than_allocated_is_no_pass(tmp_path, fake, monkeypatch):
    """Slurm's Gres: a report that passes but whose gpu check lists 2 NVML devices where Slurm allocated 8 (verify
    was asked --expect-gpus 8) contradicts itself: not assessed (GPU_COUNT_UNPROVEN), as a Prolog= or a first step."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 2))).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == EXIT_NOT_ASSESSED
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_JOB_GPUS": "0,1,2,3,4,5,6,7"}) == EXIT_PASS
    assert _events(tmp_path) == [("not-assessed", "GPU_COUNT_UNPROVEN")] * 2 and not fake.calls
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "2"}) == EXIT_PASS


@pytest.mark.parametrize("record", [
    "1783669090 h nvsentinel-gpu-reset[1]: GPU reset executed: GPU-52f37cd4-d92a-7b6d-2b9f-9ab862e27708, success: FALSE",
    "1783669090 h nvsentinel-gpu-reset[1]: GPU reset executed: GPU-zz, success: false",
    "1783669090 h nvsentinel-gpu-reset[1]: GPU reset executed: (uuid lost)",
])
def test_nvsentinel_return_to_service_a_reset_record_not_understood_is_no_repair(record):
    """A reset after the success whose GPU or outcome cannot be read was ignored, and the earlier success resumed the
    node. NVSentinel's return to service stands on whole evidence: such a record is a failed reset of its own GPU,
    whose GPU no later record names, so the repair is then a reboot."""
    drain = {"code": "XID_HISTORY", "epoch": 1783669000.0, "boot_id": "a", "action": "reboot"}
    resets = repair.parse_resets([RESET_OK, record])
    problem = str(repair.repair_problem(drain, None, kernlog.Clock("a", 50.0), None, (resets, "")))
    assert "the last GPU reset since failed (unreadable record" in problem
    later = RESET_OK.replace("1783669085", "1783669099")
    assert repair.repair_problem(drain, None, kernlog.Clock("a", 50.0), None,
                                 (repair.parse_resets([RESET_OK, record, later]), "")) is not None   # still unread


@pytest.mark.parametrize("answer", [
    "NodeName=n1 NodeHostName=elsewhere NodeHostName=n1 Gres=gpu:8\n",
    "NodeName=n1 NodeHostName=elsewhere Gres=gpu:8\nNodeName=n1 NodeHostName=n1 Gres=gpu:8\n",
    "NodeName=n1 NodeHostName=n1 Gres=gpu:8 Gres=gpu:1\n",
])
def test_nvsentinel_return_to_service_a_record_naming_a_field_twice_proves_nothing(monkeypatch, answer):
    """Slurm's record of one node names NodeHostName and Gres once: read as a dict, the last of two won, so a record
    that said another host first resumed the node on this host's preflight, and Gres=gpu:1 after gpu:8 proved a
    node with 7 GPUs lost. Which host it is, or what it should have, cannot then be proven: refused."""
    monkeypatch.setattr(slurm, "run", lambda argv, dry_run=False, quiet=False: (0, answer))
    info, why = slurm.node_info("n1")
    assert info is None and "times: not one node's record" in why
