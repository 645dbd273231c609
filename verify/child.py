"""Entry point of one check's process: `python -m verify.child NAME RESULT_PATH` with options in VERIFY_OPTIONS.

Test-only fault hooks (documented in the README): VERIFY_TEST_HANG=name[,name] makes those checks hang,
VERIFY_TEST_CRASH=name[,name] makes them die with SIGSEGV, to prove the runner survives both.
"""
from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback

from .options import Options
from .result import FAIL, CheckResult


def _hooked(var: str, name: str) -> bool:
    return name in [n.strip() for n in os.environ.get(var, "").split(",")]


def run_one(name: str, options: Options) -> CheckResult:
    if _hooked("VERIFY_TEST_HANG", name):
        print(f"test hook: {name} hangs", flush=True)
        while True:
            time.sleep(3600)
    if _hooked("VERIFY_TEST_CRASH", name):
        print(f"test hook: {name} crashes", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    module = importlib.import_module(f"verify.checks.{name}")
    try:
        return module.run(options)
    except Exception as exc:  # a bug or an unexpected environment: still a result, with where it broke
        tb = traceback.format_exc().strip().splitlines()
        return CheckResult(name, FAIL, f"check raised {type(exc).__name__}: {exc}", details=tb[-12:],
                           remedy="This is unexpected: report it with the details above.")


def main() -> int:
    name, result_path = sys.argv[1], sys.argv[2]
    options = Options.from_json(os.environ.get("VERIFY_OPTIONS", "{}"))
    start = time.monotonic()
    result = run_one(name, options)
    result.duration_s = round(time.monotonic() - start, 3)
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result.to_dict(), fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
