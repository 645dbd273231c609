"""Issue 36, hunt104's launcher finding (class 10; tests/test_hunt104_inputs.py's docstring, finding 2): `make
k8s-verify` says each job's own RDMA request, through the public CLI (a process: marked host)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import run_cli

pytestmark = pytest.mark.host

# ------------------------------------------------------------------ 2. each k8s job's own RDMA note

CUDA, CPU = "2.14.1-cuda12.6-cudnn9-runtime-ubuntu22.04", "2.13.0-cpu-debian12"


def _k8s(tmp_path: Path, rendered: Path, rdma: str) -> tuple[str, dict[str, dict[str, Any]]]:
    proc = run_cli("k8s-verify", env={"LOCAL_IMAGE": "1", "IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "b"),
                                      "NODES": "2", "IMAGE": f"{CUDA},{CPU}", "RDMA_RESOURCE": rdma})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    limits = {}
    for path in (tmp_path / "b" / "k8s").glob("*.yaml"):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "Job"]
        container = docs[0]["spec"]["template"]["spec"]["containers"][0]
        limits[path.stem] = container.get("resources", {}).get("limits", {})
    return proc.stdout, limits


def _note_of(out: str, job: str) -> str:
    return next((line for line in out.splitlines() if line.startswith(f"{job}: note:")), "")


def test_launchers_the_rdma_note_is_said_of_each_job_it_is_true_of(tmp_path: Path, rendered: Path) -> None:
    out, limits = _k8s(tmp_path, rendered, "rdma/rdma_shared_device_a")
    cuda, cpu = (next(j for j in limits if t.replace(".", "-") in j) for t in (CUDA, CPU))
    assert limits[cuda].get("rdma/rdma_shared_device_a") == "1" and "rdma/rdma_shared_device_a" not in limits[cpu]
    assert "each pod requests 1 rdma/rdma_shared_device_a" in _note_of(out, cuda), out
    assert "is not requested" in _note_of(out, cpu), out


def test_launchers_the_multi_node_default_says_a_gpu_job_crosses_nodes_over_sockets(
        tmp_path: Path, rendered: Path) -> None:
    out, limits = _k8s(tmp_path, rendered, "")
    cuda, cpu = (next(j for j in limits if t.replace(".", "-") in j) for t in (CUDA, CPU))
    assert not any("rdma" in k for k in limits[cuda])
    assert "the pods request no RDMA device" in _note_of(out, cuda), out
    assert _note_of(out, cpu) == "", out
