# mypy: disable-error-code="arg-type, typeddict-item, return-value"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Every judge branch of the gpu and nccl checks (and the others' codes) driven by hand-made facts.

No GPU is needed: the facts are what probe() would record (tests/verify_handmade.py). Facts from real
hardware live under tests/data/gpu/ (tests/test_gpu_real.py replays them).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import ROOT, run_cli
from tests.verify_handmade import CPU_BUILD, H100, gpu_facts, nccl_facts, nccl_rows, variant
from verify import baselines
from verify.checks import arrow, gpu, hdf5, nccl, shm
from verify.checks.gpu.node import driver_floor
from verify.checks.nccl.spawn import bus_factor
from verify.codes import CODES, readme_table
from verify.options import Options
from verify.result import CheckResult
from verify.shared.cuda_errors import decode

pytestmark = pytest.mark.unit

SCHEMA_V2 = json.loads((ROOT / "verify" / "report.schema.json").read_text())
SCHEMA_V1 = json.loads((ROOT / "verify" / "report.v1.schema.json").read_text())
HANDMADE = ROOT / "tests" / "data" / "facts-handmade" / "h100-8gpu-handmade"


def judge_gpu(facts: dict, **options) -> CheckResult:
    return gpu.judge(facts, Options(**options))


def with_device(facts: dict, index: int, **changes) -> dict:
    out = variant(facts)
    out["devices"][index].update(changes)
    return out


def with_perf(facts: dict, index: int, **changes) -> dict:
    out = variant(facts)
    out["perf"][index].update(changes)
    return out


def assert_verdict(result: CheckResult, status: str, code: str, owner: str, *needles: str) -> None:
    assert (result.status, result.code, result.owner) == (status, code, owner), (result.status, result.code, result.owner, result.summary)
    assert result.remedy, "a non-pass result must carry a remedy"
    for needle in needles:
        assert needle in result.summary + " " + result.remedy, (needle, result.summary, result.remedy)


# ------------------------------------------------------------------------------------------------ gpu
def test_healthy_h100_node_passes_with_figures_against_baselines():
    r = judge_gpu(gpu_facts())
    assert r.status == "pass" and r.code is None and r.owner is None, r.summary
    assert "8 GPU(s) (NVIDIA H100 80GB HBM3)" in r.summary and "within baselines" in r.summary
    assert r.metrics["d2d_GBps_ratio_dev0"].value == pytest.approx(2990 / 3000, rel=1e-4)
    assert any("idle" not in d and "baseline 790" in d for d in r.details)


def test_driver_older_than_the_image_floor_from_the_environment():
    r = judge_gpu(variant(gpu_facts(), driver="570.172.08"))
    assert_verdict(r, "fail", "DRIVER_TOO_OLD", "host", "needs >= 580.65.06", "TORCHIMAGES_DRIVER_MIN")


def test_driver_floor_falls_back_to_the_cuda_major_table_for_foreign_images():
    facts = variant(gpu_facts(), driver_min_env=None, torch_cuda="12.8", driver="520.61.05", cuda_driver="12.0")
    assert driver_floor(facts) == "525.60.13"
    assert_verdict(judge_gpu(facts), "fail", "DRIVER_TOO_OLD", "host", "needs >= 525.60.13")


def test_minor_version_compatibility_warns():
    r = judge_gpu(variant(gpu_facts(), driver_min_env=None, torch_cuda="12.8", driver="550.54.15", cuda_driver="12.4"))
    assert_verdict(r, "warn", "DRIVER_TOO_OLD", "host", "minor-version compatibility")


def test_device_not_in_the_arch_list_is_the_image_s_fault():
    r = judge_gpu(variant(gpu_facts(), arch_list=["sm_75", "sm_80", "sm_86"]))
    assert_verdict(r, "fail", "ARCH_NOT_IN_BUILD", "image", "sm_90")


def test_ptx_of_an_older_arch_runs_but_warns_of_the_jit_cost():
    r = judge_gpu(variant(gpu_facts(), arch_list=["sm_80", "compute_80"]))
    assert_verdict(r, "warn", "ARCH_PTX_JIT", "image", "compute_80 PTX", "JIT")


