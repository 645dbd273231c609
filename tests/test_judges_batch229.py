"""Batch 229 (issue 35): the lead's review.

- `nvidia-smi dmon` was not recognised by `verify explain`; its translation reads the GPU's power and temperatures
  and passes (a100-40gb-pytorch-ci-ac-1215-1410-dmon-pclk-fixed-1410-mclk-1215-65w-35c-idle-applications-clocks-at-max).
  Now verify/explain/dmon.py reads its columns by name (they depend on `-s`), the highest reading per GPU.
"""
from __future__ import annotations

import pytest

from tests.judging import contract, explained, verdict
from verify import explain as ex
from verify.explain import dmon

pytestmark = pytest.mark.unit

DMON = """# gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk
# Idx     W     C     C     %     %     %     %   MHz   MHz
    0    65    35    34     0     0     0     0  1215  1410
    0    65    34    33     0     0     0     0  1215  1410
"""


def test_dmon_rows_are_read_by_column_name_the_highest_reading_per_gpu():
    facts = dmon.parse(DMON)
    assert facts["devices"] == [{"index": 0, "power_w": 65.0, "temperature_c": 35.0, "memory_temperature_c": 34.0}]
    assert contract(next(k for k in ex.KINDS if k.parse is dmon.parse), facts) == []
    r = explained(DMON)
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None), r.summary


def test_another_column_order_and_a_missing_value():
    text = "# gpu    sm   mem gtemp   pwr\n# Idx     %     %     C     W\n    1    99    40    -   300\n"
    assert dmon.parse(text)["devices"] == [{"index": 1, "power_w": 300.0}]


def test_a_row_that_does_not_line_up_with_its_header_is_not_read():
    cut = DMON.splitlines()[0] + "\n" + DMON.splitlines()[1] + "\n    0    65    35\n"
    assert not dmon.detect(cut)


def test_numbers_after_the_table_are_someone_elses():
    text = DMON + "loss at step 3\n    7    12    13    14     0     0     0     0  1215  1410\n"
    assert [d["index"] for d in dmon.parse(text)["devices"]] == [0]


def test_a_long_dmon_capture_keeps_the_highest_reading():
    text = DMON + "    0    70    36    33     0     0     0     0  1215  1410\n" + DMON.splitlines()[2] + "\n" * 3
    text += "    0    65    34    33     0     0     0     0  1215  1410\n" * 20_000
    assert dmon.parse(text)["devices"][0]["power_w"] == 70.0
