"""Issue 36, classes 8 and 10 through the public interface: `python -m scripts fleet-report` over a hostile folder
ends in one listed line per input and exit 1 (never a traceback, never a pass), and the image's `verify` command
never imports a verify.py from the working folder (Python's isolated mode, `-I`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli
from tests.verify_handmade import make_report

pytestmark = pytest.mark.host


def test_fleet_report_over_a_hostile_folder_lists_each_input_and_does_not_pass(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    doc = make_report()
    doc["created"] = "2026-01-01T00:00:00Z"
    (job / "a.json").write_text(json.dumps(doc))
    (job / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    os.mkfifo(job / "pipe.json")
    (job / "out").symlink_to(tmp_path, target_is_directory=True)
    proc = run_cli("fleet-report", "--dir", str(job), timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "pipe.json: cannot read it (not a regular file" in proc.stdout and "out: a symbolic link out of DIR" in proc.stdout
    assert "deep.json: not JSON (nested too deeply)" in proc.stdout
    assert json.loads((job / "fleet.json").read_text())["ok"] is False


def test_the_verify_command_runs_its_own_package_not_the_working_folders(tmp_path):
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "__init__.py").write_text('raise SystemExit("HIJACKED: the working folder\'s verify")\n')
    (tmp_path / "verify.py").write_text('raise SystemExit("HIJACKED")\n')
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command, args in (("verify", ["--list"]), ("torchimages-prolog", ["--bugdet", "3"])):
        proc = subprocess.run([str(ROOT / "verify" / "bin" / command), *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert "HIJACKED" not in proc.stdout + proc.stderr, (command, proc.stderr)
    listed = subprocess.run([str(ROOT / "verify" / "bin" / "verify"), "--list"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0 and listed.stdout.startswith("gpu"), listed.stderr


def test_k8s_verify_refuses_the_gpu_as_rdma_resource_and_says_rdma_is_opt_in(tmp_path, rendered):
    env = {"IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"), "NODES": "2", "GPUS": "8",
           "IMAGE": "2.15.0-cuda13.2-cudnn9-runtime-debian12", "REGISTRY": "registry.example:5000/ml", "UNPINNED": "1"}
    made = run_cli("k8s-verify", env=env, timeout=300)
    assert made.returncode == 0 and "note: the pods request no RDMA device" in made.stdout, made.stderr
    refused = run_cli("k8s-verify", env={**env, "RDMA_RESOURCE": "nvidia.com/gpu"}, timeout=300)
    assert refused.returncode != 0 and "the pod's GPU request" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