def test_device_count_mismatch_fails_and_only_warns_under_cuda_visible_devices():
    four = variant(gpu_facts(), torch_devices=4, capabilities=["9.0"] * 4)
    for key in ("kernels", "perf", "sdc"):
        four[key] = four[key][:4]
    assert_verdict(judge_gpu(four), "fail", "DEVICE_COUNT_MISMATCH", "job", "torch sees 4")
    r = judge_gpu(variant(four, cuda_visible_devices="0,1,2,3"))
    assert r.status == "pass" and any("4 of 8 device(s)" in d for d in r.details), r.summary
    r = judge_gpu(variant(four, cuda_visible_devices="0,1,2,3,4,5"))
    assert_verdict(r, "warn", "DEVICE_COUNT_MISMATCH", "job", "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 names 6")


def test_fewer_gpus_than_expected_is_the_job_s():
    assert_verdict(judge_gpu(gpu_facts(), expect_gpus=16), "fail", "GPU_NOT_VISIBLE", "job", "expected 16")


def test_volatile_uncorrectable_ecc_fails_aggregate_only_warns():
    r = judge_gpu(with_device(gpu_facts(), 3, ecc_volatile_uncorrectable=2, ecc_aggregate_uncorrectable=2))
    assert_verdict(r, "fail", "ECC_UNCORRECTABLE", "host", "device 3", "2 volatile uncorrectable")
    r = judge_gpu(with_device(gpu_facts(), 3, ecc_aggregate_uncorrectable=1))
    assert_verdict(r, "warn", "ECC_UNCORRECTABLE", "host", "lifetime")


def test_pending_retirement_and_failed_row_remap():
    assert_verdict(judge_gpu(with_device(gpu_facts(), 1, retired_pages_pending=True)), "fail", "RETIREMENT_PENDING", "host")
    remap = {"correctable": 0, "uncorrectable": 3, "pending": 0, "failed": 1}
    assert_verdict(judge_gpu(with_device(gpu_facts(), 1, row_remap=remap)), "fail", "ROW_REMAP_FAILED", "host", "RMA")
    remap = {"correctable": 0, "uncorrectable": 1, "pending": 1, "failed": 0}
    assert_verdict(judge_gpu(with_device(gpu_facts(), 1, row_remap=remap)), "fail", "RETIREMENT_PENDING", "host", "reset")


@pytest.mark.parametrize("mask,status", [(0x8, "fail"), (0x40, "fail"), (0x80, "fail"), (0x20, "warn"),
                                         (0x1, "pass"), (0x4, "pass"), (0x0, "pass")])
def test_throttle_reasons_hw_slowdown_thermal_and_power_brake_fail_when_re_read(mask, status):
    sample = {"phase": "idle", "throttle_reasons": mask, "nvlink": [True] * 18}
    r = judge_gpu(with_device(gpu_facts(), 2, throttle_reasons=mask, samples=[sample]))
    assert r.status == status, (mask, r.summary)
    if status != "pass":
        assert (r.code, r.owner) == ("THROTTLED", "host")


@pytest.mark.parametrize("mask", [0x8, 0x40, 0x80])
def test_one_transient_hw_slowdown_read_warns_and_names_the_count(mask):
    r = judge_gpu(with_device(gpu_facts(), 2, throttle_reasons=mask))
    assert_verdict(r, "warn", "THROTTLED", "host", "in 1 of 3 read(s)", "transient")


def test_one_hw_slowdown_read_is_confirmed_by_the_clock_or_a_low_figure():
    r = judge_gpu(with_device(gpu_facts(), 2, throttle_reasons=0x88, sm_clock_mhz=382, sm_clock_max_mhz=1980))
    assert_verdict(r, "fail", "THROTTLED", "host", "HwPowerBrakeSlowdown")
    r = judge_gpu(with_perf(with_device(gpu_facts(), 2, throttle_reasons=0x8), 2, bf16_TFLOPs=300.0))
    assert_verdict(r, "fail", "THROTTLED", "host", "device 2")   # the slowdown is the root cause of the low figure
    assert {f["code"] for f in r.data["findings"]} >= {"THROTTLED", "COMPUTE_LOW"}


def test_throttling_seen_in_both_reads_under_load_fails():
    r = judge_gpu(with_perf(gpu_facts(), 5, throttle_under_load=0x80 | 0x4,
                            pcie_under_load={"gen": 5, "width": 16, "throttle_reasons": 0x80}))
    assert_verdict(r, "fail", "THROTTLED", "host", "HwPowerBrakeSlowdown", "in 2 of 3")


