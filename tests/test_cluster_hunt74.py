"""Issue 36, a seventy-fourth hunt through the public interfaces (make slurm / isolate / k8s-verify's scripts as bash
runs them, `python -m verify.prolog`'s main, make isolate's runner), classes 1, 7 and 10 in new shapes.

Found:
- Class 10, the launchers run their own verify (high where it bites: a foreign verify's report passes a node).
  Every launcher's torchrun started its ranks as `python -m verify` (and LAUNCHER=none its local checks as
  `"$TORCHIMAGES_PYTHON" -m verify`, its torchrun as `-m torch.distributed.run`), in the step's working folder: the
  submit folder (LAUNCHER=none), /tmp (pyxis, oci: a bundle's rootfs shared by every job), the pod's WORKDIR. `-m`
  puts that folder first on sys.path, and the PYTHONSAFEPATH=1 the scripts export stops it on Python 3.11+ only; the
  jammy image (ubuntu22.04) ships 3.10, and make setup's venv may be 3.10. Repro: a folder holding verify/__main__.py,
  `python3.10 -m verify` with PYTHONSAFEPATH=1 and PYTHONPATH=<checkout> ran the planted one. Practice: Python's
  isolated start (`-I`, the images' `verify` command), as the prolog's wrapper already runs (round 59). Fix
  (scripts/fleet/slurm.py SAFE_RUN, ranks_run): torchrun starts each rank with `--no-python verify` (the image's
  isolated command) or, for LAUNCHER=none, the venv's Python through a `-c` boot that drops the working folder before
  any import; make isolate's pairs and make k8s-verify's pods likewise.

Each test names the practice it follows.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.fleet.cluster import k8s_manifests
from scripts.fleet.isolate_job import pair_script
from scripts.fleet.slurm import Job, node_script
from tests.helpers import ROOT

pytestmark = pytest.mark.unit

PY310 = next((p for p in ("/root/.pyenv/versions/3.10.13/bin/python", shutil.which("python3.10") or "")
              if p and os.access(p, os.X_OK)), None)


@pytest.fixture
def cpu(test_specs):
    return next(s for s in test_specs if s.tag == "2.13.0-cpu-debian12")


# ---- class 10: a verify/ in the step's working folder is never run in place of ours

def _planted(folder: Path) -> Path:
    (folder / "verify").mkdir(parents=True)
    (folder / "verify" / "__init__.py").write_text("")
    (folder / "verify" / "__main__.py").write_text("print('PLANTED verify ran')\n")
    (folder / "runpy.py").write_text("raise SystemExit('PLANTED runpy ran')\n")
    return folder


def _run_line(line: str, cwd: Path, python: str, extra: str = "") -> subprocess.CompletedProcess[str]:
    """One line of a node script as bash runs it in the step: the venv (LAUNCHER=none) from the job's folder."""
    env = {"PATH": os.environ["PATH"], "HOME": "/tmp", "TORCHIMAGES_PYTHON": python, "PYTHONPATH": str(ROOT),
           "node": "127.0.0.1", "RDZV_ENDPOINT": f"127.0.0.1:{_free_port()}", "rdzv_conf": "join_timeout=60",
           "SLURM_JOB_ID": "74", "out": str(cwd)}
    return subprocess.run(["bash", "-c", f"run() {{ \"$@\"; }}\n{line}{extra}"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.host
@pytest.mark.skipif(PY310 is None, reason="no Python 3.10 here (the jammy image's)")
def test_python_isolated_start_the_venv_launcher_runs_its_own_verify_on_python_3_10(tmp_path, cpu):
    script = node_script(Job(cpu, "x", 2, 0, "none", checkout=str(ROOT)))
    listing = next(ln for ln in script.splitlines() if ln.startswith("checks=$("))
    assert PY310 is not None
    proc = _run_line(listing, _planted(tmp_path / "job"), PY310, '\necho "checks=$checks"')
    assert "PLANTED" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert re.search(r"checks=gpu,", proc.stdout), proc.stdout + proc.stderr


@pytest.mark.host
def test_python_isolated_start_torchrun_s_ranks_never_run_the_working_folder_s_verify(tmp_path, cpu):
    """The 3.11 venv without PYTHONSAFEPATH reads sys.path as 3.10 does: the command itself keeps the folder off."""
    script = node_script(Job(cpu, "x", 1, 0, "none", checkout=str(ROOT)))
    torchrun = next(ln for ln in script.splitlines() if ln.startswith("run ") and "torch.distributed.run" in ln)
    line = torchrun[:torchrun.index(" --checks ")] + " --list"         # the rank's command, listing only
    proc = _run_line(line, _planted(tmp_path / "job"), sys.executable)
    assert "PLANTED" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert proc.returncode == 0 and "nccl" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("launcher", ["pyxis", "docker", "oci", "none"])
def test_python_isolated_start_every_launcher_starts_ranks_without_python_m(cpu, launcher):
    job = Job(cpu, "r/x:t", 2, 0, launcher, checkout=str(ROOT), bundle="/shared/b")
    for text in (node_script(job), node_script(Job(cpu, "r/x:t", 2, 0, launcher, preflight=True)), pair_script(job)):
        assert " -m verify" not in text and " -m torch" not in text
    for text in (node_script(job), pair_script(job)):
        assert "--no-python" in text and ("--no-python verify " in text) == (launcher != "none")
    pods = "\n".join(str(d) for d in k8s_manifests(cpu, "r/x:t", 2, 0))
    assert " -m verify" not in pods and "--no-python verify --checks nccl" in pods
