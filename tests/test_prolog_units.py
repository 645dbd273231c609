"""torchimages-prolog's pure parts (issue 26): the verdict ("not assessed" kept apart from a fault), the Xid catalog
replayed over real public kernel-log excerpts (tests/data/kernel-log/SOURCES.json names each one's URL), node names,
sinfo and the breaker, the per-node history, the preflight's rolling budget shares, and the external commands' argv."""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from verify.budget import Shares
from verify.prolog import cli, config, history, kernlog, slurm, xid
from verify.prolog.verdict import FAULT, NOT_ASSESSED, PASS, Verdict, confirmation, decide, finite_positive, timed_out

pytestmark = pytest.mark.unit
KERNEL_LOGS = Path(__file__).parent / "data" / "kernel-log"
SOURCES = {k: v for k, v in json.loads((KERNEL_LOGS / "SOURCES.json").read_text()).items() if not k.startswith("_")}


# ---- the Xid catalog, on real kernel logs

@pytest.mark.parametrize("name", sorted(SOURCES))
def test_real_kernel_logs_give_the_catalogs_action(name):
    meta = SOURCES[name]
    assert meta["url"].startswith("https://")
    findings = xid.parse((KERNEL_LOGS / name).read_text().splitlines())
    assert [f.code for f in findings] == meta["xids"]
    judged = xid.judge(findings)
    assert (judged[0] if judged else None) == meta["drain"], judged
    if judged:
        assert judged[1].startswith("kernel log: ")


def test_every_real_excerpt_in_the_folder_is_named_with_its_source():
    assert {p.name for p in KERNEL_LOGS.glob("*.log")} == set(SOURCES)


def test_application_xids_never_drain_however_often_they_come():
    lines = [f"NVRM: Xid (PCI:0000:43:00): {code}, pid=1, name=python, handmade" for code in (13, 31, 43, 45) * 10]
    findings = xid.parse(lines)
    assert {f.action for f in findings} == {xid.APP} and xid.judge(findings) is None


def test_a_watched_xid_drains_only_after_repeats_on_one_device():
    line = "NVRM: Xid (PCI:0000:{bus}:00): 94, pid=1, name=python, Contained ECC error (handmade)"
    twice = xid.parse([line.format(bus="9b")] * 2)
    spread = xid.parse([line.format(bus=b) for b in ("9b", "9c", "9d")])
    thrice = xid.parse([line.format(bus="9b")] * 3)
    assert xid.judge(twice) is None and xid.judge(spread) is None
    assert xid.judge(thrice) == ("XID_REPEATED", "kernel log: Xid 94 on 0000:9b:00 3 times (contained ECC error)")


@pytest.mark.parametrize("action, expect", [("0x0 (None)", xid.INFO), ("0x1 (GPU Reset Required)", xid.DRAIN),
                                            ("0x2 (Node Reboot Required)", xid.DRAIN), ("0x4 (Drain and Reset)", xid.DRAIN),
                                            ("0x5 (Recover IMEX Domain)", xid.WATCH)])
def test_xid_154_follows_the_recovery_action_it_names(action, expect):
    line = f"NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to {action}"  # handmade
    (finding,) = xid.parse([line])
    assert finding.action == expect


def test_an_unknown_xid_or_garbage_is_watched_or_ignored_never_a_crash():
    odd = ["NVRM: Xid (PCI:0000:01:00): 99999, something new", "NVRM: Xid (PCI:zz): x, y", "\x00\xff binary",
           "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Fatal, Link 3 egress error (handmade)", ""]
    findings = xid.parse(odd)
    assert [(f.code, f.action) for f in findings] == [(99999, xid.WATCH), (12028, xid.DRAIN)]


# ---- the verdict

def _report(*checks: dict | str, status: str | None = None, **extra) -> dict:
    failed = any(isinstance(c, dict) and c.get("status") == "fail" for c in checks)
    return {"status": status or ("fail" if failed else "pass"), "checks": list(checks), **extra}


def _check(name: str, status: str, code: str | None = None, owner: str | None = None) -> dict:
    return {"name": name, "status": status, "code": code, "owner": owner, "summary": f"{name} {status}"}