def test_hot_gpu_and_lowered_power_limit_warn():
    assert_verdict(judge_gpu(with_device(gpu_facts(), 0, temperature_c=86)), "warn", "THROTTLED", "host", "86 C")
    assert_verdict(judge_gpu(with_device(gpu_facts(), 0, power_limit_w=400.0)), "warn", "THROTTLED", "host", "400 W")


def test_gen3_x8_link_on_a_gen5_x16_device_is_downgraded_and_the_host_s():
    """One transient rule: a link seen downgraded in one read warns; a re-read or a low host copy confirms it."""
    load = {"gen": 3, "width": 8, "throttle_reasons": 0}
    r = judge_gpu(with_perf(gpu_facts(), 4, pcie_under_load=load))
    assert_verdict(r, "warn", "PCIE_DOWNGRADED", "host", "Gen3 x8 under load, capable of Gen5 x16", "in 1 of 2")
    r = judge_gpu(with_device(with_perf(gpu_facts(), 4, pcie_under_load=load), 4, pcie_width=8))
    assert_verdict(r, "fail", "PCIE_DOWNGRADED", "host", "in 2 of 2")
    r = judge_gpu(with_perf(gpu_facts(), 4, pcie_under_load=load, h2d_GBps=13.0))
    assert_verdict(r, "fail", "PCIE_DOWNGRADED", "host", "Gen3 x8 under load")


def test_an_idle_link_at_gen1_is_power_saving_but_a_narrow_link_is_not():
    facts = variant(gpu_facts(), perf=None)        # no reading under load: the idle generation proves nothing
    assert judge_gpu(facts).status == "pass"
    assert_verdict(judge_gpu(with_device(facts, 0, pcie_width=8)), "warn", "PCIE_DOWNGRADED", "host", "x8", "1 of 1")
    again = {"phase": "idle", "throttle_reasons": 1, "gen": 1, "width": 8}
    assert_verdict(judge_gpu(with_device(facts, 0, pcie_width=8, samples=[again])), "fail", "PCIE_DOWNGRADED", "host",
                   "2 of 2")


def test_slot_slower_than_the_gpu_warns():
    r = judge_gpu(with_device(gpu_facts(), 0, pcie_gen_max=4, pcie_gen_gpu_max=5))
    assert r.status == "warn" and r.code == "PCIE_DOWNGRADED" and "Gen4" in r.summary


def test_one_nvlink_down_fails_when_re_read_warns_in_one_poll_a_pcie_card_without_links_passes():
    links = [True] * 18
    links[7] = False
    again = {"phase": "idle", "throttle_reasons": 1, "nvlink": links}
    r = judge_gpu(with_device(gpu_facts(), 6, nvlink=links, samples=[again]))
    assert_verdict(r, "fail", "NVLINK_DOWN", "host", "7 inactive", "in 2 of 2")
    up = {"phase": "idle", "throttle_reasons": 1, "nvlink": [True] * 18}
    r = judge_gpu(with_device(gpu_facts(), 6, nvlink=links, samples=[up]))
    assert_verdict(r, "warn", "NVLINK_DOWN", "host", "in 1 of 2", "not confirmed")
    assert judge_gpu(with_device(gpu_facts(), 6, nvlink=[])).status == "pass"


def test_all_nvlinks_down_on_an_sxm_gpu_fails_but_a_bridged_pcie_card_s_fixed_pattern_passes():
    r = judge_gpu(with_device(gpu_facts(), 3, nvlink=[False] * 18))
    assert_verdict(r, "fail", "NVLINK_DOWN", "host", "all 18 NVLink links inactive")
    pcie = variant(gpu_facts(2), perf=None, sdc=None)
    for dev in pcie["devices"]:
        dev.update(name="NVIDIA H100 PCIe", nvlink=[True] * 12 + [False] * 6)
    assert judge_gpu(pcie).status == "pass"
    flapping = variant(pcie)
    flapping["devices"][1]["samples"] = [{"phase": "idle", "throttle_reasons": 1, "nvlink": [False] + [True] * 11 + [False] * 6}]
    assert_verdict(judge_gpu(flapping), "warn", "NVLINK_DOWN", "host", "link(s) 0 inactive")


@pytest.mark.parametrize("field,ratio,status,code", [
    ("d2d_GBps", 0.6, "fail", "BANDWIDTH_LOW"), ("d2d_GBps", 0.8, "warn", "BANDWIDTH_LOW"),
    ("d2d_GBps", 0.95, "pass", None), ("h2d_GBps", 0.5, "fail", "BANDWIDTH_LOW"),
    ("d2h_GBps", 0.85, "warn", "BANDWIDTH_LOW"), ("bf16_TFLOPs", 0.6, "fail", "COMPUTE_LOW")])
