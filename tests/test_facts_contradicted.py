# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Issue 36, class 6, a third hunt: a pass never stands on facts that cannot be true, and a fault the evidence
shows is still judged beside a figure that cannot be.

The practices: verify/FACTS.md's rules ("a figure that is present must be finite and plausible", "null means
unknown", "facts that contradict each other are refused, naming the two fields"), nccl-tests' own arithmetic (size =
count x the type's bytes), NCCL's one rank per GPU, and NVIDIA's Xid catalog / ECC guidance (an uncorrectable ECC
error drains, whatever a broken temperature sensor reads beside it).
"""
from __future__ import annotations

import copy

import pytest

from tests.verify_handmade import (
    CPU_BUILD,
    H100,
    assert_refused,
    gpu_facts,
    handmade_train_facts,
    judged_both_ways,
    nccl_facts,
    variant,
)
from verify import judging
from verify.checks import CHECKS
from verify.options import Options

pytestmark = pytest.mark.unit


# ---- a fault the evidence shows is judged beside a figure that cannot be

def test_nvidia_ecc_an_uncorrectable_error_is_judged_beside_a_temperature_no_gpu_reaches():
    """NVIDIA's Xid catalog / ECC guidance: 5 volatile uncorrectable ECC errors drain the node; a temperature sensor
    reading 1,000 C beside them is unknown (null), not a reason to withhold the fault. Live and on replay the
    verdict is the ECC fault (the host's), the figure named in its details; the figure alone is still refused."""
    facts = gpu_facts()
    facts["devices"][0].update(temperature_c=1000, ecc_volatile_uncorrectable=5, ecc_aggregate_uncorrectable=5)
    for r in judged_both_ways("gpu", facts):
        assert (r.status, r.code, r.owner) == ("fail", "ECC_UNCORRECTABLE", "host"), r.summary
        assert any("judged without 1 implausible figure" in d and "temperature_c is 1000" in d for d in r.details)
    alone = gpu_facts()
    alone["devices"][0]["temperature_c"] = 1000
    assert_refused("gpu", alone, "temperature_c is 1000")


def test_wrong_elements_are_judged_beside_a_node_count_no_group_has():
    """nccl-tests' #wrong: an all-reduce that returned wrong elements fails whatever an implausible `nodes` says."""
    facts = nccl_facts()
    facts["sizes"][0]["wrong"] = 5
    facts["nodes"] = 0
    for r in judged_both_ways("nccl", facts):
        assert r.status == "fail" and "5 wrong element" in r.summary, r.summary


def test_a_contradiction_is_never_judged_even_beside_a_fault():
    """FACTS.md: facts that contradict each other are refused, not judged: one GPU listed twice says nothing of
    which device an ECC count belongs to (only single implausible values are read as unknown)."""
    facts = gpu_facts()
    facts["devices"][0]["ecc_volatile_uncorrectable"] = 5
    facts["devices"][1]["uuid"] = facts["devices"][0]["uuid"]
    assert_refused("gpu", facts, "one GPU listed twice")


# ---- nccl records that cannot be true

def test_nccl_tests_arithmetic_a_row_whose_count_is_not_its_size_is_refused():
    """nccl-tests prints size = count x the bytes of its type (-d float: 4): a row that breaks it is no row."""
    facts = nccl_facts()
    facts["sizes"][0]["count"] = 7
    assert_refused("nccl", facts, "7 float element(s) are 28 bytes", "size 1048576")


def test_a_busbw_three_times_its_gpu_s_baseline_within_one_node_is_refused():
    """A busbw 20x the NVLS baseline of an H100 on one node is no measurement (NVLS beats the ring baseline by
    about 1.3x); across nodes the inter-node baseline is a floor, and a high figure there is not refused by it."""
    facts = nccl_facts(peak=472.0 * 20)
    for row in facts["sizes"]:
        row["time_us"] = round(row["size"] / (row["algbw"] * 1e9) * 1e6, 3)
    assert_refused("nccl", facts, "physically impossible")
    ok = nccl_facts(peak=472.0 * 1.3)
    assert judged_both_ways("nccl", ok)[1].code != "FACTS_INVALID"


@pytest.mark.parametrize("name", ["none", "unknown", ""])
def test_an_nccl_run_on_a_device_named_no_gpu_is_refused(name):
    """NCCL runs on GPUs: a record over NCCL whose device_name names none is refused, as the train check does."""
    assert_refused("nccl", variant(nccl_facts(), device_name=name), "device_name", "no GPU's name")


# ---- train records that cannot be true

def _local(world: int = 1) -> dict:
    facts = handmade_train_facts()
    facts["ranks"] = facts["ranks"][:1]
    facts["ranks"][0]["node"] = "n1"
    facts.update(world_size=world, nodes=1, gpus=1, mode="1 local process(es), one per GPU", backend="nccl",
                 device_name=H100)
    return facts


def _eight_ranks_one_gpu(f: dict) -> None:
    f["ranks"] = [{**copy.deepcopy(f["ranks"][0]), "rank": i, "local_rank": i} for i in range(8)]
    f.update(world_size=8, mode="8 local process(es), one per GPU")


@pytest.mark.parametrize("change,said", [
    (lambda f: f["ranks"][0].update(local_rank=3), "local_rank 3"),
    (lambda f: f.update(mode="2 local process(es), one per GPU"), "world_size 1"),
    (_eight_ranks_one_gpu, "over NCCL (one process per GPU) but gpus 1"),
])
def test_nccl_s_one_rank_per_gpu_a_local_train_group_that_does_not_fit_is_refused(change, said):
    """Ranks the train probe spawned itself run on this node, one per GPU (NCCL refuses two ranks on one GPU):
    8 of them over NCCL on 1 GPU, a local rank past the ranks spawned, or a mode that names another world size
    cannot be true."""
    facts = _local()
    change(facts)
    assert_refused("train", facts, said)


@pytest.mark.parametrize("change,said", [
    (lambda f: f["config"].update(params=0), "config.params is 0"),
    (lambda f: f["config"].update(flops_per_token=-1.0), "config.flops_per_token is -1"),
    (lambda f: f["config"].update(min_steps=500, max_steps=120), "min_steps 500 > config.max_steps 120"),
    (lambda f: f["ranks"][0].update(node=" "), "blank node name"),
])
def test_a_train_configuration_or_node_name_that_cannot_be_is_refused(change, said):
    """FACTS.md: a figure that is present must be plausible, the ones the rates do not read included."""
    facts = handmade_train_facts()
    facts["config"].update(params=103918592, flops_per_token=7.1e8, min_steps=24, max_steps=120)
    change(facts)
    assert_refused("train", facts, said)


# ---- "no GPU visible" that the rest of the record contradicts

@pytest.mark.parametrize("changes,said", [
    ({"torch_cuda": "none", "devices": []}, "a CPU build of torch), yet torch sees 8"),
    ({"nvml_library": False}, "nvml_library false"),
    ({"device_nodes": False, "devices": []}, "device_nodes false (no /dev/nvidia*), yet torch sees 8"),
    ({"devices": []}, "NVML initialised and lists no GPU), yet torch sees 8"),
])
def test_a_cause_of_no_gpu_that_the_rest_of_the_record_contradicts_is_refused(changes, said):
    """A CPU build, no device nodes, no NVML library, or NVML listing no GPU beside 8 GPUs torch sees (and kernels
    that ran on them) cannot both be true: refused, never a skip that says "no GPU visible"; a record of a CPU
    node (no torch device) still names its cause."""
    assert_refused("gpu", variant(gpu_facts(), **changes), said)
    cpu = judging.judge(CHECKS["gpu"], variant(gpu_facts(), devices=[], torch_cuda="none", **CPU_BUILD), Options())
    assert (cpu.status, cpu.code) == ("skip", "GPU_NOT_VISIBLE")


@pytest.mark.parametrize("recorded", ["99999-01-01", "2999-13", "2999-02-30", "+12026-01-01T00:00:00Z"])
def test_time_a_recorded_date_past_any_clock_or_no_calendar_s_is_from_the_future(tmp_path, recorded):
    """Time (facts from the future are no evidence, TORCHIMAGES_CLOCK_SKEW): a `recorded` that starts with a year
    means no moment before that year's start, whatever follows (a month 13, a day that is none), and a year past
    9999 is past any clock: refused in one line, never read as free-form text and replayed."""
    from pathlib import Path

    from verify import replay
    with pytest.raises(replay.ReplayError, match="in the future"):
        replay.future_recorded(Path(tmp_path, "host.json"), recorded, 300.0)
    replay.future_recorded(Path(tmp_path, "host.json"), "2025-13", 300.0)           # a past year: believed
    replay.future_recorded(Path(tmp_path, "host.json"), "next tuesday", 300.0)      # free-form: informational