@pytest.mark.parametrize("report, code", [
    (None, "REPORT_INVALID"), ([], "REPORT_INVALID"), ({"checks": "x"}, "REPORT_INVALID"),
    ({"status": "pass", "checks": []}, "REPORT_INVALID"),
    (_report(status="fail"), "REPORT_INVALID"),                                  # fail, but no check failed
    (_report(_check("shm", "pass"), status="fail"), "REPORT_INVALID"),
    (_report(_check("shm", "fail", "SHM_TOO_SMALL", "job"), status="pass"), "REPORT_INVALID"),
    (_report({"name": "shm", "status": "maybe"}), "REPORT_INVALID"), (_report("shm"), "REPORT_INVALID"),
    (_report(_check("shm", "fail", "INTERRUPTED", "job"), interrupted="SIGTERM"), "PREFLIGHT_INTERRUPTED"),
    (_report(_check("gpu", "skip", "GPU_NOT_VISIBLE", "job")), "PREFLIGHT_EMPTY"),
    (_report(_check("shm", "fail", "SHM_TOO_SMALL", None)), "OWNER_MISSING"),
    (_report(_check("shm", "fail", "SHM_TOO_SMALL", "nobody")), "OWNER_MISSING"),
    (_report(_check("shm", "fail", None, "host")), "REPORT_INVALID"),     # verify codes every failure: not its report
    (_report(_check("nccl", "fail", "MEASUREMENT_INVALID", "host")), "MEASUREMENT_INVALID"),
])
def test_the_tools_own_trouble_is_not_assessed_and_never_drains(report, code):
    v = decide(report)
    assert (v.kind, v.code, v.drains) == (NOT_ASSESSED, code, False), v
    assert v.line().startswith(f"prolog: NOT-ASSESSED {code}") and "\n" not in v.line()


def test_a_host_timeout_drains_only_once_confirmed():
    first = _report(_check("gpu", "fail", "CHECK_TIMEOUT", "host"), _check("shm", "fail", "CHECK_TIMEOUT", "host"),
                    _check("nccl", "pass"))
    timeout = decide(first)
    assert (timeout.kind, timeout.owner, timeout.confirmed, timeout.drains) == (FAULT, "host", False, False)
    assert timed_out(first) == ["gpu", "shm"]
    hung = decide(_report(_check("gpu", "fail", "GPU_LOST", "host"), _check("nccl", "fail", "NCCL_TIMEOUT", "host")))
    assert hung.drains and hung.code == "GPU_LOST"
    ecc = decide(_report(_check("shm", "fail", "SHM_TOO_SMALL", "job"), _check("gpu", "fail", "ECC_UNCORRECTABLE", "host")))
    assert ecc.drains and ecc.code == "ECC_UNCORRECTABLE"           # the node's fault comes first

    def rerun(*checks: dict) -> tuple[Verdict, dict]:
        report = _report(*checks)
        return decide(report), report

    # gpu was only slow (it now skips: no GPU), shm hangs again: the shm timeout is confirmed
    again = confirmation(first, *rerun(_check("gpu", "skip", "GPU_NOT_VISIBLE", "image"),
                                       _check("shm", "fail", "CHECK_TIMEOUT", "host")), 24)
    assert again.drains and again.check == "shm" and "confirmed: it failed again alone with 24 s" in again.summary
    busy = confirmation(first, *rerun(_check("gpu", "pass"), _check("shm", "pass")), 24)
    assert busy.kind == PASS and "busy host" in busy.summary
    image = confirmation(first, *rerun(_check("gpu", "pass"), _check("shm", "fail", "CHECK_CRASHED", "image")), 24)
    assert (image.kind, image.owner, image.drains) == (FAULT, "image", False)
    no_report = confirmation(first, Verdict(NOT_ASSESSED, "PREFLIGHT_NO_REPORT", summary="x"), None, 24)
    interrupted = confirmation(first, Verdict(NOT_ASSESSED, "PREFLIGHT_INTERRUPTED", summary="y"),
                               _report(_check("shm", "fail", "INTERRUPTED", "job"), interrupted="SIGTERM"), 24)
    for v in (no_report, interrupted):
        assert v.kind == NOT_ASSESSED and not v.drains


