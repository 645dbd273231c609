"""Issue 35, the driver stack: `NVRM: The NVIDIA probe routine failed for N device(s)` (the driver's nv.c, after the
reason, e.g. `The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this system is not supported by the NVIDIA
580.126.09 driver release`): GPUs on the bus the driver binds none of. The host's (GPU_NOT_VISIBLE), read by the
kernel-log reader and by `verify explain` alike, as the driver's failure to initialise a GPU it probed already is.
Handmade lines in the driver's own words."""
from __future__ import annotations

import pytest

from verify import explain as ex
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options
from verify.shared import xidcatalog

pytestmark = pytest.mark.unit

UNSUPPORTED = ("NVRM: The NVIDIA GPU 000a:00:00.0 (PCI ID: 10de:2330) installed in this system\n"
               "      is not supported by the NVIDIA 580.126.09 driver release.\n")
FAILED = "NVRM: The NVIDIA probe routine failed for 1 device(s).\n"


def test_the_probe_failed_line_is_its_own_status_and_not_the_probe_not_called_one():
    assert xidcatalog.rm_status(FAILED) == (xidcatalog.PROBE_FAILED, None)
    assert xidcatalog.probe_failed("[   12.3] " + FAILED) == 1
    assert xidcatalog.rm_status("NVRM: The NVIDIA probe routine was not called for 3 device(s).") == \
        (xidcatalog.PROBE_NOT_CALLED, None)


@pytest.mark.parametrize("text", [UNSUPPORTED + FAILED, "[    5.120001] " + FAILED], ids=["with-reason", "alone"])
def test_a_probe_that_failed_fails_the_host_even_where_nvml_lists_no_gpu(text):
    r = ex.explain_text(text, "dmesg.txt", Options())
    assert (r.name, r.status, r.code, r.owner) == ("gpu", "fail", "GPU_NOT_VISIBLE", "host"), r.summary


def test_the_facts_road_judges_the_recorded_status():
    r = judge(CHECKS["gpu"], {"devices": None, "driver_errors": [
        {"status": "probe_failed", "code": None, "text": FAILED.strip(), "time": None}]}, Options())
    assert (r.status, r.code, r.owner) == ("fail", "GPU_NOT_VISIBLE", "host"), r.summary


def test_a_sentence_about_the_probe_is_no_failure():
    r = ex.explain_text("Does 'the probe routine failed' mean my GPU is broken? nvidia-smi works fine.\n", "q.txt",
                        Options())
    assert not (r.status == "fail" and r.owner == "host"), r.summary