def test_bandwidth_and_compute_ratios_against_the_baseline(field, ratio, status, code):
    base = {"d2d_GBps": 3000, "h2d_GBps": 50, "d2h_GBps": 50, "bf16_TFLOPs": 790}[field]
    r = judge_gpu(with_perf(gpu_facts(), 2, **{field: round(base * ratio, 1)}))
    assert r.status == status and r.code == code, (r.summary, r.code)
    if status != "pass":
        assert r.owner == "host" and f"{ratio:.2f}x" in r.summary and "device 2" in r.summary


def test_copy_at_0_6x_baseline_fails_with_bandwidth_low_owner_host():
    r = judge_gpu(with_perf(gpu_facts(), 0, d2d_GBps=1800.0))
    assert_verdict(r, "fail", "BANDWIDTH_LOW", "host", "0.60x", "3000")


def test_unknown_model_reports_figures_and_says_no_baseline():
    facts = gpu_facts(1)
    facts["devices"][0]["name"] = "NVIDIA Future GPU"
    facts["perf"][0]["d2d_GBps"] = 10.0
    r = judge_gpu(facts)
    assert r.status == "pass" and r.metrics["d2d_GBps_dev0"].value == 10.0
    assert any("no baseline for 'NVIDIA Future GPU'" in d for d in r.details)


def test_sdc_canary_mismatch_on_repeat_and_across_devices():
    facts = variant(gpu_facts())
    facts["sdc"][3]["digests"] = ["9f1c2a7e0b3d4c55", "9f1c2a7e0b3d4c55", "00000000deadbeef", "9f1c2a7e0b3d4c55"]
    assert_verdict(judge_gpu(facts), "fail", "SDC_MISMATCH", "host", "device 3", "2 different results")
    facts = variant(gpu_facts())
    facts["sdc"][5]["digests"] = ["1111111111111111"] * 4
    assert_verdict(judge_gpu(facts), "fail", "SDC_MISMATCH", "host", "device 5", "the other 7")
    facts = variant(gpu_facts(2))                  # a MIG slice (other SM count) is not compared with whole GPUs
    facts["sdc"][1].update(name=H100 + " MIG 3g.40gb", sm_count=60, digests=["2222222222222222"] * 4)
    assert judge_gpu(facts).status == "pass"


@pytest.mark.parametrize("error,code,owner,needle", [
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized",
     "DRIVER_ERROR", "host", "fabricmanager"),
    ("RuntimeError: CUDA driver initialization failed: CUDA driver version is insufficient for CUDA runtime version",
     "DRIVER_TOO_OLD", "host", "driver is older"),     # the line prints no number: none is said (mend3)
    ("RuntimeError: Error 804: forward compatibility was attempted on non supported HW", "DRIVER_ERROR", "image", "804"),
    ("RuntimeError: Error 803: system has unsupported display driver / cuda driver combination", "DRIVER_ERROR", "image", "803")])
def test_cuda_init_errors_are_decoded(error, code, owner, needle):
    r = judge_gpu(variant(gpu_facts(), cuda_available=False, torch_devices=0, capabilities=[], kernels=[], perf=[], sdc=[],
                          cuda_init_error=error))
    assert (r.status, r.code, r.owner) == ("fail", code, owner)
    assert needle in r.summary + (r.remedy or "")


def test_decoder_knows_the_container_toolkit_refusal():
    d = decode("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0, please update your driver")
    assert d and d.code == "DRIVER_TOO_OLD" and "NVIDIA_REQUIRE_CUDA" in d.cause
    assert decode("RuntimeError: something else") is None and decode(None) is None


def test_nvml_fields_that_are_not_supported_are_facts_not_crashes():
    facts = gpu_facts(2)
    for dev in facts["devices"]:
        for key in ("ecc", "ecc_volatile_uncorrectable", "row_remap", "throttle_reasons", "pcie_gen", "pcie_gen_max",
                    "temperature_slowdown_c", "power_default_limit_w", "retired_pages_pending"):
            dev[key] = None
            dev["unsupported"][key] = "NotSupported"
    assert judge_gpu(facts).status == "pass"


