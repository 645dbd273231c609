"""Issue 36, an eighth hunt (round 54) through the public interfaces: classes 2 (the breaker under concurrency),
4 (kernel-log evidence), 5 (a hung checker as evidence) and 9 (time). Each test names the practice it holds the
cluster tooling to (Slurm's prolog semantics, NVSentinel's breaker and return-to-service rules, NVIDIA's Xid
catalog)."""
from __future__ import annotations

import errno
import fcntl
import json
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, history, slurm


def gpu_lost() -> bytes:
    """A lost GPU's report, stamped now: a report made before the run is stale evidence (REPORT_INVALID), so one made
    at import failed when the suite reached it minutes later."""
    return json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode()


def _no_locks(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """A file system that gives no POSIX lock (NFS whose lock manager is down: ENOLCK; one without locking)."""
    def lockf(fd: int, op: int, *rest: Any) -> None:
        raise OSError(code, "no lock")
    monkeypatch.setattr(fcntl, "lockf", lockf)


# ---- class 2: the breaker's lock on a file system that gives no lock

@pytest.mark.unit
@pytest.mark.parametrize("code", [errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL])
@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["Prolog=", "first-step"])
def test_nvsentinel_breaker_a_lock_the_file_system_cannot_give_counts_without_it(tmp_path, monkeypatch, capsys, code,
                                                                                 env):
    """NVSentinel's breaker counts, claims and re-counts; its lock only keeps one host's prologs from racing. A state
    folder on NFS whose lock manager is down answers ENOLCK at once: that was told as "held by another prolog past
    30 s" and the drain refused, so every lost GPU of the fleet stayed in service, where a lock file that is a FIFO
    counts without it. Now no lock to be had is said as such and the breaker counts without it (the re-count keeps
    the share); the history keeps its line without it too."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, gpu_lost())
    _no_locks(monkeypatch, code)
    status = cli.main(_args(tmp_path), env)
    err = capsys.readouterr().err
    assert status == 1 and fake.nodes["n1"][0] == "drained", (status, err)
    assert "held by another prolog" not in err and "no lock to be had" in err
    assert history_events(tmp_path) == [("fault", "GPU_LOST"), ("drain", "GPU_LOST")]


@pytest.mark.unit
def test_nvsentinel_breaker_without_a_lock_still_keeps_its_share(tmp_path, monkeypatch):
    """Without the lock the share still holds: with one of four nodes already drained by torchimages and a breaker
    of 25 %, a second lost GPU is not drained (exit 0 under Prolog=, the refusal on record)."""
    fake = install_fake(monkeypatch)
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1000))
    _verify_writes(monkeypatch, gpu_lost())
    _no_locks(monkeypatch, errno.ENOLCK)
    assert cli.main(_args(tmp_path, "--breaker", "0.25"), PROLOG_ENV) == 0
    assert fake.nodes["n1"][0] == "idle" and history_events(tmp_path)[-1] == ("drain-refused", "GPU_LOST")


# ---- class 5: a hang streak is never counted across a line whose event is unknown

@pytest.mark.unit
@pytest.mark.parametrize("garbled", ['{"schema":1,"event":"pa', "\x00\x00\x00", '{"schema": 1, "event": "pass"}'])
def test_nvsentinel_checker_rule_no_streak_across_a_garbled_history_line(tmp_path, monkeypatch, capsys, garbled):
    """NVSentinel's checker rule: a stalled checker is evidence after N stalls in a row, and a pass between them ends
    the streak. A history line that cannot be read (cut short by a full disk, NUL bytes, a field missing) may have
    been that pass: two hangs, a garbled line, a hang drained a node as PREFLIGHT_HUNG. Now the streak counts only
    the runs after the last garbled line (said), and drains once --hang-runs of them hung."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, None, rc=None)          # verify ran past its limit on every run
    args = _args(tmp_path, "--budget", "5", "--grace", "60")
    for _ in range(2):
        assert cli.main(args, PROLOG_ENV) == 0
    with open(history.path(str(tmp_path / "state"), "n1"), "a", encoding="utf-8") as fh:
        fh.write(garbled + "\n")
    assert cli.main(args, PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    said = capsys.readouterr()
    assert "garbled line(s) in the history" in said.err and "1 of 3 runs in a row hung" in said.out
    for _ in range(2):
        cli.main(args, PROLOG_ENV)
    assert fake.nodes["n1"][0] == "drained" and history_events(tmp_path)[-1] == ("drain", "PREFLIGHT_HUNG")


# ---- class 2: two undrains at once, or an undrain while the node is drained again

def _drained_for_ecc(tmp_path: Path, fake: Any) -> list[str]:
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "ECC_UNCORRECTABLE", "x", now=1000.0,
                   extra={"gpus": 8, "boot_id": "an-earlier-boot", "action": "reboot", "check": "gpu"})
    return ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"]


