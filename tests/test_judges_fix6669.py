# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's sixty-sixth to sixty-ninth corpus batches (NVSwitch nodes, GPU memory and Xids, RDMA adapters and
memlock, ordinary GPU nodes), fixed by class:
- CUDA refusing to start under NCCL (`unhandled cuda error` ... `Cuda failure 802 'system not yet initialized'`):
  where the refusal is the node's (the driver, the fabric manager), `verify explain` names CUDA's refusal (gpu,
  DRIVER_ERROR, host) over NCCL's relay of it, as it does a running program's CUDA error; a build without the GPU's
  code (`named symbol not found`) stays NCCL's, whose build it is;
- Xid 31 memory page faults under several processes on one GPU are one program's same access repeated, not a suspect
  GPU, where every process faulted at the same address within its 2 MiB region with the same fault type (a job run
  again and again gets a new pid each time); faults at different addresses stay suspect;
- the NVIDIA DRA driver's ComputeDomain plugin lines (`identified fabric clique UUID/ID (device N/GPU-...)`,
  `NVLink fabric not attached ... state=N`, `NVLink fabric registration error ... status=...`): read by `verify
  explain` into the devices' fabric; a clique alone is no health read (warn), a registration not completed the host's;
- perftest's port check (` Port number 1 state is Down` from `ib_write_bw -d mlx5_0`): the port state libibverbs
  returned, read by `verify explain` into the named adapter's port: the only port down fails (host)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


# ----------------------------------------------------------- CUDA's refusal under NCCL's `unhandled cuda error`
def _torch_nccl(rank: int, failure: str) -> str:
    return (f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
            "NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
            f"[rank{rank}]: ncclUnhandledCudaError: Call to CUDA function failed.\n[rank{rank}]: Last error:\n"
            f"[rank{rank}]: {failure}\n")


@pytest.mark.parametrize("failure", ["Cuda failure 802 'system not yet initialized'",
                                     "Cuda failure 'system not yet initialized'"])
def test_a_node_s_cuda_refusal_relayed_by_nccl_is_the_gpu_check_s(failure):
    r = explained(_torch_nccl(0, failure) + _torch_nccl(3, failure))
    assert (r.name, *verdict(r)) == ("gpu", "fail", "DRIVER_ERROR", "host"), r.details
    assert any("also read as NCCL INFO log" in d for d in r.details)


def test_a_build_without_the_gpu_s_code_under_nccl_stays_nccl_s():
    text = "gpu-node:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'\n"
    r = explained(text)
    assert r.name == "nccl" and r.owner == "image", (r.name, verdict(r))


# ----------------------------------------------------------------- Xid 31 under several processes on one GPU
def _xid31(pid: int, address: str, kind: str = "FAULT_PDE ACCESS_TYPE_VIRT_WRITE", client: str = "GPCCLIENT_T1_3"):
    text = (f"NVRM: Xid (PCI:0000:3b:00): 31, pid={pid}, Ch 00000021, intr 00000000. MMU Fault: ENGINE GRAPHICS "
            f"{client} faulted @ {address}. Fault is of type {kind}")
    return {"xid": 31, "index": None, "uuid": None, "pci_bus_id": "0000:3b:00", "text": text, "time": None,
            "source": "kernel_log"}


def _gpu(events):
    return judge(CHECKS["gpu"], {"torch": None, "xid_events": events}, Options())


def test_one_program_s_same_fault_run_after_run_is_the_job_s():
    events = [_xid31(1000 + n, f"0x7f{n}a_{n}{n}e4f000", client=f"GPCCLIENT_T1_{n}") for n in range(4)]
    assert verdict(_gpu(events)) == ("warn", "XID_ERROR", "job")


@pytest.mark.parametrize("events", [
    [_xid31(1000 + n, f"0x7f{n}a_0c{n}{n}1000") for n in range(3)],                         # addresses differ
    [_xid31(1000 + n, "0x7f5a_0c812000", kind=k) for n, k in enumerate(
        ("FAULT_PDE ACCESS_TYPE_VIRT_WRITE", "FAULT_PTE ACCESS_TYPE_VIRT_READ", "FAULT_PDE ACCESS_TYPE_VIRT_READ"))],
], ids=["different-addresses", "different-types"])
def test_processes_faulting_differently_on_one_gpu_still_suspect_it(events):
    assert verdict(_gpu(events)) == ("warn", "XID_ERROR", "host")


def test_faults_without_an_address_still_suspect_the_gpu():
    events = [{**_xid31(1000 + n, "x"), "text": f"NVRM: Xid (PCI:0000:3b:00): 31, pid={1000 + n}, Ch 00000021"}
              for n in range(3)]
    assert verdict(_gpu(events)) == ("warn", "XID_ERROR", "host")


def test_the_same_faults_explained_from_the_kernel_log_agree():
    lines = "".join(f"[31{n}0.5] {_xid31(2000 + n, f'0x7f{n}1_2{n}34e000')['text']}\n" for n in range(3))
    assert (explained(lines).name, *verdict(explained(lines))) == ("gpu", "warn", "XID_ERROR", "job")


# ------------------------------------------------------------------ the DRA driver's ComputeDomain plugin
UUID = "GPU-00000000-1111-2222-3333-444444444444"
CLIQUE = (f"I0101 10:00:00.000001       1 nvlib.go:243] identified fabric clique UUID/ID (device 0/{UUID}): "
          "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/7\n")


def test_a_gpu_s_clique_alone_is_read_and_not_assessed():
    r = explained(CLIQUE)
    assert (r.name, *verdict(r)) == ("gpu", "warn", "HEALTH_NOT_ASSESSED", "host")


@pytest.mark.parametrize("line", [
    f"E0101 10:00:00.1 1 main.go:1] error getting fabric information from one or more devices: NVLink fabric not "
    f"attached (device 2/{UUID}): state=2, refusing to start",
    f"Error: NVLink fabric registration error (device 0/{UUID}): status=ERROR_INSUFFICIENT_RESOURCES, refusing to start",
], ids=["in-progress", "registration-error"])
def test_a_gpu_the_plugin_finds_unregistered_is_the_host_s(line):
    r = explained(line + "\n")
    assert (r.name, *verdict(r)) == ("gpu", "fail", "NVLINK_DOWN", "host")


def test_the_legacy_no_clique_fallback_says_no_state():
    r = explained(f"I0101 10:00:00.1 1 nvlib.go:220] no-clique fallback: fabric not attached (device 0/{UUID})\n")
    assert (r.name, r.status) == ("explain", "skip")


# --------------------------------------------------------------------------------- perftest's port check
def test_perftest_s_port_check_on_a_named_adapter_is_its_port_state():
    r = explained("$ ib_write_bw -a -d mlx5_3 --report_gbits\n Port number 1 state is Down\n Couldn't set the link "
                  "layer\n Couldn't get context for the device\n")
    assert (r.name, *verdict(r)) == ("fabric", "fail", "FABRIC_PORT_DOWN", "host")
    assert "mlx5_3:1" in r.summary


def test_perftest_s_port_check_over_a_prompt_names_the_one_listed_adapter():
    r = explained("pod:/# ibdev2netdev\nmlx5_7 port 1 ==> net1 (Down)\npod:/# ib_read_lat &\npod:/#  Port number 1 "
                  "state is Init\n")
    assert (r.name, r.status, r.owner) == ("fabric", "fail", "host"), r.summary


def test_perftest_s_port_check_on_no_adapter_shown_is_not_read():
    r = explained("$ ib_write_bw 10.0.0.2\n Port number 1 state is Down\n")
    assert (r.name, r.status) == ("explain", "skip")
