# mypy: disable-error-code="arg-type, typeddict-item, return-value"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""The vision check's judge on hand-made facts (no torchvision needed), and its torch -> torchvision pins."""
from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.helpers import ROOT
from verify.checks.vision.check import (
    TORCHVISION_FOR_TORCH,
    cuda_release,
    expected_torchvision,
    judge,
    pairs,
    pip_line,
)
from verify.options import Options
from verify.report import build_report

pytestmark = pytest.mark.unit

OPTS = Options()
SCHEMA = json.loads((ROOT / "verify" / "report.schema.json").read_text())


def handmade_good(**over) -> dict:
    """Facts as the probe writes them for torch 2.14.1 + torchvision 0.29.1 from PyPI, CPU side only."""
    facts = {
        "torch_dist": "2.14.1", "torchvision_dist": "0.29.1", "torch": "2.14.1+cu130", "torch_cuda": "13.0",
        "gpu_visible": False, "torchvision": "0.29.1+cu130", "torchvision_cuda": 13000,
        "nms": {"cpu": {"ok": True, "keep": [0, 2], "expected": [0, 2]}},
        "decode": {"png": {"ok": True, "bytes": 100, "shape": [3, 256, 256], "mean_abs_diff": 0.0, "decode_image_same": True},
                   "jpeg": {"ok": True, "bytes": 50, "shape": [3, 256, 256], "mean_abs_diff": 6.0, "decode_image_same": True}},
        "augment": {"cpu": {"ok": True, "images": 64, "seconds": 0.8, "shape": [64, 3, 224, 224], "dtype": "float32",
                            "finite": True, "std": 1.1}},
    }
    facts.update(over)
    return facts


def test_pins_follow_the_rule_and_agree_with_compat_yaml():
    assert expected_torchvision("2.14.1") == "0.29.1" and expected_torchvision("2.13.0+cpu") == "0.28.0"
    assert expected_torchvision("2.11.0") == "0.26.0"
    assert expected_torchvision("2.15.0") == "0.30.*"           # not in the table: minor + 15
    assert expected_torchvision("1.13.1") is None
    compat = yaml.safe_load((ROOT / "compat.yaml").read_text())
    pinned = {v: rel["torchvision"] for v, rel in compat["torch"].items() if rel.get("torchvision")}
    assert pinned == TORCHVISION_FOR_TORCH
    for torch_v, tv in pinned.items():     # the rule holds for every pinned pair
        assert int(tv.split(".")[1]) == int(torch_v.split(".")[1]) + 15
    assert pairs("2.14.1", "0.29.0") and not pairs("2.13.0+cpu", "0.29.1")


def test_pip_line_names_pytorchs_index_for_local_builds():
    assert pip_line("2.14.1") == "pip install torchvision==0.29.1"
    assert pip_line("2.13.0+cpu") == "pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu"
    assert pip_line("2.14.1+cu126").endswith("--index-url https://download.pytorch.org/whl/cu126")


def test_cuda_versions_compare_across_both_spellings():
    assert cuda_release("13.0") == cuda_release(13000) == cuda_release("13000") == (13, 0)
    assert cuda_release("12.6") == cuda_release(12060) == (12, 6)
    assert cuda_release(None) is None and cuda_release(-1) is None


def test_a_good_pair_passes_with_throughput_and_says_cpu_only():
    r = judge(handmade_good(), OPTS)
    assert r.status == "pass", r.summary
    assert "torchvision 0.29.1 (CUDA 13.0) with torch 2.14.1" in r.summary and "80 images/s" in r.summary
    assert "no GPU visible" in r.summary and r.metrics["augment_cpu_images_per_s"].value == 80.0
    assert r.code is None and r.owner is None


def test_nms_missing_at_import_is_diagnosed_as_a_mismatch_with_both_versions_and_the_pin():
    facts = {"torch_dist": "2.13.0+cpu", "torchvision_dist": "0.29.1", "torch": "2.13.0+cpu", "torch_cuda": None,
             "gpu_visible": False, "import_error": "RuntimeError: operator torchvision::nms does not exist",
             "import_traceback": ["RuntimeError: operator torchvision::nms does not exist"]}
    r = judge(facts, OPTS)
    assert (r.status, r.code, r.owner) == ("fail", "TORCHVISION_MISMATCH", "image")
    assert "torchvision 0.29.1 does not match torch 2.13.0+cpu" in r.summary
    assert "operator torchvision::nms does not exist" in r.summary and "needs torchvision 0.28.0" in r.summary
    assert "pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu" in (r.remedy or "")


