"""Issue 35's thirty-seventh to thirty-ninth corpus batches (NVSwitch systems, the network NCCL chose and why, GPU
nodes under load; translated blind): the readers and rules they called for, by class (the entries themselves replay
in tests/test_gpu_rules.py and tests/test_explain.py).

- A CUDA driver error's number as a wrapper prints it (`cuInit err: 802`, `cuda driver library init failure: 802`,
  ollama's and llama.cpp's loaders) is decoded as its name would be; NCCL's `vendor err 129` (the NIC's) is not.
"""
from __future__ import annotations

import pytest

from verify.shared import cuda_errors

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text", ["cuInit err: 802", "cuda driver library init failure: 802",
                                  "Unable to load cudart library libcuda.so.570.86.15: cuda driver library init "
                                  "failure: 802"])
def test_a_driver_call_s_error_number_as_a_wrapper_prints_it_is_decoded(text):
    decoded = cuda_errors.decode(text)
    assert decoded is not None and decoded == cuda_errors.decode("CUDA_ERROR_SYSTEM_NOT_READY")


@pytest.mark.parametrize("text", ["NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor "
                                  "err 802 (Send)", "retry err 802"])
def test_a_bare_err_number_is_no_cuda_error(text):
    assert cuda_errors.decode(text) is None


def test_one_node_s_nccl_log_of_its_network_set_up_alone_passes_on_what_it_shows_handmade():
    """NCCL_DEBUG=INFO of a one-node run: no RDMA device, no net plugin, the bootstrap on a socket: nothing NCCL found
    is used between GPUs of one node; the same log across nodes is no pass (a fall-back is judged there)."""
    from verify.checks import CHECKS
    from verify.judging import judge
    from verify.options import Options
    log = {"ib_no_device": True, "ib_error": "NET/IB : No device found.", "interface": "eno1:192.168.1.1<0>",
           "plugin_missing": "NET/Plugin : Plugin load (libnccl-net.so) returned 2", "networks": [], "net_channels": {},
           "transports": [], "hcas": []}
    base = {"backend": "nccl", "sizes": None, "error": None, "nccl_log": log}
    one = judge(CHECKS["nccl"], {**base, "nodes": 1}, Options())
    assert one.status == "pass" and "one node" in one.summary, one.summary
    unknown = judge(CHECKS["nccl"], {**base, "nodes": None}, Options())
    assert unknown.status != "pass", unknown.summary


def test_a_table_whose_world_size_is_not_recorded_still_shows_its_wrong_elements_handmade():
    """nccl-tests rows translated without the ranks they crossed: wrong elements are wrong data whatever the world
    size (a fault the evidence shows is judged); right rows of unknown ranks are no pass: not assessed."""
    from verify.checks import CHECKS
    from verify.judging import judge
    from verify.options import Options
    row = {"size": 524288, "count": 131072, "type": "float", "redop": "sum", "time_us": 663.1, "algbw": 0.79,
           "busbw": 0.79, "wrong": 0}
    base = {"backend": "nccl", "world_size": None, "nodes": 2, "error": None}
    wrong = judge(CHECKS["nccl"], {**base, "sizes": [{**row, "wrong": 237858}]}, Options())
    assert (wrong.status, wrong.code) == ("fail", "NCCL_WRONG_RESULT"), wrong.summary
    right = judge(CHECKS["nccl"], {**base, "sizes": [row]}, Options())
    assert right.status == "skip" and right.owner is None and "not assessed" in right.summary, right.summary
    odd = judge(CHECKS["nccl"], {**base, "world_size": "2", "sizes": [row]}, Options())
    assert odd.status == "fail", odd.summary


@pytest.mark.parametrize("text, code", [
    ("XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00\n", "GPU_LOST"),
    ("Found XID errors: 63\nNode Health Check failed.  Check check_xid_errors returned 1\n", "RETIREMENT_PENDING"),
    ("failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped rows: "
     "ERROR_GPU_IS_LOST\n", "GPU_LOST"),
], ids=["gpud-xid", "nhc-xid", "go-nvml-lost"])
def test_node_health_tools_relayed_xids_and_lost_gpus_are_read(text, code):
    """Batch 45: what gpud, NHC and an NVML binding print of a GPU's fault is the same evidence as the kernel log's
    or nvidia-smi's: judged by the one Xid catalog and the lost-GPU rule."""
    from verify import explain as ex
    from verify.options import Options
    r = ex.explain_text(text, "health.log", Options())
    assert (r.name, r.status, r.code, r.owner) == ("gpu", "fail", code, "host"), r.summary


def test_nvidia_smi_s_inforom_warning_alone_names_its_gpu():
    from verify import explain as ex
    from verify.options import Options
    r = ex.explain_text("WARNING: infoROM is corrupted at gpu 0000:00:05.0\n", "smi.txt", Options())
    assert (r.name, r.status, r.owner) == ("gpu", "warn", "host") and "InfoROM" in r.summary, r.summary
    quoted = ex.explain_text("If you see `WARNING: infoROM is corrupted at gpu 0000:00:05.0`, reflash it.\n", "n.md",
                             Options())
    assert quoted.status != "warn" or "InfoROM" not in quoted.summary


def test_gpus_that_differ_by_their_pci_domain_only_are_different_gpus():
    """Batch 43: a Hyper-V guest (Azure NC/ND) numbers each passed-through GPU by its own PCI domain, every bus
    `00:00.0`: four GPUs, never one GPU pasted four times; the domain's 4 and 8 digits still name one GPU."""
    from verify import explain as ex
    devices = [{"index": None, "pci_bus_id": f"0000{d}:00:00.0", "uuid": None} for d in ("1580", "2DF7", "4968")]
    facts = {"devices": [dict(d) for d in devices] + [{"index": None, "pci_bus_id": "1580:00:00.0"}]}
    assert ex.once(facts) == ["GPU at 1580:00:00.0"] and len(facts["devices"]) == 3
