"""Batch 296: the Amazon EKS node monitoring agent's AcceleratedHardwareReady conditions carry DCGM's health codes
(`DCGMHealthCode4`: DCGM_FR_VOLATILE_DBE_DETECTED in dcgmlib/dcgm_errors.h). A code whose DCGM message names a fact is
read into one device of unknown index (verify/explain/eksnma.py); an Xid without its number (101), or a rate, is said
and never judged; the agent's own Severity is never read."""
from __future__ import annotations

import pytest

from tests.judging import explained

pytestmark = pytest.mark.unit


def _condition(code: int, kind: str = "AcceleratedHardwareReady") -> str:
    return ('{"level":"info","ts":"2026-01-29T10:00:00Z","msg":"sending condition to exporter","condition":{"Reason":'
            f'"DCGMHealthCode{code}","Message":"DCGM detected issues in health check system with error code {code}",'
            f'"Severity":"Fatal","MinOccurrences":0}},"conditionType":"{kind}"}}\n')


def test_a_volatile_double_bit_error_code_is_an_uncorrectable_ecc_fault_of_the_host() -> None:
    r = explained(_condition(101) + _condition(4), "nma.log")
    assert (r.status, r.code, r.owner) == ("fail", "ECC_UNCORRECTABLE", "host"), r.summary
    assert any("DCGMHealthCode101" in d and "no field" in d for d in r.details)


@pytest.mark.parametrize("code", [101, 5, 3])
def test_a_code_that_names_no_fact_is_not_assessed_never_a_fault_by_the_agent_s_severity(code: int) -> None:
    r = explained(_condition(code), "nma.log")
    assert (r.status, r.code) == ("warn", "HEALTH_NOT_ASSESSED"), r.summary
    assert any(f"DCGMHealthCode{code}" in d for d in r.details)


@pytest.mark.parametrize("code, want", [(6, ("fail", "RETIREMENT_PENDING")), (85, ("fail", "RETIREMENT_PENDING")),
                                        (9, ("warn", "ECC_UNCORRECTABLE"))])
def test_codes_that_name_memory_or_inforom_facts_are_read(code: int, want: tuple[str, str]) -> None:
    r = explained(_condition(code), "nma.log")
    assert (r.status, r.code, r.owner) == (*want, "host"), r.summary


def test_another_condition_type_s_code_is_not_the_gpu_s() -> None:
    r = explained(_condition(4, "KernelReady"), "nma.log")
    assert r.code != "ECC_UNCORRECTABLE"
