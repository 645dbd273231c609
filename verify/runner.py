"""Runs each check in its own process with its own timeout and its own scratch directory.

A crash or a hang becomes a failed result; the scratch directory (the check's TMPDIR) is removed whatever
happens, the timeout kill included. SIGTERM/SIGINT are forwarded to the running check's process group and
end the run with the interrupted check marked INTERRUPTED (see cli.py).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .budget import Shares
from .checks import CHECKS
from .child import EXIT_NO_SPACE
from .environment import emulation, stretched
from .options import Options
from .result import FAIL, SKIP, CheckResult
from .shared import deathsig

TAIL_LINES = 30
GRACE_S = 3.0            # after forwarding SIGTERM/SIGINT, how long the group gets before SIGKILL
STACKS_S = 3.0           # at a timeout: how long the group gets to print its Python stacks (SIGUSR1) before SIGKILL
STACK_TAIL_LINES = 120   # a timed-out check keeps more output: the stacks of every process and thread in its group

HANG_ADVICE = {
    "nccl": "A hung collective: rerun with NCCL_DEBUG=INFO to see where it stops; check /dev/shm size "
            "(--shm-size or --ipc=host); try NCCL_P2P_DISABLE=1 (broken peer-to-peer) or NCCL_IB_DISABLE=1.",
    "shm": "Allocating shared memory hung: check /dev/shm with `df -h /dev/shm` and the container's memory limit.",
    "gpu": "A hung CUDA call: check `nvidia-smi` on the host, the driver's kernel log (dmesg), and that no other "
           "process holds the GPU in exclusive mode.",
}


class Interrupted(Exception):
    """SIGTERM or SIGINT arrived; `results` holds what was done, the interrupted check marked."""

    def __init__(self, signum: int, results: list[CheckResult] | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.results = results or []


class NoTempDir(Exception):
    pass


_interrupting = False
_OWNED: set[str] = set()         # scratch dirs of running checks, removed by cleanup_owned() if a signal cut in


def _on_signal(signum: int, _frame: Any) -> None:
    global _interrupting
    if _interrupting:            # a second signal while cleaning up: cleanup continues, no second exception
        return
    _interrupting = True
    raise Interrupted(signum)


def install_signal_handlers() -> dict[int, Any]:
    """SIGTERM/SIGINT raise Interrupted from here on; returns the previous handlers for restore_signal_handlers."""
    global _interrupting
    _interrupting = False
    return {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}


def restore_signal_handlers(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def scratch_base() -> str:
    """A writable directory for the checks' scratch dirs: TMPDIR, /tmp, /var/tmp, /dev/shm, then the cwd."""
    candidates = [os.environ.get("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm", os.getcwd()]
    tried = []
    for directory in [c for c in candidates if c]:
        try:
            probe = tempfile.mkdtemp(prefix=".verify-probe-", dir=directory)
            os.rmdir(probe)
        except OSError as exc:
            tried.append(f"{directory} ({exc.strerror or exc})")
            continue
        tempfile.tempdir = directory
        return directory
    raise NoTempDir("no writable temporary directory (tried " + ", ".join(tried) + "): set TMPDIR to a writable "
                    "directory, or give the container one (`docker run --tmpfs /tmp`)")


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_members(pgid: int) -> list[int]:
    """The processes of one process group, from /proc (the leader first)."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:                  # no /proc (or not readable): the leader alone gets the signal
        return []
    for entry in entries:
        if entry.isdecimal():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()       # after "pid (comm) ": state ppid pgrp ...
            if len(fields) > 2 and fields[2] == str(pgid):
                members.append(int(entry))
    return sorted(members, key=lambda pid: pid != pgid)


def _dump_stacks(pgid: int) -> None:
    """SIGUSR1 to each process of the group in turn, so that their faulthandler dumps do not interleave."""
    members = _group_members(pgid)[:8] or [pgid]
    for pid in members:
        try:
            os.kill(pid, signal.SIGUSR1)
        except (ProcessLookupError, PermissionError):
            continue
        time.sleep(STACKS_S / len(members))


# `python -m module` with this verify's own package root first and no working folder on sys.path: `-m` puts the job's
# working folder first, and PYTHONSAFEPATH (which stops that) is 3.11+; the images' jammy Python is 3.10, where a
# verify/ in the job's folder would be imported in place of this one
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# (sys.path is set before any import that is not already loaded: a runpy.py in the working folder is not one either)
_BOOT = ("import sys; root = sys.argv.pop(1); sys.path[:] = [root] + [p for p in sys.path if p not in ('', '.', root)]; "
         "import runpy; runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")


def run_process(module: str, args: list[str], timeout: float, env: dict[str, str],
                workdir: str | None = None) -> tuple[int | None, str, float]:
    """Run `python -m module args` (its package root first, no working folder on sys.path: _BOOT) in a new session;
    kill the whole group at the timeout.

    Returns (exit status, or None when it timed out; its combined output; seconds). On Interrupted the signal
    is forwarded to the group, which gets GRACE_S seconds before SIGKILL, then the exception goes on.
    """
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+b", dir=workdir) as out:
        proc = None
        try:
            proc = subprocess.Popen([sys.executable, "-c", _BOOT, PACKAGE_ROOT, module, *args], stdout=out,
                                    stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                                    preexec_fn=deathsig.with_parent())     # SIGKILLed verify: its checks too
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
            # every Python process of the group (the check and its forked workers: verify.child registers
            # faulthandler on SIGUSR1, and fork keeps it) prints where it is stuck, into the output kept for the report
            if proc is not None:
                _dump_stacks(proc.pid)
        except Interrupted as stop:
            if proc is not None:
                _killpg(proc.pid, stop.signum)
                try:
                    proc.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
            raise
        finally:
            if proc is not None:
                # Children of the check (DataLoader workers, NCCL ranks) go with it.
                _killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        out.seek(0)
        return rc, out.read().decode("utf-8", "replace"), time.monotonic() - start


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


# a check that crashed with less than this free in its scratch folder most likely crashed on the full disk (libhdf5
# segfaults on ENOSPC rather than raising; seen with a 2 MiB TMPDIR)
DISK_FULL_BELOW = 8 << 20


def _failed(name: str, rc: int | None, output: str, seconds: float, limit: float,
            scratch_free: int | None = None, scratch_total: int | None = None) -> CheckResult:
    if rc is None:
        code = "NCCL_TIMEOUT" if name == "nccl" else "CHECK_TIMEOUT"
        kept = _tail(output, STACK_TAIL_LINES)
        stacks, all_stacks = kept.count("most recent call first"), output.count("most recent call first")
        # count what the report keeps: the tail may have cut the first processes' stacks
        cut = f" ({all_stacks - stacks} more cut: the output keeps its last {STACK_TAIL_LINES} lines)" if all_stacks > stacks else ""
        details = [f"the Python stacks of its {stacks} stuck thread(s) at the timeout are in the output{cut}"] if stacks else []
        return CheckResult(name, FAIL, f"timed out after {limit:.0f} s and was killed", details=details,
                           remedy=HANG_ADVICE.get(name, f"Rerun `python -m verify --checks {name}` and read its output."),
                           code=code, owner="host", duration_s=round(seconds, 3), output=kept)
    if rc < 0:
        sig = _signal_name(rc)
        remedy = {"SIGBUS": "SIGBUS is what running out of /dev/shm looks like: start the container with "
                            "--shm-size=2g or --ipc=host.",
                  "SIGKILL": "Killed from outside: most often the out-of-memory killer (check the memory limit)."}.get(
            sig, "A native library crashed: the output above shows the last thing it printed.")
        # full: little left, and little of what it has (a small, empty scratch tmpfs is not a full one)
        if (sig not in ("SIGBUS", "SIGKILL") and scratch_free is not None and scratch_free < DISK_FULL_BELOW
                and (scratch_total is None or scratch_free * 10 < scratch_total)):
            return CheckResult(name, FAIL, f"crashed with {sig} while its scratch disk was full "
                               f"({scratch_free >> 10} KiB free)", code="DISK_FULL", duration_s=round(seconds, 3),
                               output=_tail(output))
        code, owner = ("SHM_TOO_SMALL", "job") if sig == "SIGBUS" else ("CHECK_CRASHED", "image")
        return CheckResult(name, FAIL, f"crashed with {sig}", remedy=remedy, code=code, owner=owner,  # type: ignore[arg-type]
                           duration_s=round(seconds, 3), output=_tail(output))
    if rc == EXIT_NO_SPACE:      # it could not even write its result (ENOSPC): the disk, not the image
        return CheckResult(name, FAIL, f"exited with status {rc} without a result: no space left on device",
                           code="DISK_FULL", duration_s=round(seconds, 3), output=_tail(output))
    return CheckResult(name, FAIL, f"exited with status {rc} without a result", remedy="Read the output below.",
                       code="CHECK_CRASHED", owner="image", duration_s=round(seconds, 3), output=_tail(output))


def run_check(name: str, options: Options, timeout: float | None = None) -> tuple[CheckResult, dict[str, Any] | None]:
    """(result, facts or None) of one check, in a child with its own scratch dir, removed afterwards."""
    # a check's own limit stretches under emulation; a limit given (a preflight's share, --timeout) is kept
    limit = timeout or stretched(CHECKS[name].timeout_s)
    own = tempfile.mkdtemp(prefix=f"verify-{name}-")
    _OWNED.add(own)
    try:
        scratch = os.path.join(own, "tmp")
        os.mkdir(scratch)
        out_path = os.path.join(own, "out.json")
        # VERIFY_DEADLINE: when the runner will kill the check (epoch seconds), so that a check can stop its own
        # waits first and report what it saw (nccl's hang advice) instead of being killed without facts.
        env = {**os.environ, "VERIFY_OPTIONS": options.to_json(), "TMPDIR": scratch,
               "VERIFY_DEADLINE": f"{time.time() + limit:.3f}"}
        rc, output, seconds = run_process("verify.child", [name, out_path], limit, env, workdir=own)
        # out.json is written whole (temp, then rename) as the child's last act: a child that wrote it and then hung
        # on its way out (exit joining a worker that qemu-user deadlocked) still judged; only the exit was killed
        if (rc == 0 or rc is None) and os.path.exists(out_path):
            record = json.loads(Path(out_path).read_text(encoding="utf-8"))
            result = CheckResult.from_dict(record["result"])
            result.duration_s = round(seconds, 3)
            if rc is None:
                result.details.append(f"its process wrote this result, then did not exit within {limit:.0f} s and "
                                      "was killed (a stuck child process at exit)")
            return result, record.get("facts")
        return _failed(name, rc, output, seconds, limit, *_disk_room(scratch)), None
    finally:
        shutil.rmtree(own, ignore_errors=True)
        _OWNED.discard(own)


def _disk_room(folder: str) -> tuple[int | None, int | None]:
    """(free bytes, size in bytes) of the filesystem holding folder; (None, None) when it cannot be read."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return None, None
    return usage.free, usage.total


def cleanup_owned() -> None:
    """Remove what a signal left behind; further signals are ignored from here on."""
    global _interrupting
    _interrupting = True
    for own in list(_OWNED):
        shutil.rmtree(own, ignore_errors=True)
        _OWNED.discard(own)


def collect_environment(timeout: float = 90.0) -> dict:
    """The environment section, gathered in a child process too (importing torch can crash). Under CPU emulation its
    limit stretches as a check's does: the import alone took 140 s under qemu on a loaded 2-core host."""
    timeout = stretched(timeout)
    own = tempfile.mkdtemp(prefix="verify-env-")
    _OWNED.add(own)
    try:
        path = Path(own) / "env.json"
        rc, output, _ = run_process("verify.environment", [str(path)], timeout, {**os.environ, "TMPDIR": own}, workdir=own)
        if rc == 0 and path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        return {"error": f"environment probe failed ({'timed out' if rc is None else rc}): {_tail(output, 5)}"}
    finally:
        shutil.rmtree(own, ignore_errors=True)
        _OWNED.discard(own)


def interrupted_result(name: str, signum: int, seconds: float) -> CheckResult:
    sig = signal.Signals(signum).name
    return CheckResult(name, FAIL, f"interrupted by {sig} after {seconds:.1f} s; its processes were stopped",
                       remedy="Rerun verify and let it finish (CI job timeout, `timeout`, Ctrl-C).",
                       code="INTERRUPTED", owner="job", duration_s=round(seconds, 3))


def not_run(name: str, signum: int) -> CheckResult:
    return CheckResult(name, SKIP, f"not run: verify was interrupted by {signal.Signals(signum).name}",
                       remedy="Rerun verify.", code="INTERRUPTED", owner="job")


def _once_more_under_emulation(name: str, options: Options, timeout: float | None,
                               first: CheckResult) -> tuple[CheckResult, dict[str, Any] | None]:
    """qemu-user now and then deadlocks a forked child (a DataLoader worker: about 1 hdf5 run in 10 under qemu 10,
    stacks kept): under emulation a timed-out check runs once more, and the report keeps the first attempt."""
    result, facts = run_check(name, options, timeout)
    result.details.append(f"first attempt {first.summary} under CPU emulation, then ran once more (qemu-user can "
                          f"deadlock a forked child); its output is in data.first_attempt")
    result.data["first_attempt"] = {"summary": first.summary, "output": first.output}
    return result, facts


def run_all(names: list[str], options: Options, timeout: float | dict[str, float] | Shares | None = None,
            progress: Callable[[int, int, str, CheckResult | None], None] | None = None,
            facts_out: dict[str, dict[str, Any] | None] | None = None) -> list[CheckResult]:
    """Every check in turn; facts_out (when given) receives each check's facts. Raises Interrupted with the
    partial results (the running check marked INTERRUPTED, the rest skipped)."""
    results: list[CheckResult] = []
    emulated = bool(emulation()["emulated"])
    for index, name in enumerate(names, 1):
        start = time.monotonic()
        try:
            if progress:
                progress(index, len(names), name, None)
            limit = timeout.limit(name) if isinstance(timeout, Shares) else \
                timeout.get(name) if isinstance(timeout, dict) else timeout
            result, facts = run_check(name, options, limit)
            if emulated and result.code == "CHECK_TIMEOUT":
                result, facts = _once_more_under_emulation(name, options, limit, result)
        except Interrupted as stop:
            results.append(interrupted_result(name, stop.signum, time.monotonic() - start))
            results += [not_run(n, stop.signum) for n in names[index:]]
            stop.results = results
            raise
        if facts_out is not None:
            facts_out[name] = facts
        results.append(result)
        if progress:
            progress(index, len(names), name, result)
    return results
