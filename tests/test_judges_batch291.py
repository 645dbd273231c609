"""Batch 291 (DCGM and its neighbours, translated by a helper who had not read the judges): an nvidia-smi row of ERR!
in every live column but a `1W` draw is a GPU that no longer answers (dcgm-exporter#46, GPU 7 of an A100 node): one
value beside six errors is the row's exception. Fewer errors beside a value, or two values read, still answer: a
cooling pair or a transient read stays the warn it was (tests/test_no_false_drain_today.py keeps the real excerpt)."""
from __future__ import annotations

from typing import Any

import pytest

from verify.checks.gpu import unanswering

pytestmark = pytest.mark.unit

SIX = {k: "ERR!" for k in ("temperature_c", "fan_speed", "performance_state", "utilization",
                           "ecc_volatile_uncorrectable", "mig")}


def test_six_live_reads_in_error_beside_one_power_value_is_a_gpu_that_no_longer_answers() -> None:
    assert unanswering.silent({"nvml_errors": SIX, "power_w": 1.0}) == [
        "temperature_c", "fan_speed", "performance_state", "utilization", "ecc_volatile_uncorrectable", "mig"]


@pytest.mark.parametrize("dev", [
    # five errors beside a value: a failing sensor board, the GPU may still serve work
    {"nvml_errors": {k: v for k, v in SIX.items() if k != "mig"}, "power_w": 60.0},
    # two values read: the GPU answers
    {"nvml_errors": SIX, "power_w": 60.0, "sm_clock_mhz": 1410},
    # a cooling pair beside a read row
    {"nvml_errors": {"temperature_c": "ERR!", "fan_speed": "ERR!"}, "power_w": 60.0},
], ids=["five-beside-one", "six-beside-two", "cooling-pair"])
def test_a_gpu_that_still_answers_some_live_reads_is_not_lost(dev: Any) -> None:
    assert unanswering.silent(dev) == []
