# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's seventh corpus batch, fixed by class.

- NCCL's SHM transport out of /dev/shm (misc/shmutils.cc's ENOSPC, include/shm.h's posix_fallocate in NCCL < 2.12):
  the container's /dev/shm, the job's (SHM_TOO_SMALL, the --shm-size / emptyDir remedy), whatever failed after it (the
  proxy's sockets, the bootstrap) being its consequence; a full disk elsewhere is not /dev/shm's. Corpus:
  `k8s-pod-default-dev-shm-nccl-shm-segment-enospc-4xt4` (pytorch/ci-infra#490).
- Xid 63 (a row or page marked for remapping, "reset gpu to activate") is the condition NVML's pending flag reports:
  the gpu check judges both alike (RETIREMENT_PENDING, fail, the host's: drain and reset). Corpus:
  `xid63-new-row-marked-for-remapping-reset-to-activate` (huggingface/m4-logs).
"""
from __future__ import annotations

import pytest

from tests.judging import verdict
from verify import explain as ex
from verify.checks import nccl
from verify.options import Options
from verify.shared.shmem import nccl_shm_full

pytestmark = pytest.mark.unit


SHM_FULL_LINES = [
    "host:1:2 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, "
    "error: No space left on device (28)",
    "host:1:2 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-AB12CD "
    "(size 9637888), error: No space left on device (28)",
    "node-3:44:51 [1] include/shm.h:48 NCCL WARN Call to posix_fallocate failed : No space left on device",
]
TAIL = ("host:1:2 [0] NCCL INFO transport/shm.cc:551 -> 2\n"
        "host:1:2 [0] NCCL INFO misc/socket.cc:28 -> 3\n"
        "host:1:7 [2] proxy.cc:1326 NCCL WARN Socket recv failed\n")


@pytest.mark.parametrize("line", SHM_FULL_LINES)
def test_nccl_out_of_dev_shm_is_the_jobs_through_explain(line):
    r = ex.explain_text(line + "\n" + TAIL, "log.txt", Options())
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job"), r.summary
    assert "/dev/shm" in r.summary and "--shm-size" in r.remedy


def test_nccl_out_of_dev_shm_is_the_jobs_through_facts_with_the_size_said():
    facts = {"backend": "nccl", "nodes": 1, "shm_bytes": 64 << 20,
             "error": "Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No "
                      "space left on device (28)"}
    r = nccl.judge(facts, Options())
    assert verdict(r) == ("fail", "SHM_TOO_SMALL", "job") and "64 MiB" in r.summary, r.summary


@pytest.mark.parametrize("text", [
    "NCCL WARN Call to write /scratch/ckpt/rank0.pt failed : No space left on device",
    "OSError: [Errno 28] No space left on device: '/tmp/torchelastic_x'",
    "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-X (size 4194304), error: Permission denied",
])
def test_other_failures_are_not_dev_shm(text):
    assert nccl_shm_full(text) is None
    r = nccl.judge({"backend": "nccl", "error": text}, Options())
    assert r.code != "SHM_TOO_SMALL", r.summary


XID63 = ("[Tue Mar 12 04:11:09 2024] NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row marked for "
         "remapping, reset gpu to activate.")


def test_xid63_fails_as_the_pending_remap_nvml_reports():
    r = ex.explain_text(XID63 + "\n", "dmesg.txt", Options())
    assert verdict(r) == ("fail", "RETIREMENT_PENDING", "host"), r.summary
    assert "reset" in r.remedy


def test_an_application_xid_beside_it_keeps_its_own_owner():
    """No false drain by association: an Xid 13 alone stays the job's warning."""
    r = ex.explain_text("NVRM: Xid (PCI:0000:10:1c): 13, pid=1850, Graphics Exception: ESR 0x404600=0x80000001\n",
                        "dmesg.txt", Options())
    assert r.status == "warn" and r.owner == "job", r.summary


def test_xid63_gives_way_to_nvmls_own_reading_of_the_flag():
    """The newest evidence wins: NVML reading no remap pending means a reset applied the one the line announced; a
    pending flag NVML reads is judged once, as its own finding."""
    from tests.verify_handmade import gpu_facts
    from verify.checks import gpu

    def with_flag(pending):
        facts = gpu_facts(1)
        facts["devices"][0]["row_remap"] = {"pending": pending, "failed": False}
        facts["xid_events"] = [{"xid": 63, "index": 0, "source": "kernel_log",
                                "text": "Row Remapper: New row marked for remapping, reset gpu to activate."}]
        return gpu.judge(facts, Options())

    assert with_flag(False).status != "fail"
    r = with_flag(True)
    assert verdict(r) == ("fail", "RETIREMENT_PENDING", "host") and "row remap pending" in r.summary, r.summary
