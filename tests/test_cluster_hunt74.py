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

- Class 10 again, in verify's shm check (medium: a planted module read as the node's /dev/shm). Its two allocation
  attempts run `python -c <code>`, which puts the working folder first on Python 3.10 (PYTHONSAFEPATH is 3.11+): a
  mmap.py or torch/ in the folder a job ran verify from (pyxis' /tmp, a user's folder under LAUNCHER=none, a pytorch
  checkout) was imported instead, and its failure judged the node's /dev/shm. Repro: a folder holding mmap.py that
  exits 1, PYTHONSAFEPATH unset, shm._attempt(_TOUCH, ...) returned its message. Fix (verify/checks/shm/check.py
  _NO_WORKDIR): the attempt drops '' from sys.path before any import that is not built in.

- Class 10 / class 1, make isolate's runner on the batch node's python3 (medium: a wrong exit status, a traceback).
  The batch script ran `python3 -I` (TORCHIMAGES_HOST_PYTHON) with the runner, which needs 3.10 (scripts: bootstrap.sh);
  RHEL/Rocky 8's python3 is 3.6 and Ubuntu 20.04's 3.8: a SyntaxError or TypeError traceback, exit 1, which the
  job's own last line says is "1: node(s) named" (a script paging on it drains nothing by hand but reads a fault). A
  missing python3 exited 127. Repro: the script's runner line with TORCHIMAGES_HOST_PYTHON=python3.8: exit 1,
  "TypeError: 'type' object is not subscriptable". Practice: Slurm's batch semantics (the job's exit is its answer)
  and the project's rule (our trouble names no node). Fix (scripts/fleet/isolate_job.py VERSION_PROBE): the Python is
  asked first; too old or missing is one line naming the knob, exit 2 (undetermined); any crash of the runner is one
  line, exit 2 (isolate_run.guarded).

- Class 10, make slurm's VERIFY_ARGS (medium: evidence silently lost; a lost GPU let pass). VERIFY_ARGS is added
  after the launcher's own options on each node's verify, and verify's parser keeps the last of an option given
  twice: `VERIFY_ARGS="--expect-gpus 0"` on GPUS=8 nodes judged each node against no GPU count (a node that lost a GPU
  passed its local checks), `--json x` / `--junit x` wrote each node's report where make fleet-report never reads,
  `--list` ran no check (exit 0), `--from-facts` judged a record. Repro: `make slurm GPUS=8 VERIFY_ARGS="--expect-gpus
  0"`: the script's local line ended `--expect-gpus 8 ... --expect-gpus 0`. Practice: a launcher's knob never
  replaces what the launcher must give (GPUS is the GPU count). Fix (scripts/fleet/launch_guards.py
  verify_args_problem): refused in one line, exit 2, no job written; other options pass through as before.

- Class 1, a misspelt knob given to make or sbatch (medium: an operator's setting dropped without a word). The prolog
  says a TORCH* variable close to one of its knobs (round 71); make slurm, make isolate, make k8s-verify, make
  fleet-report and make isolate's runner read their own TORCHIMAGES_* knobs and said nothing of a near miss:
  `TORCHIMAGES_JOIN_TIMOUT=600 make isolate` wrote a job that waited the default 300 s. Repro: that command's output
  had no line naming it. Practice: a setting of ours is never silently ignored (the prolog's own near-miss rule).
  Fix (scripts/fleet/job_knobs.py misspelt): one note line each, from make's launch targets and fleet-report, and
  from the runner for sbatch's environment; every TORCHIMAGES_* name the repository uses is none.

- Class 10, a launcher's default said (low: a message). GPUS unset on a CUDA image asks each node for 1 GPU (Slurm's
  --gres=gpu:1, the pod's nvidia.com/gpu: 1): a pass verified that GPU alone, and the report reads as the node's.
  make slurm / isolate / k8s-verify now say so where they write the job (a note line), nothing when GPUS is given.

- Class 7, make isolate clears a node only on its pair's own measurement (medium: a pair cleared on a report of
  another launch). The step starts torchrun --nproc-per-node=max(GPUS, 1) on each node of the pair, so its group
  has exactly 2 x that many ranks; the runner refused fewer ranks than nodes (round 66) but believed any other
  count: a passing report with world_size 2 (one rank a node) on 8-GPU nodes, or 24, cleared both nodes, though 7
  of each node's 8 GPUs never all-reduced (or the report was another group's). Repro:
  `outcome(("n1","n2"), <nccl pass, nodes 2, world_size 2>, 0, 5.0, 8, now).ok` was True. Practice: NVSentinel's
  isolation rule (a node is cleared by a measurement of its links with a known-good partner, in this step). Fix
  (scripts/fleet/isolate_facts.py pair_problem per_node): another count is not this step's measurement: not
  assessed (neither clears nor strikes; the answer is never clean). tests/test_cluster_hunt66.py's pair report now
  carries the 16 ranks its 8-GPU step starts.

