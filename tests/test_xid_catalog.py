# mypy: disable-error-code="arg-type, typeddict-item, index"
"""Issue 35, item 5: one Xid catalog (verify/shared/xidcatalog.py) for the gpu check and the prolog; Xid 45 alone never
fails a node, `caused by previous Xid N` is judged as N, a storm counts once per GPU and Xid. The lines are real:
tests/data/kernel-log/SOURCES.json names each file's URL."""
from __future__ import annotations

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