@pytest.mark.parametrize("changes,owner,needle", [
    ({"torch_cuda": "none"}, "image", "CPU build"), ({"device_nodes": False}, "job", "--gpus all"),
    ({"nvml_library": False}, "host", "libnvidia-ml"), ({"nvml_error": "NVMLError_DriverNotLoaded"}, "host", "NVML")])
def test_no_gpu_causes_name_the_owner_and_fail_only_when_expected(changes, owner, needle):
    facts = variant(gpu_facts(), devices=[], **CPU_BUILD, **changes)
    skip = judge_gpu(facts)
    assert (skip.status, skip.code, skip.owner) == ("skip", "GPU_NOT_VISIBLE", owner) and needle in skip.summary + (skip.remedy or "")
    assert judge_gpu(facts, expect_gpus=1).status == "fail"


# ----------------------------------------------------------------------------------------------- nccl
def judge_nccl(facts: dict, **options) -> CheckResult:
    return nccl.judge(facts, Options(**options))


def test_nccl_healthy_8_gpus_against_the_nvls_and_ring_baselines():
    r = judge_nccl(nccl_facts())
    assert r.status == "pass" and "0.98x the nvls baseline" in r.summary and "NCCL 2.27.7" in r.details
    ring = variant(nccl_facts(peak=360.0), nccl_env={"NCCL_ALGO": "Ring"})
    assert judge_nccl(ring).status == "pass" and any("ring baseline 370" in d for d in judge_nccl(ring).details)


def test_nccl_busbw_below_0_75x_fails_bandwidth_low():
    assert_verdict(judge_nccl(nccl_facts(peak=280.0)), "fail", "BANDWIDTH_LOW", "host", "0.58x")
    assert judge_nccl(nccl_facts(peak=410.0)).status == "warn"


def test_nccl_world_size_1_is_no_bandwidth_measurement():
    """One rank moves nothing: never a pass as if bandwidth were measured, never a fail (issue 25, item 5)."""
    r = judge_nccl(nccl_facts(world=1, peak=0.0))
    assert bus_factor(1) == 0.0
    assert_verdict(r, "skip", "NCCL_SINGLE_RANK", "job", "nothing crossed a link")
    assert "busbw_max" not in r.metrics and "algbw_max" not in r.metrics


def test_nccl_wrong_result():
    facts = nccl_facts()
    facts["sizes"][3]["wrong"] = 17
    assert_verdict(judge_nccl(facts), "fail", "NCCL_WRONG_RESULT", "host", "17 wrong", "NCCL_P2P_DISABLE=1")


def test_nccl_hang_in_all_reduce_is_a_timeout_with_advice():
    facts = variant(nccl_facts(), sizes=[], error="all_reduce: DistBackendError: [Rank 0] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE) ran for 60000 milliseconds")
    assert_verdict(judge_nccl(facts), "fail", "NCCL_TIMEOUT", "host", "hung", "NCCL_DEBUG=INFO")


def test_nccl_timeout_advice_follows_what_was_seen():
    facts = variant(nccl_facts(), sizes=[], error="init: DistStoreError: Timed out after 61 seconds waiting for clients",
                    shm_bytes=64 << 20, infiniband=True, memlock_bytes=64 << 10, rank=0,
                    mode="torchrun group: rank 0 of 8 (local rank 0), node0:29500")
    r = judge_nccl(facts)
    assert r.code == "NCCL_TIMEOUT"
    for needle in ("never formed", "/dev/shm is only 64 MiB", "memlock limit is 64 KiB"):
        assert needle in (r.remedy or ""), needle
    # one node's ranks talk over no socket interface: the interface tip only where the record shows several nodes
    assert "NCCL_SOCKET_IFNAME" not in (r.remedy or "")
    across = judge_nccl({**facts, "nodes": 2, "mode": "torchrun group: rank 0 of 8 (local rank 0), node0:29500"})
    assert "NCCL_SOCKET_IFNAME" in (across.remedy or "")
    quiet = judge_nccl(variant(nccl_facts(), sizes=[], error="all_reduce: timed out after 420 s waiting for 1 rank(s)"))
    assert quiet.remedy and "/dev/shm" not in quiet.remedy.split("NCCL_DEBUG")[0] and "memlock" not in quiet.remedy


