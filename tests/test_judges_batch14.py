"""Issue 35's fourteenth and fifteenth corpus batches (translated blind from real output), fixed by class.

- NCCL's internal error (ncclInternalError, nccl-tests' `internal error - please report this issue to the NCCL
  developers`) is never evidence against the node: the job's where it switched on a feature NCCL ships off
  (NCCL_GIN_ENABLE, NCCL_COLLNET_ENABLE), else the image's NCCL or net plugin; a cause NCCL's log or the job's
  settings name comes first. Corpus: `p5-nccl-2.28.9-gin-over-aws-ofi-efa-rail-count-mismatch-internal-error` (GIN
  over EFA), `nccl-socket-ifname-eth2-absent-internal-error` (the job's interface, named first).
- CUDA error 100 (no CUDA-capable device is detected) is the process seeing no GPU: the job's device request or
  CUDA_VISIBLE_DEVICES (GPU_NOT_VISIBLE, job); CUDA error 101 (invalid device ordinal) a program asking for a GPU
  index it does not have (DEVICE_COUNT_MISMATCH, job). Corpus: `redn-trainer-hardcoded-cuda-visible-devices-cuda-100-
  no-device`, `torchtitan-ngpu-8-ranks-on-two-visible-gpus-cuda-101-invalid-device-ordinal`.
- Xid 137 is in the one catalog as NVIDIA's guide has it (tests/test_xid_catalog.py).

Sixteenth and seventeenth batches:
- A GPU the driver could not initialise (`RmInitAdapter failed! (step:status:line)`) is the host's, whatever NVML
  lists: its state needs a reset (NV_ERR_INVALID_STATE: a failed boot left it locked) or it never came up (a firmware
  or VBIOS boot that timed out). Where NVML lists no GPU, the kernel log's proven faults are the verdict, never a skip.
  Corpus: `gsp-wpr2-already-up-rminitadapter-failed-0x62-0x40-gpu6-minor-7-needs-reset`, `rtx3090-no-devices-were-
  found-gfw-boot-timeout-rminitadapter-0x62-0x65`.
- An uncorrectable ECC error is the root cause NVML's recovery action follows: the check's code names the ECC fault
  (ECC_UNCORRECTABLE, ROW_REMAP_FAILED, RETIREMENT_PENDING rank above GPU_RESET_REQUIRED). Corpus: `a100-80gb-pcie-x4-
  gpu2-hbm-dbe-xid48-171-63-94-154-new-row-after-reboot-engine-hangs`.
- NCCL's SHM transport failing to attach a peer's segment is never the node's: a segment of size 0 under a garbled
  name is a descriptor NCCL misread (the image's NCCL, NVIDIA/nccl#2190), a sized one a /dev/shm the ranks do not
  share (the job's: separate containers, or ranks on two machines with one hostname, vllm-project/vllm#18831). Corpus:
  `rtx6000ada-x8-nccl-2.28.9-shm-attach-size-0-cumem-host-numa-probe-divergence`.
- A job's torch watchdog timeout with no cause recorded is the job's (the rank that never joined); this verify's own
  hang stays the host's. Corpus: `gb200-nemotron4-15b-watchdog-allreduce-seqnum-5-timeout-tp-comm-overlap`.
- NCCL 2.19+ prints an IB completion's status by name and number (`status=IBV_WC_RETRY_EXC_ERR(12)`): `verify explain`
  reads it as the older `with error 12`. Corpus: `b200-2x8-ndr-nccl-2.29.7-retry-exc-err-12-all-rails-limited-member-
  default-pkey`.
"""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.judging import verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors, xidcatalog

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
GIN = CORPUS / "p5-nccl-2.28.9-gin-over-aws-ofi-efa-rail-count-mismatch-internal-error" / "facts" / "nccl.json"


def gin_facts(**env: str) -> dict:
    facts = json.loads(GIN.read_text())["facts"]
    facts["nccl_env"] = {"NCCL_DEBUG": "INFO", **env}
    return facts


