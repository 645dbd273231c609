"""Issue 35: Azure's node health checks (azurehpc-health-checks, read by verify/explain/aznhc.py) as clusters print
them. Every line quoted is the tool's own: its README samples (distributed_nhc/README.md) or a message its checks
print (customTests/*.nhc), at https://github.com/Azure/azurehpc-health-checks/tree/0e0a1ac26a64b32ac4dd7632a529638505d3314a
(the `Bandwidth is low on device` wording from its README at 120095246e74e58a4414650c77e6d851520a838f). A message
that proves a field by FACTS.md's letter is judged; one no field holds is said and never a pass; the tool's own
trouble is no node's fault (skip, no owner, never a drain)."""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.explain import aznhc
from verify.options import Options

pytestmark = pytest.mark.unit

FAILED = "ERROR:  nhc:  Health check failed:  "          # LBNL nhc's `die` line (azure_common.nhc's prefix too)
PASSED = "SUCCESS:  nhc:  Health check passed:  "         # azure_common.nhc's `pass`
NOT_ASSESSED = ("warn", "HEALTH_NOT_ASSESSED", "host")
TOOL_TROUBLE = ("skip", "FACTS_INCOMPLETE", None)

# distributed_nhc/README.md, "Example Logs from Real Tests" (the .health.log)
README_HEALTH_LOG = """\
mynode-042 | Healthy
mynode-066 | ERROR: nhc: Health check failed: check_gpu_xid: GPU Xid errors detected: [ 3606.832215] NVRM: Xid \
(PCI:0002:00:00): 119, pid=67769, name=nvidia-smi, Timeout waiting for RPC from GSP1! Expected function 76 \
(GSP_RM_CONTROL) (0x2080014b 0x5).
mynode-079 | ERROR: nhc: Health check failed: check_nccl_allreduce_ib_loopback: NCCL allreduce, BUS BW (expected \
>=40.0 GB/s, but measured 20.7377 GB/s)
mynode-084 | ERROR: nhc: Health check failed: Bandwidth is low on device 1. Reported bandwidth is 7 GB/s.
mynode-108 | ERROR: No results reported
mynode-123 | ERROR: nhc: Health check failed: Bandwidth is low on device 3. Reported bandwidth is 27 GB/s.
mynode-273 | ERROR: nhc: Health check failed: check_hw_ib: No IB port mlx5_ib7:1 is ACTIVE (LinkUp 400 Gb/sec).
mynode-510 | ERROR: nhc: Health check failed: check_gpu_ecc: GPU id 3: SRAM Uncorrectable ECC error count detected, (0,1)
"""


def explained(text: str):
    return ex.explain_text(text, "health.log", Options())


def judged(text: str):
    return verdict(explained(text))


# ------------------------------------------------------------------------------ what a message proves: judged
@pytest.mark.parametrize(("message", "want", "field"), [
    # azure_gpu_ecc.nhc, check_ecc: `remapped_rows.pending -gt 0` / `remapped_rows.failure -gt 0` of GPU id $i
    ("check_gpu_ecc: GPU id 2: Row remap pending. FaultCode: NHC2007", ("fail", "RETIREMENT_PENDING", "host"),
     {"index": 2, "row_remap": {"correctable": None, "uncorrectable": None, "pending": 1, "failed": None}}),
    ("check_gpu_ecc: GPU id 2: Row remap error. FaultCode: NHC2007", ("fail", "ROW_REMAP_FAILED", "host"),
     {"index": 2, "row_remap": {"correctable": None, "uncorrectable": None, "pending": None, "failed": 1}}),
    # (ecc.errors.uncorrected.volatile.sram, ecc.errors.uncorrected.aggregate.sram)
    ("check_gpu_ecc: GPU id 1: SRAM Uncorrectable ECC error count detected, (2,2). FaultCode: NHC2019",
     ("fail", "ECC_UNCORRECTABLE", "host"), {"index": 1, "ecc_sram_uncorrectable": 2}),
    # (uncorrected volatile, uncorrected aggregate, corrected volatile, corrected aggregate) of DRAM
    ("check_gpu_ecc: GPU id 1: High DRAM Uncorrectable/correctable ECC error count detected, (3,5,10,20). "
     "FaultCode: NHC2019", ("fail", "ECC_UNCORRECTABLE", "host"), {"index": 1, "ecc_dram_uncorrectable": 3}),
])
def test_a_gpu_failure_that_names_a_field_is_judged(message, want, field):
    assert judged(FAILED + message) == want
    assert aznhc.parse_gpu(FAILED + message)["devices"] == [field]


