"""torchimages-prolog with real processes and small limits (issue 36): its whole run is capped whatever hangs
(Slurm's PrologEpilogTimeout semantics), the output of the commands it reads is kept bounded, and the verify it starts is its own, never a `verify.py` or `verify/` in the
job's working folder or on its PYTHONPATH (Python's isolated mode, -I, which implies -P on 3.11+). Each test takes
about a second: the limits are small, not the waits long."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT
from verify.prolog import cli, kernlog, slurm, statefile

pytestmark = pytest.mark.host

HOSTILE = "import pathlib, sys; pathlib.Path({marker!r}).write_text('imported'); sys.exit(0)\n"


def _hostile_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A job's working folder holding a verify.py and a verify/ package that leave a marker when imported."""
    work, marker = tmp_path / "job", tmp_path / "hostile-imported"
    (work / "verify").mkdir(parents=True)
    body = HOSTILE.format(marker=str(marker))
    for name in ("verify.py", "verify/__init__.py", "verify/__main__.py"):
        (work / name).write_text(body)
    return work, marker


def test_python_isolated_mode_the_verify_started_is_the_prologs_own_never_the_jobs(tmp_path):
    """Python's -I (and -P, which it implies on 3.11+): run from a job's folder that holds a verify.py and a verify/
    package, with that folder on PYTHONPATH too, the prolog's verify command runs the real verify (its --help)."""
    work, marker = _hostile_folder(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONSAFEPATH": ""}
    proc = subprocess.run([*cli.verify_command(sys.executable), "--help"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and "--preflight" in proc.stdout, proc.stderr
    assert not marker.exists()
    # the checks verify starts (`python -m verify.checks...`, not isolated) inherit an environment and a folder
    # that find this package first, whatever the job's PYTHONPATH says
    child = subprocess.run([sys.executable, "-c", "import verify; print(verify.__file__)"], cwd="/",
                           env=cli._verify_env(env), capture_output=True, text=True, timeout=60, check=False)
    assert child.stdout.strip() == str(ROOT / "verify" / "__init__.py") and not marker.exists(), child.stderr


def test_python_isolated_mode_no_sitecustomize_of_the_jobs_runs_in_the_checks(tmp_path):
    """Python's -I keeps the job's PYTHON* variables and user site out of the prolog's verify, but the checks it
    starts are not isolated, and Python's `site` imports a sitecustomize/usercustomize from sys.path at every start:
    a job's PYTHONPATH (as a first step, the job's environment) holding one ran the job's code in every check (one
    that sleeps times each check out: a confirmed host "hang" that drains a healthy node). Now no PYTHON* variable
    of the job's reaches them, nor its user site: run as the prolog runs it, the real verify leaves no marker."""
    work, marker = tmp_path / "job", tmp_path / "sitecustomize-ran"
    work.mkdir()
    for name in ("sitecustomize.py", "usercustomize.py"):
        (work / name).write_text(HOSTILE.format(marker=str(marker)).replace("sys.exit(0)", "pass"))
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONUSERBASE": str(work), "PYTHONSTARTUP": str(work / "x.py"),
           "PYTHONINSPECT": "1", "PYTHONWARNINGS": "error"}
    child = cli._verify_env(env)
    assert not {k for k in child if k.startswith("PYTHON")} - {"PYTHONPATH", "PYTHONSAFEPATH", "PYTHONNOUSERSITE"}
    assert child["PYTHONPATH"] == str(ROOT) and child["PYTHONNOUSERSITE"] == "1"
    report = tmp_path / "report.json"
    proc = subprocess.run([*cli.verify_command(sys.executable), "--checks", "shm", "--json", str(report)], cwd="/",
                          env=child, capture_output=True, text=True, timeout=120, check=False)
    assert report.exists() and not marker.exists(), proc.stderr[-400:]


STUCK = "#!/bin/sh\ntrap '' TERM\nsleep 30 &\nwait\nsleep 30\n"      # ignores SIGTERM: only SIGKILL ends it


def test_slurm_s_prolog_epilog_timeout_a_hung_verify_and_journalctl_end_within_the_cap(tmp_path):
    """Slurm kills a Prolog past PrologEpilogTimeout and drains the node: with --budget 1 --grace 2 (a cap of 3 s) a
    verify that ignores SIGTERM and a journalctl that hangs still end the run within the cap + the 3 s it takes to
    stop verify's group, not assessed (exit 0 under Prolog=, nothing asked of Slurm). With --grace 2 (a cap of 3 s)
    verify had more than 1.5 x its budget: PREFLIGHT_TIMEOUT (towards --hang-runs); with --grace 1 less, and that
    is our setting's fault (BUDGET_TOO_SMALL), never a hang of the host's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("python-stuck", STUCK), ("python-slow", "#!/bin/sh\nexec sleep 30\n"), ("journalctl", STUCK),
                       ("dmesg", STUCK)):
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    for name in ("sinfo", "scontrol"):
        (bin_dir / name).write_text(f"#!/bin/sh\necho \"$0 $*\" >> {tmp_path / 'slurm.argv'}\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd",
           "SLURMD_NODENAME": "n1"}
    for grace, code, python in (("2", "PREFLIGHT_TIMEOUT", "python-stuck"), ("1", "BUDGET_TOO_SMALL", "python-slow")):
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "verify.prolog", "--budget", "1", "--grace", grace,
                               "--state-dir", str(tmp_path / "state"), "--python", str(bin_dir / python)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
        took = time.monotonic() - started
        assert proc.returncode == 0 and f"NOT-ASSESSED {code}" in proc.stdout, proc.stdout + proc.stderr
        assert took < 1 + float(grace) + 3 + 2.5, took      # the cap, stopping verify's group, Python's own start
    assert not (tmp_path / "slurm.argv").exists()


def test_python_isolated_mode_verify_s_checks_never_import_the_jobs_verify_before_3_11(tmp_path, monkeypatch):
    """`python -m` puts the working folder first on sys.path and PYTHONSAFEPATH stops it only on 3.11+ (the jammy
    images' Python is 3.10): the checks verify starts in the job's folder put their own package root first and no
    working folder, on any Python, with PYTHONSAFEPATH unset."""
    from verify import runner
    work, marker = _hostile_folder(tmp_path)
    (work / "runpy.py").write_text(HOSTILE.format(marker=str(marker)))
    monkeypatch.chdir(work)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    rc, output, _ = runner.run_process("verify.budget", [], 60, env)
    assert rc == 0 and not marker.exists(), output


def test_files_the_cluster_tooling_reads_are_hostile_a_command_s_output_too(tmp_path, monkeypatch):
    """A kernel log of gigabytes (or a stand-in journalctl printing /dev/zero) was read whole into the prolog's
    memory (400 MB of output: 800 MB resident): now a command's output is kept as it comes, its last `cap` bytes
    only (peak traced memory a few times the cap, whatever it prints); the kernel log's newest lines are kept, the
    cut first line dropped; a sinfo listing cut short is no count for the breaker."""
    import tracemalloc
    tracemalloc.start()
    try:
        out = statefile.run_tail(["head", "-c", str(64 << 20), "/dev/zero"], 30, 1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.returncode == 0 and out.cut and len(out.stdout) == 1 << 20 and peak < 4 << 20, peak
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lines = "".join(f"[ {i}.000000] host kernel: line {i}\\n" for i in range(1, 4))
    for name, body in (("journalctl", f"printf '{lines}'"), ("sinfo", "yes 'n1|idle|none' | head -n 100")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(kernlog, "OUTPUT_CAP", 50)
    log = kernlog.read(10)
    # the newest 50 bytes hold line 3 and the end of line 2: line 2 is made whole again from its dropped start
    # (kernlog._Rescue), never read as a partial line; line 1, no driver line, is dropped
    assert log.lines == ["[ 2.000000] host kernel: line 2", "[ 3.000000] host kernel: line 3"], log
    monkeypatch.setattr(slurm, "OUTPUT_CAP", 1000)
    rows, why = slurm.rows("gpu")
    assert rows is None and "sinfo printed more than 1,000 bytes" in why
    monkeypatch.setattr(slurm, "OUTPUT_CAP", 10_000)
    assert len(slurm.rows("gpu")[0] or []) == 1            # the whole listing: n1, once
