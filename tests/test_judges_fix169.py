"""Issue 35, batches 169 and 170 (GPU-lost look-alikes, healthy full nvidia-smi captures): the classes their blind
translations showed the judges or `verify explain` getting wrong.
- a Grace superchip's GPU (GH200, GB200, GB300) talks to its CPU over NVLink-C2C: its PCIe link runs below the GPU's
  own Device Max by design (Gen4 x1 of a Gen5 GPU), never "the slot runs at most Gen4";
- nvidia-smi -q's `Device Max` (text) and `max_device_link_gen` (XML) are the GPU's own maximum (FACTS.md
  `pcie_gen_gpu_max`): `verify explain` reads them, so one excerpt gives one verdict on both roads;
- a program that saw no GPU (torch's `No CUDA GPUs are available`) under a CUDA_VISIBLE_DEVICES that names none
  (`all`: NVIDIA_VISIBLE_DEVICES' word, not CUDA's) while NVML lists the GPUs: the job's setting, fail GPU_NOT_VISIBLE;
  explain reads torch's line beside the text's one CUDA_VISIBLE_DEVICES and an nvidia-smi table (a row cut short);
- nvidia-smi's lost handle as newer drivers print it, the index before the address (`for GPU0: 0000:09:00.0: Unknown
  Error`): that GPU is lost.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import json

import pytest

from tests.judging import CORPUS, explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.explain import cudahidden, nvml, smi, smixml
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

GH200 = "gh200-480gb-della-gh-545.23.08-a-idle-p0-pcie-gen4-x1-by-design-c2c-ecc-zero-3072-banks-fabric-na-900w-of-1000w-module"
PRO6000 = "rtx-pro-6000-blackwell-max-q-590.44.01-q-x-v13-idle-p8-pcie-gen1-of-gen4-slot-ecc-disabled-remap-0-telegraf-fixture"
COMPOSE = "rtx-4060-ti-compose-cuda-visible-devices-all-hides-every-gpu-no-cuda-gpus-available-driver-555.58.02-host-smi-fine"
RTX5090 = "rtx-5090-arch-open-610.57.04-pytorch-generate-mmuwalkunmap-tlb-invalidate-gpu-lost-nv-err-gpu-is-lost-smi-unknown-error-no-devices"


def _facts(slug: str) -> dict:
    return json.loads((CORPUS / slug / "facts" / "gpu.json").read_text())["facts"]


# ---------------------------------------------------------- PCIe: the GPU's own maximum, a superchip's by design
def test_a_grace_superchips_pcie_side_channel_below_the_gpus_gen5_is_its_design():
    text = raw(GH200)
    assert "Device Max                : 5" in text and "Host Max                  : 4" in text
    dev = smi.parse(text)["devices"][0]
    assert (dev["pcie_gen"], dev["pcie_gen_max"], dev["pcie_gen_gpu_max"], dev["pcie_width_max"]) == (4, 4, 5, 1)
    assert verdict(explained(text)) == ("pass", None, None) == replayed(GH200)["gpu"]


def test_the_slot_below_the_gpu_still_warns_off_a_superchip_on_both_roads():
    text = raw(PRO6000)
    assert "<max_device_link_gen>5</max_device_link_gen>" in text
    dev = smixml.parse(text)["devices"][0]
    assert (dev["pcie_gen_max"], dev["pcie_gen_gpu_max"]) == (4, 5)
    # one reading of one excerpt: the roads agree (the SRE's pass is a strict expected failure, README)
    assert verdict(explained(text)) == ("warn", "PCIE_DOWNGRADED", "host") == replayed(PRO6000)["gpu"]
    # the same facts on a GH200 are its design
    facts = _facts(PRO6000)
    facts["devices"][0]["name"] = "NVIDIA GH200 480GB"
    judged = judge(CHECKS["gpu"], facts, Options())
    assert not any("PCIE_DOWNGRADED" in d for d in judged.details) and judged.code != "PCIE_DOWNGRADED"


# ---------------------------------------------------------- CUDA_VISIBLE_DEVICES naming no device: the job's
def test_a_program_seeing_no_gpu_under_cuda_visible_devices_all_is_the_jobs():
    assert "CUDA_VISIBLE_DEVICES: all" in raw(COMPOSE) and "RuntimeError: No CUDA GPUs are available" in raw(COMPOSE)
    assert replayed(COMPOSE)["gpu"] == ("fail", "GPU_NOT_VISIBLE", "job") == verdict(explained(raw(COMPOSE)))
    facts = cudahidden.parse(raw(COMPOSE))
    assert facts["devices"] == [{"index": 0, "name": "NVIDIA GeForce RTX 4060 Ti", "persistence": False}]
    assert facts["cuda_visible_devices"] == "all" and facts["driver"] == "555.58.02"
    # the same excerpt under a setting that names a GPU is no such kind
    assert not cudahidden.detect(raw(COMPOSE).replace("CUDA_VISIBLE_DEVICES: all", "CUDA_VISIBLE_DEVICES: 0"))
    facts = _facts(COMPOSE)
    # a value that names a GPU is not this: a GPU it names may have fallen off the bus
    facts["cuda_visible_devices"] = "0"
    assert verdict(judge(CHECKS["gpu"], facts, Options()))[1] != "GPU_NOT_VISIBLE"


# ---------------------------------------------------------- nvidia-smi's lost handle, index before the address
def test_a_lost_handle_printed_with_the_gpus_index_before_its_address_is_a_gpu_lost():
    line = "Unable to determine the device handle for GPU0: 0000:09:00.0: Unknown Error"
    assert line in raw(RTX5090)
    assert nvml.parse(line)["devices"] == [{"index": None, "pci_bus_id": "00000000:09:00.0", "lost": True,
                                            "nvml_errors": {"handle": "Unknown Error"}}]
    assert verdict(explained(raw(RTX5090))) == ("fail", "GPU_LOST", "host") == replayed(RTX5090)["gpu"]
