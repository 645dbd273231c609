"""Issue 35, batches 196 (node health checkers), 197 (GPU reset and recovery) and 198 (container runtime, CDI) (fix196),
fixed for the class:
- NVML answering NVML_ERROR_RESET_REQUIRED in any field (pynvml's `ResetRequired`, nvidia-smi's `[GPU requires
  reset]`) is a GPU the driver serves no more until it is reset: fail GPU_RESET_REQUIRED, the host's, as the driver's
  own NV_ERR_RESET_REQUIRED (verify/checks/gpu/resetrequired.py);
- IBM Autopilot's PCIe bandwidth check, as its daemon's log prints it, is read by `verify explain` as the GPUs and
  their host-to-device rates: a checker's figure, the GPUs' health not assessed, never a pass
  (verify/explain/autopilot.py);
- `verify explain` reads nvidia-smi -q's `[GPU requires reset]` in a health field as that NVML error (verify/explain/smi.py).
The rest of these batches are strict expected failures (tests/data/real-world/README.md, "Known mismatches").
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from tests.judging import CORPUS, explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

ACER = "acer-predator-pt315-53-laptop-nvml-temperature-nvml-error-reset-required-cli-gpu-requires-reset"
PCIEBW = "h100-80gb-hbm3-autopilot-pciebw-periodic-check-55.2-gbs-host-to-device-gpus-0-1-2-healthy"


def _acer_facts() -> dict[str, Any]:
    facts: dict[str, Any] = json.loads((CORPUS / ACER / "facts" / "gpu.json").read_text())["facts"]
    return facts


def _gpu(facts: dict[str, Any]) -> tuple[str, str | None, str | None]:
    return verdict(judge(CHECKS["gpu"], facts, Options()))


def test_nvml_answering_gpu_requires_reset_fails_the_hosts_gpu_on_the_facts_road():
    # `The installed GPU returns NVML_ERROR_RESET_REQUIRED; CLI output is [GPU requires reset].`
    assert "NVML_ERROR_RESET_REQUIRED" in raw(ACER) and "[GPU requires reset]" in raw(ACER)
    assert replayed(ACER) == {"gpu": ("fail", "GPU_RESET_REQUIRED", "host")}


@pytest.mark.parametrize("field,error", [
    ("temperature_c", "GPU requires reset"),   # nvidia-smi's words (the acer entry)
    ("power_w", "ResetRequired"),              # the name verify's own probe records (pynvml's class less its prefix)
    ("ecc_volatile_uncorrectable", "NVML_ERROR_RESET_REQUIRED"),
])
def test_any_field_in_reset_required_fails_the_gpu_whatever_the_field_or_spelling(field, error):
    facts = copy.deepcopy(_acer_facts())
    facts["devices"][0].update(index=0, name="NVIDIA A100-SXM4-80GB", nvml_errors={field: error})
    assert _gpu(facts) == ("fail", "GPU_RESET_REQUIRED", "host")


def test_another_nvml_error_is_not_a_reset():
    facts = copy.deepcopy(_acer_facts())
    facts["devices"][0].update(index=0, nvml_errors={"fan_speed": "Unknown"}, temperature_c=40)
    assert _gpu(facts)[1] != "GPU_RESET_REQUIRED"


def test_autopilots_pciebw_check_is_read_and_never_passes():
    # `healthchecks.go:226] Observation: pokmvp-b93r43s1 0 55.2`
    assert "Observation: pokmvp-b93r43s1 0 55.2" in raw(PCIEBW)
    assert verdict(explained(raw(PCIEBW))) == ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_autopilots_pciebw_lines_of_another_node_and_model_are_the_same_class():
    text = ("I0501 08:00:00.000001       9 functions.go:176] GPU_MODEL: NVIDIA A100-SXM4-80GB\n"
            "I0501 08:00:00.000002       9 healthchecks.go:74] Running health check: pciebw\n"
            "I0501 08:00:30.000003       9 healthchecks.go:203] GPU PCIe BW test completed:\n"
            "I0501 08:00:30.000004       9 healthchecks.go:226] Observation: node-a 0 24.1\n"
            "I0501 08:00:30.000005       9 healthchecks.go:226] Observation: node-a 1 24.3\n")
    assert verdict(explained(text))[0] != "pass"


def test_nvidia_smi_q_printing_gpu_requires_reset_is_read_by_explain_as_the_same_class():
    # nvidia-smi prints NVML_ERROR_RESET_REQUIRED as `[GPU requires reset]` in a field (the acer entry's CLI output);
    # a real `nvidia-smi -q` (a10-idle-p8-pcie-gen1-of-gen4-healthy) with its temperature and power so answered
    healthy = raw("a10-idle-p8-pcie-gen1-of-gen4-healthy")
    assert verdict(explained(healthy))[0] == "pass"
    text = re.sub(r"(GPU Current Temp\s*: ).*", r"\1[GPU requires reset]", healthy)
    text = re.sub(r"(Power Draw\s*: ).*", r"\1[GPU requires reset]", text)
    assert verdict(explained(text)) == ("fail", "GPU_RESET_REQUIRED", "host")
    # an `Unknown Error` in the same fields stays a GPU lost, not a reset asked for
    lost = re.sub(r"(GPU Current Temp\s*: ).*", r"\1Unknown Error", healthy)
    assert verdict(explained(lost))[1] != "GPU_RESET_REQUIRED"