def _without_rails(facts: dict) -> dict:
    rails = "Unexpected number of remote rails"
    facts["error"] = facts["error"].split(rails)[0].rstrip()
    facts["nccl_log"]["proof"] = [p for p in facts["nccl_log"].get("proof") or [] if rails not in p]
    facts["nccl_log"]["ofi_error"] = None
    return facts


@pytest.mark.parametrize("env, owner, rails", [({"NCCL_GIN_ENABLE": "1"}, "job", True),
                                               ({"NCCL_COLLNET_ENABLE": "1"}, "job", True),
                                               ({"NCCL_GIN_ENABLE": "0"}, "job", True), ({}, "job", True),
                                               ({"NCCL_GIN_ENABLE": "0"}, "image", False), ({}, "image", False)],
                         ids=["gin-on", "collnet-on", "gin-off", "nothing-switched-on", "gin-off-no-rails",
                              "nothing-no-rails"])
def test_nccl_s_internal_error_is_the_job_s_feature_or_the_image_s_nccl_never_the_node_s(env, owner, rails):
    """The real GIN-over-EFA failure, with and without the job's switch: never the host's (no drain). The job's
    switch is named first; without it, the peers' rail counts that disagree are the launch's (batch 292,
    tests/test_judges_batch292.py); with neither, NCCL's internal error is the image's NCCL or plugin."""
    facts = gin_facts(**env) if rails else _without_rails(gin_facts(**env))
    r = judge(CHECKS["nccl"], facts, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", owner)
    assert "internal error" in r.summary and (not env or env.get("NCCL_GIN_ENABLE") == "0"
                                              or next(iter(env)) in (r.remedy or ""))


def test_a_cause_nccl_s_log_names_comes_before_its_internal_error():
    """The job's NCCL_SOCKET_IFNAME naming an interface the host lacks ends in the same internal error: the
    interface is named first (the corpus entry's verdict)."""
    item = CORPUS / "nccl-socket-ifname-eth2-absent-internal-error"
    facts = json.loads((item / "facts" / "nccl.json").read_text())["facts"]
    expected = json.loads((item / "expected.json").read_text())["verdicts"]["nccl"]
    r = judge(CHECKS["nccl"], facts, Options())
    assert verdict(r) == (expected["status"], expected["code"], expected["owner"]) == ("fail", "NCCL_FAILED", "job")
    assert "internal error under" not in r.summary


@pytest.mark.parametrize("text, code", [
    ("RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at THCGeneral.cpp:50", "GPU_NOT_VISIBLE"),
    ("CUDA_ERROR_NO_DEVICE", "GPU_NOT_VISIBLE"),
    ("cudaErrorNoDevice", "GPU_NOT_VISIBLE"),
    ("RuntimeError: CUDA error: invalid device ordinal", "DEVICE_COUNT_MISMATCH"),
    ("CUDA_ERROR_INVALID_DEVICE", "DEVICE_COUNT_MISMATCH"),
])
def test_cuda_s_no_device_and_invalid_ordinal_are_the_job_s(text, code):
    decoded = cuda_errors.decode(text)
    assert decoded is not None and (decoded.code, decoded.owner) == (code, "job")


def test_a_bare_100_or_101_is_no_cuda_error():
    """`error 100` is as often an HTTP status or errno: only CUDA's own wording counts (as for 2, 214 and 220)."""
    assert cuda_errors.decode("HTTP error 101 switching protocols") is None
    assert cuda_errors.decode("Test failed with error 100 of 200") is None
    assert cuda_errors.decode("CUDA error: 100") is cuda_errors.NO_DEVICE


def gpu_facts(**facts) -> dict:
    return {"torch": None, **facts}


@pytest.mark.parametrize("line, code", [
    ("NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)", "GPU_RESET_REQUIRED"),
    ("NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)", "GPU_NOT_VISIBLE"),
    ("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0x56:1497)", "GPU_NOT_VISIBLE"),
], ids=["invalid-state", "timeout", "another-status"])
def test_a_gpu_the_driver_could_not_initialise_fails_the_host_even_with_no_gpu_listed(line, code):
    """nvidia-smi's `No devices were found` (NVML lists none) beside the driver's failed initialisation: a skip
    before, now the host's failure (the GPU is there; the job and the image have nothing to do with it)."""
    status = xidcatalog.rm_status(line)
    assert status is not None
    facts = gpu_facts(nvml_error="none", devices=[], driver_errors=[
        {"status": status[0], "code": status[1], "text": line, "time": None, "source": "kernel_log"}] * 3)
    r = judge(CHECKS["gpu"], facts, Options())
    assert verdict(r) == ("fail", code, "host") and r.summary.count("could not initialise") == 1   # once per GPU


def test_an_initialisation_failure_that_names_its_status_is_read_by_name_first():
    line = "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0x65:1497) GPU is lost [NV_ERR_GPU_IS_LOST] (0x0000000F)"
    assert xidcatalog.rm_status(line) == ("NV_ERR_GPU_IS_LOST", 0x0F)


def test_an_ecc_fault_is_named_before_the_recovery_action_it_causes():
    """Xid 48 (double-bit ECC) and Xid 154 asking for a reset on one GPU: the code is the ECC fault (the root
    cause), the reset is listed beside it; both the host's."""
    xids = [{"xid": 48, "index": 2, "uuid": None, "pci_bus_id": None, "text": "NVRM: Xid (PCI:0000:9c:00): 48, "
             "An uncorrectable double bit error", "time": None, "source": "kernel_log"},
            {"xid": 154, "index": 2, "uuid": None, "pci_bus_id": None, "text": "NVRM: Xid (PCI:0000:9c:00): 154, GPU "
             "recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "time": None,
             "source": "kernel_log"}]
    r = judge(CHECKS["gpu"], gpu_facts(xid_events=xids), Options())
    assert verdict(r) == ("fail", "ECC_UNCORRECTABLE", "host") and "GPU_RESET_REQUIRED" in r.summary


@pytest.mark.parametrize("status", ["status=IBV_WC_RETRY_EXC_ERR(12)", "error 12"], ids=["2.19+", "older"])
def test_an_ib_completion_error_is_read_in_both_of_nccl_s_wordings(status):
    from verify import explain as ex
    line = f"host:1:2 [0] NCCL WARN NET/IB: Got completion from peer 10.0.0.2<4242> with {status} vendor_err=129"
    r = ex.explain_text(line, "nccl.log", Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "host") and "status 12" in r.summary


WATCHDOG = ("all_reduce: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.")


def test_a_jobs_watchdog_timeout_that_shows_no_cause_is_never_the_node_s():
    """torch's watchdog in a job's own log (the GB200 recipe's corpus entry: a one-element all-reduce some rank never
    joined) names no host: nothing recorded shows the node at fault, and a node is drained only on evidence. The same
    hang in this verify's own run (its record says how the group formed) stays the host's: the tool runs one
    known all-reduce on every rank, so a hang there is the transport's."""
    job = judge(CHECKS["nccl"], {"backend": "nccl", "error": WATCHDOG}, Options())
    assert verdict(job) == ("fail", "NCCL_TIMEOUT", "job") and "never joined" in (job.remedy or "")
    own = judge(CHECKS["nccl"], {"backend": "nccl", "error": WATCHDOG, "mode": "local processes", "world_size": 8},
                Options())
    assert verdict(own) == ("fail", "NCCL_TIMEOUT", "host")


@pytest.mark.parametrize("warn, owner", [
    # NVIDIA/nccl#2190 (NCCL 2.28.9, eight RTX 6000 Ada, 252 GB of /dev/shm free): the garbled name and size 0
    ("misc/shmutils.cc:132 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- \u2592 (size 0), "
     "error: No such file or directory (2)", "image"),
    # vllm-project/vllm#18831 (pipeline parallel across two machines under Ray): a sized segment another host holds
    ("NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 192814336), error: No such file or "
     "directory (2)", "job"),
], ids=["size-0", "sized"])
def test_nccl_s_shared_memory_attach_failure_is_never_the_node_s(warn, owner):
    from verify import explain as ex
    text = f"host:1:1 [4] {warn}\nRuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    r = ex.explain_text(text, "nccl.log", Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", owner)
    facts = {"backend": "nccl", "error": f"all_reduce: {warn}"}
    assert verdict(judge(CHECKS["nccl"], facts, Options())) == ("fail", "NCCL_FAILED", owner)
