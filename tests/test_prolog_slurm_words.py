"""Issue 36, class 1 (a fourth hunt): a setting of ours, or a word Slurm itself writes, is never the node's fault.

Slurm's prolog semantics: under `Prolog=` any non-zero exit drains the node. Two holes of that class:
- SLURM_JOB_GPUS=NoDevFiles is what Slurm's gres/gpu plugin writes for a job given none of a GPU node's GPUs
  (common_gres_set_env, Slurm 17.11 to 20.02; CUDA_VISIBLE_DEVICES too): read as a bad setting, every such job's
  prolog was CONFIG_ERROR (ungated) and its first step exited 2. It is Slurm's "none given": no count.
- the shell wrapper verify/bin/torchimages-prolog ran `exec python3` on a host without one and exited 127: Slurm
  drained every node the prolog ran on. Now one line and exit 0 under Prolog= (3 elsewhere), as verify.prolog's own
  broken install already was (its __main__)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history
from verify.prolog.verdict import EXIT_NOT_ASSESSED, EXIT_PASS
from verify.prolog.verifyrun import SYSTEM_PATH

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
WRAPPER = ROOT / "verify" / "bin" / "torchimages-prolog"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def test_slurm_prolog_semantics_no_dev_files_is_slurms_none_given_not_a_bad_setting():
    assert cli.expected_gpus({"SLURM_JOB_GPUS": "NoDevFiles"}) is None
    assert cli.expected_gpus({"SLURM_JOB_GPUS": "NoDevFiles", "SLURM_GPUS_ON_NODE": "2"}) == 2
    with pytest.raises(cli.UsageError):       # anything else that is no list of indices is still refused
        cli.expected_gpus({"SLURM_JOB_GPUS": "NoDevFile"})


@pytest.mark.parametrize("env, status", [(PROLOG_ENV, EXIT_PASS), (STEP_ENV, EXIT_PASS)])
def test_slurm_prolog_semantics_a_job_given_no_gpu_is_gated_on_what_it_has(tmp_path, fake, monkeypatch, env, status):
    """A CPU job on a GPU node (SLURM_JOB_GPUS=NoDevFiles): the preflight runs and its pass is a pass, never
    CONFIG_ERROR (ungated) nor exit 2 of the job's first step."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 8))).encode())
    assert cli.main(_args(tmp_path), {**env, "SLURM_JOB_GPUS": "NoDevFiles"}) == status
    assert [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events] == ["pass"]


def _no_python_path(tmp_path: Path) -> str:
    """A PATH with the wrapper's own tools and no python3 (a host without one)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("dirname", "readlink"):
        found = next(Path(d, tool) for d in ("/usr/bin", "/bin") if Path(d, tool).exists())
        (folder / tool).symlink_to(found)
    return str(folder)


@pytest.mark.host
@pytest.mark.parametrize("env, argv, status", [
    ({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, ["--budget", "5"], 0),          # Prolog=: non-zero drains
    ({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, ["--revalidate", "--node", "n1"], 0),
    ({}, ["--budget", "5"], 0),                                                  # no step: a prolog
    ({}, ["--revalidate", "--node", "n1"], EXIT_NOT_ASSESSED),                   # make undrain
])
def test_slurm_prolog_semantics_no_python3_never_drains(tmp_path, env, argv, status):
    proc = subprocess.run(["/bin/sh", str(WRAPPER), *argv], env={"PATH": _no_python_path(tmp_path), **env},
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == status, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"torchimages-prolog: NOT ASSESSED: no python3 on PATH ({tmp_path / 'bin'}): install Python 3, or set PATH in "
        "the prolog's environment (PROLOG_CRASHED: the node stays in service, ungated)"]


# the system's folders, where a job's step looks python3 up with no venv beside the install (never the job's PATH)
SYSTEM_PYTHON3 = next((p for p in (Path(d, "python3") for d in SYSTEM_PATH) if os.access(p, os.X_OK)), None)


@pytest.mark.host
def test_a_first_step_with_no_python3_on_the_job_s_path_runs_the_system_s_or_is_not_assessed(tmp_path):
    """A job's first step with no venv beside the install: the job's PATH is never searched (a conda python3 there
    was run), so a PATH without python3 changes nothing: the system's python3 runs the prolog (here it refuses a
    misspelt option, exit 2: the prolog itself ran), or with none in the system's folders, one line, exit 3."""
    proc = subprocess.run(["/bin/sh", str(WRAPPER), "--bugdet", "3"],
                          env={"PATH": _no_python_path(tmp_path), "SLURM_STEP_ID": "0"}, capture_output=True,
                          text=True, timeout=120, check=False)
    if SYSTEM_PYTHON3 is None:
        assert proc.returncode == EXIT_NOT_ASSESSED and "no python3 in the system's folders" in proc.stderr
    else:
        assert proc.returncode == 2 and "--bugdet" in proc.stderr and "python3" not in proc.stderr, proc.stderr


@pytest.mark.host
def test_the_wrapper_still_runs_its_own_prolog_where_python3_is(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "SLURM_STEP_ID": "0"}
    proc = subprocess.run(["/bin/sh", str(WRAPPER), "--bugdet", "3"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2 and "--bugdet" in proc.stderr and "python3" not in proc.stderr, proc.stderr


def test_a_report_of_100000_checks_is_judged_in_linear_time(tmp_path, fake, monkeypatch):
    """A report no verify writes (100,000 checks, one name twice at the end): the search for a check held twice was
    quadratic (minutes: the prolog's cap stopped it, PROLOG_OVERRAN; `make fleet-report` and `make isolate`'s
    runner had no cap). Now it is answered in well under a second each, REPORT_INVALID, never a drain."""
    import time

    from scripts.fleet.plausible import report_problem
    checks = [{"name": f"c{i}", "status": "pass", "summary": "x"} for i in range(100_000)]
    checks.append({"name": "c7", "status": "fail", "code": "GPU_LOST", "owner": "host", "summary": "lost"})
    report = _report(*checks)
    began = time.monotonic()
    assert "c7 check 2 times" in str(report_problem(report))     # the fleet report's rule and make isolate's
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == EXIT_PASS
    assert time.monotonic() - began < 20
    assert [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), "n1").events] == [
        ("not-assessed", "REPORT_INVALID")]
    assert "update nodename=n1 state=drain" not in fake.verbs()
