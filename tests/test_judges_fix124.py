"""Issue 35, batch 124 (NVSwitch systems, the first entries recording `GpuFacts.fabric_manager`): the classes its
blind translations showed the judges and `verify explain` getting wrong.
- The fabric manager's own failure line with no service state shown (its log quoted alone, a supervisor other than
  systemd: Talos's extension) is the fabric manager stopped: it exits on a failure of its start (its guide's default
  FM_STAY_RESIDENT_ON_FAILURES=0). On a node with NVSwitches: NVLINK_DOWN, the host's; where it found none
  (`NV_WARN_NOTHING_TO_DO`), by design; where that is not shown, said and not judged; running, never a fault.
- Its lines as its log file prints them (`[ERROR] ...`, no journal prefix) or a shipper relays them (`<node ip>: `)
  are read by `verify explain`; a failure of its configuration stage shows the node's own switches (it gets there
  only after the NVSwitch driver listed them).
- A segmentation fault said to be in NCCL in words, with no frame printed, is NCCL's crash: the image's.
- NVSHMEM's CUDA check line (`[<file>:<line>] cuda failed with <error>`) is a running program's CUDA error.
Real lines are quoted from corpus entries (by slug) and public threads (by URL)."""
from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT
from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.checks.nccl.crash import nccl_crash
from verify.explain import cuda, fmstatus
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
TALOS = "h200x8-hpe-cray-xd670-talos-fabric-manager-extension-crash-loop-fabric-node-config-file-invalid-value"
EKS = "h100-b200-eks-al2023-cloud-init-starts-fabric-manager-before-local-fm-ready-config-error-type-8"
TRTLLM = "gb200-nvl72-trtllm-nvml-invalid-argument-links-18-35-mnnvl-rejected-nvshmem-illegal-memory-access"
# https://github.com/NVIDIA/gpu-operator/issues/610 (two A40s on an NVLink bridge, no NVSwitch: healthy), the fabric
# manager's line quoted without the journal's prefix
NOTHING_TO_DO = ("[ERROR] request to query NVSwitch device information from NVSwitch driver failed with error:WARNING "
                 "Nothing to do [NV_WARN_NOTHING_TO_DO]\n")


def gpu(**facts):
    return judge(CHECKS["gpu"], {"torch": None, "devices": None, **facts}, Options(), source="gpu.json")


def _expected(slug: str) -> tuple:
    v = json.loads((CORPUS / slug / "expected.json").read_text())["verdicts"]["gpu"]
    return v["status"], v["code"], v["owner"]


@pytest.mark.parametrize("slug", [TALOS, EKS])
def test_a_fabric_manager_failure_line_with_no_service_state_on_an_nvswitch_node_is_the_host_s(slug):
    """`fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value` (Talos, no systemd) and
    `[ERROR] not all local fabric manager instances finished their configuration` (cloud-init's early start): `state`
    null, `error` its line, `nvswitches` true: the fabric manager stopped on an NVSwitch node."""
    facts = json.loads((CORPUS / slug / "facts" / "gpu.json").read_text())["facts"]
    assert facts["fabric_manager"]["state"] is None and facts["fabric_manager"]["error"]
    r = gpu(**facts)
    assert verdict(r) == _expected(slug) == ("fail", "NVLINK_DOWN", "host")
    assert "its service state is not shown" in r.summary and facts["fabric_manager"]["error"] in r.summary


def test_no_false_drain_from_a_fabric_manager_line_without_state():
    """The same shape where the node has no NVSwitch (gpu-operator#610's `NV_WARN_NOTHING_TO_DO`) is by design;
    where switches are not shown it is said, not judged; a running service beside an old failure line is no fault."""
    manager = fmstatus.parse(NOTHING_TO_DO)["fabric_manager"]
    assert manager["state"] is None and manager["nvswitches"] is False and "NV_WARN_NOTHING_TO_DO" in manager["error"]
    r = explained(NOTHING_TO_DO)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None) and any("by design" in d for d in r.details)
    r = gpu(fabric_manager={"error": "fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value"})
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None) and any("not judged" in d for d in r.details)
    r = gpu(fabric_manager={"state": "active", "error": "fabric manager config file item: FABRIC_NODE_CONFIG_FILE has "
                            "an invalid value", "nvswitches": True})
    assert r.status == "skip" and r.code != "NVLINK_DOWN"


