"""Issue 35's ninety-first corpus batch (GPUDirect RDMA plumbing, memlock), fixed by class:
- an ENOMEM from a call that pins memory with the limit read as unlimited is no memlock fault, on either road: the
  job's per-process adapter resources (700-nodes-nccl-2.20.3-alltoall-ibv-create-cq-enomem-...); explain reads the
  limit a command line sets for the program it chains (`ulimit -l unlimited && ./alltoall_perf`);
- the EFA driver's `REG_MR ... comp_status 1` (a resource allocation failure after pinning): the job's registrations
  filled the device, not memlock, not the device (efa-64-rank-all-to-all-aws-ofi-nccl-register-memory-enomem-...);
  ALLOC_PD refused stays the device's (efa-0-dmesg-alloc-pd-comp-status-1-...);
- `ibv_reg_dmabuf_mr ... Operation not supported`: the image's NCCL not falling back from DMA-BUF
  (two-nodes-nccl-2.13-ibv-reg-dmabuf-mr-operation-not-supported-...);
- the peer-memory module: `peermem` true alone passes (gpud-lsmod-peermem-...), false on a kernel below 5.12 warns
  GDR off (rhel7.8-ofed-5.0-modprobe-nv-peer-mem-unknown-symbol-...), false with the kernel unknown decides nothing;
  `verify explain` reads lsmod, modprobe's refusal and the kernel's symbol lines."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def _fabric(**facts) -> tuple:
    return verdict(judge(CHECKS["fabric"], facts, Options()))


# ------------------------------------------------------------------ ENOMEM with the limit unlimited
# 700-nodes-nccl-2.20.3-alltoall-ibv-create-cq-enomem-with-ulimit-l-unlimited-allreduce-fine-job-scale
CQ_ENOMEM = "misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory"
ALLTOALL = ("mpirun \\\n-x NCCL_IB_GID_INDEX=3 \\\nbash -c 'ulimit -l unlimited && ulimit -n 1048576 && "
            "./alltoall_perf -b 1 -e 8 -f 2 -g 1 -n 10'\n" + CQ_ENOMEM + "\n")


def test_an_enomem_beside_an_unlimited_limit_is_the_job_s_and_no_memlock_fault():
    assert nccl_verdict(error=f"alltoall: {CQ_ENOMEM}", memlock_bytes="unlimited") == ("fail", "NCCL_FAILED", "job")
    assert _fabric(memlock="unlimited", memlock_error=CQ_ENOMEM.split("WARN ")[1]) == ("pass", None, None)


def test_the_same_enomem_with_the_limit_unknown_or_low_stays_memlock():
    # mendf: the limit is the fabric check's finding; the nccl check fails its collective with the limit's owner
    assert nccl_verdict(error=f"alltoall: {CQ_ENOMEM}") == ("fail", "NCCL_FAILED", "host")
    assert _fabric(memlock=65536, memlock_error=CQ_ENOMEM)[:2] == ("fail", "FABRIC_MEMLOCK_LOW")
    assert _fabric(memlock_error=CQ_ENOMEM)[:2] == ("fail", "FABRIC_MEMLOCK_LOW")


def test_explain_reads_the_limit_the_command_line_chains_and_drains_nothing():
    r = explained(ALLTOALL)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


def test_a_limit_set_with_a_semicolon_proves_nothing():
    r = explained(ALLTOALL.replace("ulimit -l unlimited &&", "ulimit -l unlimited;"))
    assert verdict(r)[1] == "FABRIC_MEMLOCK_LOW", r.summary


# ------------------------------------------------------------------ EFA's device refusing a registration
# efa-64-rank-all-to-all-aws-ofi-nccl-register-memory-enomem-efa-0-reg-mr-comp-status-1-device-resources-not-memlock
OFI = ("ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory (type = 1) for "
       "device 0. RC: 12, Error: Cannot allocate memory\n")
REG_MR = ("[1038619.687627] infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12\n"
          "[1038619.695161] infiniband efa_0: Failed to register mr [-12]\n")


def test_efa_refusing_a_registration_after_pinning_is_the_job_s_not_memlock():
    r = explained(OFI + REG_MR)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job"), r.summary


def test_the_registration_enomem_alone_stays_memlock():
    assert verdict(explained(OFI))[1] == "FABRIC_MEMLOCK_LOW"


def test_a_protection_domain_refused_stays_the_device_s():
    # efa-0-dmesg-alloc-pd-comp-status-1-err-12-ofi-couldnt-open-av-einval-two-node-message-transfer-hang-efa-1.5
    pd = REG_MR.replace("REG_MR (opcode 7)", "ALLOC_PD (opcode 14)")
    assert nccl_verdict(error="init: NET/OFI Couldn't open AV. RC: -22", nccl_log={"proof": [pd.split("] ")[1].strip()]}) \
        == ("fail", "NCCL_FAILED", "host")


# ------------------------------------------------------------------ DMA-BUF registration not supported
# two-nodes-nccl-2.13-ibv-reg-dmabuf-mr-operation-not-supported-no-fallback-to-peermem-2.11-works
DMABUF = "misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported"


def test_dma_buf_not_supported_by_the_node_is_the_image_s_nccl_on_both_roads():
    assert nccl_verdict(error=f"init: {DMABUF}") == ("fail", "NCCL_FAILED", "image")
    assert verdict(explained(DMABUF + "\n")) == ("fail", "NCCL_FAILED", "image")


# ------------------------------------------------------------------ the peer-memory module
# gpud-lsmod-peermem-nvidia-peermem-loaded-ib-core-uses-it-fabric-manager-535-161-08-active-healthy
LSMOD = ("lsmod_peermem:\n  raw: |-\n    nvidia_peermem         16384  0\n    ib_core               434176  9 "
         "rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm\n")
# rhel7.8-ofed-5.0-modprobe-nv-peer-mem-unknown-symbol-ib-register-peer-memory-client-gdr-off
MODPROBE = ("[root@n120 ~]# modprobe -v nv_peer_mem\n"
            "insmod /lib/modules/3.10.0-1127.19.1.el7.x86_64/extra/nv_peer_mem.ko\n"
            "modprobe: ERROR: could not insert 'nv_peer_mem': Unknown symbol in module, or unknown parameter (see dmesg)\n"
            "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)\n")


def test_peer_memory_loaded_alone_passes_saying_what_was_not_read():
    assert _fabric(peermem=True) == ("pass", None, None)
    r = explained(LSMOD, "gpud.yaml")
    assert (r.name, *verdict(r)) == ("fabric", "pass", None, None) and "not assessed" in r.summary


def test_peer_memory_refused_on_a_kernel_without_dma_buf_warns_gdr_off():
    assert _fabric(peermem=False, kernel="3.10.0-1127.19.1.el7.x86_64") == ("warn", "FABRIC_GDR_OFF", "host")
    r = explained(MODPROBE, "modprobe.txt")
    assert (r.name, *verdict(r)) == ("fabric", "warn", "FABRIC_GDR_OFF", "host"), r.summary


def test_peer_memory_absent_where_dma_buf_may_carry_it_decides_nothing():
    # ubuntu-14.04-nv-peer-mem-1.0-1-dkms-disagrees-about-version-... and gb10-dgx-spark-...: no kernel shown
    assert _fabric(peermem=False) == ("skip", "FACTS_INCOMPLETE", None)
    assert _fabric(peermem=False, kernel="6.8.0-45-generic") == ("skip", "FACTS_INCOMPLETE", None)
    r = explained(MODPROBE.replace("insmod /lib/modules/3.10.0-1127.19.1.el7.x86_64/extra/nv_peer_mem.ko\n", ""))
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None), r.summary


def test_a_whole_lsmod_without_the_module_reads_it_not_loaded():
    from verify.explain import peermem
    assert peermem.parse("Module                  Size  Used by\nmlx5_ib  368640  0\n") == {"peermem": False}
    assert peermem.parse(LSMOD)["peermem"] is True


def test_modprobe_finding_no_module_for_an_old_kernel_reads_not_loaded_with_that_kernel():
    from verify.explain import peermem
    text = "modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/4.18.0-305.el8.x86_64\n"
    assert peermem.parse(text) == {"peermem": False, "kernel": "4.18.0-305.el8.x86_64"}
    assert verdict(explained(text)) == ("warn", "FABRIC_GDR_OFF", "host")
    # the benign taint notice of an out-of-tree module is no refusal
    assert not peermem.detect("nvidia_peermem: loading out-of-tree module taints kernel.\n")