def test_nccl_other_error_and_missing_distributed():
    r = judge_nccl(variant(nccl_facts(), sizes=[], error="all_reduce: DistBackendError: NCCL error: unhandled cuda error"))
    assert_verdict(r, "fail", "NCCL_FAILED", "host", "unhandled cuda error")
    assert_verdict(judge_nccl({"distributed": False}), "fail", "DISTRIBUTED_UNAVAILABLE", "image")


def test_gloo_fallback_skips_and_fails_when_gpus_are_expected():
    facts = variant(nccl_facts(world=2), backend="gloo", gpus=0, nccl_version=None, device_name=None, nccl_log={},
                    sizes=nccl_rows(2, 1.0)[:3], mode="2 local process(es), one per CPU worker")
    skip = judge_nccl(facts)
    assert (skip.status, skip.code, skip.owner) == ("skip", "NCCL_NOT_EXERCISED", "job")
    assert "all-reduce verified over gloo, world size 2, 3 sizes 1-16 MiB" in skip.summary
    assert judge_nccl(facts, expect_gpus=1).status == "fail"


# ------------------------------------------------------------------------------------- shm, hdf5, arrow
def test_shm_too_small_is_the_job_s():
    facts = {"path": "/dev/shm", "exists": True, "required": 1 << 30, "size": 64 << 20, "free": 64 << 20,
             "raw_ok": False, "raw_msg": "killed by SIGBUS (Bus error: /dev/shm exhausted)", "torch_ok": False,
             "torch_msg": "No space left on device"}
    assert_verdict(shm.judge(facts, Options()), "fail", "SHM_TOO_SMALL", "job", "64 MiB", "--shm-size")
    assert shm.judge({"path": "/dev/shm", "exists": False, "required": 1}, Options()).code == "SHM_TOO_SMALL"


def test_missing_packages_skip_with_the_pip_line():
    r = hdf5.judge({"missing": ["h5py"]}, Options())
    assert (r.status, r.code, r.owner, r.remedy) == ("skip", "PACKAGE_MISSING", "image", "pip install h5py")
    r = arrow.judge({"missing": ["torchdata"]}, Options())
    assert (r.status, r.code, r.remedy) == ("skip", "PACKAGE_MISSING", "pip install torchdata")


# --------------------------------------------------------------------------------- codes, data, schema
def _codes_in_source() -> set[str]:
    found = set()
    for path in (ROOT / "verify").rglob("*.py"):
        text = path.read_text()
        found |= set(re.findall(r'(?:verdict\(\s*\w+,\s*|add\(\s*\w+,\s*|code=|Decoded\()"([A-Z][A-Z0-9_]+)"', text))
        found |= set(re.findall(r'\("([A-Z][A-Z0-9_]+)", "(?:job|host|image)"\)', text))
        found |= set(re.findall(r'(?:code = |else )"([A-Z][A-Z0-9_]+)"', text))
    return found


def test_every_code_the_checks_use_is_documented_once():
    used = _codes_in_source()
    assert {"GPU_NOT_VISIBLE", "ECC_UNCORRECTABLE", "PCIE_DOWNGRADED", "NCCL_TIMEOUT", "CHECK_TIMEOUT"} <= used
    assert used <= set(CODES), used - set(CODES)
    for name, code in CODES.items():
        assert code.owner in ("image", "host", "job") and code.meaning and code.fix, name


def test_the_docs_table_is_generated_from_the_codes_module():
    docs = (ROOT / "docs" / "codes.md").read_text()
    assert readme_table() in docs, "docs/codes.md's failure-code table differs: run `python -m scripts docs-codes`"


def test_baselines_file_loads_validated_and_cites_every_figure():
    table = baselines.load()
    h100 = table.model(H100)
    assert h100 is not None and h100.sku == "H100-SXM" and h100.nvlink
    assert h100.figures["d2d_copy_GBps"]["value"] == 3000 and h100.figures["bf16_matmul_TFLOPs"]["value"] == 790
    assert h100.busbw[8]["ring"]["value"] == 370 and h100.busbw[8]["nvls"]["value"] == 480
    every = [f for m in table.models for f in list(m.figures.values()) + [a for w in m.busbw.values() for a in w.values()]]
    assert len(every) >= 40
    for fig in every:
        assert fig["basis"] and ("http" in fig["source"] or "issue 8" in fig["source"]), fig
    assert "not DCGM" in table.rule.source and table.rule.peer_below == 0.8
    constants = [c for m in table.models for c in (m.constants or {}).values()]
    assert len(constants) >= 30 and h100.constant("sm_clock_max_mhz") == 1980 and h100.constant("pcie_gen") == 5
    for const in constants:       # a published constant names its source: a URL, or the recording it was read from
        assert const["basis"] and ("http" in const["source"] or const["source"].startswith("tests/data/gpu/")), const


