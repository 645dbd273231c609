# mypy: disable-error-code="arg-type, typeddict-item, index"
"""Issue 35, item 5: one Xid catalog (verify/shared/xidcatalog.py) for the gpu check and the prolog; Xid 45 alone never
fails a node, `caused by previous Xid N` is judged as N, a storm counts once per GPU and Xid. The lines are real:
tests/data/kernel-log/SOURCES.json names each file's URL."""
from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import ROOT
from verify.checks import gpu
from verify.checks.gpu import gpuhealth
from verify.findings import Findings
from verify.options import Options
from verify.prolog import xid as prolog_xid
from verify.shared import xidcatalog

pytestmark = pytest.mark.unit

LOGS = ROOT / "tests" / "data" / "kernel-log"


def _events(name: str) -> list[dict]:
    """A real kernel log as the gpu facts' xid_events, one per Xid line."""
    out = []
    for f in prolog_xid.parse((LOGS / name).read_text().splitlines()):
        if f.kind == "xid":
            out.append({"xid": f.code, "pci_bus_id": f.device, "source": "kernel_log", "text": f.line})
    return out


def test_xid_45_alone_is_the_job_ending_never_a_node_fault():
    assert xidcatalog.classify(45, "pid=1, name=python3, Ch 00000008").action == xidcatalog.APP
    r = gpu.judge({"devices": None, "torch": None, "xid_events": [
        {"xid": 45, "pci_bus_id": "0000:0a:00", "source": "kernel_log", "text": "Ch 00000008"}]}, Options())
    assert (r.status, r.code, r.owner) == ("warn", "XID_ERROR", "job")


def test_xid_45_naming_its_cause_is_judged_as_that_cause_in_both_the_gpu_check_and_the_prolog():
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150: Xid 45 on four GPUs, caused by Xid 149 / 145
    judged = xidcatalog.classify(45, "pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149")
    assert (judged.xid, judged.action, judged.seen) == (149, xidcatalog.DRAIN, 45)
    events = _events("open-gpu-kernel-modules-1150-xid-45.log")
    r = gpu.judge({"devices": None, "torch": None, "xid_events": events}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "XID_ERROR", "host")
    assert prolog_xid.judge(prolog_xid.parse((LOGS / "open-gpu-kernel-modules-1150-xid-45.log").read_text()
                                             .splitlines()))[0] == "XID_HISTORY"


def test_a_storm_counts_once_per_gpu_and_xid():
    events = _events("open-gpu-kernel-modules-1150-xid-45.log")        # 7 lines, 4 GPUs
    found = Findings()
    gpuhealth.xids(events, [], found)
    keys = [f.text.split(" in the kernel log")[0] for f in found.items]
    assert len(found.items) == 4 and len(set(keys)) == 4
    assert any("(2 times)" in f.text for f in found.items)


def test_an_application_xid_warns_the_job_and_a_context_timeout_after_it_is_the_same_process():
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150 is NVLink; Xid 13 then 109 on one GPU is a
    # process's fault and its teardown (NVIDIA's catalog: 13 RESTART_APP)
    events = [{"xid": 13, "pci_bus_id": "0000:cb:00", "text": "Graphics SM Warp Exception"},
              {"xid": 109, "pci_bus_id": "0000:cb:00", "text": "Ch 00000008, errorString CTX SWITCH TIMEOUT"}]
    r = gpu.judge({"devices": None, "torch": None, "xid_events": events}, Options())
    assert (r.status, r.code, r.owner) == ("warn", "XID_ERROR", "job")
    alone = gpu.judge({"devices": None, "torch": None, "xid_events": events[1:]}, Options())
    assert (alone.status, alone.owner) == ("warn", "host")


def test_a_fatal_nvlink_xid_fails_the_node_from_the_same_catalog():
    # https://github.com/leptonai/gpud/pull/1174
    events = _events("gpud-pr1174-xid-149-fatal.log")
    assert events and xidcatalog.classify(149, events[0]["text"]).action == xidcatalog.DRAIN
    r = gpu.judge({"devices": None, "torch": None, "xid_events": events}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "XID_ERROR", "host")