Each test names the practice it follows.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.cluster import k8s_manifests
from scripts.fleet.isolate import decide
from scripts.fleet.isolate_job import isolate_script, pair_script
from scripts.fleet.isolate_run import exit_status, outcome
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


# ---- class 7: a pair is cleared only by its own step's measurement

def _pair(world: int, nodes: int = 2, at: float | None = None) -> dict[str, Any]:
    check: dict[str, Any] = {"name": "nccl", "status": "pass", "code": None, "owner": None, "summary": "ok", "details": [],
             "remedy": None, "duration_s": 1.0, "data": {"backend": "nccl", "nodes": nodes, "world_size": world},
             "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}, "wrong": {"value": 0, "unit": ""}}}
    return {"schema_version": 3, "status": "pass", "checks": [check],
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at or time.time()))}


@pytest.mark.parametrize(("gpus", "world", "ok"), [
    (8, 16, True), (0, 2, True), (4, 8, True),          # the ranks the step started: --nproc-per-node x 2
    (8, 2, False), (8, 4, False), (8, 24, False),       # 1 rank a node of 8 GPUs; another group's report
    (0, 4, False), (4, 16, False),
])
def test_nvsentinel_isolation_a_pair_is_cleared_only_with_the_ranks_its_step_started(gpus, world, ok):
    """make isolate's step starts max(GPUS, 1) ranks on each node of the pair: a passing report of another number
    measured some other group (7 of each node's 8 GPUs never all-reduced): not assessed, never a pass that clears
    both nodes, and never a strike against either."""
    now = time.time()
    got = outcome(("n1", "n2"), _pair(world, at=now), 0, 5.0, gpus, now)
    assert got.ok is ok, got
    if not ok:
        assert got.ours and f"not the {max(gpus, 1) * 2} the step started" in got.why, got.why
        decision = decide(["n1", "n2", "n3", "n4"], [(1, got), (1, outcome(("n3", "n4"), _pair(2 * max(gpus, 1), at=now),
                                                                           0, 5.0, gpus, now))])
        assert exit_status(decision) == 2 and not decision.named, decision.summary


@pytest.mark.host
def test_python_isolated_start_the_shm_attempt_never_imports_the_working_folder_s_modules(tmp_path, monkeypatch):
    """verify's shm check allocates in a `python -c` of its own; from a job's folder holding mmap.py (or torch/),
    with no PYTHONSAFEPATH (Python 3.10 ignores it), the attempt must use the real modules."""
    from verify.checks.shm import check as shm
    job = tmp_path / "job"
    job.mkdir()
    (job / "mmap.py").write_text("raise SystemExit('PLANTED mmap ran')\n")
    monkeypatch.chdir(job)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    ok, said = shm._attempt(shm._TOUCH, 1 << 16, str(tmp_path), timeout=60)
    assert ok and "PLANTED" not in said and said == f"touched {1 << 16}", said


# ---- class 10 / class 1: make isolate's runner on the batch node's python3

