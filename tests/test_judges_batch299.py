"""Batches 299, 300 and 308 (translated by helpers who had not read the judges). Batch 299: an installed package importing a
name another installed package lacks (torch's inductor and a triton of another release: `ImportError: cannot import
name 'triton_key' from 'triton.compiler.compiler' (/usr/local/lib/python3.10/dist-packages/...)`, coreweave/ml-
containers) is the image's package set (FACTS.md: a failure whose words name a library the image's packages should
hold), never the host's; the same words from a job's own module are not this rule's. Batch 300: a one-rank
communicator is one node, and a net plugin's own *socket.cc warning is not NCCL's bootstrap failing."""
from __future__ import annotations

import pytest

from tests.judging import explained
from verify.checks.train.imagefault import image_fault

pytestmark = pytest.mark.unit

TRITON = ("backend='inductor' raised:\nImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
          "(/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py)")


@pytest.mark.parametrize("path", ["/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py",
                                  "/opt/conda/lib/python3.11/site-packages/triton/compiler/compiler.py"])
def test_installed_packages_of_releases_not_made_for_each_other_are_the_image_s(path: str) -> None:
    message = f"ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' ({path})"
    why = image_fault({"type": "torch._dynamo.exc.BackendCompilerFailed", "message": message})
    assert why is not None and "triton" in why


def test_a_job_s_own_module_is_not_the_image_s() -> None:
    message = "ImportError: cannot import name 'Net' from 'model' (/home/alice/project/model.py)"
    assert image_fault({"type": "ImportError", "message": message}) is None


def test_the_entry_s_traceback_explained_is_the_image_s() -> None:
    from tests.helpers import DATA
    raw = (DATA / "real-world" / "coreweave-ml-containers-torch-extras-rank7-inductor-backendcompilerfailed-importerror-"
           "triton-key-triton-2.3.0-pin-2.2.0-image" / "raw.txt").read_text()
    r = explained(raw, "train.log")
    assert (r.status, r.code, r.owner) == ("fail", "TRAIN_FAILED", "image"), r.summary


def test_a_communicator_of_one_rank_is_one_node_whose_sockets_carry_nothing() -> None:
    """Batch 300 (NVIDIA/nccl#1240): one rank on an Azure VM with NCCL_IB_DISABLE=1 fails on the HPC image's forced
    graph file (`XML Import Channel : dev 1 not found`): `nranks 1` is one node, the sockets carry nothing, and the
    image's setting is the failure's, as its facts say."""
    text = ("vm:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\nvm:1:2 [0] NCCL INFO Using network Socket\n"
            "vm:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 100000 commId 0x2 - Init START\n"
            "vm:1:2 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n"
            "vm:1:2 [0] graph/search.cc:719 NCCL WARN XML Import Channel : dev 1 not found.\n"
            "vm:1:2 [0] NCCL INFO graph/search.cc:749 -> 2\n")
    r = explained(text, "nccl.log")
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_FAILED", "image"), r.summary


def test_a_net_plugin_s_own_socket_file_warning_is_not_nccl_s_bootstrap_failing() -> None:
    """Batch 300 (google/nccl-fastsocket#4): FastSocket's `net_fastsocket.cc:765 NCCL WARN Cannot get incoming CPU.`
    beside `Connected after 1000 retries.` is no failure of NCCL's own socket.cc: nothing to judge, never a fail."""
    text = ("h1:4024:4048 [0] net_fastsocket.cc:765 NCCL WARN Cannot get incoming CPU.\n"
            "h0:4300:4325 [0] NCCL INFO NET/FastSocket : Connected after 1000 retries.\n")
    assert explained(text, "nccl.log").status != "fail"
    own = "h1:4024:4048 [0] misc/socket.cc:765 NCCL WARN Net : Connect to 10.0.0.2<34567> failed : Connection refused\n"
    assert explained(own, "nccl.log").status == "fail"


def test_torchvision_built_for_another_cuda_than_torch_is_the_image_s() -> None:
    """Batch 308: torchvision's start-up check (extension._check_cuda_version) refusing a wheel of another CUDA."""
    message = ("Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA "
               "Version=11.7 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your "
               "PyTorch install.")
    why = image_fault({"type": "RuntimeError", "message": message})
    assert why is not None and "CUDA" in why
    r = explained(f"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: {message}\n",
                  "train.log")
    assert (r.status, r.owner) == ("fail", "image"), r.summary
