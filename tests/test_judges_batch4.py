# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's fourth corpus batch, fixed by class: a build without the GPU's architecture (CUDA's 'named symbol not
found' and its kin) is the image's, through the gpu check, the nccl check and `verify explain` alike (one catalog,
verify/shared/cuda_errors.py); NCCL's and torch's failure lines are failure evidence on their own; a memory
registration failing with ENOMEM is the memlock limit's (FACTS.md `memlock_error`); Xid events relayed by the k8s
device plugin and DCGM are judged by the one Xid catalog; the prolog reads the driver's NV_ERR_* status lines by the
catalog the gpu check uses. Each class has variants the corpus lacks, and each new host-owned verdict is checked
against real excerpts where the host is healthy (no false drain)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.judging import verdict
from tests.verify_handmade import gpu_facts
from verify import explain as ex
from verify.checks import fabric, gpu, nccl
from verify.options import Options
from verify.prolog import xid as xidlog
from verify.shared import cuda_errors
from verify.shared.xidcatalog import RM_STATUS

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"


def explained(text: str, name: str = "log.txt"):
    return ex.explain_text(text, name, Options())


# ------------------------------------------------------------------ a build without the GPU's architecture
ARCH_GAP_WORDS = [
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", "named symbol not found",
    "cudaErrorSymbolNotFound", "CUDA error: invalid device function", "cudaErrorInvalidDeviceFunction",
    "device kernel image is invalid",
]


@pytest.mark.parametrize("words", ARCH_GAP_WORDS)
def test_every_wording_of_an_arch_gap_decodes_to_the_image(words):
    decoded = cuda_errors.decode(words)
    assert decoded is not None and (decoded.code, decoded.owner) == ("ARCH_NOT_IN_BUILD", "image")


def test_a_bare_number_is_no_arch_gap():
    for text in ("HTTP error 500: Internal Server Error", "returned 98", "exit code 209"):
        assert cuda_errors.decode(text) is None, text


# NCCL 2.30's CUCHECK prints the number (`Cuda failure 500 '...'`); torch's DistBackendError quotes NCCL's last WARN
ARCH_GAP_LOGS = [
    "node7:1201:1350 [2] enqueue.cc:47 NCCL WARN Cuda failure 500 'named symbol not found'\n"
    "node7:1201:1350 [2] NCCL INFO enqueue.cc:1140 -> 1",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
    "Cuda failure 'no kernel image is available for execution on the device'",
    "[rank0]: RuntimeError: NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
    "gpu-3:88:88 [0] NCCL WARN Cuda failure 'invalid device function'",
]


@pytest.mark.parametrize("text", ARCH_GAP_LOGS)
def test_an_nccl_failure_on_an_arch_gap_is_the_images_through_explain(text):
    r = explained(text)
    assert r.name == "nccl" and verdict(r) == ("fail", "NCCL_FAILED", "image"), r.summary
    assert "architecture" in r.summary and r.remedy and "NVCC_GENCODE" in r.remedy


def test_an_nccl_failure_on_an_arch_gap_is_the_images_through_facts_and_other_cuda_errors_keep_their_owner():
    gap = {"backend": "nccl", "error": "all_reduce: NCCL WARN Cuda failure 'invalid device function'"}
    assert verdict(nccl.judge(gap, Options())) == ("fail", "NCCL_FAILED", "image")
    # the same catalog answers 802 as the gpu check does: the host's fabric manager
    fm = {"backend": "nccl", "error": "init: NCCL WARN Cuda failure 'system not yet initialized'"}
    r = nccl.judge(fm, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "host") and "fabric manager" in r.summary
    # a CUDA error the catalog does not know keeps the nccl check's own owner (as before); a kernel's fault is the
    # job's (tests/test_judges_batch5.py)
    other = {"backend": "nccl", "error": "all_reduce: NCCL WARN Cuda failure 'invalid resource handle'"}
    assert verdict(nccl.judge(other, Options())) == ("fail", "NCCL_FAILED", "host")


def test_a_gpu_kernel_failing_on_an_arch_gap_is_the_images_in_the_gpu_check():
    facts = gpu_facts(1)
    facts["kernels"][0]["error"] = "CUDA error: no kernel image is available for execution on the device"
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "ARCH_NOT_IN_BUILD", "image")


