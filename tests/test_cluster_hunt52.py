"""Issue 36, a sixth hunt (round 52) through the public interfaces: the leftovers of round 51 and classes 1 to 5.
Each test names the practice it holds the cluster tooling to (Slurm's prolog semantics, NVSentinel's breaker and
return-to-service rules, NVIDIA's Xid catalog)."""
from __future__ import annotations

import io
import json
import os
import sys

import pytest

from tests.helpers import alive
from tests.prolog_fakes import (
    LOST_GPU_SH,
    PROLOG_ENV,
    SCONTROL_SH,
    SINFO_SH,
    STEP_ENV,
    _args,
    _gpu,
    _report,
    _verify_writes,
    history_events,
    install_fake,
)
from verify.prolog import cli


class _Unwritable(io.TextIOBase):
    """A stream a wrapper left unwritable: its reader gone (EPIPE) or its disk full (ENOSPC)."""

    def __init__(self, errno: int) -> None:
        self.errno = errno

    def write(self, s: str) -> int:
        raise (BrokenPipeError if self.errno == 32 else OSError)(self.errno, "cannot write")

    def flush(self) -> None:
        self.write("")


@pytest.mark.unit
@pytest.mark.parametrize("errno", [32, 28], ids=["reader-gone", "disk-full"])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["Prolog=", "first-step"])
def test_a_stream_that_cannot_be_written_never_skips_the_drain(tmp_path, monkeypatch, errno, stream, env):
    """Slurm's prolog semantics (only the exit status and the drain count): the verdict's line was printed before the
    drain, so a wrapper whose stdout reader had left (or a stdout on a full disk) raised there, and the node with a
    lost GPU stayed in service (exit 0 under Prolog=, PROLOG_CRASHED or a quiet 141). Now the line is said on stderr
    where it can be, and the node is drained all the same (exit 1), its drain on record."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    monkeypatch.setattr(sys, stream, _Unwritable(errno))
    status = cli.main(_args(tmp_path), env)
    assert status == 1 and fake.nodes["n1"][0] == "drained", (status, fake.nodes["n1"])
    assert history_events(tmp_path)[-1] == ("drain", "GPU_LOST")


# ---- leftover 3: a gpu check that read none of its GPUs' health (HEALTH_NOT_ASSESSED)

def _blind_gpu(code: str = "HEALTH_NOT_ASSESSED") -> dict:
    """verify's gpu check on 8 GPUs that answered and ran work, NVML reading none of one GPU's health fields: warned
    with that code, or behind a warning that outranks it (THROTTLED on another GPU; data.findings lists both)."""
    findings = [{"severity": "warn", "code": "HEALTH_NOT_ASSESSED", "text": "GPU 3: no health field read (ECC, remap, "
                 "clocks, temperature, PCIe, power, NVLink): not assessed, not healthy", "owner": "host", "device": 3}]
    if code != "HEALTH_NOT_ASSESSED":
        findings.insert(0, {"severity": "warn", "code": code, "text": "GPU 0 throttled", "owner": "host", "device": 0})
    return _gpu("warn", code=code, owner="host", data={"findings": findings})


@pytest.mark.unit
@pytest.mark.parametrize("code", ["HEALTH_NOT_ASSESSED", "THROTTLED"])
@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["Prolog=", "first-step"])
def test_gpus_whose_health_was_not_read_are_not_assessed_never_a_pass(tmp_path, monkeypatch, capsys, code, env):
    """House rule (missing facts are never a pass) and issue 36's "a report whose gpu check is absent, on a node
    Slurm gave 8 GPUs, passes": NVML read none of a GPU's ECC, remaps, clocks or temperature, and the prolog called
    the node PASS (a pass ends a --hang-runs streak and is the fleet report's return to service). Now it is
    GPU_NOT_ASSESSED: never a drain (the tool could not see; Slurm's prolog semantics: exit 0 under Prolog=), never
    a pass. A CPU job (no GPU allocated) on the same report still passes."""
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(_blind_gpu(code))).encode())
    status = cli.main(_args(tmp_path), {**env, "SLURM_GPUS_ON_NODE": "8"})
    out = capsys.readouterr().out
    assert status == (0 if env is PROLOG_ENV else 3) and fake.nodes["n1"][0] == "idle", (status, out)
    assert "PASS" not in out and history_events(tmp_path)[-1] == ("not-assessed", "GPU_NOT_ASSESSED")
    assert cli.main(_args(tmp_path), env) == 0 and history_events(tmp_path)[-1] == ("pass", None)


@pytest.mark.unit
def test_nvsentinel_return_to_service_never_resumes_gpus_whose_health_was_not_read(tmp_path, monkeypatch, capsys):
    """NVSentinel's return to service proves the repair: a node drained for an uncorrectable ECC error, rebooted,
    whose preflight sees its 8 GPUs but reads none of one's health (its ECC counters among them), was resumed on a
    warning. It stays drained (not assessed, exit 3); read with its health, it resumes."""
    from verify.prolog import history, slurm
    fake = install_fake(monkeypatch)
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "ECC_UNCORRECTABLE", "x", now=1000.0,
                   extra={"gpus": 8, "boot_id": "an-earlier-boot", "action": "reboot", "check": "gpu"})
    args = ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"]
    _verify_writes(monkeypatch, json.dumps(_report(_blind_gpu())).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 3 and fake.nodes["n1"][0] == "drained"
    assert "GPU_NOT_ASSESSED" in capsys.readouterr().out
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == 0 and fake.nodes["n1"][0] == "idle"


# ---- leftover 1: make isolate judges the rest of an allocation with one bad entry

@pytest.mark.host
@pytest.mark.parametrize("bad", ["n 9", "n[7-8]", "n\u00e9", "x" * 300])
def test_make_isolate_refuses_a_bad_entry_alone_and_judges_the_rest(tmp_path, bad):
    """Slurm's allocation (`scontrol show hostnames`: one host name a line): one entry that is no host name refused
    the whole isolation (exit 2, no pair run), though the four others could be judged. Now that entry alone is not
    assessed, in one line naming it; the others are judged (n3 named at fault, exit 1), and where no node is at
    fault the exit is 2, never 0: an entry never judged is no "no node at fault" for the allocation."""
    from tests.isolate_fakes import _isolate
    status, lines = _isolate(tmp_path, ["n1", "n2", bad, "n3", "n4"], {"bad": ["n3"]})
    said = [ln for ln in lines if ln.startswith("isolate: not assessed:")]
    assert len(said) == 1 and repr(bad)[:40] in said[0], lines
    assert status == 1 and lines[-1].startswith("isolate: at fault: n3 (failing)") and "not assessed" in lines[-1]
    answer = json.loads((tmp_path / "isolate.json").read_text())
    assert answer["not_assessed"][0]["entry"] == bad and answer["named"][0]["node"] == "n3"
    status, lines = _isolate(tmp_path, ["n1", "n2", bad, "n3"], {})
    assert status == 2 and lines[-1].startswith("isolate: no node at fault") and "not assessed" in lines[-1], lines


@pytest.mark.host
def test_make_isolate_judges_a_host_named_twice_once(tmp_path):
    """DNS names are case-insensitive (RFC 4343): N1 beside n1 is that host again. It is said and judged once under
    its first spelling (never paired with itself); a clean answer stays 0."""
    from tests.isolate_fakes import _isolate
    status, lines = _isolate(tmp_path, ["n1", "n2", "N1", "n3"], {})
    assert status == 0 and any("'N1'" in ln and "named again" in ln for ln in lines), lines
    assert not any("n1+N1" in ln or "N1+n1" in ln for ln in lines)


# ---- class 8 through the prolog: its verdict's line is bounded

@pytest.mark.unit
def test_the_verdict_line_of_a_report_with_a_20_mb_summary_is_bounded(tmp_path, monkeypatch, capsys):
    """Slurm's prolog semantics (slurmd keeps the prolog's output in its log, on every job): a report under the
    64 MiB cap whose lost GPU carries a 20 MB summary drained the node rightly, and printed the whole summary as
    its verdict's line, 20 MB into slurmd's log per job. The line now holds at most 1,000 characters of it, says how
    many were left out, and the drain is unchanged."""
    fake = install_fake(monkeypatch)
    gpu = _gpu("fail", code="GPU_LOST", owner="host")
    gpu["summary"] = "GPU 3 is lost " * (1_500_000)
    _verify_writes(monkeypatch, json.dumps(_report(gpu)).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    out = capsys.readouterr().out
    assert len(out) < 2_000 and "more characters)" in out and "GPU_LOST" in out, len(out)


# ---- the earlier hunt's item: SIGTERM to the prolog leaves no child running, in its own session either

@pytest.mark.host
@pytest.mark.parametrize("how", ["sigterm", "timeout"])
def test_a_stopped_prolog_leaves_no_check_running_in_a_session_of_its_own(tmp_path, how):
    """Slurm's prolog semantics (slurmd sends SIGTERM at PrologEpilogTimeout; the prolog's own cap stops verify):
    verify starts each check in a session of its own (verify/runner.py), so stopping verify's process group left a
    check that outlived its SIGTERM (a handler stuck in C, a GPU call) running after the prolog ended: the prolog's
    SIGKILL came 2 s after its SIGTERM, and verify's own (3 s after forwarding SIGTERM) never came. Now every
    process verify started, in any session, is stopped with it."""
    import signal
    import subprocess
    import time

    from tests.helpers import ROOT
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nsetsid sh -c 'trap \"\" TERM; sleep 300 & echo $! > {tmp_path}/check; wait' &\n"
                      "wait\n")
    python.chmod(0o755)
    extra = ["--budget", "1", "--grace", "3"] if how == "timeout" else []
    proc = subprocess.Popen([sys.executable, "-m", "verify.prolog", "--python", str(python), "--no-kernel-log",
                             "--state-dir", str(tmp_path / "state"), "--mode", "step", "--node", "n1", *extra],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "check").exists() or not (tmp_path / "check").read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    check = int((tmp_path / "check").read_text())
    try:
        if how == "sigterm":
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err and proc.returncode in (3, 128 + signal.SIGTERM), err
        gone = time.monotonic() + 10
        while alive(check) and time.monotonic() < gone:
            time.sleep(0.05)
        assert not alive(check), err
    finally:
        if alive(check):
            os.kill(check, signal.SIGKILL)


# ---- class 1: a python3 of the host's that cannot run the prolog is our install's trouble, never a drain

@pytest.mark.host
@pytest.mark.parametrize("python", [
    "echo 'pyenv: python3: command not found' >&2; exit 127",             # a shim with no version behind it
    "echo 'Unknown option: -I' >&2; exit 2",                              # Python 2 named python3
    "echo 3.6; exit 3",                                                   # RHEL 8's python3 (3.6), as the probe asks
    "exit 1",                                                             # a broken install: no stdlib
], ids=["shim-127", "python2", "python3.6", "broken"])
@pytest.mark.parametrize(("env", "status"), [({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, 0), ({"SLURM_STEP_ID": "0"}, 3)],
                         ids=["Prolog=", "first-step"])
def test_slurm_prolog_semantics_a_python3_that_cannot_run_the_prolog_never_drains(tmp_path, python, env, status):
    """Slurm drains a node whose Prolog= exits non-zero. The wrapper (verify/bin/torchimages-prolog) exec'd any
    python3 on PATH: one that exits before our code runs (a pyenv shim with no version: 127; Python 2: 2 on -I; a
    broken install: 1) drained every node the prolog ran on, and Python 3.6 (RHEL 8's python3) said only a
    SyntaxError. Now the wrapper asks it first: one line naming it and the Python it needs, exit 0 under Prolog=
    (3 as a first step), as no python3 at all is."""
    import subprocess

    from tests.helpers import ROOT
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("dirname", "readlink"):
        found = next(p for p in (f"/usr/bin/{tool}", f"/bin/{tool}") if os.path.exists(p))
        (folder / tool).symlink_to(found)
    # Prolog=: python3 on slurmd's PATH (a host install); a first step never runs the job's, so there it is the
    # install's own venv beside it (the image's /opt/venv beside /opt/verify)
    wrapper = ROOT / "verify" / "bin" / "torchimages-prolog"
    where = folder / "python3"
    if "SLURM_STEP_ID" in env:
        copy = tmp_path / "opt" / "verify" / "verify" / "bin" / "torchimages-prolog"
        copy.parent.mkdir(parents=True)
        copy.write_text(wrapper.read_text())
        wrapper, where = copy, tmp_path / "opt" / "venv" / "bin" / "python3"
        where.parent.mkdir(parents=True)
    where.write_text(f"#!/bin/sh\n{python}\n")
    where.chmod(0o755)
    proc = subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"],
                          env={"PATH": str(folder), **env}, capture_output=True, text=True, timeout=60, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == status and len(lines) == 1, proc.stderr
    assert "cannot run this prolog" in lines[0] and "3.10 or newer" in lines[0] and "PROLOG_CRASHED" in lines[0]


# ---- class 1: a report no verify writes is REPORT_INVALID, never a crash of ours

@pytest.mark.unit
@pytest.mark.parametrize("first, again", [
    ({"status": []}, None),                                              # a list as a check's status
    ({"report_status": ["fail"]}, None),                                 # a list as the report's status
    (None, {"name": ["gpu"], "status": "pass", "summary": "x"}),         # a list as a confirmation check's name
], ids=["check-status-list", "report-status-list", "confirmation-name-list"])
def test_a_report_with_a_list_where_a_word_belongs_is_report_invalid_not_a_crash(tmp_path, monkeypatch, capsys,
                                                                                first, again):
    """Slurm's prolog semantics: a list where verify writes a word was hashed into a set lookup (TypeError) and the
    run ended PROLOG_CRASHED, the report's trouble told as the prolog's own; a confirmation report with a check
    named by a list crashed merging after its verdict. Now each is the report's: REPORT_INVALID (or the
    confirmation's not-assessed verdict), never a drain and never PROLOG_CRASHED."""
    fake = install_fake(monkeypatch)
    timeout = {"name": "gpu", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "t"}
    if first is not None:
        report = _report(_gpu())
        if "status" in first:
            report["checks"][0]["status"] = first["status"]
        else:
            report["status"] = first["report_status"]
        bodies = [json.dumps(report).encode()]
    else:
        bodies = [json.dumps(_report(timeout)).encode(), json.dumps(_report(_gpu(), again, whole=False)).encode()]

    def run(cmd, limit):
        from pathlib import Path
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0) if len(bodies) > 1 else bodies[0])
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    err = capsys.readouterr().err
    assert "PROLOG_CRASHED" not in err and "Traceback" not in err, err
    assert history_events(tmp_path)[-1][0] == "not-assessed"


