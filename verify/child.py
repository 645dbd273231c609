"""Entry point of one check's process: `python -m verify.child NAME OUT_PATH` with options in VERIFY_OPTIONS.

Runs the check's probe() (what it measures and reads) and judge() (the verdict), and writes both as
{"facts": ..., "result": ...} to OUT_PATH, atomically. The check is its row in verify/checks (CHECKS). The
runner gives this process its own TMPDIR and removes it afterwards.

Test-only fault hooks (documented in docs/checks.md): VERIFY_TEST_HANG=name[,name] makes those checks write 8 MiB to their TMPDIR and hang,
VERIFY_TEST_CRASH=name[,name] makes them die with SIGSEGV, to prove the runner survives both;
VERIFY_TEST_HANG_ONCE=<file> limits the hang to the first attempt (the retry under emulation);
VERIFY_TEST_HANG_AT_EXIT=name[,name] makes those checks hang after writing their result (a stuck child at exit).
"""
from __future__ import annotations

import errno
import faulthandler
import json
import os
import signal
import sys
import time
import traceback
from typing import Any

from . import judging
from .atomic import write_atomic
from .options import Options
from .result import FAIL, SKIP, CheckResult


def _hooked(var: str, name: str) -> bool:
    return name in [n.strip() for n in os.environ.get(var, "").split(",")]


def crashed(name: str, exc: BaseException, where: str) -> CheckResult:
    """A check that raised: still a result, with where it broke."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        package = exc.name.split(".")[0]
        return CheckResult(name, SKIP, f"{package} is not installed in this image: {name} not checked",
                           remedy=f"pip install {package}", code="PACKAGE_MISSING", owner="image")
    tb = traceback.format_exc().strip().splitlines()
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:     # a full disk is the node's, not the image's fault
        where_full = str(exc.filename or f"its scratch folder {os.environ.get('TMPDIR', '')}".rstrip())
        code = "SHM_TOO_SMALL" if where_full.startswith("/dev/shm") else "DISK_FULL"
        return CheckResult(name, FAIL, f"no space left on device writing {where_full}", details=tb[-6:], code=code)
    return CheckResult(name, FAIL, f"check {where} raised {type(exc).__name__}: {exc}", details=tb[-12:],
                       remedy="This is unexpected: report it with the details above.", code="CHECK_CRASHED", owner="image")


def _first_time(marker: str | None) -> bool:
    """VERIFY_TEST_HANG_ONCE=<file>: the hook fires only while that file does not exist yet (it creates it)."""
    if not marker:
        return True
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def run_one(name: str, options: Options) -> tuple[dict[str, Any] | None, CheckResult]:
    """(facts or None, result) of one check."""
    if _hooked("VERIFY_TEST_HANG", name) and _first_time(os.environ.get("VERIFY_TEST_HANG_ONCE")):
        print(f"test hook: {name} hangs", flush=True)
        import tempfile
        with tempfile.NamedTemporaryFile(prefix="hang-", delete=False) as fh:    # data in its scratch dir, as a
            fh.write(b"\0" * (8 << 20))                                         # check killed mid-write leaves
        while True:
            time.sleep(3600)
    if _hooked("VERIFY_TEST_CRASH", name):
        print(f"test hook: {name} crashes", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    try:        # imported here, not at the top: a check module that does not import is still a result
        from .checks import CHECKS
        check = CHECKS[name]
    except Exception as exc:  # noqa: BLE001
        return None, crashed(name, exc, "import")
    try:
        facts = check.probe(options)
    except Exception as exc:  # noqa: BLE001
        return None, crashed(name, exc, "probe")
    try:
        return facts, judging.judge(check, facts, options)
    except Exception as exc:  # noqa: BLE001
        return facts, crashed(name, exc, "judge")


# exit status of a child that could not write its result because the disk is full (ENOSPC): the runner reads
# this kind, not the words of the error, and blames the disk, not the image
EXIT_NO_SPACE = 3


def main() -> int:
    name, out_path = sys.argv[1], sys.argv[2]
    # the runner sends SIGUSR1 to the whole group before it kills a check at its timeout: each process (forked
    # DataLoader workers too) prints its Python stacks, so a hang in the report says where it hung
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    options = Options.from_json(os.environ.get("VERIFY_OPTIONS", "{}"))
    start = time.monotonic()
    facts, result = run_one(name, options)
    result.duration_s = round(time.monotonic() - start, 3)
    try:
        write_atomic(out_path, json.dumps({"facts": facts, "result": result.to_dict()}, default=repr))
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        print(f"verify.child: no space left on device writing {out_path}", file=sys.stderr, flush=True)
        return EXIT_NO_SPACE
    if _hooked("VERIFY_TEST_HANG_AT_EXIT", name):
        print(f"test hook: {name} hangs at exit", flush=True)
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