# ------------------------------------------------------------------ NCCL's failure lines on their own
FAILURE_LINES = [
    "gcn75:2336636:2336906 [0] enqueue.cc:58 NCCL WARN Cuda failure 'out of memory'",
    "RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there "
    "was a network error, NCCL version 2.21.5\nncclRemoteError: A call failed possibly due to a network error or a "
    "remote process exiting prematurely.",
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
    "ncclInternalError: Internal check failed.",
    "Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'",
]


@pytest.mark.parametrize("text", FAILURE_LINES)
def test_an_nccl_failure_line_alone_is_judged_never_nothing_to_judge(text):
    r = explained(text)
    assert r.name == "nccl" and r.status == "fail" and r.code != "FACTS_INCOMPLETE", (r.code, r.summary)


# Healthy hosts whose excerpt shows what is the host's fault in every other case, the cause being in prose only
HOST_BY_THE_EXCERPT = {
    "transformer-ddp-across-nodes-nccl-2.18.6-unhandled-system-error-socketstartconnect-192.168.19.14-no-route-to-host-fixed-by-socket-ifname-em4-job":
        "`No route to host` to a peer's routable address is the way between the nodes by the excerpt (connect.py, as "
        "the sglang and llamafactory entries); the NCCL_SOCKET_IFNAME=em4 fix is the poster's later comment (batch 275)",
    "v100-32gb-ddp-nccl-2.21.5-ncclremoteerror-socketprogressopt-recv-connection-reset-by-peer-other-nodes-ib-trouble-this-node-not-named-job":
        "an ECONNRESET on NCCL's socket is a path that drops by the excerpt (peergone.py; the same report's other "
        "excerpt is translated host); the IB trouble of other nodes is the poster's prose (batch 275)",
    "k8s-pods-nccl-socketstartconnect-10.45.234.83-software-caused-connection-abort-nine-runs-in-ten-nc-and-ping-fine-no-cause-job":
        "a connect to a routable address the stack aborted is the way between the nodes by the excerpt (connect.py); "
        "that nine runs in ten pass is the poster's prose (batch 275)",
    "uq-bunya-slurm-deepspeed-c10d-store-bun003-resolves-to-admin-network-errno-113-no-route-fixed-by-fqdn-master-addr-job":
        "the store's client answered `No route to host` by a routable name (the way between the nodes by the "
        "excerpt); the admin-network resolution is the poster's prose (batch 275)",
    "roce-v2-nccl-ib-timeout-1-retry-cnt-0-beside-ib-write-bw-flow-got-completion-error-12-opcode-0-vendor-err-129-job":
        "the excerpt is NCCL's completion-error line alone (the link's by the excerpt); the job's NCCL_IB_TIMEOUT=1 and "
        "NCCL_IB_RETRY_CNT=0 that make it the job's are in its facts (batch 264's rule), not in the text",
    "h100-x8-535.154.05-collect-env-torch-2.8-nightly-cu126-nccl-2.26.2-nvls-cc-254-cuda-failure-1-invalid-argument-on-12.2-driver":
        "NVLS set-up refused as an invalid argument: NVIDIA's answer in nccl#976, #1338 and #1488 is the fabric "
        "manager restarted without a GPU reset (the host's; a reboot cures it); that NCCL 2.26.5 cured this one is "
        "the thread's prose (batch 152, fix150)",
    "gh200-2x1-slingshot-ofi-nccl-2.29.2-wrong-96-32-at-1mib-out-of-bounds-4-failed-self-built-libfabric": "wrong data "
        "across two nodes is the transport's by the excerpt; the self-built libfabric behind it is the thread's prose",
    "roce-bond-ibv-devinfo-v-gid-1-link-local-v2-modify-qp-timeout-gid-3-works": "ibv_modify_qp timing out with no "
        "GID index the job pinned in the excerpt is a peer the fabric cannot reach (the L40 irdma entry); the job's "
        "NCCL_IB_GID_INDEX is in the poster's prose (its facts carry it and are judged the job's)",
    "cx7-roce-nccl-internal-net-ib-local-access-violation-wq-error-peer-status-9-vendor-138-ngc-plugin-works": "an access violation on the responder and remote invalid request at the requester mirror a local "
        "protection error (status 4, vendor 0x81: ACS on the GPUDirect path, the host's in three other entries); that "
        "the NGC image's plugin works on the same nodes is the poster's prose",
    "hgx-7-plus-nodes-roce-nccl-2.27-ibv-modify-qp-110-init-to-rtr-gid-index-3-rail-only-fabric-cross-nic-0-fixes": "ibv_modify_qp INIT to RTR timing out is a peer the RoCE fabric cannot reach (the host's, as in the L40 irdma "
        "entry); that the fabric is rail-only and NCCL_CROSS_NIC=0 cures it is the maintainer's prose",
    "roce-nccl-2.30.4-comm-shrink-retry-exc-err-12-stale-vnic-fixed-2.30.7": "IBV_WC_RETRY_EXC_ERR(12) on every rank: the "
        "link's, as in the corpus's six other completion errors; the NCCL bug behind it is in the maintainers' prose",
    "roce-ib-completion-error-12-vendor-129-at-start-default-gid-across-switches-gid-index-3": "the same completion "
        "error; that NCCL_IB_GID_INDEX=3 cured it is another user's report in the thread",
    "v100-sxm2-32gb-x8-nvlink-all-gather-4gib-out-of-bounds-2-failed-maintainer-fixed-in-master": "wrong data on "
        "NVLink GPUs is the transport's by the excerpt; that it is a software bug at the 2^32-byte size is the "
        "maintainer's prose (`fixed it in master`)",
    # eighty-first batch (tests/test_judges_fix81.py)
    "connectx-4-mt4115-fw-12.26-roce-nccl-2.20.3-local-access-violation-wq-error-status-5-vendor-249-older-nccl-works":
        "flushed work requests beside a local access violation event are the adapter's path (the ConnectX-7 entry); "
        "that every older NCCL works on the same hosts is the poster's prose",
    # hundred-and-third batch (tests/test_judges_fix103.py)
    "h100-2x8-tp16-nccl-2.21.5-mlx5-ib0-qp-local-access-violation-send-status-4-vendor-83-sporadic-fatal-in-ncclibtest":
        "a send's local protection error (status 4) beside the QP's access violation is the GPUDirect path's, as in "
        "the four vendor-81 entries; that it happens now and then in a job fine 99% of the time is the poster's prose",
    # hundred-and-twenty-eighth batch (fix131, tests/test_judges_fix131.py)
    "h100-2x8-nccl-2.25.1-alltoall-perf-mpi-mlx5-1-async-fatal-event-qp-invalid-request-local-wq-error-tcp-also-fails":
        "a QP's fatal async event (`invalid request local work queue error`) is the adapter path's, as the access-"
        "violation entries; that the same two nodes fail over TCP as well is the linked issue's prose",
    # two-hundred-and-fifth batch (fix205, tests/test_judges_fix205.py)
    "b200-x8-fabric-manager-580.82.07-transient-7s-multicast-team-stall-cumulticastbindmem-802-on-three-ranks-next-"
    "attempts-clean-retry-in-library": "cuMulticastBindMem's 802 is the fabric manager not ready, the host's by the "
        "excerpt; that it was one ~7 s stall the fabric manager completed and the retries ran clean is the authors' prose",
    # two-hundred-and-twenty-eighth batch (the lead's review)
    "aws-ci-runner-torch-nightly-nccl-init-cc-416-cudamempoolcreate-operation-not-supported-two-ranks-image": "CUDA's "
        "`operation not supported` at NCCL's init is the node's (a vGPU without unified memory answers it so: "
        "h100-vmware-vgpu-x2-...); that the nightly's NCCL now calls cudaMemPoolCreate is the maintainer's prose",
    "two-ranks-two-ib-rails-16-channels-net-ib-0-and-1-silent-hang-no-warn-eu-stack-nccllocalopappend-proxy-op-pool-deadlock-image":
        "a hang with no error is the default's (host) on the facts road, and the excerpt's IB connections without "
        "GPUDirect warn (no drain); the stacks inside NCCL's own code that make it the image's have no field (batch 238)",
    "gh200-120gb-4x4-olivia-slingshot-nccl-2.29.2-int8-allreduce-wrong-2m-to-64m-without-hpe-cxi-env-ll128-gdr-corruption-job-config":
        "wrong data across nodes is the transport's by the excerpt; the site's missing Slingshot settings (FI_CXI_*) "
        "that make it the job's are the page's prose (batch 248)",
    # two-hundred-and-ninety-fourth batch
    "v100-2node-cx5-roce-mlx5-bond-0-nccl-2.8.3-completion-error-12-default-gid-0-fixed-by-gid-index-3-job":
        "a completion error 12 (retries exhausted) on an active port is the link's by the excerpt; that NCCL took GID 0 "
        "and NCCL_IB_GID_INDEX=3 fixed it is the poster's later report",
}


