"""Issue 36, class 10: the launchers never let a setting replace the pod's GPUs, never request by default a device a
cluster may lack, and run their own verify.

The practices followed: Kubernetes' extended resources (a device plugin's `domain/name`, outside kubernetes.io; a
pod's GPU request is `nvidia.com/gpu`), requested only where the plugin is known to run (a request no node can meet
leaves the pod Pending forever), and Python's isolated mode (`-I`; PYTHONSAFEPATH=1 for 3.11+) so that a `verify.py`
in a job's working folder is never imported in place of the image's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from scripts.errors import UserError
from scripts.fleet.cluster import RDMA_RESOURCE, k8s_manifests, rdma_hint
from scripts.fleet.slurm import Job, node_script
from scripts.settings import Settings

pytestmark = pytest.mark.unit
BIN = Path(__file__).resolve().parents[1] / "verify" / "bin"


@pytest.fixture
def gpu(test_specs):
    return next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")


def load(value: str) -> str:
    return Settings.load({"RDMA_RESOURCE": value}, {}, ("RDMA_RESOURCE",)).rdma_resource


@pytest.mark.parametrize("value,said", [
    ("nvidia.com/gpu", "the pod's GPU request"), ("nvidia.com/mig-1g.10gb", "the pod's GPU request"),
    ("amd.com/gpu", "the pod's GPU request"), ("cpu", "Kubernetes' own"), ("memory", "Kubernetes' own"),
    ("hugepages.kubernetes.io/x", "Kubernetes' own"),
])
def test_an_rdma_resource_that_is_the_pods_gpu_or_kubernetes_own_is_refused_in_one_line(value, said):
    with pytest.raises(UserError, match="RDMA_RESOURCE=") as caught:
        load(value)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_resource_the_pod_requests_already_is_never_replaced(gpu):
    with pytest.raises(UserError, match="requests already"):
        k8s_manifests(gpu, "r/x:t", 2, 8, rdma="nvidia.com/gpu")


def test_rdma_is_opt_in_and_the_printed_hint_says_how_and_what_it_needs():
    assert Settings().rdma_resource == "" and load("") == ""
    off = rdma_hint(2, 8, "")
    assert off is not None and f"RDMA_RESOURCE={RDMA_RESOURCE}" in off and "TCP sockets" in off
    on = rdma_hint(2, 8, RDMA_RESOURCE)
    assert on is not None and "device plugin" in on and "pend" in on and "RDMA_RESOURCE=none" in on
    assert rdma_hint(1, 8, "") is None and rdma_hint(4, 0, "") is None
    # given and not applied (one node, or pods without GPUs): said, never dropped silently (tests/test_cluster_hunt66.py)
    assert "not requested" in (rdma_hint(1, 8, RDMA_RESOURCE) or "")


def test_pods_and_slurm_steps_never_put_the_working_folder_first_on_sys_path(gpu):
    docs = k8s_manifests(gpu, "r/x:t", 2, 8)
    env = next(d for d in docs if d["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "PYTHONSAFEPATH", "value": "1"} in env
    for preflight in (False, True):
        script = node_script(Job(gpu, "r/x:t", 2, 8, preflight=preflight))
        assert script.index("export PYTHONSAFEPATH=1") < script.index("verify")


@pytest.mark.parametrize("name,module", [("torchimages-prolog", "verify.prolog"), ("verify", "verify")])
def test_the_images_commands_run_python_isolated_with_their_own_package_first(name, module):
    text = (BIN / name).read_text(encoding="utf-8")
    assert ("python3 -I -c" in text or '"$python" -I -c' in text) and f'runpy.run_module("{module}"' in text \
        and "readlink -f" in text
    assert "export PYTHONSAFEPATH=1" in text and "-m verify" not in text