def test_the_readme_health_log_fails_on_its_xid_and_says_every_other_host():
    r = explained(README_HEALTH_LOG)
    assert verdict(r) == ("fail", "XID_ERROR", "host")
    details = "\n".join(r.details)
    for said in ("mynode-510: check_gpu_ecc failed: GPU id 3", "mynode-084: check_cuda_bw failed: Bandwidth is low",
                 "mynode-108: ERROR: No results reported",
                 # the other checks' kinds: NCCL's loopback figure, LBNL's check_hw_ib (nhc.py), each not assessed
                 "also read as Azure NHC's NCCL all-reduce checks (azurehpc-health-checks): nccl warn "
                 "HEALTH_NOT_ASSESSED", "also read as NHC check_hw_ib: fabric warn HEALTH_NOT_ASSESSED"):
        assert said in details, said


def test_two_hosts_naming_one_gpu_id_are_never_one_host_s_facts():
    # FACTS.md: a folder holds one host; the first host's failure is read, the second's said
    line = "ERROR: nhc: Health check failed: check_gpu_ecc: GPU id 3: Row remap pending. FaultCode: NHC2007"
    r = explained(f"n1 | {line}\nn2 | {line}\n")
    assert verdict(r) == ("fail", "RETIREMENT_PENDING", "host")
    assert any("n2: check_gpu_ecc failed: GPU id 3: Row remap pending" in d for d in r.details)


def test_a_throttle_mask_the_check_logged_is_that_gpu_s_reasons():
    # azure_gpu_clock_throttling.nhc logs `clocks_event_reasons.active` (NVML's whole mask) for GPU $i
    facts = aznhc.parse_gpu("Warning: GPU 1 throttled, reason=0x0000000000000040")
    assert facts["devices"] == [{"index": 1, "throttle_reasons": 0x40, "throttle_reasons_read": 0x1FF}]
    assert judged("Warning: GPU 1 throttled, reason=0x0000000000000040")[2] == "host"


# ----------------------------------------------------------------- what no field holds: said, never a pass
@pytest.mark.parametrize("text", [
    # the lifetime SRAM count (the volatile 0 is read; the aggregate 1 has no field)
    FAILED + "check_gpu_ecc: GPU id 3: SRAM Uncorrectable ECC error count detected, (0,1)",
    FAILED + "check_gpu_ecc: GPU id 1: High DRAM Uncorrectable/correctable ECC error count detected, (0,0,5000,9000). "
             "FaultCode: NHC2019",
    FAILED + "check_gpu_ecc: GPU id 0: High SRAM correctable ECC error count detected, (12,40000). FaultCode: NHC2019",
    FAILED + "check_gpu_count: Expected to see 8 but found 7. FaultCode: NHC2009",
    FAILED + "check_gpu_bw: H2D test on GPU 3 failed. Bandwidth 12.5 is less than 50. FaultCode: NHC2020",
    FAILED + "check_nvsmi_healthmon:  nvidia-smi:  InfoROM is corrupted. FaultCode: NHC2008",
    FAILED + "check_nvsmi_healthmon:  nvidia-smi:  The GPU has fallen off the bus or has otherwise become "
             "inaccessible. FaultCode: NHC2010",
    FAILED + "check_hw_topology: Topology mismatch! Expected to find GPU0 NUMA 0. FaultCode: NHC2010",
    FAILED + "check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=460.0 GB/s, but measured 210.4 GB/s). "
             "FaultCode: NHC2010",
    FAILED + "check_ib_bw_gdr: IB_WRITE_BW, IB=mlx5_ib3, mlx5_ib7, IB BW (expected > 380 Gbps, but measured 190.5 "
             "Gbps. FaultCode: NHC2003",
    FAILED + "check_ib_link_flapping: IB link flapping detected. Devices: mlx5_ib2. FaultCode: NHC2005",
    # a check's own pass proves only what it checked, and no field holds it (below)
    PASSED + "check_gpu_ecc: ECC checks passed",
    PASSED + "check_gpu_count: Expected 8 and found 8",
    PASSED + "check_nccl_allreduce: NCCL all reduce bandwidth test passed, 480.318 GB/s",
    PASSED + "check_ib_bw_gdr: IB write bandwidth test IB_WRITE_BW passed for IB=mlx5_ib0, IB BW=392.82 Gbps",
    "mynode-042 | Healthy\nmynode-043 | Healthy\n",
    # the README's debug log: measured figures
    "mynode-411 | Device 0 Host to Device reported bandwidth is 55 GB/s\n"
    "mynode-411 | IB devices=mlx5_ib0, mlx5_ib4: numa domains=0,1, Measured IB BW 390.98 Gbps\n"
    "mynode-411 | Measured Avg NCCL allreduce bus BW 477.873 GB/s (expected >=460.0 GB/s)\n",
])
def test_what_no_field_holds_is_said_and_never_a_pass(text):
    r = explained(text)
    assert verdict(r) == NOT_ASSESSED
    assert any(d.startswith("said in health.log but in no field of the facts") for d in r.details)