def test_healthy_hosts_of_the_corpus_whose_nccl_failed_are_not_drained():
    """No false drain: every real NCCL failure in the corpus where the host is healthy (the job's or the image's),
    through its facts and its raw excerpt, names no host (HOST_BY_THE_EXCERPT: each with why)."""
    checked = 0
    for item in sorted(p for p in CORPUS.iterdir() if (p / "expected.json").is_file()):
        expected = json.loads((item / "expected.json").read_text())
        want = expected["verdicts"].get("nccl")
        if not want or want["owner"] == "host" or want["status"] != "fail" or not (item / "raw.txt").is_file():
            continue
        if item.name in HOST_BY_THE_EXCERPT:
            continue
        r = ex.explain(str(item / "raw.txt"), Options())
        assert r.owner != "host", (item.name, verdict(r))
        checked += 1
    assert checked >= 6


# ------------------------------------------------------------------ memory registration out of locked memory
ENOMEM_LINES = [
    # UCX's own wording (openucx/ucx#6264's title), libfabric's (ofiwg/libfabric#6437), NCCL's dma-buf registration
    "[1643394930.9] [cirrus3:1292923:0] ib_md.c:309 UCX ERROR ibv_reg_mr(address=0x7f56f0f20ba0, length=1048576, "
    "access=0xf) failed: Cannot allocate memory",
    "fi_mr_reg failed, ret is:-12, Cannot allocate memory",
    "node1:77:90 [0] misc/ibvwrap.cc:239 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory",
]


