# mypy: disable-error-code="arg-type, typeddict-item, return-value"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""The parts of the GPU and NCCL probes that need no GPU: NVML per-field guards and NCCL's log parsing.

The NVML stand-in below is a fake of the pynvml module's surface (no GPU here); it only drives the guard
logic: a field NVML cannot give becomes None plus its error, never a crash.
"""
from __future__ import annotations

import types
from pathlib import Path

import pytest

from verify.checks import gpu
from verify.checks.gpu import gpuprobe
from verify.checks.nccl import probing as nccl_probing
from verify.options import Options

pytestmark = pytest.mark.unit


class NVMLError_NotSupported(Exception):  # pynvml's own class name
    pass


def _fake_nvml(unsupported: set[str]) -> types.SimpleNamespace:
    def give(name, value):
        def fn(*_args):
            if name in unsupported:
                raise NVMLError_NotSupported("Not Supported")
            return value
        return fn
    link_states = [1, 1, 0]

    def nvlink(_h, link):
        if "nvmlDeviceGetNvLinkState" in unsupported or link >= len(link_states):
            raise NVMLError_NotSupported("Not Supported")
        return link_states[link]
    return types.SimpleNamespace(
        NVML_MEMORY_ERROR_TYPE_UNCORRECTED=1, NVML_MEMORY_ERROR_TYPE_CORRECTED=0, NVML_VOLATILE_ECC=0, NVML_AGGREGATE_ECC=1, NVML_TEMPERATURE_GPU=0,
        NVML_TEMPERATURE_THRESHOLD_SLOWDOWN=1,
        nvmlDeviceGetHandleByIndex=lambda i: f"h{i}", nvmlDeviceGetName=give("name", b"NVIDIA H100 80GB HBM3"),
        nvmlDeviceGetUUID=give("uuid", "GPU-1"), nvmlDeviceGetPciInfo=give("pci", types.SimpleNamespace(busId=b"0000:18:00.0")),
        nvmlDeviceGetMemoryInfo=give("mem", types.SimpleNamespace(total=80 << 30)),
        nvmlDeviceGetCudaComputeCapability=give("cc", (9, 0)), nvmlDeviceGetPersistenceMode=give("persistence", 1),
        nvmlDeviceGetComputeMode=give("compute_mode", 3),
        nvmlDeviceGetMigMode=give("mig", (0, 0)), nvmlDeviceGetEccMode=give("ecc", (1, 1)),
        nvmlDeviceGetTotalEccErrors=give("ecc_errors", 0), nvmlDeviceGetRetiredPagesPendingStatus=give("retired", 0),
        nvmlDeviceGetRemappedRows=give("remap", (0, 0, 0, 0)), nvmlDeviceGetCurrentClocksEventReasons=give("throttle", 0x1),
        nvmlDeviceGetCurrPcieLinkGeneration=give("gen", 5), nvmlDeviceGetCurrPcieLinkWidth=give("width", 16),
        nvmlDeviceGetMaxPcieLinkGeneration=give("gen_max", 5), nvmlDeviceGetMaxPcieLinkWidth=give("width_max", 16),
        nvmlDeviceGetGpuMaxPcieLinkGeneration=give("gpu_max", 5), nvmlDeviceGetNvLinkState=nvlink,
        nvmlDeviceGetTemperature=give("temp", 40), nvmlDeviceGetTemperatureThreshold=give("slowdown", 87),
        nvmlDeviceGetPowerUsage=give("power", 70000), nvmlDeviceGetEnforcedPowerLimit=give("limit", 700000),
        nvmlDeviceGetPowerManagementDefaultLimit=give("default", 700000),
        nvmlDeviceGetPowerManagementLimit=give("set", 700000))


def test_every_nvml_field_is_read_and_decoded():
    dev = gpuprobe.nvml_device(_fake_nvml(set()), 0)
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["pci_bus_id"] == "0000:18:00.0" and dev["cc"] == "9.0"
    assert dev["row_remap"] == {"correctable": 0, "uncorrectable": 0, "pending": 0, "failed": 0}
    assert dev["nvlink"] == [True, True, False] and dev["power_limit_w"] == 700.0
    assert dev["compute_mode"] == "exclusive_process"      # NVML_COMPUTEMODE_EXCLUSIVE_PROCESS (3)
    assert dev["ecc_volatile_correctable"] == 0 and dev["ecc_aggregate_correctable"] == 0
    # the fake has no calls for the newer fields: absent from this pynvml, so unsupported, never an error
    assert set(dev["unsupported"]) == {"ecc_sram_uncorrectable", "ecc_dram_uncorrectable", "recovery_action",
                                       "memory_temperature_c", "memory_temperature_max_c", "sm_clock_mhz",
                                       "sm_clock_max_mhz"} and dev["nvml_errors"] == {} and dev["numa_node"] is None


def test_an_unsupported_nvml_field_is_a_fact_not_a_crash():
    dev = gpuprobe.nvml_device(_fake_nvml({"ecc", "remap", "throttle", "default", "nvmlDeviceGetNvLinkState"}), 0)
    assert dev["ecc"] is None and dev["row_remap"] is None and dev["throttle_reasons"] is None and dev["nvlink"] == []
    assert dev["unsupported"]["ecc"] == "NotSupported" and set(dev["unsupported"]) >= {
        "ecc", "row_remap", "throttle_reasons", "power_default_limit_w"}
    assert dev["nvml_errors"] == {} and dev["lost"] is False       # absent calls of an older pynvml are not errors
    facts = {"torch_cuda": "13.0", "devices": [dev], "cuda_available": True, "torch_devices": 1, "capabilities": ["9.0"],
             "arch_list": ["sm_90"], "driver": "580.95.05", "cuda_driver": "13.0"}
    assert gpu.judge(facts, Options()).status == "pass"


def test_nccl_log_says_which_network_interface_and_transport(tmp_path):
    (tmp_path / "nccl.node0.4242.log").write_text(
        "node0:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.2<0>\n"
        "node0:4242:4242 [0] NCCL INFO Using network IB\n"
        "node0:4242:4250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        "node0:4242:4250 [0] NCCL INFO NVLS multicast support is available on dev 0\n")
    log = nccl_probing._nccl_log(str(tmp_path))
    assert {k: log[k] for k in ("network", "interface", "nvls", "transports", "ib_error", "hcas")} == {
        "network": "IB", "interface": "mlx5_0:1/IB", "nvls": True, "transports": ["P2P/CUMEM"], "ib_error": None,
        "hcas": ["mlx5_0:1/IB", "mlx5_1:1/IB"]}
    assert nccl_probing._nccl_log(str(tmp_path / "none")) == {}


def test_nccl_environment_facts_are_read():
    facts = nccl_probing._environment_facts()
    assert facts["shm_bytes"] is None or facts["shm_bytes"] > 0
    assert "memlock_bytes" in facts and isinstance(facts["nccl_env"], dict)


def test_a_check_declared_in_the_table_runs_and_its_recorded_verdict_replays_without_facts(monkeypatch):
    from verify.checks import CHECKS
    from verify.child import run_one
    from verify.contract import Check
    from verify.options import Options
    from verify.replay import Record, judge
    from verify.result import CheckResult
    row = Check("declared", "a test check", 5.0, lambda options: {},
                lambda facts, options: CheckResult("declared", "warn", "old style", remedy="r", code="CHECK_CRASHED",
                                                   owner="image"))
    monkeypatch.setitem(CHECKS, "declared", row)
    facts, result = run_one("declared", Options())
    assert facts == {} and result.status == "warn"
    again = judge(Record("declared", Path("declared.json"), None, result.to_dict()), Options())
    assert again.status == "warn" and "recorded verdict kept" in again.details[-1]


def test_a_probe_that_needs_a_missing_package_is_a_skip_with_the_pip_line(monkeypatch):
    from verify.checks import CHECKS
    from verify.child import run_one
    from verify.contract import Check
    from verify.options import Options

    def probe(options):
        raise ModuleNotFoundError("No module named 'torchdata'", name="torchdata")
    monkeypatch.setitem(CHECKS, "needs", Check("needs", "a test check", 5.0, probe, lambda facts, options: None))
    _, result = run_one("needs", Options())
    assert (result.status, result.code, result.remedy) == ("skip", "PACKAGE_MISSING", "pip install torchdata")


def test_a_lost_gpu_s_query_marks_it_lost_and_pinned_buffers_follow_the_gpu_s_numa_node():
    import os

    class NVMLError_GpuIsLost(Exception):  # pynvml's own class name
        pass

    nvml = _fake_nvml(set())

    def lost(*_args):
        raise NVMLError_GpuIsLost("GPU is lost")
    nvml.nvmlDeviceGetTemperature = lost
    dev = gpuprobe.nvml_device(nvml, 0)
    assert dev["lost"] is True and dev["nvml_errors"] == {"temperature_c": "GpuIsLost"}
    before = os.sched_getaffinity(0)
    with gpuprobe._on_numa(0) as local:
        inside = os.sched_getaffinity(0)
    assert os.sched_getaffinity(0) == before and inside <= before and (local or inside == before)
    with gpuprobe._on_numa(None) as local:
        assert local is False