def _runner_block(cpu: Any) -> str:
    script = isolate_script(Job(cpu, "r/x:t", 4, 0, "pyxis", checkout=str(ROOT)))
    lines = script.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("runner_python="))
    end = next(i for i, ln in enumerate(lines) if i > start and ln == "fi")
    return "\n".join(lines[start:end + 1]) + '\necho "status=$status"'


@pytest.mark.host
@pytest.mark.parametrize("python", ["3.6.15", "3.8.18", "missing"])
def test_slurm_batch_semantics_a_batch_node_python_too_old_for_the_runner_is_not_node_s_named(tmp_path, cpu,
                                                                                                 python):
    """The job's exit 1 says "node(s) named": RHEL 8's python3 (3.6) or Ubuntu 20.04's (3.8) crashed the runner with
    a traceback, exit 1. Now one line, exit 2 (undetermined), saying which Python to give."""
    path = f"/root/.pyenv/versions/{python}/bin/python" if python != "missing" else str(tmp_path / "python3")
    if python != "missing" and not os.access(path, os.X_OK):
        pytest.skip(f"no Python {python} here")
    proc = subprocess.run(["bash", "-c", _runner_block(cpu)], env={"PATH": os.environ["PATH"], "HOME": "/tmp",
                          "TORCHIMAGES_HOST_PYTHON": path}, capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.strip() == "status=2", proc.stdout + proc.stderr
    assert "cannot run the runner, which needs Python 3.10 or newer" in proc.stderr and "no node named" in proc.stderr
    assert "Traceback" not in proc.stderr and (python[:3] in proc.stderr or python == "missing"), proc.stderr


@pytest.mark.host
def test_slurm_batch_semantics_a_python_that_can_runs_the_runner(tmp_path, cpu):
    proc = subprocess.run(["bash", "-c", _runner_block(cpu)], env={"PATH": os.environ["PATH"], "HOME": "/tmp",
                          "TORCHIMAGES_HOST_PYTHON": sys.executable}, capture_output=True, text=True, timeout=120,
                          check=False)
    # the runner itself ran (outside a job: its own one line about the batch script), never the version's refusal
    assert "TORCHIMAGES_ISOLATE_STEP is not set" in proc.stderr and "3.10 or newer" not in proc.stderr, proc.stderr


def test_nvsentinel_isolation_a_crash_of_the_runner_names_no_node(monkeypatch, capsys):
    from scripts.fleet import isolate_run

    def crash(argv: Any = None) -> int:
        raise TypeError("'type' object is not subscriptable")
    monkeypatch.setattr(isolate_run, "main", crash)
    assert isolate_run.guarded([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isolate: not assessed: the runner crashed (TypeError at ") and "no node named" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---- class 10: VERIFY_ARGS never replaces what the launcher gives each node

def _make(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in its environment), its job under tmp_path."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), "NODES": "2", "LOCAL_IMAGE": "1",
                               "IMAGE": "2.13.0-cuda13.0-cudnn9-runtime-debian12", "GPUS": "8", **env},
                          timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.host
@pytest.mark.parametrize("args", ["--expect-gpus 0", "--json /tmp/x.json", "--junit=/tmp/x.xml", "--list",
                                  "--timeout 60 --from-facts /shared/facts"])
def test_launcher_knobs_verify_args_never_replaces_the_launcher_s_own_options(tmp_path, args):
    """verify's parser keeps the last of an option given twice: VERIFY_ARGS="--expect-gpus 0" on 8-GPU nodes let a
    node that lost a GPU pass, "--json x" sent each node's report where make fleet-report never reads."""
    status, said = _make(tmp_path, "slurm", VERIFY_ARGS=args)
    name = args.split()[-2] if "from-facts" in args else args.split()[0].split("=")[0]
    assert status == 2 and said.startswith("error: VERIFY_ARGS gives " + name) and "Traceback" not in said, said
    assert not (tmp_path / "build" / "slurm").exists()


@pytest.mark.host
def test_launcher_knobs_verify_args_of_other_options_pass_through(tmp_path):
    status, said = _make(tmp_path, "slurm", VERIFY_ARGS="--timeout 600 --nccl-max-size 64m")
    assert status == 0, said
    script = next((tmp_path / "build" / "slurm").glob("*.sbatch")).read_text()
    assert '--junit "$out/node-$node.xml" --timeout 600 --nccl-max-size 64m' in script


# ---- class 1: a misspelt knob given to make, or to sbatch, is said

@pytest.mark.host
@pytest.mark.parametrize(("target", "typo", "meant"), [
    ("isolate", "TORCHIMAGES_JOIN_TIMOUT", "TORCHIMAGES_JOIN_TIMEOUT"),
    ("isolate", "TORCHIMAGES_ISOLATE_TIMEOUTS", "TORCHIMAGES_ISOLATE_TIMEOUT"),
    ("slurm", "torchimages_join_timeout", "TORCHIMAGES_JOIN_TIMEOUT"),
    ("slurm", "TORCHIMAGE_CLOCK_SKEW", "TORCHIMAGES_CLOCK_SKEW"),
])
def test_a_setting_of_ours_a_misspelt_knob_given_to_make_is_said(tmp_path, target, typo, meant):
    status, said = _make(tmp_path, target, **{typo: "600"})
    assert status == 0 and f"note: {typo} is no setting of make's or its job's: did you mean {meant}?" in said, said


def test_a_setting_of_ours_no_name_the_repository_uses_reads_as_misspelt():
    """Every TORCHIMAGES_* name the launchers, jobs and prolog use is far from a knob or one itself (the docs' one
    deliberate typos aside)."""
    from scripts.fleet.job_knobs import misspelt
    names = set()
    for folder in ("scripts", "verify", "docs", "templates"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".j2", ".sh", "") and "__pycache__" not in path.parts:
                names |= set(re.findall(r"TORCHIMAGES_[A-Z0-9_]*[A-Z0-9]", path.read_text(errors="replace")))
    examples = ("TORCHIMAGES_" + "BRAKER ", "TORCHIMAGES_JOIN_TIMOUT ")     # the typos docs and comments show
    flagged = [line for line in misspelt(dict.fromkeys(names, "x")) if not line.startswith(examples)]
    assert names and not flagged, flagged


def test_a_setting_of_ours_isolate_s_runner_says_a_misspelt_knob_sbatch_had(monkeypatch, capsys, tmp_path):
    from scripts.fleet import isolate_run
    monkeypatch.setenv("TORCHIMAGES_ISOLATE_TIMOUT", "60")
    for name in ("TORCHIMAGES_ISOLATE_STEP", "TORCHIMAGES_REPORTS", "RDZV_PORT", "SLURM_JOB_NODELIST"):
        monkeypatch.setenv(name, "x")
    assert isolate_run.main([]) == 2           # its step is no argv: refused after the notes
    out = capsys.readouterr().out
    assert "isolate: note: TORCHIMAGES_ISOLATE_TIMOUT is no setting of make's or its job's: did you mean " \
           "TORCHIMAGES_ISOLATE_TIMEOUT?" in out, out


@pytest.mark.host
@pytest.mark.parametrize("target", ["slurm", "isolate", "k8s-verify"])
def test_launcher_defaults_one_gpu_a_node_is_said(tmp_path, target):
    """GPUS unset on a CUDA image asks each node for 1 GPU: its pass verified that GPU alone (said); given, nothing."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env = {**base, "BUILD_DIR": str(tmp_path / "build"), "NODES": "2", "LOCAL_IMAGE": "1",
           "IMAGE": "2.13.0-cuda13.0-cudnn9-runtime-debian12"}
    for gpus, said in ((None, True), ("8", False)):
        proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                              env={**env, **({"GPUS": gpus} if gpus else {})}, timeout=120, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert ("note: GPUS not given: each node is given and verified with 1 GPU" in proc.stdout) is said, proc.stdout
