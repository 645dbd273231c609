"""One answer to "how fast can this GPU multiply at most": verify/baselines.json's models (dense BF16 peaks) and its
`tensor_ceilings` (older GPUs' fastest half-precision rate), asked the same way by the gpu and the train check."""
from __future__ import annotations

import json

import pytest

from verify import baselines

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("name", "tflops", "what"), [
    ("NVIDIA H100 80GB HBM3", 989.0, "the H100-SXM's dense BF16 peak"),
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 989.0, "the H100-SXM's dense BF16 peak"),
    ("Tesla T4", 65.0, "the fastest tensor rate of Tesla T4"),
    ("Tesla V100-SXM2-16GB", 130.0, "the fastest tensor rate of Tesla V100-SXM2-16GB"),   # a model without a BF16 peak
    ("NVIDIA A10G", 130.0, "the fastest tensor rate of NVIDIA A10G"),
    ("Tesla K80", 9.0, "the fastest tensor rate of Tesla K80"),
])
def test_a_known_gpu_is_held_to_its_own_ceiling(name, tflops, what):
    found, said = baselines.load().tensor_ceiling(name)
    assert found == tflops and said.startswith(what), said


@pytest.mark.parametrize("name", ["NVIDIA Z9000", None, "", 42, "NVIDIA A100X"])
def test_an_unknown_or_missing_name_is_held_to_the_fastest_gpu_known(name):
    table = baselines.load()
    assert table.tensor_ceiling(name) == (table.max_bf16_peak(),
                                          "the fastest dense BF16 peak verify/baselines.json knows")
    assert table.max_bf16_peak() == 2500.0                          # GB200, the fastest model the file holds


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda c: c.update(value=0), r"tensor_ceilings\.T4\.value must be a positive finite number"),
    (lambda c: c.update(names=["(unclosed"]), r"tensor_ceilings\.T4\.names '\(unclosed' is not a regular expression"),
    (lambda c: c.update(source=""), r"tensor_ceilings\.T4\.source must be a non-empty string"),
    (lambda c: c.update(extra=1), r"tensor_ceilings\.T4 must be an object with names, value, basis and source"),
])
def test_a_bad_ceiling_is_one_error_naming_its_line(edit, needle):
    raw = json.loads(baselines.PATH.read_text())
    edit(raw["tensor_ceilings"]["T4"])
    with pytest.raises(baselines.BaselinesError, match=r"b\.json line \d+: " + needle):
        baselines.parse(json.dumps(raw, indent=1), "b.json")
