"""Runs each check in its own process with its own timeout; a crash or a hang becomes a failed result."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from .checks import CHECKS
from .options import Options
from .result import FAIL, CheckResult

TAIL_LINES = 30

HANG_ADVICE = {
    "nccl": "A hung collective: rerun with NCCL_DEBUG=INFO to see where it stops; check /dev/shm size "
            "(--shm-size or --ipc=host); try NCCL_P2P_DISABLE=1 (broken peer-to-peer) or NCCL_IB_DISABLE=1.",
    "shm": "Allocating shared memory hung: check /dev/shm with `df -h /dev/shm` and the container's memory limit.",
    "gpu": "A hung CUDA call: check `nvidia-smi` on the host, the driver's kernel log (dmesg), and that no other "
           "process holds the GPU in exclusive mode.",
}


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_process(module: str, args: list[str], timeout: float, env: dict[str, str]) -> tuple[int | None, str, float]:
    """Run `python -m module args` in a new session; kill the whole group at the timeout.

    Returns (exit status, or None when it timed out; its combined output; seconds).
    """
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+b") as out:
        proc = subprocess.Popen([sys.executable, "-m", module, *args], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        try:
            rc: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            # Children of the check (DataLoader workers, NCCL ranks) go with it.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0)
        return rc, out.read().decode("utf-8", "replace"), time.monotonic() - start


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def run_check(name: str, options: Options, timeout: float | None = None) -> CheckResult:
    limit = timeout or CHECKS[name][1]
    with tempfile.TemporaryDirectory(prefix=f"verify-{name}-") as tmp:
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "VERIFY_OPTIONS": options.to_json()}
        rc, output, seconds = run_process("verify.child", [name, str(result_path)], limit, env)
        if rc == 0 and result_path.exists():
            result = CheckResult.from_dict(json.loads(result_path.read_text(encoding="utf-8")))
            result.duration_s = round(seconds, 3)
            return result
    if rc is None:
        return CheckResult(name, FAIL, f"timed out after {limit:.0f} s and was killed", details=[],
                           remedy=HANG_ADVICE.get(name, f"Rerun `python -m verify --checks {name}` and read its output."),
                           duration_s=round(seconds, 3), output=_tail(output))
    if rc < 0:
        sig = _signal_name(rc)
        remedy = {"SIGBUS": "SIGBUS is what running out of /dev/shm looks like: start the container with "
                            "--shm-size=2g or --ipc=host.",
                  "SIGKILL": "Killed from outside: most often the out-of-memory killer (check the memory limit)."}.get(
            sig, "A native library crashed: the output above shows the last thing it printed.")
        return CheckResult(name, FAIL, f"crashed with {sig}", remedy=remedy, duration_s=round(seconds, 3),
                           output=_tail(output))
    return CheckResult(name, FAIL, f"exited with status {rc} without a result", remedy="Read the output below.",
                       duration_s=round(seconds, 3), output=_tail(output))


def collect_environment(timeout: float = 90.0) -> dict:
    """The environment section, gathered in a child process too (importing torch can crash)."""
    with tempfile.TemporaryDirectory(prefix="verify-env-") as tmp:
        path = Path(tmp) / "env.json"
        rc, output, _ = run_process("verify.environment", [str(path)], timeout, dict(os.environ))
        if rc == 0 and path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
    return {"error": f"environment probe failed ({'timed out' if rc is None else rc}): {_tail(output, 5)}"}


def run_all(names: list[str], options: Options, timeout: float | None = None,
            progress: Callable[[int, int, str, CheckResult | None], None] | None = None) -> list[CheckResult]:
    results = []
    for index, name in enumerate(names, 1):
        if progress:
            progress(index, len(names), name, None)
        result = run_check(name, options, timeout)
        results.append(result)
        if progress:
            progress(index, len(names), name, result)
    return results