@pytest.mark.parametrize("text", ENOMEM_LINES)
def test_a_registration_out_of_memory_is_the_memlock_limit_even_unread(text):
    r = explained(text)
    assert verdict(r) == ("fail", "FABRIC_MEMLOCK_LOW", "host"), r.summary


def test_the_owner_follows_where_it_was_read_and_other_errnos_are_no_memlock_evidence():
    line = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory"
    assert verdict(fabric.judge({"memlock_error": line, "uverbs": ["uverbs0"], "adapters": []}, Options()))[1:] == \
        ("FABRIC_MEMLOCK_LOW", "job")
    # unlimited: the limit is not what ran out; the limit, sound, is what the fabric verdict rests on (the failed
    # call is the nccl check's to judge: the job's resources; fix91, 700-nodes-nccl-2.20.3-alltoall-...)
    unlimited = fabric.judge({"memlock_error": line, "memlock": "unlimited"}, Options())
    assert unlimited.status == "pass" and "not the limit's" in unlimited.summary
    # EFAULT (a GPU buffer without peer memory) is not the memlock's
    fault = "misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr failed with error Bad address"
    assert explained(fault).code != "FABRIC_MEMLOCK_LOW"
    # the nccl check reads the same class in its failure, with the same owner rule
    failed = {"backend": "nccl", "error": f"all_reduce: {line}"}
    # (mendf: the limit is the fabric check's finding, the collective fails under its own code)
    assert verdict(nccl.judge(failed, Options())) == ("fail", "NCCL_FAILED", "host")
    assert verdict(nccl.judge({**failed, "uverbs": ["uverbs0"]}, Options())) == ("fail", "NCCL_FAILED", "job")


# ------------------------------------------------------------------ Xid events relayed by the device plugin, DCGM
UUID = "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8"


def test_the_device_plugins_older_wording_of_an_application_xid_drains_no_host():
    """NVIDIA/k8s-device-plugin#189 (real; the host healthy): the plugin marks the GPU unhealthy on Xid 69, a
    graphics-engine class error the catalog files under the application's faults."""
    text = f"2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device={UUID}, the device will go unhealthy.\n" \
           f"2020/08/10 19:09:42 'nvidia.com/gpu' device marked unhealthy: {UUID}"
    r = explained(text)
    assert verdict(r) == ("warn", "XID_ERROR", "job") and UUID in r.summary