@pytest.mark.parametrize("edit,needle", [
    (lambda m: m.update(constants={"sm_clock_max": {"value": 1, "basis": "b", "source": "s"}}), "keys among"),
    (lambda m: m.update(constants={"pcie_gen": {"value": 5.5, "basis": "b", "source": "s"}}), "whole number"),
    (lambda m: m.update(constants={"pcie_gen": {"value": 5, "basis": "", "source": "s"}}), "non-empty string"),
])
def test_a_broken_model_constant_is_one_error_naming_it(edit, needle):
    import json
    raw = json.loads(baselines.PATH.read_text())
    edit(raw["models"]["H100-SXM"])
    with pytest.raises(baselines.BaselinesError, match=needle):
        baselines.parse(json.dumps(raw, indent=1), "b.json")
    assert baselines.judge_ratio(0.6, 1.0)[0] == "fail" and baselines.judge_ratio(0.8, 1.0)[0] == "warn"
    assert baselines.judge_ratio(0.9, 1.0)[0] == "pass"


def test_a_version_1_report_still_validates_against_the_v1_schema_only():
    v1 = {"schema_version": 1, "tool": {"name": "verify", "version": "1.0.0"}, "created": "2026-11-20T10:00:00Z",
          "status": "pass", "environment": {"python": "3.11.2", "torch": "2.13.0+cpu", "torch_build": "cpu"}, "options": {},
          "checks": [{"name": "gpu", "status": "skip", "summary": "no GPU visible", "details": [], "metrics": {},
                      "remedy": "--gpus all", "duration_s": 1.7}]}
    jsonschema.validate(v1, SCHEMA_V1)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(v1, SCHEMA_V2)


def test_v2_schema_demands_a_code_and_owner_on_every_skip_and_failure():
    from verify.report import build_report
    ok = build_report([judge_gpu(gpu_facts())], {}, {})
    jsonschema.validate(ok, SCHEMA_V2)
    bad = build_report([CheckResult("gpu", "skip", "no GPU", remedy="x")], {}, {})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA_V2)


# ------------------------------------------------------------------------------------- replay (CLI)
@pytest.mark.host
def test_from_facts_replays_the_handmade_h100_node_and_names_its_host(tmp_path):
    proc = run_cli("--from-facts", str(HANDMADE), "--json", str(tmp_path / "r.json"), module="verify", timeout=120)
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, SCHEMA_V2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["replay"]["host"] == "handmade-h100-node" and "REPLAY of facts recorded on handmade-h100-node" in proc.stdout
    recorded = {n: json.loads((HANDMADE / f"{n}.json").read_text())["result"]["status"] for n in ("gpu", "nccl")}
    assert {c["name"]: c["status"] for c in report["checks"]} == recorded == {"gpu": "pass", "nccl": "pass"}


@pytest.mark.host
def test_from_facts_with_an_ecc_error_fails_with_code_and_owner(tmp_path):
    facts_dir = tmp_path / "facts"
    shutil.copytree(HANDMADE, facts_dir)
    record = json.loads((facts_dir / "gpu.json").read_text())
    record["facts"]["devices"][2]["ecc_volatile_uncorrectable"] = 1
    (facts_dir / "gpu.json").write_text(json.dumps(record))
    proc = run_cli("--from-facts", str(facts_dir), "--checks", "gpu", "--json", str(tmp_path / "r.json"), module="verify",
                   timeout=120)
    check = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 1 and (check["code"], check["owner"]) == ("ECC_UNCORRECTABLE", "host")
    assert "code: ECC_UNCORRECTABLE (owner: host)" in proc.stdout


@pytest.mark.host
def test_from_facts_without_a_recording_is_one_line(tmp_path):
    proc = run_cli("--from-facts", str(tmp_path), module="verify", timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "--save-facts" in proc.stderr


def test_no_file_under_tests_data_gpu_is_handmade():
    """tests/data/gpu/ is for facts from real hardware only."""
    gpu_dir = Path(ROOT / "tests" / "data" / "gpu")
    assert not gpu_dir.exists() or not [p for p in gpu_dir.rglob("*") if "handmade" in p.name]