def test_ecc_checks_passed_fills_no_ecc_field():
    # customTests/azure_gpu_ecc.nhc at 0e0a1ac: check_ecc compares each count with `-gt` (a `[N/A]` reads as no
    # number and passes), takes the SRAM/DRAM thresholds from the conf (DRAM only where one is given), and V100s go
    # through the page-retirement table instead: `ECC checks passed` is no count of 0 on any GPU
    assert aznhc.parse_gpu(PASSED + "check_gpu_ecc: ECC checks passed")["devices"] is None


# ------------------------------------------------------------- the tool's own trouble: no owner, no drain
@pytest.mark.parametrize("text", [
    # FaultCode NHCNA: "NHC Set Up issue error" (triggerGHR/config/nhc_fault_dictionary.cfg)
    FAILED + "check_gpu_ecc: nvidia-smi (get gpu uncorrected counts) returned error code 9. FaultCode: NHCNA",
    FAILED + "check_gpu_count: No expected value provided for the number of GPUs. GPU count found: 8. FaultCode: NHCNA",
    FAILED + "check_hw_topology: SKU nd40rs_v2 is not supported for this test. FauleCode: NHCNA",
    FAILED + "check_nvsmi_healthmon:  nvidia-smi:  Permission denied. FaultCode: NHCNA",
    FAILED + "collect_nccl_allreduce_data: nccl_allreduce returned error code 3. FaultCode: NHCNA",
    FAILED + "check_nccl_allreduce: Missing one or more dependencies. FaultCode: NHCNA",
    FAILED + "check_ib_bw_non_gdr: ib_write_bw returned error code 1. FaultCode: NHCNA",
    # before FaultCodes: a dependency missing (azure_common.nhc, 2024)
    FAILED + "check_all_reduce_dependencies: HPCX_DIR is not set. Ensure HPCX is installed and sourced correctly.",
    # LBNL nhc: the check's function is not there (command not found)
    "ERROR:  nhc:  Health check failed:  Check check_nvsmi_healthmon returned 127",
    # run-health-checks.sh: no conf for this VM size; distributed NHC: the node never reported
    "The vm SKU 'standard_nd96isr_h200_v5' is currently not supported by Azure health checks.",
    "mynode-108 | ERROR: No results reported",
    "mynode-108 | Failed to run health checks, no log file was generated at /tmp/health.log",
    # a check that logged it skipped its work: its pass proves nothing
    "[1712345678] - check_gpu_xid: /azure-nhc/syslog not found. Skipping GPU Xid error test.",
    "check_ib_link_flapping: No valid log files found. IB Link flapping test skipped.",
])
def test_the_tool_s_own_trouble_is_no_node_s_fault(text):
    r = explained(text)
    assert verdict(r) == TOOL_TROUBLE
    assert "the tool's own trouble" in r.summary


def test_a_fault_beside_the_tool_s_trouble_stands():
    text = (FAILED + "check_ib_bw_non_gdr: ib_write_bw returned error code 1. FaultCode: NHCNA\n"
            + FAILED + "check_gpu_ecc: GPU id 0: Row remap pending. FaultCode: NHC2007\n")
    assert judged(text) == ("fail", "RETIREMENT_PENDING", "host")


def test_a_check_outside_gpu_nccl_and_fabric_is_not_read():
    # LBNL's memory check, another site's GPU count check: no check of verify's holds them (corpus entries
    # h100-nd96isr-v5-aznhc-ndv4-conf-... and nhc-check-nv-gpu-count-2-...)
    text = (FAILED + "check_hw_physmem:  Actual RAM size (1961032660 kB) greater than maximum allowed (928858388 kB).\n"
            + FAILED + "Check check_nv_gpu_count 2 returned 1\n")
    assert not (aznhc.detect_gpu(text) or aznhc.detect_nccl(text) or aznhc.detect_fabric(text))


def test_a_hostile_line_is_read_within_bounds():
    line = FAILED + "check_" * 20_000 + ": " + "FaultCode: " * 5_000 + "\n"
    assert isinstance(aznhc.unread_gpu(line * 3), list)
