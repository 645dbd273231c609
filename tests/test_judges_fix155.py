"""Issue 35, batches 155 and 158 (multi-node NCCL failures behind wrappers; RDMA port listings): the classes their
blind translations showed the judges or `verify explain` getting wrong.
- torch 2.4+'s `NCCL error: <its own source file>:<line>, NCCL version ... ncclSystemError ... Last error:` with
  nothing after it is a bare class of error: the job's, never a drain (FACTS.md);
- Open MPI's handler catching a signal (`[host:pid] *** Process received signal ***`) with no frame shown is the
  software the image ships crashing, never the node;
- torch's c10d store client losing its server (`Connection was likely closed. Did the remote server shutdown or
  crash?`) is this rank seeing another process go: the job's to read, never a drain;
- a traceback's `raise RuntimeError(f"NCCL error: {error_str}")` under a log record's head is the message's template,
  not the error: `verify explain` reads the error the program printed;
- `amd-smi`'s NIC report (AMD AI NICs) is read into the fabric facts: its RDMA devices' port states.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict
from verify.checks.nccl import barefail, casualty
from verify.explain import amdsmi
from verify.result import CheckResult

pytestmark = pytest.mark.unit

FIREWALL = "torch-2.6-nccl-2.22.3-multinode-ncclsystemerror-empty-last-error-firewall-only-ports-40000-40050-open"
SIGNAL = "nccl-2.26.2-two-hosts-alltoall-ras-query-during-init-rtptest1621-process-received-signal"
RAS = ("h100-128-gpu-pytorch-2.8-nccl-2.27.3-ras-verbose-status-poll-crash-incomplete-missing-process-garbled-"
       "missing-ranks-fixed-2.29.2")
VLLM = "vllm-ray-multinode-init-device-pynccl-unhandled-cuda-error-repeated-6x-fixed-by-removing-bad-instance-node"
AINIC = "amd-ainic-ionic-fw-25.05.4-amd-smi-rdma-device-rocep229s0-port-1-state-down-carrier-0-link-speed-0"

JOB = ("fail", "NCCL_FAILED", "job")
IMAGE = ("fail", "NCCL_FAILED", "image")

# FIREWALL's error as torch printed it
TORCH_WRAPPED = ("NCCL error: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, NCCL version 2.22.3 "
                 "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "
                 "Last error:")
# RAS's rank 101 line
STORE = ("[rank101]:[W703 01:01:05.364835151 TCPStore.cpp:138] [c10d] recvValueWithTimeout failed on SocketImpl(fd=90, "
         "addr=[cw-h100-220-057.dm1-compute-compute.tenant-slurm.svc.cluster.local]:43518, remote=[cw-h100-192-053.dm1-"
         "compute-compute.tenant-slurm.svc.cluster.local]:56789): Failed to recv, got 0 bytes. Connection was likely "
         "closed. Did the remote server shutdown or crash?")


def test_torch_s_wrapper_naming_its_own_source_line_with_an_empty_last_error_is_a_bare_class():
    assert barefail.bare(f"collective: {TORCH_WRAPPED}")
    assert nccl_verdict(backend="nccl", error=f"collective: {TORCH_WRAPPED}") == JOB
    assert replayed(FIREWALL) == {"nccl": JOB}
    assert verdict(explained(raw(FIREWALL))) == JOB
    # anything after `Last error:` is a cause the other rules read: not bare
    assert not barefail.bare(f"{TORCH_WRAPPED} socketStartConnect: Connect to 10.0.0.2<51423> failed : No route to host")


def test_a_signal_open_mpi_caught_with_no_frame_shown_is_the_image_s_software_never_the_node():
    assert nccl_verdict(backend="nccl", error="init: [rtptest1621:405884] *** Process received signal ***") == IMAGE
    assert replayed(SIGNAL) == {"nccl": IMAGE}
    text = ("rtptest1621:405884:407462 [0] NCCL INFO RAS client listening socket at ::1<28028>\n"
            "[rtptest1621:405884] *** Process received signal ***\n")
    assert verdict(explained(text)) == IMAGE
    # a backtrace under it (a library's frames) is not an unplaced crash: whose code it is, the frames say
    framed = "[h:1] *** Process received signal ***\n[h:1] [ 0] /usr/lib/libfoo.so.1(+0x1234)[0x7f]"
    assert nccl_verdict(backend="nccl", error=f"init: {framed}")[2] != "image"


def test_a_rank_that_lost_the_c10d_store_s_server_is_the_job_s_never_a_drain():
    assert nccl_verdict(backend="nccl", rank=101, error=f"collective: {STORE}") == JOB
    assert replayed(RAS)["nccl"] == JOB         # the SRE's image owner needs the RAS report: a known mismatch
    assert verdict(explained(STORE + "\nNCCL version 2.27.3 compiled with CUDA 12.9\n")) == JOB
    # a cause named beside it decides (a CUDA error of this rank's own, a WARN): not this rule
    result = CheckResult("nccl", "pass", "")
    assert casualty.store_verdict(f"{STORE} | CUDA error: an illegal memory access was encountered", "nccl",
                                  result) is None
    assert casualty.store_verdict(STORE, "nccl", result) is not None


def test_a_traceback_s_raise_under_a_log_head_is_the_template_not_the_error():
    r = explained(raw(VLLM))
    assert "{error_str}" not in r.summary
    assert "unhandled cuda error" in r.summary
    lines = ('(RayWorkerWrapper pid=11305) ERROR 08-27 05:12:18 worker_base.py:382]     raise RuntimeError(f"NCCL '
             'error: {error_str}")\n(RayWorkerWrapper pid=11305) ERROR 08-27 05:12:18 worker_base.py:382] RuntimeError: '
             'NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n')
    assert verdict(explained(lines)) == JOB       # FACTS.md: the bare class is the job's (the SRE's host: a mismatch)


def test_amd_smi_s_nic_report_gives_its_rdma_ports_states():
    text = raw(AINIC)
    assert amdsmi.detect(text)
    assert amdsmi.parse(text) == {"adapters": [{
        "name": "rocep229s0", "driver": None, "hca_type": None, "pci_device": None,
        "ports": [{"port": 1, "state": "DOWN", "phys_state": None, "rate_gbps": None, "width": None, "speed": None,
                   "link_layer": "Ethernet"}]}]}
    assert verdict(explained(text)) == ("fail", "FABRIC_PORT_DOWN", "host")
    # a port ACTIVE on the same report is no fault; a report with no RDMA device is not this kind
    active = text.replace("STATE: DOWN", "STATE: ACTIVE")
    assert amdsmi.parse(active)["adapters"][0]["ports"][0]["state"] == "ACTIVE"
    assert not amdsmi.detect(text.split("RDMA_DEVICES:")[0])