def test_gpus_slurm_allocated_but_invisible_are_the_hosts_only_under_the_prolog():
    report = _report(_check("gpu", "fail", "GPU_NOT_VISIBLE", "job"), _check("shm", "pass"))
    assert decide(report).owner == "job"
    assert decide(report, gpus_expected_by_scheduler=True).drains
    cpu_torch = _report(_check("gpu", "fail", "GPU_NOT_VISIBLE", "image"), _check("shm", "pass"))
    assert decide(cpu_torch, gpus_expected_by_scheduler=True).owner == "image"     # a CPU build: the image's
    assert cli.expected_gpus({"SLURM_GPUS_ON_NODE": "8"}) == 8
    assert cli.expected_gpus({"SLURM_JOB_GPUS": "0,1,2,3"}) == 4
    assert cli.expected_gpus({}) is None and cli.expected_gpus({"SLURM_GPUS_ON_NODE": "0"}) is None
    # Slurm's words that disagree prove the larger (a count of 0 beside ids 0,1 passed a report with no gpu check);
    # an index named twice is one GPU
    assert cli.expected_gpus({"SLURM_GPUS_ON_NODE": "0", "SLURM_JOB_GPUS": "0,1"}) == 2
    assert cli.expected_gpus({"SLURM_GPUS_ON_NODE": "2", "SLURM_JOB_GPUS": "0,1,2,3"}) == 4
    assert cli.expected_gpus({"SLURM_GPUS_ON_NODE": "8", "SLURM_JOB_GPUS": "0,1"}) == 8
    assert cli.expected_gpus({"SLURM_JOB_GPUS": "0,0"}) == 1
    for env in ({"SLURM_GPUS_ON_NODE": "eight"}, {"SLURM_JOB_GPUS": "0,x"}, {"SLURM_GPUS_ON_NODE": "-1"}):
        with pytest.raises(cli.UsageError):
            cli.expected_gpus(env)


def test_the_drain_reason_is_one_printable_line_within_slurm_s_limit():
    text = slurm.reason("n1", "GPU_LOST", 'device 3 "x"\nis lost\x1b[31m' + "y" * 500, 1795635600.5)
    assert text.startswith("torchimages:GPU_LOST #1795635600.") and " device 3 'x' is lost" in text
    assert len(text) == 200 and "\n" not in text and slurm.parse_reason(text, "n1") == ("GPU_LOST", 1795635600)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "0", "-1", "1e9", "abc", ""])
def test_seconds_must_be_finite_positive_and_bounded(text):
    with pytest.raises(ValueError):
        finite_positive(text, "--budget", 3600)


@pytest.mark.parametrize("option,value,unit", [("--lookback", "0", "hours"), ("--flap-window", "-3", "days"),
                                               ("--budget", "x", "seconds")])
def test_a_bad_duration_is_refused_in_the_unit_its_option_takes(option, value, unit):
    """--lookback is hours and --flap-window days: a refusal that said "seconds" sent the operator to the wrong fix."""
    with pytest.raises(cli.UsageError, match=f"{option} '{re.escape(value)}' .*number of {unit} "):
        config._numbers(_args(option, value))


def _args(*argv: str) -> argparse.Namespace:
    return cli._parser().parse_args(list(argv))