@pytest.mark.unit
@pytest.mark.parametrize("meanwhile", ["drained-again", "fault-recorded", "resumed-by-hand"])
def test_nvsentinel_return_to_service_never_resumes_a_node_drained_again_while_it_ran(tmp_path, monkeypatch, capsys,
                                                                                     meanwhile):
    """NVSentinel's return to service resumes on the proof of the drain it judged. Two `make undrain` at once: the
    first resumed the node, a job landed, its prolog drained it for a new Xid; the second, whose preflight had
    started before, then resumed it on its pass (a broken node returned). So did a fault a running job's first step
    recorded under the old reason. Now Slurm's reason and the history are read again just before the resume: a node
    whose drain changed meanwhile is not resumed (exit 5), the new drain stays."""
    fake = install_fake(monkeypatch)
    args = _drained_for_ecc(tmp_path, fake)
    body = json.dumps(_report(_gpu())).encode()

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        if meanwhile == "drained-again":
            fake.nodes["n1"] = ("drained", slurm.reason("n1", "XID_HISTORY", "Xid 79", 2000))
        elif meanwhile == "resumed-by-hand":
            fake.nodes["n1"] = ("idle", "none")
        else:
            history.record(str(tmp_path / "state"), "n1", "drain", "GPU_LOST", "already drained by torchimages",
                           extra={"gpus": 8, "check": "gpu"})
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    before = fake.nodes["n1"]
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 5
    assert "state=resume" not in " ".join(" ".join(c) for c in fake.calls)
    assert fake.nodes["n1"] != ("idle", "none") or meanwhile == "resumed-by-hand", (before, fake.nodes["n1"])
    assert "while the preflight ran" in capsys.readouterr().err


@pytest.mark.unit
def test_nvsentinel_return_to_service_resumes_a_node_whose_jobs_ended_while_it_ran(tmp_path, monkeypatch):
    """A node still draining (its jobs running) when the revalidation began and drained when it ends, under the same
    reason, is the drain it judged: resumed."""
    fake = install_fake(monkeypatch)
    args = _drained_for_ecc(tmp_path, fake)
    fake.nodes["n1"] = ("draining", fake.nodes["n1"][1])
    body = json.dumps(_report(_gpu())).encode()

    def verify_runs(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(body)
        fake.nodes["n1"] = ("drained", fake.nodes["n1"][1])
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", verify_runs)
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 0 and fake.nodes["n1"] == ("idle", "none")


# ---- class 4: kernel-log evidence is spent only by a repair root recorded

XID79 = "[ 5000.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def _journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: list[str], forged: str) -> None:
    """journalctl on PATH as journald answers: the kernel log for -k, and for the reset tag the records its match
    selects: a record a job's user logged (`logger -t nvsentinel-gpu-reset ...`, _UID 1000) only without _UID=0."""
    import os
    import time

    from verify.prolog import kernlog, repair
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    (tmp_path / "kernel.log").write_text("\n".join(kernel) + "\n")
    (tmp_path / "forged.log").write_text(forged + "\n")
    script = (f"#!/bin/sh\ncase \" $* \" in\n  *' _UID=0 '*) exit 0 ;;\n  *nvsentinel-gpu-reset*) cat "
              f"{tmp_path}/forged.log; exit 0 ;;\nesac\ncat {tmp_path}/kernel.log\n")
    (bin_ / "journalctl").write_text(script)
    (bin_ / "journalctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    monkeypatch.setattr(repair, "read_resets", READ_RESETS)     # install_fake replaced it: journalctl itself here
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=None: kernlog.Clock("b1", 6000.0, time.time() - 6000.0,
                                                                               time.time()))


def _real_read_resets() -> Any:
    from verify.prolog import repair
    return repair.read_resets


READ_RESETS = _real_read_resets()


@pytest.mark.host
def test_nvidia_xid_catalog_a_reset_record_any_user_logged_never_spends_an_xid(tmp_path, monkeypatch, capsys):
    """NVIDIA's catalog asks a GPU reset or a reboot for Xid 79; the reset's proof is the record NVSentinel's reset
    job (root: nvidia-smi -r) logs under its tag. `logger -t nvsentinel-gpu-reset "GPU reset executed: GPU-..,
    success: true"` is open to any job's user: such a record spent the Xid 79 the breaker had held, and the node
    that lost its GPU never drained. Only root's records (journald's _UID=0) are read now."""
    import time
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    forged = f"{time.time() - 1:.6f} n1 nvsentinel-gpu-reset[4242]: GPU reset executed: GPU-{'a' * 8}-aaaa-aaaa-aaaa-" \
             f"{'a' * 12}, success: true"
    _journal(tmp_path, monkeypatch, [XID79], forged)
    state = ["--state-dir", str(tmp_path / "state")]
    assert cli.main([*state, "--breaker", "0"], PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"   # held
    assert cli.main(state, PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert history_events(tmp_path)[-1] == ("drain", "XID_HISTORY")


# ---- class 2: prologs of one node at once (jobs that start together) never confirm each other's timeouts

TIMEOUT = {"name": "nccl", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "ran past 15 s"}


def _timeouts(monkeypatch: pytest.MonkeyPatch, during: Any = None) -> None:
    """verify replaced: the nccl check times out in the first run and again alone in the confirmation."""
    bodies = [json.dumps(_report(_gpu("pass", 8), TIMEOUT)).encode(), json.dumps(_report(TIMEOUT)).encode()]

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0))
        if during and not bodies:
            during()
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)


