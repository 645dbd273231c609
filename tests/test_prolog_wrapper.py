"""Which Python the prolog's wrapper (verify/bin/torchimages-prolog) runs, and for how long it waits on it (issue 36,
class 1: a setting of ours, or the job's, is never the node's fault). Slurm's semantics: a job's first step runs with
the job's PATH, where a conda Python's newer torch would be judged against the node's driver (DRIVER_TOO_OLD drains a
healthy node); a Prolog= whose python3 hangs at start is killed at PrologEpilogTimeout, and Slurm drains the node.
Real processes on a copy of the install's layout (the image's /opt/verify beside /opt/venv)."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.host
WRAPPER = ROOT / "verify" / "bin" / "torchimages-prolog"


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _install(tmp_path: Path, venv_python: str | None, limit_s: int = 30) -> Path:
    """opt/verify/verify/bin/torchimages-prolog (its probe's limit as given) and, if given, opt/venv/bin/python3."""
    wrapper = tmp_path / "opt" / "verify" / "verify" / "bin" / "torchimages-prolog"
    wrapper.parent.mkdir(parents=True)
    text = WRAPPER.read_text()
    assert "secs=30 " in text
    wrapper.write_text(text.replace("secs=30 ", f"secs={limit_s} "))
    if venv_python is not None:
        _script(tmp_path / "opt" / "venv" / "bin" / "python3", venv_python)
    return wrapper


def _job_path(tmp_path: Path, marker: Path) -> str:
    """A job's PATH: the wrapper's tools, and a python3 (a conda one) that leaves a mark when it is run."""
    folder = tmp_path / "job-bin"
    folder.mkdir()
    for tool in ("dirname", "readlink", "timeout", "sleep"):
        found = shutil.which(tool, path="/usr/bin:/bin")
        assert found, tool
        (folder / tool).symlink_to(found)
    _script(folder / "python3", f"echo conda >> {marker}; echo 3.12")
    return str(folder)


def test_a_job_step_runs_the_install_venv_python_never_the_jobs(tmp_path):
    marker, ran = tmp_path / "conda-ran", tmp_path / "venv-ran"
    wrapper = _install(tmp_path, f'echo "$@" >> {ran}; echo 3.11')
    proc = subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"], capture_output=True, text=True, timeout=60,
                          env={"PATH": _job_path(tmp_path, marker), "SLURM_STEP_ID": "0"}, check=False)
    assert not marker.exists(), "the job's python3 was run"
    calls = ran.read_text().splitlines()
    assert len(calls) == 2 and calls[0].startswith("-I -c import sys") and "verify.prolog" in calls[1], calls
    assert proc.returncode == 0, proc.stderr


def test_without_a_venv_beside_it_python3_on_path_runs_as_before(tmp_path):
    marker = tmp_path / "path-ran"
    wrapper = _install(tmp_path, None)
    subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"], capture_output=True, text=True, timeout=60,
                   env={"PATH": _job_path(tmp_path, marker), "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, check=False)
    assert marker.read_text().splitlines() == ["conda", "conda"]     # the probe, then the prolog


@pytest.mark.parametrize(("env", "status"), [({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, 0), ({"SLURM_STEP_ID": "0"}, 3)],
                         ids=["Prolog=", "first-step"])
def test_a_python3_that_hangs_at_start_is_not_assessed_within_its_limit_never_slurms_timeout(tmp_path, env, status):
    wrapper = _install(tmp_path, "sleep 60", limit_s=2)
    began = time.monotonic()
    proc = subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"], capture_output=True, text=True, timeout=60,
                          env={"PATH": _job_path(tmp_path, tmp_path / "unused"), **env}, check=False)
    assert 2 <= time.monotonic() - began < 20                   # waited its limit, then gave up
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == status and len(lines) == 1, proc.stderr
    assert "cannot run this prolog" in lines[0] and "starts within 2 s" in lines[0] and "PROLOG_CRASHED" in lines[0]
    assert "/venv/bin/python3)" in lines[0]                       # the one it ran is named


@pytest.mark.parametrize("env", [{"SLURM_STEP_ID": "0"}, {"SLURM_JOB_ID": "7"}], ids=["first-step", "batch-script"])
def test_slurm_a_job_step_without_a_venv_never_runs_the_jobs_python3(tmp_path, env):
    """Slurm's prolog semantics: a job's step runs with the job's PATH. With no venv beside the install (a host
    install), `command -v python3` ran the job's (a conda Python whose newer torch is judged against the node's
    driver: DRIVER_TOO_OLD drained a healthy node). There python3 is looked up in the system's folders alone."""
    marker = tmp_path / "conda-ran"
    wrapper = _install(tmp_path, None)
    proc = subprocess.run(["/bin/sh", str(wrapper), "--budget", "1", "--help"], capture_output=True, text=True,
                          timeout=60, env={"PATH": _job_path(tmp_path, marker), **env}, check=False)
    assert not marker.exists(), "the job's python3 was run"
    assert "conda" not in proc.stdout            # the system's python3 ran (this copy has no package: it says so)


def test_the_wrapper_s_system_folders_are_the_prolog_s():
    """The folders the wrapper finds python3 in, in a job's step, are those verify.prolog finds Slurm in there: one
    list (verify/prolog/verifyrun.py SYSTEM_PATH), never two that drift."""
    from verify.prolog.verifyrun import SYSTEM_PATH
    assert f"for d in {' '.join(SYSTEM_PATH)}; do" in WRAPPER.read_text()