@pytest.mark.parametrize("text,expected", [
    (f"I0101 00:00:01.000000       1 health.go:185] XidCriticalError: Xid=79 on Device={UUID}; marking device as "
     "unhealthy.", ("fail", "GPU_LOST", "host")),
    # the NVML event as the plugin dumps it, without its XidCriticalError line (EventType 8: an Xid critical error)
    ("I0809 13:32:51.873532       1 health.go:159] Processing event {Device:{Handle:0x7e590d4986e8} EventType:8 "
     "EventData:48 GpuInstanceId:4294967295 ComputeInstanceId:4294967295}", ("fail", "ECC_UNCORRECTABLE", "host")),
    # DCGM_FR_XID_ERROR's message (NVIDIA/NVSentinel#1357): the kernel called that 145 Nonfatal; DCGM says no severity
    ("Detected XID 145 for GPU 0 Please consult the documentation for details of this XID.", ("warn", "XID_ERROR", "host")),
    ("Detected XID 45 for GPU 3", ("warn", "XID_ERROR", "job")),
])
def test_relayed_xids_are_judged_by_the_one_catalog(text, expected):
    r = explained(text)
    assert r.name == "gpu" and verdict(r) == expected, r.summary


def test_a_relayed_event_and_its_nvml_dump_count_once():
    text = ("I1 health.go:159] Processing event {Device:{Handle:0x1} EventType:8 EventData:94 GpuInstanceId:0}\n"
            f"I1 health.go:185] XidCriticalError: Xid=94 on Device={UUID}; marking device as unhealthy.")
    events = ex.xidrelay.parse(text)["xid_events"]
    assert [(e["xid"], e["uuid"], e["source"]) for e in events] == [(94, UUID, "nvml")]


# ------------------------------------------------------------------ the prolog reads NV_ERR_* by the same catalog
RESET = ("[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
         "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874")
LOST = "[ 812.5] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0x65:1497) GPU is lost [NV_ERR_GPU_IS_LOST] (0x0000000F)"


@pytest.mark.parametrize("line", [RESET, LOST, RESET.replace("Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)",
                                                               "status=0x00000062")])
def test_the_prolog_drains_on_a_status_the_gpu_check_fails(line):
    found = xidlog.parse([line])
    assert [f.kind for f in found] == ["status"] and found[0].action == xidlog.DRAIN
    drained = xidlog.judge(found)
    assert drained is not None and drained[0] == "XID_HISTORY" and "NV_ERR_" in drained[1]
    # one answer to one question: the gpu check fails the same line, owner host
    facts: dict[str, Any] = ex.kernel.parse(line)
    assert facts["xid_events"] == [] and gpu.judge({"devices": None, **facts}, Options()).status == "fail"


def test_a_status_answering_one_caller_drains_nothing():
    """WayfireWM/wayfire#3018 (real; the host healthy): an application out of VA space."""
    oom = ("[227646.165951] NVRM: nvAssertOkFailedNoLog: Assertion failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
           "returned from pReuseMappingDb->pMapCb(pReuseMappingDb->pGlobalCtx, pAllocCtx, range, cachingFlags, &token, "
           "_reusemappingdbAddMappingCallback) @ mapping_reuse.c:273")
    assert xidlog.parse([oom]) == [] and xidlog.judge(xidlog.parse([oom])) is None
    assert set(RM_STATUS) == {"NV_ERR_RESET_REQUIRED", "NV_ERR_GPU_IS_LOST", "NV_ERR_FABRIC_MANAGER_NOT_PRESENT"}


def test_an_arch_gap_explained_alone_is_not_worded_as_a_refusal_to_initialise():
    # torch's own line, explained alone, lands in the facts as CUDA's answer; the GPU and the driver are fine
    r = ex.explain_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
                        "log.txt", Options())
    assert verdict(r) == ("fail", "ARCH_NOT_IN_BUILD", "image")
    assert "cannot run this build's kernels" in r.summary and "does not initialise" not in r.summary
