"""Issue 35, batches 153 and 154 (host kernel logs beyond Xid lines; containers that do not see the GPU): the class
their blind translations showed `verify explain` getting wrong, and the rule kept where what decides is in no field.
- `RmInitAdapter failed! (step:status:line)`: the status is named by the driver's nvstatuscodes.h as FACTS.md records
  it ("the status's name, from the number where only the number is printed"), so a raw log and its translation
  record one status (`0x56` is NV_ERR_NOT_SUPPORTED, never the bare number); the verdict rests on RM_INIT_RESET.
- `NVRM: API mismatch` read alone was kept from any host fail here (a half-upgraded host's or a container's own user
  space); since fix209 (tests/test_judges_fix209.py) the lead's review makes it a DriverError `api_mismatch`, the
  host's driver install: the lxc-plex entry's container at fault is not in the line (a strict expected failure).
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.explain import kernel
from verify.shared.xidcatalog import rm_status

pytestmark = pytest.mark.unit

BAZZITE = ("bazzite-42.20250522-image-570.153.02-userspace-over-570.144-kmod-api-mismatch-gsp-firmware-absent-"
           "rminitadapter-0x61-0x56")
LXC = "lxc-plex-container-userspace-570.148.08-on-vgpu-kvm-host-module-570.148.06-nvrm-api-mismatch-image"
SLURM = ("slurm-appliance-gpu-0-cuda-role-535.54.03-userspace-over-loaded-530.30.02-module-nvrm-api-mismatch-syslog-"
         "012-reboot-fixes")


@pytest.mark.parametrize("line, status", [
    # BAZZITE
    ("[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)", ("NV_ERR_NOT_SUPPORTED", 0x56)),
    # h100-gh100-fsp-boot-commands-insufficient-resources-bad-register-read-...
    ("[  280.997787] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x1a:1792)",
     ("NV_ERR_INSUFFICIENT_RESOURCES", 0x1A)),
    # ibm-cloud-ocp-4.14-gpu-operator-two-passthrough-gpus-rminitadapter-...
    ("[ 1097.650222] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)", ("NV_ERR_IRQ_NOT_FIRING", 0x45)),
    # a status the table leaves out (no corpus line shows it) stays its number, never a guessed name
    ("NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x8a:1)", ("0x8a", 0x8A)),
])
def test_an_init_failure_names_its_status_as_the_driver_header_does(line, status):
    assert rm_status(line) == status


def test_a_raw_init_failure_and_its_translation_record_one_status_and_one_verdict():
    text = raw(BAZZITE)
    errors = [e for e in kernel.parse(text)["driver_errors"] if "RmInitAdapter" in e["text"]]
    assert [(e["status"], e["code"]) for e in errors] == [("NV_ERR_NOT_SUPPORTED", 86)]
    # FACTS.md's letter for the line alone (GPU_NOT_VISIBLE, host) on the facts road, whose translation predates
    # DriverError api_mismatch; `verify explain` also reads the API-mismatch lines (fix209): DRIVER_ERROR, the host's
    assert replayed(BAZZITE)["gpu"] == ("fail", "GPU_NOT_VISIBLE", "host")
    assert verdict(explained(text)) == ("fail", "DRIVER_ERROR", "host")


@pytest.mark.parametrize("slug", [LXC, SLURM])
def test_an_api_mismatch_explained_is_the_hosts_driver_install(slug):
    # SLURM: the node's own half-done upgrade (the host's); LXC: a container's 570.148.08 user space on a vGPU host's
    # 570.148.06 module (the image's by the thread, not by the line: a strict expected failure). Since fix209 the line
    # is the host's driver install through `verify explain`; the facts of both predate DriverError api_mismatch.
    assert "NVRM: API mismatch" in raw(slug)
    assert verdict(explained(raw(slug))) == ("fail", "DRIVER_ERROR", "host")
    got = replayed(slug)["gpu"]
    assert got[0] != "fail" or got[2] != "host"