def test_the_fabric_manager_s_bare_log_lines_are_read_and_its_config_stage_failure_shows_switches():
    """EKS's three `[ERROR]` lines (no journal prefix): the first is its error, and a configuration that failed shows
    the switches it was configuring: the explain road gives the facts road's verdict."""
    raw = (CORPUS / EKS / "raw.txt").read_text()
    assert fmstatus.detect(raw)
    assert fmstatus.parse(raw)["fabric_manager"] == {
        "state": None, "result": None, "nvswitches": True,
        "error": "not all local fabric manager instances finished their configuration"}
    assert verdict(explained(raw)) == _expected(EKS)


def test_a_shipper_s_relayed_config_error_is_read_but_shows_no_switch():
    """Talos's `<node ip>: fabric manager config file item: ...`: read from the fabric manager's own words; its config
    is read before it asks for switches, so whether the node has any is not shown: not judged, never a pass."""
    raw = (CORPUS / TALOS / "raw.txt").read_text()
    manager = fmstatus.parse(raw)["fabric_manager"]
    assert manager["error"] == "fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value"
    assert manager["state"] is None and manager["nvswitches"] is None
    assert verdict(explained(raw)) == ("skip", "FACTS_INCOMPLETE", None)


@pytest.mark.parametrize("text", [
    "Jan 05 14:44:41 node systemd[1]: Failed to start NVIDIA fabric manager service.\n",     # systemd's, not its own
    "[ERROR] failed to open /dev/infiniband/uverbs0\n",                                       # another program's [ERROR]
    "The fabric manager must run on HGX systems; see its guide.\n",                           # prose, no failure
    "After the upgrade the fabric manager failed to start on two nodes.\n",                   # a sentence about it
])
def test_lines_that_are_not_the_fabric_manager_s_own_failure_are_no_error(text):
    assert fmstatus._error(text) is None


def test_nvshmem_s_cuda_check_line_is_a_running_program_s_cuda_error():
    """gb200-nvl72-trtllm-...: `[.../src/host/coll/barrier/barrier.cpp:21] cuda failed with an illegal memory access
    wa` (cut in the stored copy) is read as its translation records it, and judged alike (the kernel's fault, never
    the host's); the words in a sentence are not."""
    raw = (CORPUS / TRTLLM / "raw.txt").read_text()
    facts = json.loads((CORPUS / TRTLLM / "facts" / "gpu.json").read_text())["facts"]
    assert cuda.runtime_errors(raw) == [{"index": None, "text": facts["cuda_errors"][0]["text"]}]
    assert verdict(explained(raw)) == verdict(gpu(**facts)) == ("warn", "CUDA_KERNEL_FAULT", "job")
    assert not cuda.runtime_errors("the barrier's cuda failed with an illegal memory access was encountered\n")


def test_a_segfault_said_in_nccl_s_name_is_the_image_s_crash_never_the_host_s():
    """gb200-nvl72-44-ranks-...: `init: SIGSEGV in NCCL MNNVL clique enrollment at world_size>=44 on GB200 NVL72`
    (NVIDIA/nccl#2186, every host swapped in turn): a crash inside NCCL, the image's, never a drain; a segfault said
    to be elsewhere, or with the driver's frames, is not NCCL's."""
    slug = "gb200-nvl72-44-ranks-ray-cupy-nccl-2.27.5-mnnvl-clique-enrollment-sigsegv-not-host-specific"
    facts = json.loads((CORPUS / slug / "facts" / "nccl.json").read_text())["facts"]
    r = judge(CHECKS["nccl"], facts, Options())
    assert verdict(r) == ("fail", "CHECK_CRASHED", "image") and "SIGSEGV" in r.summary
    assert nccl_crash("Segmentation fault inside libnccl.so.2") == ("Segmentation fault", ["libnccl.so.2"])
    assert nccl_crash("SIGSEGV in python3 while NCCL ran") is None
    assert nccl_crash("SIGSEGV in NCCL init | #1 libcuda.so.1") is None