@pytest.mark.host
def test_nvsentinel_checker_rule_a_timeout_confirmed_beside_another_prolog_of_the_node_is_no_hang(tmp_path,
                                                                                                  monkeypatch, capsys):
    """NVSentinel's checker rule reruns a stalled check alone before believing it. Slurm starts a Prolog per job:
    eight one-GPU jobs starting together on a node run eight preflights on all its GPUs at once, each slowing the
    others, the confirmations too, and a healthy node was drained for a timeout confirmed beside them. Now a
    confirmed timeout while another prolog of this node runs (its shared run lock held) is a busy host: not
    assessed (PREFLIGHT_TIMEOUT, a run towards --hang-runs), never drained."""
    import subprocess
    import sys

    from verify.prolog import busy
    fake = install_fake(monkeypatch)
    _timeouts(monkeypatch)
    (tmp_path / "state" / "history").mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR"
                               " | os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_SH); print('held', flush=True); "
                               "time.sleep(60)", busy.lock_path(str(tmp_path / "state"), "n1")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 0
    finally:
        holder.kill()
        holder.wait()
    assert fake.nodes["n1"][0] == "idle" and "another prolog of this node is running now" in capsys.readouterr().out
    assert history_events(tmp_path) == [("not-assessed", "PREFLIGHT_TIMEOUT")]
    _timeouts(monkeypatch)                        # alone now: the confirmed timeout is the node's
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"


@pytest.mark.unit
def test_nvsentinel_checker_rule_a_timeout_confirmed_while_another_run_ended_is_no_hang(tmp_path, monkeypatch,
                                                                                       capsys):
    """The same when the other prolog of the node ended while this one ran (its outcome in the history stamped
    after this run began): the two ran at once, and the confirmation was not alone."""
    fake = install_fake(monkeypatch)
    import time

    def another_run_ends() -> None:
        time.sleep(0.01)
        history.record(str(tmp_path / "state"), "n1", "pass", None, "another job's prolog")
    _timeouts(monkeypatch, another_run_ends)
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    assert "ended while this one ran" in capsys.readouterr().out


# ---- class 5: a confirmation that hangs as a whole is a run towards --hang-runs, never "raise --grace"

@pytest.mark.unit
def test_nvsentinel_checker_rule_a_confirmation_that_hangs_counts_towards_the_streak(tmp_path, monkeypatch, capsys):
    """NVSentinel's checker rule: a checker stalling run after run is evidence. A check that timed out (verify killed
    it and wrote its report) and whose confirmation then hung as a whole (the check stuck in the kernel on a
    degrading GPU, verify beside it) was told BUDGET_TOO_SMALL, "raise --grace", with the default settings: our
    setting's fault, which ends the streak, so the hang was hidden on every run. The confirmation's budget is all
    the time left; its stop is a timeout again: PREFLIGHT_TIMEOUT, and at --hang-runs in a row PREFLIGHT_HUNG."""
    fake = install_fake(monkeypatch)

    def once() -> None:
        bodies = [json.dumps(_report(_gpu("pass", 8), TIMEOUT)).encode()]

        def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
            if bodies:
                Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0))
                return 0, ""
            return None, ""               # the confirmation ran past its limit
        monkeypatch.setattr(cli, "_run_verify", run)
    for _ in range(2):
        once()
        assert cli.main(_args(tmp_path), PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    assert "BUDGET_TOO_SMALL" not in capsys.readouterr().out
    once()
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert history_events(tmp_path) == [("not-assessed", "PREFLIGHT_TIMEOUT"), ("not-assessed", "PREFLIGHT_TIMEOUT"),
                                        ("fault", "PREFLIGHT_HUNG"), ("drain", "PREFLIGHT_HUNG")]