def test_an_xid_is_judged_under_the_code_of_the_condition_the_catalog_names():
    """Issue 35 (tests/data/real-world/gpu-operator-cuda-validator-unknown-error-xid48-dbe,
    https://github.com/NVIDIA/gpu-operator/issues/1146): Xid 48 is a double-bit ECC error, so the finding is
    ECC_UNCORRECTABLE, not a generic XID_ERROR; the catalog chooses the code for the gpu check and the prolog alike.
    Its healthy-host twin is in the corpus: xid31-mmu-fault-application-rtx2080, a process's MMU faults, warns the
    job under XID_ERROR."""
    codes = {x: xidcatalog.classify(x).code for x in (48, 94, 95, 140, 63, 64, 79, 119, 13, 31)}
    assert codes == {48: "ECC_UNCORRECTABLE", 94: "ECC_UNCORRECTABLE", 95: "ECC_UNCORRECTABLE",
                     140: "ECC_UNCORRECTABLE", 63: "RETIREMENT_PENDING", 64: "ROW_REMAP_FAILED", 79: "GPU_LOST",
                     119: "XID_ERROR", 13: "XID_ERROR", 31: "XID_ERROR"}
    # handmade lines in the driver's wording (tests/test_prolog_units.py): 154 asking for a reset is NVML's action
    reset = xidcatalog.classify(154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)")
    assert (reset.action, reset.code) == (xidcatalog.DRAIN, "GPU_RESET_REQUIRED")
    assert xidcatalog.classify(154, "GPU recovery action changed from 0x1 (x) to 0x0 (None)").action == xidcatalog.INFO
    assert xidcatalog.classify(45, "Ch 00000001 caused by previous Xid 48").code == "ECC_UNCORRECTABLE"
    dbe: Any = {"xid": 48, "pci_bus_id": "0000:07:00", "source": "kernel_log",
           "text": "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error "
                   "(DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdd60000 partition"}
    r = gpu.judge({"devices": None, "torch": None, "xid_events": [dbe]}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "ECC_UNCORRECTABLE", "host") and "Xid 48" in r.summary



@pytest.mark.parametrize("xid, action", [(137, xidcatalog.APP), (32, xidcatalog.WATCH), (110, xidcatalog.DRAIN)])
def test_the_xids_nvidia_s_guide_describes_are_in_the_catalog_with_its_action(xid, action):
    """NVIDIA's Xid guide, "Common Xid Errors": 137 (NVLink FLA privilege error) is the remote MMU faulting an illegal
    NVLink peer access, "typically application-level bugs" as 31 is (a B200 NVLS hang logged it beside a non-fatal
    Xid 145: tests/data/real-world/b200-two-gpu-nvls-allgather-hang-xid145-rlw-rxpipe-link11-xid137-priv-error);
    32 (PBDMA) is PCIe quality, not the application; 110 (security fault) asks for a cold reset."""
    judged = xidcatalog.classify(xid, "")
    assert judged.action == action and "does not list" not in judged.what
    line = f"NVRM: Xid (PCI:0000:1b:00): {xid}, pid=1234, name=python"
    assert [f.action for f in prolog_xid.parse([line])] == [action]      # the prolog reads the same catalog


@pytest.mark.parametrize(("line", "code", "action"), [
    # NVIDIA's A100 memory-error guide prints a MIG GPU's Xid with its GPU instance after the address
    ("NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No", 94,
     xidcatalog.WATCH),
    ("NVRM: Xid (PCI:0000:01:00 GPU-I:02): 95, pid=7194, Uncontained: FBHUB. RST: Yes, D-RST: No", 95,
     xidcatalog.DRAIN),
    ("NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): 79, GPU has fallen off the bus.", 79, xidcatalog.DRAIN),
], ids=["94-contained", "95-uncontained", "79-with-compute-instance"])
def test_a_mig_gpu_instance_xid_is_read_as_its_gpus_by_the_prolog_and_verify_explain(line, code, action):
    """A MIG GPU's Xid names its GPU instance (`GPU-I:05`) after the PCI address: the reader that wanted `):` right
    after the address read none of them, so an uncontained ECC error (95) on a MIG node drained nothing."""
    found = prolog_xid.parse([line])
    assert [(f.kind, f.code, f.device, f.action) for f in found] == [("xid", code, "0000:01:00" if "01:00" in line
                                                                       else "0000:3b:00", action)]


@pytest.mark.parametrize(("message", "action", "code"), [
    ("GPU Reset Required", xidcatalog.DRAIN, "GPU_RESET_REQUIRED"),            # the action's words, numbers cut away
    ("Node Reboot Required", xidcatalog.DRAIN, "GPU_RESET_REQUIRED"),
    ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", xidcatalog.INFO, "XID_ERROR"),
    ("GPU recovery action changed", xidcatalog.WATCH, "XID_ERROR"),            # no action named: not read
], ids=["reset-words", "reboot-words", "back-to-none", "unread"])
def test_xid_154_names_its_recovery_action_by_number_or_by_its_words(message, action, code):
    judged = xidcatalog.classify(154, message)
    assert (judged.action, judged.code) == (action, code)