@pytest.mark.parametrize("argv, needle", [
    (["--budget", "inf"], "--budget 'inf'"), (["--budget", "nan"], "finite"), (["--breaker", "1.5"], "between 0 and 1"),
    (["--breaker", "ten"], "not a share"), (["--node", "n[1-64]"], "hostlist"), (["--node", "n1,n2"], "hostlist"),
    (["--node=-n1"], "not one node"), (["--partition", "a b"], "not one partition"), (["--lookback", "0"], "above 0"),
])
def test_bad_arguments_are_one_clear_line(argv, needle):
    with pytest.raises(cli.UsageError) as exc:
        cli.config(_args(*argv), {"SLURMD_NODENAME": "n1"})
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_mode_and_defaults_come_from_slurm_s_environment():
    cfg = cli.config(_args(), {"SLURMD_NODENAME": "gpu-7", "SLURM_JOB_PARTITION": "batch", "SLURM_STEP_ID": "0",
                               "SLURM_JOB_ID": "12"})
    assert (cfg.node, cfg.partition, cfg.mode, cfg.job, cfg.breaker) == ("gpu-7", "batch", "step", "12", 0.10)
    assert cli.config(_args(), {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURMD_NODENAME": "a"}).mode == "prolog"
    # a step that exported slurmd's context is still a step (tests/test_cluster_lows36.py)
    assert cli.config(_args(), {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_STEP_ID": "0",
                                "SLURMD_NODENAME": "a"}).mode == "step"


# ---- Slurm: node names, sinfo, the breaker, argv

def test_a_node_name_is_one_node():
    assert slurm.node_problem("gpu-node-07.rack3") is None and slurm.node_problem("n1") is None
    assert slurm.node_problem("a" * 70) is None       # a NodeName may be fully qualified (slurm.conf): past 63
    for bad in ("n[1-64]", "n1,n2", "n1 n2", "", "-x", "n1;reboot", "a" * 201, "n1\n", "n\n1"):
        assert slurm.node_problem(bad), bad


def _ours(node: str, code: str = "CHECK_TIMEOUT", summary: str = "shm timed out", t: float = 1795635600) -> str:
    return slurm.reason(node, code, summary, t)


SINFO = (f"n1|idle|none\nn2|drained|{_ours('n2')}\nn3|drained|maintenance by ops\nn4|mixed|none\n")


def test_the_breaker_counts_only_torchimages_drains_and_not_this_node():
    """NVSentinel's breaker: a reason is ours only with its mark (issue 36 changed this test: a reason merely
    starting with `torchimages:` is not ours; ours carries a mark bound to its node). A node out of service by
    another's word (n3, drained by ops) is no capacity and holds none of our places (hunt105)."""
    rows = slurm.parse_sinfo(SINFO + "n1|idle|none\ngarbage\n")
    assert [r.name for r in rows] == ["n1", "n2", "n3", "n4"]
    assert [r.ours for r in rows] == [False, True, False, False]
    assert slurm.breaker(rows, "n4", 0.25).open                         # n2 is torchimages' one allowed drain
    assert not slurm.breaker(rows, "n2", 0.25).open                     # n2 itself is not counted twice; n3 is ops'
    assert slurm.breaker(rows, "n2", 0.50).drained_ours == 0
    assert not slurm.breaker(slurm.parse_sinfo("n1|idle|none\nn2|idle|none"), "n1", 0.10).open  # at least one
    assert slurm.breaker(rows, "n4", 0.0).open                          # a share of 0: never drain
    many = slurm.parse_sinfo("".join(f"n{i}|{'drained' if i < 9 else 'idle'}|"
                                     f"{_ours(f'n{i}', 'X_Y') if i < 9 else 'none'}\n" for i in range(100)))
    assert not slurm.breaker(many, "n50", 0.10).open and slurm.breaker(many + [], "n50", 0.09).open
    gate = slurm.breaker(rows, "n4", 0.25)
    assert gate.line(0.25, "test") == ("1 of 3 node(s) of partition test (1 more out of service by others: drained, "
                                       "DOWN or FAIL, no capacity, not counted) already drained by torchimages; the "
                                       "breaker allows 1 (25%)")


def test_external_commands_argv():
    assert slurm.sinfo_argv("batch")[1:] == ["-h", "-N", "-o", "%N|%T|%E", "-p", "batch"]
    assert slurm.sinfo_argv(node="n2")[1:] == ["-h", "-N", "-o", "%N|%T|%E", "-n", "n2"]
    # stamps since boot, not wall time: a clock stepped back does not move them (issue 36 changed this test)
    assert kernlog.journalctl_argv()[1:] == ["-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"]
    assert kernlog.dmesg_argv()[1:] == ["--kernel"]


# ---- the history

def test_history_appends_whole_lines_skips_torn_ones_and_flags_a_fault_that_comes_back(tmp_path):
    state = str(tmp_path)
    day = 86400.0
    assert history.record(state, "n2", "drain", "GPU_LOST", "gpu 3 lost", now=1 * day) is None
    assert history.record(state, "n2", "resume", None, "passes", now=2 * day) is None
    with open(history.path(state, "n2"), "a", encoding="utf-8") as fh:
        fh.write('{"schema": 1, "event": "drain", "epo')                            # a torn line from elsewhere
    fh_text = Path(history.path(state, "n2")).read_text()
    Path(history.path(state, "n2")).write_text(fh_text + "\n")
    assert history.record(state, "n2", "drain", "GPU_LOST", "again", now=3 * day) is None
    read = history.read(state, "n2")
    assert [e["event"] for e in read.events] == ["drain", "resume", "drain"] and read.skipped == 1
    assert all(set(e) == {"schema", "time", "epoch", "node", "event", "code", "detail", "id"} for e in read.events)
    flap = history.failed_again_after_resume(read.events, window_s=7 * day)
    assert flap and flap.startswith("drained again (GPU_LOST) 24.0 h after it was resumed")
    assert history.failed_again_after_resume(read.events, window_s=0.5 * day) is None
    assert history.failed_again_after_resume(read.events[:2]) is None
    assert history.read(state, "nobody").events == []
    assert history.counts(read.events)["drain"] == 2
    with pytest.raises(ValueError):
        history.record(state, "n2", "reboot", None, "x")


def test_history_that_cannot_be_written_says_why(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    problem = history.record(str(blocker), "n1", "pass", None, "x")
    assert problem and problem.startswith("cannot append to the history")


# ---- the preflight's budget shares

def test_budget_shares_roll_forward_what_a_check_did_not_use():
    now = [0.0]
    shares = Shares(30, {"gpu": 0.3, "shm": 0.2, "nccl": 0.5}, clock=lambda: now[0])
    assert shares.limit("gpu") == pytest.approx(30 * 0.3 / 1.05)
    now[0] = 3.0                                          # gpu ended early (a CPU host)
    assert shares.limit("shm") == pytest.approx(27 * 0.2 / 0.75)
    now[0] = 10.0
    assert shares.limit("nccl") == pytest.approx(20 * 0.5 / 0.55)
    late = Shares(5, {"a": 1.0}, clock=lambda: now[0])
    now[0] = 100.0                                        # past the deadline: the floor
    assert late.limit("a") == 1.0
    capped = Shares(300, {"a": 1.0}, cap_s=20)
    assert capped.limit("a") == 20


def test_a_check_never_gets_less_than_its_floor_of_this_host_s_torch_import():
    now = [0.0]
    shares = Shares(30, {"gpu": 0.3, "shm": 0.2, "nccl": 0.5}, clock=lambda: now[0],
                    floors={"gpu": 2.0, "shm": 3.0, "nccl": 5.0})
    shares.startup_s = 5.5                                # a busy host: import torch took 5.5 s
    assert shares.limit("gpu") == pytest.approx(11.0)      # 2 x 5.5 > its share of 30 s (8.6 s)
    now[0] = 25.0
    assert shares.limit("shm") == pytest.approx(16.5)
    now[0] = 29.0
    assert shares.limit("nccl") == pytest.approx(27.5)     # past the budget: slow, never falsely failed


def test_a_history_with_odd_lines_never_breaks_the_reader(tmp_path):
    state = str(tmp_path)
    Path(history.path(state, "n1")).parent.mkdir(parents=True)
    Path(history.path(state, "n1")).write_bytes(
        b'\x00\xff\n[]\n{"schema": 1, "event": "drain", "epoch": NaN, "time": "x"}\n'
        b'{"schema": 1, "event": "drain", "epoch": true, "time": "x"}\n{"schema": 1, "event": "drain", "epoch": 5}\n'
        b'{"schema": 2, "event": "drain", "epoch": 5, "time": "x"}\n{"schema": 1, "event": "nap", "epoch": 5, "time": "x"}\n'
        b'{"schema": 1, "event": "resume", "epoch": 1, "time": "t1"}\n{"schema": 1, "event": "drain", "epoch": 2, "time": "t2"}\n')
    read = history.read(state, "n1")
    assert [e["event"] for e in read.events] == ["resume", "drain"] and read.skipped == 7 and read.error is None
    assert history.failed_again_after_resume(read.events)
    Path(history.path(state, "n2")).mkdir()                     # a folder where the file should be
    unreadable = history.read(state, "n2")
    assert unreadable.events == [] and unreadable.error and unreadable.error.startswith("cannot read the history")
    for bad in ("", "../etc", ".hidden", "a/b"):
        with pytest.raises(ValueError):
            history.record(state, bad, "pass", None, "x")


def test_an_empty_sinfo_never_lets_a_drain_through():
    assert slurm.parse_sinfo("") == [] and slurm.parse_sinfo("no pipes here\n|idle|none\n") == []
