"""Issue 18's verify side, run for real on this host: `verify --preflight` within its budget, `torchimages-prolog`
deciding drain / fail / pass from real preflight runs (with faults forced through verify's test hooks), an
interrupted run that is never a pass (JSON, table, JUnit), the scheduler's facts and remedies, time to first step.

`scontrol` is the one stand-in here (a script on PATH that records its arguments): the same prolog against a real
slurmctld is in the Slurm integration tests.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli
from verify import prolog, scheduler

pytestmark = pytest.mark.host


def test_preflight_on_this_cpu_host_finishes_within_its_budget_and_ends_in_one_line(tmp_path):
    start = time.monotonic()
    proc = run_cli("--preflight", "--json", str(tmp_path / "p.json"), module="verify", timeout=120)
    seconds = time.monotonic() - start
    report = json.loads((tmp_path / "p.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["name"] for c in report["checks"]] == ["gpu", "shm", "nccl"]
    assert proc.stdout.strip().splitlines()[-1].startswith("preflight: PASS")
    assert seconds < 30 + 10, seconds                  # the default budget, plus interpreter start on a busy host
    assert report["options"]["gpu_perf"] is False and report["options"]["nccl_max_bytes"] <= 64 << 20
    phases = report["environment"]["phases"]
    assert set(phases) == {"pull", "container_start", "import_torch", "cuda_init", "process_group_init", "first_batch"}
    assert phases["import_torch"] > 0 and phases["process_group_init"] > 0
    assert phases["pull"] is None          # no launcher pulled here (TORCHIMAGES_PULL_S unset): unknown, not 0


def test_budget_needs_preflight_and_must_be_a_positive_number():
    for args, needle in ((["--budget", "10"], "add --preflight"), (["--preflight", "--budget", "nan"], "finite"),
                         (["--preflight", "--budget", "0"], "greater than")):
        proc = run_cli(*args, module="verify", timeout=60)
        assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def _fake_scontrol(tmp_path: Path) -> tuple[dict[str, str], Path]:
    log = tmp_path / "scontrol.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "scontrol"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    script.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURMD_NODENAME": "n7", "SLURM_JOB_ID": "4242"}
    return env, log


def _prolog(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verify.prolog", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=240, check=False)


def test_a_host_fault_drains_the_node_with_the_code_and_requeues_a_first_step(tmp_path):
    env, log = _fake_scontrol(tmp_path)
    # a hung check is CHECK_TIMEOUT, owned by the host: the real hook, the real runner, the real timeout
    proc = _prolog({**env, "VERIFY_TEST_HANG": "shm", "SLURM_STEP_ID": "0"}, "--budget", "6")
    calls = log.read_text().splitlines()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert calls[0].startswith("update nodename=n7 state=drain reason=torchimages:CHECK_TIMEOUT ")
    assert calls[1] == "requeue 4242" and len(calls[0]) < 260


def test_an_image_fault_fails_a_step_but_leaves_the_node_and_a_prolog_lets_it_be(tmp_path):
    env, log = _fake_scontrol(tmp_path)
    step = _prolog({**env, "VERIFY_TEST_CRASH": "shm", "SLURM_STEP_ID": "0"}, "--budget", "60")
    assert step.returncode == 1 and not log.exists(), step.stdout + step.stderr
    assert "CHECK_CRASHED" in step.stdout + step.stderr and "left in service" in step.stderr
    as_prolog = _prolog({**env, "VERIFY_TEST_CRASH": "shm", "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, "--budget", "60")
    assert as_prolog.returncode == 0 and not log.exists()


def test_a_healthy_node_passes_the_prolog():
    proc = _prolog({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, "--budget", "30", "--dry-run")
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1].startswith("preflight: PASS")


def test_the_drain_reason_is_one_printable_line_within_slurm_s_limit():
    text = prolog.reason("GPU_LOST", 'device 3 "x"\nis lost\x1b[31m' + "y" * 500)
    assert text.startswith("torchimages:GPU_LOST device 3 'x' is lost") and len(text) == 200 and "\n" not in text
    assert prolog.decide(None)[0] == "host"
    report = {"checks": [{"status": "fail", "code": "SHM_TOO_SMALL", "owner": "job", "summary": "a"},
                         {"status": "fail", "code": "ECC_UNCORRECTABLE", "owner": "host", "summary": "b"}]}
    assert prolog.decide(report) == ("host", "ECC_UNCORRECTABLE", "b")       # the node's fault decides the drain


def test_kill_term_during_verify_leaves_a_report_that_is_not_pass(tmp_path):
    out, junit = tmp_path / "r.json", tmp_path / "r.xml"
    proc = subprocess.Popen([sys.executable, "-m", "verify", "--checks", "shm,hdf5", "--json", str(out), "--junit",
                             str(junit)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "VERIFY_TEST_HANG": "shm"})
    time.sleep(8)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    report = json.loads(out.read_text())
    assert proc.returncode == 128 + signal.SIGTERM and report["status"] == "fail" and report["interrupted"] == "SIGTERM"
    assert "verdict: FAIL" in stdout and "interrupted by SIGTERM" in stdout
    suite = ET.parse(junit).getroot()
    assert suite.get("errors") == "1" and suite.find("testcase[@name='interrupted']/error") is not None


def test_remedies_speak_slurm_under_slurm_and_facts_name_the_job():
    ctx = scheduler.context({"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n1",
                             "TORCHIMAGES_LAUNCHER": "pyxis"})
    assert ctx == {"kind": "slurm", "job": "7", "step": "0", "node": "n1", "launcher": "pyxis"}
    remedy = "Start it with `docker run --gpus all` (NVIDIA Container Toolkit installed on the host)"
    adapted = scheduler.adapt_remedy(remedy, ctx) or ""
    assert "--gres=gpu:N" in adapted and "docker run --gpus all" not in adapted
    assert scheduler.adapt_remedy(remedy, scheduler.context({})) == remedy
    assert scheduler.container_start_s({"TORCHIMAGES_T0": "100.5"}, now=103.0) == 2.5
    assert scheduler.container_start_s({"TORCHIMAGES_T0": "nan"}) is None
    assert scheduler.container_start_s({"TORCHIMAGES_T0": "1e30"}) is None
    # a launcher that pulls says how long (make slurm LAUNCHER=docker from a registry): the first phase
    assert scheduler.pull_s({"TORCHIMAGES_PULL_S": "41.25"}) == 41.25
    assert [scheduler.pull_s({"TORCHIMAGES_PULL_S": v}) for v in ("nan", "inf", "-1", "", "x")] == [None] * 5
    assert scheduler.pull_s({}) is None