def _close_all(fds: tuple[int, ...]) -> None:
    for fd in fds:
        os.close(fd)


# a whole preflight's pass: a result for each of its checks, as verify writes it (tests/test_cluster_hunt76.py)
PASS_SH = LOST_GPU_SH.replace('"fail"', '"pass"').replace(', "code": "GPU_LOST", "owner": "host"', "").replace(
    "GPU 3 is lost", "8 GPUs").replace('}}}]}', '}}}, {"name": "shm", "status": "pass", "summary": "2 GiB", "metrics": {}}, '
                                       '{"name": "nccl", "status": "pass", "summary": "ok", "metrics": {}}]}')


@pytest.mark.host
@pytest.mark.parametrize("stdout", ["closed", "reader-gone", "full", "both-full", "both-closed"])
@pytest.mark.parametrize("lost", [True, False], ids=["lost-gpu", "healthy"])
def test_slurm_prolog_semantics_a_wrapper_s_stdout_never_decides_the_node(tmp_path, stdout, lost):
    """The same through `python -m verify.prolog` as slurmd (or a wrapper of it) starts it, real processes: its
    stdout closed (`>&-`), a pipe whose reader left, /dev/full. The lost GPU drains the node (exit 1), its drain on
    record; a healthy node passes (exit 0). With descriptor 1 closed, every run ended in a traceback at the last
    flush (sys.stdout is None there): exit 1, and Slurm drained the healthy node. With stderr on /dev/full too, the
    argv said before scontrol raised (the drain skipped) and the interpreter's last flush exited 120 (Slurm drained
    the node itself, under no reason of ours). sinfo and scontrol are stand-ins on PATH keeping the node's state in
    a file, verify is --python's."""
    import subprocess

    from tests.helpers import ROOT
    from verify.prolog import history
    (tmp_path / "bin").mkdir()
    (tmp_path / "nodes").mkdir()
    for name, body in (("sinfo", SINFO_SH), ("scontrol", SCONTROL_SH), ("verify", LOST_GPU_SH)):
        (tmp_path / "bin" / name).write_text(body if lost or name != "verify" else PASS_SH)
        (tmp_path / "bin" / name).chmod(0o755)
    for node in ("n1", "n2", "n3", "n4"):
        (tmp_path / "nodes" / node).write_text("idle|none")
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "FAKE_DIR": str(tmp_path), **PROLOG_ENV}
    argv = [sys.executable, "-m", "verify.prolog", "--python", str(tmp_path / "bin" / "verify"), "--no-kernel-log",
            "--state-dir", str(tmp_path / "state"), "--breaker", "0.5"]
    if stdout == "reader-gone":
        read, write = os.pipe()
        os.close(read)
        proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
        os.close(write)
    else:
        full = stdout in ("full", "both-full")
        closing = {"closed": (1,), "both-closed": (1, 2)}.get(stdout, ())
        with open("/dev/full", "w") if full else open(os.devnull, "w") as sink:
            proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=sink if full else None,
                                  stderr=sink if stdout == "both-full" else subprocess.PIPE, text=True, timeout=120,
                                  check=False, preexec_fn=(lambda: _close_all(closing)) if closing else None)
        proc.stderr = proc.stderr or ""
    assert proc.returncode == (1 if lost else 0) and "Traceback" not in proc.stderr, proc.stderr
    state = (tmp_path / "nodes" / "n1").read_text()
    assert state.startswith("drained|torchimages:GPU_LOST") if lost else state == "idle|none", proc.stderr
    assert [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events][-1] == ("drain" if lost else "pass")