def test_right_release_wrong_build_says_so():
    facts = {"torch_dist": "2.14.1+cpu", "torchvision_dist": "0.29.1", "torch": "2.14.1+cpu", "torch_cuda": None,
             "gpu_visible": False, "import_error": "RuntimeError: operator torchvision::nms does not exist"}
    r = judge(facts, OPTS)
    assert r.code == "TORCHVISION_MISMATCH" and "the release line is right, the build is not" in r.summary
    assert "whl/cpu" in (r.remedy or "")


def test_nms_missing_after_import_is_a_mismatch_too():
    r = judge(handmade_good(torch_dist="2.13.0", torch="2.13.0",
                            nms={"cpu": {"ok": False, "error": "RuntimeError: operator torchvision::nms does not exist"}}),
              OPTS)
    assert (r.status, r.code) == ("fail", "TORCHVISION_MISMATCH") and "torch 2.13.0 needs torchvision 0.28.0" in r.summary


def test_ops_missing_on_the_gpu_only():
    r = judge(handmade_good(gpu_visible=True, nms={"cpu": {"ok": True, "keep": [0, 2], "expected": [0, 2]},
                                                   "cuda": {"ok": False, "error": "NotImplementedError: Could not run "
                                                            "'torchvision::nms' with arguments from the 'CUDA' backend"}}),
              OPTS)
    assert (r.status, r.code, r.owner) == ("fail", "TORCHVISION_OPS_MISSING", "image") and "GPU" in r.summary


def test_torchvision_cpu_build_beside_cuda_torch_is_a_cuda_mismatch():
    r = judge(handmade_good(torchvision_cuda=None), OPTS)
    assert (r.status, r.code) == ("fail", "TORCHVISION_CUDA_MISMATCH")
    assert "CUDA none (CPU)" in r.summary and "torch 2.14.1 for CUDA 13.0" in r.summary


def test_missing_torchvision_skips_with_the_install_line():
    facts = {"torch_dist": "2.13.0+cpu", "torchvision_dist": None, "torch": "2.13.0+cpu", "torch_cuda": None,
             "gpu_visible": False, "import_error": "ModuleNotFoundError: No module named 'torchvision'"}
    r = judge(facts, OPTS)
    assert (r.status, r.code, r.owner) == ("skip", "PACKAGE_MISSING", "image")
    assert "torchvision is not installed" in r.summary and "whl/cpu" in (r.remedy or "")


def test_decode_and_transform_failures():
    bad = handmade_good()
    bad["decode"]["jpeg"] = {"ok": False, "error": "RuntimeError: libjpeg not found"}
    r = judge(bad, OPTS)
    assert (r.status, r.code) == ("fail", "IMAGE_DECODE_FAILED") and "JPEG decode on the CPU" in r.summary
    wrong = handmade_good()
    wrong["decode"]["png"]["mean_abs_diff"] = 3.0
    assert judge(wrong, OPTS).code == "IMAGE_DECODE_WRONG"
    gpu_decode = handmade_good(gpu_visible=True)
    gpu_decode["decode"]["jpeg_gpu"] = {"ok": False, "error": "RuntimeError: nvjpeg"}
    assert (judge(gpu_decode, OPTS).status, judge(gpu_decode, OPTS).code) == ("warn", "IMAGE_DECODE_FAILED")
    aug = handmade_good(augment={"cpu": {"ok": False, "error": "TypeError: bad"}})
    assert judge(aug, OPTS).code == "TRANSFORMS_FAILED"


def test_unpaired_versions_whose_ops_load_warn():
    r = judge(handmade_good(torchvision_dist="0.28.0", torchvision="0.28.0"), OPTS)
    assert (r.status, r.code) == ("warn", "TORCHVISION_MISMATCH") and "untested" in r.summary


def test_torch_that_does_not_import_fails():
    r = judge({"torchvision_dist": None, "torch_dist": "2.14.1", "torch_error": "ImportError: libcudart.so.13"}, OPTS)
    assert (r.status, r.code) == ("fail", "TORCH_IMPORT_FAILED")


def test_results_with_code_and_owner_fit_the_report_schema():
    results = [judge(handmade_good(), OPTS), judge(handmade_good(torchvision_cuda=None), OPTS)]
    jsonschema.validate(build_report(results, {}, {}), SCHEMA)
