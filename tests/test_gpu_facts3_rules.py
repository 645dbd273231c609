# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Issue 28's rules on hand-made facts: contradictions refused, what real output shows held and judged (kernel-log
Xids, partial masks, the MIG table, the GPU-side width, T.Limit thresholds), per-model constants standing in, one
transient rule, and the headline that needs action first.
"""
from __future__ import annotations

import pytest

from tests.verify_handmade import gpu_facts, mig_slice, nccl_facts, variant
from verify import factschema, judging
from verify.checks import CHECKS, gpu
from verify.facts import GpuFacts
from verify.options import Options
from verify.result import CheckResult

pytestmark = pytest.mark.unit


def judge(facts: dict, **options) -> CheckResult:
    return gpu.judge(facts, Options(**options))


def both(check: str, facts: dict) -> tuple[CheckResult, CheckResult]:
    return (judging.judge(CHECKS[check], facts, Options()),
            judging.judge(CHECKS[check], facts, Options(), source=f"r/{check}.json"))


def device(facts: dict, i: int, **changes) -> dict:
    facts["devices"][i].update(changes)
    return facts


# ------------------------------------------------------------------------------------ contradictions
@pytest.mark.parametrize("check,change,fields", [
    ("nccl", lambda f: f.update(nodes=9), ("nodes 9", "world_size 8")),
    ("gpu", lambda f: f.update(nvml_error="NVMLError_DriverNotLoaded: Driver Not Loaded"), ("nvml_error", "devices[]")),
    ("gpu", lambda f: f["perf"].append(dict(f["perf"][0], index=9)), ("perf[8].index 9", "torch_devices 8")),
    ("gpu", lambda f: f["kernels"].append({"index": 8, "max_abs_error": 1e-5, "error": None}),
     ("kernels[8].index 8", "torch_devices 8")),
    ("gpu", lambda f: f["sdc"].append(dict(f["sdc"][0], index=11)), ("sdc[8].index 11", "torch_devices 8")),
    ("gpu", lambda f: f.update(xid_events=[{"xid": 79, "index": 12, "source": "kernel_log"}]),
     ("xid_events[0].index 12", "devices[]")),
])
def test_facts_that_contradict_each_other_are_refused_naming_both_fields_never_judged(check, change, fields):
    facts = gpu_facts() if check == "gpu" else nccl_facts()
    change(facts)
    live, replayed = both(check, facts)
    assert (live.status, live.code) == ("fail", "MEASUREMENT_INVALID"), live.summary
    assert (replayed.status, replayed.code) == ("fail", "FACTS_INVALID"), replayed.summary
    assert all(f in replayed.summary for f in fields) and "contradict" in replayed.summary


def test_torch_indices_beyond_the_gpu_count_are_no_contradiction_on_a_mig_gpu():
    facts = mig_slice()           # one GPU cut in seven slices: torch may number more devices than NVML lists
    facts.update(torch_devices=None, cuda_visible_devices="unset", torch_map=None,
                 perf=[dict(facts["perf"][0], index=i) for i in range(3)],
                 kernels=[{"index": i, "max_abs_error": 1e-5, "error": None} for i in range(3)],
                 sdc=[dict(facts["sdc"][0], index=i) for i in range(3)])
    facts["devices"][0]["mig_devices"] *= 3
    r = judging.judge(CHECKS["gpu"], facts, Options(), source="r/gpu.json")
    assert r.code not in ("FACTS_INVALID", "MEASUREMENT_INVALID"), r.summary


def test_every_gpu_in_mig_mode_is_not_judged_against_whole_gpu_baselines():
    facts = gpu_facts(2)
    for dev in facts["devices"]:
        dev["mig"] = [True, True]
    for p in facts["perf"]:
        p.update(d2d_GBps=400.0, bf16_TFLOPs=100.0)      # a slice's figures, far below the whole GPU's
    r = judge(facts)
    assert r.status == "pass" and not any(f["code"] in ("BANDWIDTH_LOW", "COMPUTE_LOW") for f in r.data["findings"])
    assert any("in MIG mode" in d and "not judged against whole-GPU baselines" in d for d in r.details)


# ------------------------------------------------------------------------------ what real output shows
def test_a_kernel_log_xid_is_held_with_its_time_and_source_and_names_its_device_by_bus():
    facts = gpu_facts()
    facts["xid_events"] = [{"xid": 79, "pci_bus_id": "0000:58:00", "time": "[Tue Nov 25 10:12:03 2026]",
                            "source": "kernel_log", "text": "NVRM: Xid (PCI:0000:58:00): 79, GPU has fallen off the bus."}]
    r = judge(facts)
    assert (r.status, r.code, r.owner) == ("fail", "GPU_LOST", "host")
    assert "device 4 (NVIDIA H100 80GB HBM3, 00000000:58:00.0): Xid 79 in the kernel log at [Tue Nov 25" in r.summary


def test_a_kernel_log_alone_is_judged_by_its_xids():
    log = {"torch": None, "devices": None, "xid_events": [
        {"xid": 79, "pci_bus_id": "0000:3b:00", "source": "kernel_log", "time": "[  612.3]", "text": "NVRM: Xid ..."}]}
    r = judge(log)
    assert (r.status, r.code, r.owner) == ("fail", "GPU_LOST", "host") and "GPU at PCI 0000:3b:00" in r.summary
    quiet = judge({**log, "xid_events": [{"xid": 13, "pci_bus_id": "0000:3b:00", "source": "kernel_log"}]})
    # issue 35: an application's Xid is told to the job (warn), never the node's fault
    assert (quiet.status, quiet.code, quiet.owner) == ("warn", "XID_ERROR", "job")
    assert any("not assessed" in d for d in quiet.details)


def test_an_xid_recorded_by_uuid_is_labelled_with_its_device_in_any_spelling():
    facts = gpu_facts()
    uuid = facts["devices"][5]["uuid"]
    facts["xid_events"] = [{"xid": 48, "uuid": uuid.removeprefix("GPU-").upper(), "source": "nvml"}]
    r = judge(facts)
    assert r.code == "ECC_UNCORRECTABLE" and "device 5 (NVIDIA H100 80GB HBM3" in r.summary and "device ?" not in r.summary


def test_a_partial_throttle_mask_judges_what_was_read_and_names_what_was_not():
    braked = device(gpu_facts(), 2, throttle_reasons=0x80, throttle_reasons_read=0xCF, sm_clock_mhz=382,
                    sm_clock_max_mhz=1980)
    assert judge(braked).code == "THROTTLED" and judge(braked).status == "fail"
    partial = device(gpu_facts(), 2, throttle_reasons=0x1, throttle_reasons_read=0x7)     # Idle, App, SwPowerCap read
    r = judge(partial)
    assert r.status == "pass" and "healthy" not in r.summary
    assert "clock slowdown (HwPowerBrakeSlowdown, HwSlowdown, HwThermalSlowdown not read) (device 2)" in r.summary


def test_the_mig_table_nvidia_smi_prints_is_held_and_gated():
    facts = gpu_facts(1)
    facts["devices"][0].update(mig=[True, True], mig_devices=[
        {"uuid": "MIG-1", "profile": "3g.40gb", "slices": 3, "total_slices": 7, "gpu_instance": 2, "compute_instance": 0,
         "mig_index": 0, "memory_bytes": 40 << 30, "sm_count": 60}])
    assert factschema.unknown_keys(facts, GpuFacts) == [] and judging.judge(CHECKS["gpu"], facts, Options()).code != \
        "MEASUREMENT_INVALID"
    facts["devices"][0]["mig_devices"][0]["sm_count"] = -1
    assert "mig_devices[0].sm_count" in both("gpu", facts)[1].summary


def test_the_gpu_side_maximum_width_and_generation_stand_beside_the_slot_s():
    r = judge(device(gpu_facts(), 0, pcie_width=8, pcie_width_max=8, pcie_width_gpu_max=16))
    assert (r.status, r.code) == ("warn", "PCIE_DOWNGRADED") and "at most x8, the GPU is x16" in r.summary
    r = judge(device(gpu_facts(), 0, pcie_gen_max=4, pcie_gen_gpu_max=None))   # the model's Gen5 stands in
    assert (r.status, r.code) == ("warn", "PCIE_DOWNGRADED") and "at most Gen4, the GPU supports Gen5" in r.summary


def test_an_lspci_style_link_without_the_slot_s_maximum_is_judged_against_the_gpu_s():
    """`lspci -vv`: LnkCap (the GPU's maximum) and LnkSta (current), the slot's maximum not shown."""
    facts = device(gpu_facts(), 1, pcie_gen=4, pcie_width=8, pcie_gen_max=None, pcie_width_max=None,
                   pcie_gen_gpu_max=5, pcie_width_gpu_max=16)
    r = judge(facts)
    assert (r.status, r.code) == ("warn", "PCIE_DOWNGRADED") and "Gen4 x8, capable of Gen5 x16 in 1 of" in r.summary
    facts = device(gpu_facts(), 1, pcie_width=8, pcie_width_max=None, pcie_gen_gpu_max=None)   # the model's x16
    assert judge(facts).code == "PCIE_DOWNGRADED"


@pytest.mark.parametrize("margin,status", [(47.0, "pass"), (1.0, "warn"), (-3.0, "warn")])
def test_slowdown_thresholds_relative_to_t_limit_are_judged(margin, status):
    facts = device(gpu_facts(), 3, temperature_c=None, temperature_slowdown_c=None, temperature_tlimit_c=margin,
                   temperature_slowdown_tlimit_c=-2.0)
    r = judge(facts)
    assert r.status == status and ("T.Limit" in r.summary if status == "warn" else "temperature" not in r.summary)


# ----------------------------------------------------------------------- constants, transients, headline
def test_sm_clock_under_a_power_brake_is_judged_against_the_model_s_published_maximum():
    facts = device(gpu_facts(), 2, throttle_reasons=0x80, sm_clock_mhz=382, sm_clock_max_mhz=None)
    r = judge(facts)
    assert (r.status, r.code) == ("fail", "THROTTLED") and "1980 MHz (the model's published maximum" in r.summary
    unknown = variant(facts)
    for dev in unknown["devices"]:
        dev["name"] = "NVIDIA Future GPU"
    for s in unknown["sdc"]:
        s["name"] = "NVIDIA Future GPU"
    assert judge(unknown).status == "warn"            # no published clock: one read stays a transient


@pytest.mark.parametrize("reading", ["throttle", "pcie", "nvlink"])
def test_every_single_snapshot_reading_warns_once_and_fails_when_re_read(reading):
    facts = variant(gpu_facts(), perf=None, sdc=None)
    once = {"throttle": {"throttle_reasons": 0x8}, "pcie": {"pcie_width": 8},
            "nvlink": {"nvlink": [False] + [True] * 17}}[reading]
    again = {"throttle": {"phase": "idle", "throttle_reasons": 0x8}, "pcie": {"phase": "idle", "gen": 5, "width": 8},
             "nvlink": {"phase": "idle", "nvlink": [False] + [True] * 17}}[reading]
    assert judge(device(variant(facts), 1, **once)).status == "warn"
    assert judge(device(variant(facts), 1, **once, samples=[again])).status == "fail"


def test_the_headline_is_the_finding_that_needs_action_first():
    facts = device(gpu_facts(), 0, power_limit_w=400.0)
    device(facts, 1, ecc_aggregate_uncorrectable=2)         # remapped: pending 0, failed 0
    r = judge(facts)
    assert (r.status, r.code) == ("warn", "THROTTLED") and "ECC_UNCORRECTABLE" in r.summary
    device(facts, 1, row_remap=None)                        # not known to be handled: the ECC count leads
    assert judge(facts).code == "ECC_UNCORRECTABLE"


def test_the_real_h100_run_of_today_replays_as_a_pass_through_the_one_rule():
    """tests/data/gpu/h100-80gb-hbm3-2026-11-25: recorded in facts schema 2 on a real H100, read as schema 3."""
    from tests.helpers import ROOT
    from verify import replay
    folder = replay.load(str(ROOT / "tests" / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25" / "facts"), ["gpu", "nccl"], {})
    got = {r.name: replay.judge(r, folder.options) for r in folder.records}
    assert {r.schema for r in folder.records} == {2}
    assert got["gpu"].status == "pass" and "healthy" in got["gpu"].summary, got["gpu"].summary
    # one rank: its algbw is no bandwidth; neither refused nor passed as if a bandwidth were measured
    assert (got["nccl"].status, got["nccl"].code) == ("skip", "NCCL_SINGLE_RANK"), got["nccl"].summary
