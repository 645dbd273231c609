"""Issue 35: a stdout its reader closed (`verify explain FILE | head -1`) ends every CLI of the project quietly: no
traceback, no "Exception ignored ... BrokenPipeError", and the exit status of a program cut short by SIGPIPE (141),
or its own where it had already decided (verify/shared/closedpipe.py; scripts/cli.py at its side of the wall)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.host

LOG = ("node7:1201:1350 [2] enqueue.cc:47 NCCL WARN Cuda failure 'out of memory'\n"
       "node7:1201:1350 [2] NCCL INFO enqueue.cc:1140 -> 1\n")


def _cut_short(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run argv with its stdout a real pipe whose reader reads one line and leaves (`| head -1`); its exit status and
    stderr."""
    read, write = os.pipe()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=write, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    os.close(write)
    with os.fdopen(read) as reader:
        reader.readline()
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


@pytest.mark.parametrize("argv", [
    [sys.executable, "-m", "verify", "explain"],              # many files: far more than a pipe's 64 KiB
    [str(ROOT / "verify" / "bin" / "verify"), "explain"],     # the image's command (runpy, isolated mode)
])
def test_verify_explain_into_a_closed_pipe_ends_quietly(tmp_path: Path, argv: list[str]) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(LOG)
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    status, err = _cut_short([*argv, *[str(log)] * 400], env)
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err, err
    assert status in (141, 1), (status, err)     # cut short, or decided (a failing verdict) before the last flush


def test_the_other_entry_points_into_a_closed_pipe_end_quietly() -> None:
    for argv in ([sys.executable, "-m", "verify", "--list"], [sys.executable, "-m", "scripts", "--help"],
                 [sys.executable, "-m", "verify.prolog", "--help"]):
        status, err = _cut_short(argv, {"SLURM_STEP_ID": "0"})   # the prolog outside Prolog=: 141, as the others
        assert "Traceback" not in err and "Exception ignored" not in err, (argv, err)
        assert status in (0, 141), (argv, status, err)
