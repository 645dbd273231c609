# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35's batches 209 to 212, fixed by class: the kernel's `NVRM: API mismatch: the client has the version X, but
this kernel module has the version Y` is the driver's user space and its loaded module of two releases (an upgrade
without a reboot, a DKMS module not rebuilt): DriverError status `api_mismatch` (verify/FACTS.md), DRIVER_ERROR, owner
host, judged even where NVML lists no GPU, through the facts and through `verify explain` of the kernel log
(arch-zen-7.0.12-open-dkms-module-still-595.80-after-upgrade-to-595.84-nvrm-api-mismatch-kwin-wayland,
aws-ecs-al2-gpu-ami-nvidia-persistenced-fails-nvrm-api-mismatch-client-535.183.01-kernel-module-535.161.07).
NVML's own `Driver/library version mismatch` (an image that bundles driver libraries) is not this line."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import gpu
from verify.explain import kernel
from verify.options import Options
from verify.shared.xidcatalog import API_MISMATCH, api_versions, rm_status

pytestmark = pytest.mark.unit

# aws-ecs-al2-gpu-ami-...: every line of the message stamped
ECS = ("[  330.628039] NVRM: API mismatch: the client has the version 535.183.01, but\n"
       "[  330.628039] NVRM: this kernel module has the version 535.161.07.  Please\n"
       "[  330.628039] NVRM: make sure that this kernel module and all NVIDIA driver\n"
       "[  330.628039] NVRM: components have the same version.\n")
# arch-zen-7.0.12-...: the client named, the message's later lines unstamped
KWIN = ("[    8.805842] r8169 0000:83:00.0: invalid VPD tag 0xff (size 0) at offset 0; assume missing optional EEPROM\n"
        "[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n"
        "               NVRM: has the version 595.84, but this kernel module has\n"
        "               NVRM: the version 595.80.  Please make sure that this\n"
        "               NVRM: kernel module and all NVIDIA driver components\n"
        "               NVRM: have the same version.\n")


def test_an_api_mismatch_line_is_the_api_mismatch_status():
    assert rm_status(ECS.splitlines()[0]) == (API_MISMATCH, None)
    assert rm_status(KWIN.splitlines()[1]) == (API_MISMATCH, None)
    assert rm_status(ECS.splitlines()[1]) is None          # the message's other lines are no second entry


def test_the_versions_are_read_where_the_text_carries_both():
    assert api_versions(" ".join(ECS.splitlines()[:2])) == ("535.183.01", "535.161.07")
    assert api_versions(ECS.splitlines()[0]) is None


@pytest.mark.parametrize("text", [ECS.splitlines()[0], KWIN.splitlines()[1]])
def test_an_api_mismatch_in_the_facts_fails_the_hosts_driver_install_without_any_gpu_listed(text):
    facts = {"driver": "535.161.07", "devices": None,
             "driver_errors": [{"status": "api_mismatch", "code": None, "text": text, "source": "kernel_log"}] * 3}
    r = gpu.judge(facts, Options())
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary
    assert "API mismatch" in r.summary


@pytest.mark.parametrize("text", [ECS, KWIN, "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the "
                                  "version 535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  "
                                  "Please#012NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: "
                                  "components have the same version.\n"])
def test_an_api_mismatch_explained_is_the_hosts_driver_install(text):
    assert [e["status"] for e in kernel.parse(text)["driver_errors"]] == [API_MISMATCH]
    r = explained(text)
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host"), r.summary


def test_the_message_repeated_is_judged_once():
    r = explained(ECS * 3)
    assert verdict(r) == ("fail", "DRIVER_ERROR", "host")
    assert r.summary.count("API mismatch") == 1


def test_a_prose_mention_of_an_api_mismatch_is_no_driver_line():
    # the poster's paraphrase (`NVRM: API mismatch: client version ...`) is not the driver's message
    assert rm_status("# NVRM: API mismatch: client version 570.133.07, kernel module version 570.124.06") is None
