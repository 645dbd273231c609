"""Batches 219 and 220 (issue 35): the lead's review.

- The driver's per-GPU file `/proc/driver/nvidia/gpus/<bus id>/information` (nvidia-bug-report copies it) was not
  recognised by `verify explain`; its translation lists the GPU (name, UUID, bus id) and warns HEALTH_NOT_ASSESSED
  (nvidia-l4-proc-driver-nvidia-gpus-70-00-0-information-gpu-excluded-no-vbios-95.04.65-snapd-opengl-interface-healthy).
  Now verify/explain/procinfo.py reads it into the same facts.
"""
from __future__ import annotations

import pytest

from tests.judging import contract, explained, verdict
from verify import explain as ex
from verify.explain import procinfo

pytestmark = pytest.mark.unit

L4 = """Model: \t\t NVIDIA L4
IRQ:   \t\t 16
GPU UUID: \t GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689
Video BIOS: \t 95.04.65.00.13
Bus Type: \t PCIe
Bus Location: \t 0000:70:00.0
Device Minor: \t 0
GPU Excluded:\t No
"""


def test_the_drivers_per_gpu_file_lists_the_gpu_and_never_passes_it():
    facts = procinfo.parse(L4)
    assert facts["devices"] == [{"index": None, "name": "NVIDIA L4", "uuid": "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689",
                                 "pci_bus_id": "00000000:70:00.0"}]
    assert contract(next(k for k in ex.KINDS if k.parse is procinfo.parse), facts) == []
    r = explained(L4)
    assert (r.name, *verdict(r)) == ("gpu", "warn", "HEALTH_NOT_ASSESSED", "host"), r.summary


def test_two_gpus_files_are_two_devices_and_a_cut_one_is_not_read():
    two = L4 + L4.replace("70:00.0", "c1:00.0").replace("3291dfa4", "aaaaaaaa")
    assert [d["pci_bus_id"] for d in procinfo.parse(two)["devices"]] == ["00000000:70:00.0", "00000000:C1:00.0"]
    cut = L4.split("Bus Location")[0]
    assert not procinfo.detect(cut)


def test_another_tools_model_line_is_no_gpu():
    lscpu = "Architecture: x86_64\nModel:                           85\nModel name:  Intel(R) Xeon(R)\n"
    assert not procinfo.detect(lscpu)


def test_a_long_paste_of_other_model_lines_still_finds_the_gpu():
    # 10 MB of `Model:` lines no GPU follows (each bounded to one line: no backtracking across lines)
    text = ("Model: \t\t " + "x" * 5000 + "\n") * 2000 + L4
    assert [d["name"] for d in procinfo.parse(text)["devices"]] == ["NVIDIA L4"]
