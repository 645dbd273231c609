"""Pure logic of the verify package: sizes, bandwidth formulas, message recognition, reports."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from tests.helpers import ROOT
from verify.checks.gpu.node import why_no_gpu
from verify.checks.hdf5.check import diagnose_import_error
from verify.checks.nccl.spawn import bus_factor, message_sizes
from verify.facts import GpuFacts
from verify.options import parse_size
from verify.report import build_report, overall, render_table, write_junit
from verify.result import CheckResult
from verify.shared.shmem import recognise

pytestmark = pytest.mark.unit

SCHEMA = json.loads((ROOT / "verify" / "report.schema.json").read_text())


def test_sizes_parse_like_docker():
    assert parse_size("64m") == 64 << 20 and parse_size("1G") == 1 << 30 and parse_size("2GiB") == 2 << 30
    assert parse_size("1048576") == 1 << 20
    for text in ("\u0661g", "\uff11g", "1_0m", "\u0662"):          # other scripts' digits, underscores: no size
        with pytest.raises(ValueError):
            parse_size(text)


def test_nccl_sizes_and_bus_bandwidth_factor_follow_nccl_tests():
    assert message_sizes(1 << 20, 64 << 20) == [1 << 20, 4 << 20, 16 << 20, 64 << 20]
    assert bus_factor(1) == 0.0 and bus_factor(2) == 1.0 and bus_factor(8) == 2 * 7 / 8


def test_every_known_shared_memory_error_is_recognised():
    for text in ("RuntimeError: unable to allocate shared memory(shm) for file </torch_41_1_0>: No space left on device (28)",
                 "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\nBus error",
                 "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. ",
                 "OSError: [Errno 28] No space left on device"):
        assert recognise(text), text
    assert recognise("ValueError: something else") is None


def test_no_gpu_diagnosis_starts_with_a_cpu_build():
    cause, remedy, owner, shown = why_no_gpu({"torch": "2.13.0+cpu", "torch_cuda": "none"})
    assert "CPU build" in cause and "CUDA image" in remedy and owner == "image" and shown is None


def test_a_driver_whose_kernel_module_and_library_differ_is_a_fault_whether_gpus_were_expected_or_not():
    """NVML_ERROR_LIB_RM_VERSION_MISMATCH proves a driver installed and broken (tests/data/real-world/nvml-driver-
    library-mismatch-kmod-520-userspace-525: a half-upgraded host); without it, no GPU is only a failure where GPUs
    are expected."""
    facts: GpuFacts = {"torch": None, "nvml_library": True, "devices": [],
                       "nvml_error": "Failed to initialize NVML: Driver/library version mismatch"}
    _cause, remedy, owner, shown = why_no_gpu(facts)
    assert (owner, shown) == ("host", "DRIVER_ERROR") and "Reboot" in remedy and "image ships driver" in remedy
    assert why_no_gpu({**facts, "nvml_error": "Failed to initialize NVML: Driver Not Loaded"})[3] is None


def test_missing_libhdf5_is_named():
    err = ImportError("libhdf5-2e6c5d22.so.320.0.0: cannot open shared object file: No such file or directory")
    summary, _details, remedy = diagnose_import_error(err)
    assert "cannot load libhdf5-2e6c5d22.so.320.0.0" in summary and "h5py.libs" in summary
    assert "--force-reinstall" in remedy


def _results() -> list[CheckResult]:
    ok = CheckResult("shm", "pass", "fine")
    ok.metric("size", 2 << 30, "bytes")
    bad = CheckResult("arrow", "fail", "copied", details=["a", "b"], remedy="do x", code="ARROW_COPIED", owner="image",
                      output="boom")
    return [ok, bad, CheckResult("gpu", "skip", "no GPU", remedy="--gpus all", code="GPU_NOT_VISIBLE", owner="job")]


def test_json_report_validates_against_the_schema_and_the_schema_can_fail():
    report = build_report(_results(), {"python": "3.11", "torch": "2.13.0", "torch_build": "cpu"}, {})
    jsonschema.validate(report, SCHEMA)
    assert report["status"] == "fail" and report["schema_version"] == 2
    report["checks"][1]["remedy"] = None          # a failure without a remedy is invalid
    try:
        jsonschema.validate(report, SCHEMA)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("schema accepted a failing check without a remedy")


def test_junit_parses_with_failures_and_skips(tmp_path):
    path = tmp_path / "r.xml"
    write_junit(_results(), str(path))
    suite = ET.parse(path).getroot()
    assert suite.tag == "testsuite" and suite.get("tests") == "3" and suite.get("failures") == "1" and suite.get("skipped") == "1"
    assert suite.findall("testcase[@name='arrow']/failure")[0].get("message") == "copied"


def test_table_shows_remedy_and_verdict():
    text = render_table(_results(), {"python": "3.11"})
    assert "remedy: do x" in text and "verdict: FAIL (1 pass, 0 warn, 1 skip, 1 fail)" in text
    assert overall(_results()[:1]) == "pass"


def test_the_option_flags_a_replay_takes_over_are_read_from_the_parser():
    """Every option that sets an Options field, and only those: no second list of flags to keep in step."""
    from verify.cli import _parser, option_flags
    assert option_flags(_parser()) == {
        "--expect-gpus": "expect_gpus", "--shm-min": "shm_min_bytes", "--arrow-size": "arrow_bytes",
        "--arrow-min-ratio": "arrow_min_ratio", "--nccl-min-size": "nccl_min_bytes", "--nccl-max-size": "nccl_max_bytes",
        "--nccl-timeout": "nccl_timeout_s", "--no-perf": "gpu_perf"}
