# mypy: disable-error-code="arg-type, typeddict-item, index"
# (judges take their TypedDict facts; these tests hand them partial or malformed facts, as a JSON record would)
"""Issue 36, class 6: facts that cannot all be true are refused, never judged and never a pass.

The practice followed is verify/FACTS.md's rule "facts that contradict each other are refused, never judged, naming
the two fields" (MEASUREMENT_INVALID live, FACTS_INVALID on replay), applied to how a group is laid out (a rank is
either in `ranks` or in `failures`; `nodes` is the count of node names the ranks give; ranks verify spawns itself
run on one node, one per GPU, as NCCL runs one rank per GPU), to NVML's identity of a board (one UUID, one PCI bus
id each), to the rate a GPU can reach (none above the fastest dense BF16 peak verify/baselines.json knows), and to
Slurm's prolog semantics (GPUs Slurm allocated and a report that did not judge them is no pass).
"""
from __future__ import annotations

import pytest

from tests.verify_handmade import assert_refused, gpu_facts, handmade_train_facts, judged_both_ways, nccl_facts, variant
from verify import baselines, judging, replay, strictjson
from verify.checks import CHECKS
from verify.options import Options
from verify.prolog.verdict import NOT_ASSESSED, PASS, decide

pytestmark = pytest.mark.unit


def _one_rank_lost(f: dict) -> None:
    del f["ranks"][1]


def _every_rank_on_n1(f: dict) -> None:
    f["nodes"] = 2
    for r in f["ranks"]:
        r["node"] = "n1"


def _rank_beyond_world(f: dict) -> None:
    f["ranks"][1]["rank"] = 5


@pytest.mark.parametrize("change,fields", [
    (_one_rank_lost, ("world_size is 2", "ranks holds 1")),                  # world 2, one rank, no failure
    (_every_rank_on_n1, ("nodes is 2", "1 node(s)")),                        # 2 nodes claimed, one named
    (lambda f: f.update(nodes=3), ("nodes 3", "world_size 2")),              # more nodes than ranks
    (lambda f: f.update(nodes=1), ("nodes is 1", "2 node(s)")),              # and fewer than named
    (lambda f: f.update(world_size=1, nodes=1), ("world_size is 1",)),
    (_rank_beyond_world, ("rank 5", "world_size is 2")),
])
def test_a_train_group_whose_ranks_and_nodes_do_not_add_up_is_refused(change, fields):
    facts = handmade_train_facts()
    change(facts)
    assert_refused("train", facts, *fields)


def test_a_train_rank_that_failed_accounts_for_itself():
    facts = handmade_train_facts()
    del facts["ranks"][1]
    facts["failures"] = [{"rank": 1, "node": "n2", "phase": "train", "type": "RuntimeError", "message": "boom"}]
    r = judging.judge(CHECKS["train"], facts, Options(), source="r/train.json")
    assert (r.status, r.code) == ("fail", "TRAIN_FAILED"), r.summary          # judged: the fault the record shows


@pytest.mark.parametrize("name", ["none", "", "unknown", "N/A"])
def test_a_gpu_run_without_a_gpus_name_is_refused_not_held_to_no_ceiling(name):
    # device_name "none" at 1,500 TFLOP/s per rank was judged against a ceiling of no GPU at all (20,000)
    facts = handmade_train_facts(gpu=True, tokens_per_s=4.25e6)
    facts["device_name"] = name
    assert_refused("train", facts, "device_name", "backend is nccl")


def test_an_unknown_gpu_is_held_to_the_fastest_known_peak_and_its_rate_is_not_judged():
    fastest = baselines.load().max_bf16_peak()
    assert fastest >= 2000                    # B200/GB200 class: the table's fastest, never a ceiling of no GPU
    absurd = handmade_train_facts(gpu=True, tokens_per_s=10e6)                 # ~3,500 TFLOP/s per GPU
    absurd["device_name"] = "NVIDIA Imaginary GPU"
    assert_refused("train", absurd, "above", "physically impossible")
    plausible = handmade_train_facts(gpu=True, tokens_per_s=400e3)
    plausible["device_name"] = "NVIDIA Imaginary GPU"
    r = judging.judge(CHECKS["train"], plausible, Options())
    assert "no baseline" in r.summary and "mfu" not in r.metrics             # reported, never judged healthy by it


def test_a_gpu_run_on_no_gpu_is_refused():
    facts = handmade_train_facts(gpu=True, tokens_per_s=400e3)
    facts["gpus"] = 0
    assert_refused("train", facts, "backend is nccl", "gpus is 0")


@pytest.mark.parametrize("changes,fields", [
    ({"nodes": 2, "mode": "8 local process(es), one per GPU"}, ("local process", "nodes 2")),
    ({"world_size": 4}, ("8 local process", "world_size 4")),
    ({"gpus": 4}, ("over NCCL", "gpus 4")),
    ({"rank": 3}, ("no launcher", "rank 3")),
])
def test_an_nccl_record_whose_local_ranks_do_not_match_nodes_world_or_gpus_is_refused(changes, fields):
    # the earlier hunt's case: nodes 2 beside 8 ranks the probe spawned on this node's 8 GPUs passed
    facts = nccl_facts(world=8)
    facts.update(changes)
    if "world_size" in changes:
        facts["sizes"] = []           # no rows: the layout alone is refused, before any figure
    assert_refused("nccl", facts, *fields)


def test_an_nccl_record_across_nodes_formed_by_torchrun_is_judged():
    facts = variant(nccl_facts(world=16), nodes=2)
    assert facts["mode"].startswith("torchrun")
    r = judging.judge(CHECKS["nccl"], facts, Options(), source="r/nccl.json")
    assert r.code != "FACTS_INVALID", r.summary


@pytest.mark.parametrize("field,value", [("uuid", "gpu-handmade-0000-0000-0000-000000000000"),
                                         ("pci_bus_id", "0000:18:00.0")])
def test_two_nvml_devices_that_are_one_gpu_are_refused(field, value):
    facts = gpu_facts(2)
    facts["devices"][1][field] = value          # device 0's, written another way
    assert_refused("gpu", facts, f"devices[0].{field}", f"devices[1].{field}", "listed twice")


def test_a_placeholder_uuid_on_two_devices_is_no_contradiction():
    facts = gpu_facts(2)
    for d in facts["devices"]:
        d["uuid"] = "N/A"
    r = judging.judge(CHECKS["gpu"], facts, Options(), source="r/gpu.json")
    assert "listed twice" not in r.summary


@pytest.mark.parametrize("index", [8, 99])
def test_an_nvml_index_past_the_devices_the_probe_listed_is_refused(index):
    """NVML numbers its devices 0 .. count-1 (nvmlDeviceGetHandleByIndex) and the probe lists each: device 99 of 8,
    beside torch's count of 8, names no device (it passed)."""
    facts = gpu_facts(8)
    facts["devices"][3]["index"] = index
    assert_refused("gpu", facts, f"devices[].index {index}", "0 to 7")


def test_a_capture_that_lists_only_the_gpu_it_is_about_is_no_contradiction():
    """A record translated from nvidia-smi may list GPU 13 alone, with no torch count: nothing holds its index."""
    facts = gpu_facts(1)
    facts["devices"][0]["index"] = 13
    for key in ("torch_devices", "capabilities", "kernels", "perf", "sdc", "torch_map"):
        facts.pop(key, None)
    r = judging.judge(CHECKS["gpu"], facts, Options(), source="r/gpu.json")
    assert "names no NVML device" not in r.summary, r.summary


@pytest.mark.parametrize("power", [4900.0, 1401.0])
def test_a_board_drawing_over_twice_its_enforced_power_limit_is_refused(power):
    """NVML's power reading averages a second or less: transients just past the limit are real, 7x it (it passed) or
    2x it is no working board's reading."""
    facts = gpu_facts(8)
    facts["devices"][0]["power_w"] = power
    assert_refused("gpu", facts, "devices[0].power_w", "power limit 700 W")


def test_a_board_at_its_power_limit_is_judged():
    facts = gpu_facts(8)
    facts["devices"][0]["power_w"] = 760.0
    assert judging.judge(CHECKS["gpu"], facts, Options()).status == PASS


@pytest.mark.parametrize("links", [19, 100])
def test_more_nvlinks_than_nvml_reads_is_refused_and_never_passes(links):
    """NVML_NVLINK_MAX_LINKS is 18 (nvml.h): verify/shared/nvlink.py reads no more, so 19 or 100 is no record of it."""
    facts = gpu_facts(8)
    facts["devices"][0]["nvlink"] = [True] * links
    live, replayed = judged_both_ways("gpu", facts)
    assert live.status != PASS and replayed.status != PASS
    assert f"devices[0].nvlink holds {links} entries" in replayed.summary + " ".join(replayed.details)


def test_the_nvlink_ceiling_is_nvml_s():
    from verify.figures import NVLINKS
    from verify.shared.nvlink import NVLINK_MAX_LINKS
    assert NVLINKS.most == NVLINK_MAX_LINKS == 18


@pytest.mark.parametrize("number, said", [("9" * 400, "an integer of 400 digits"), ("1e400", "not a finite float"),
                                          ("-1e400", "not a finite float")])
def test_a_number_past_a_float_s_range_is_refused_by_the_one_record_reader(tmp_path, number, said):
    """FACTS.md's rule: what no measurement gives is refused, never judged. A 400-digit integer crashed every judge
    that took float() of it (a traceback from `verify --from-facts`), and `1e400` read as infinity: the one reader
    of facts, baselines and the prolog's report (verify/strictjson.py) refuses both, in one line."""
    with pytest.raises(ValueError, match=said):
        strictjson.loads(f'{{"busbw": {number}}}')
    with pytest.raises(ValueError, match="an integer of 400 digits"):
        strictjson.loads(f'[{"9" * 400}]', non_finite=True)         # the prolog's report: NaN allowed, this not
    assert strictjson.loads("[NaN, 1e308, -3]", non_finite=True)[1:] == [1e308, -3]
    record = tmp_path / "nccl.json"
    record.write_text(f'{{"check": "nccl", "facts_schema": 3, "facts": {{"timeout_s": {number}}}}}')
    with pytest.raises(replay.ReplayError, match=said):
        replay.read_json(record)


def _report(*checks: dict) -> dict:
    failed = any(c["status"] == "fail" for c in checks)
    return {"status": "fail" if failed else "pass", "checks": list(checks)}


@pytest.mark.parametrize("checks,said", [
    ([{"name": "shm", "status": "pass"}], "holds no gpu check"),
    ([{"name": "shm", "status": "pass"}, {"name": "gpu", "status": "skip", "code": "GPU_NOT_VISIBLE"}],
     "skipped the gpu check"),
])
def test_the_prolog_never_passes_a_report_that_did_not_judge_the_gpus_slurm_allocated(checks, said):
    report = _report(*checks)
    v = decide(report, gpus_expected_by_scheduler=True)
    assert (v.kind, v.code, v.drains) == (NOT_ASSESSED, "GPU_NOT_ASSESSED", False), v
    assert said in v.summary
    assert decide(report, gpus_allocated=True).kind == NOT_ASSESSED          # a first step with GPUs too
    assert decide(report).kind == PASS                                       # no GPUs allocated: a CPU node
    # a gpu check that judged the GPUs passes with a warning; one that read none of their health is no pass either
    # (docs/cluster-safety.md: the GPUs ran work, but nothing of their ECC or remaps was seen)
    judged = _report(*checks[:1], {"name": "gpu", "status": "warn", "code": "THROTTLED", "owner": "host"})
    assert decide(judged, gpus_expected_by_scheduler=True).kind == PASS
    blind = _report(*checks[:1], {"name": "gpu", "status": "warn", "code": "HEALTH_NOT_ASSESSED", "owner": "host"})
    assert decide(blind, gpus_expected_by_scheduler=True).code == "GPU_NOT_ASSESSED"


@pytest.mark.parametrize("check,said", [
    ({"name": "gpu", "status": "fail", "code": "BANANA", "owner": "host"}, "no code of verify's"),
    ({"name": "gpu", "status": "fail", "code": "gpu_lost", "owner": "host"}, "no code of verify's"),
    ({"name": "gpu", "status": "fail", "code": "X" * 300, "owner": "host"}, "no code of verify's"),
    ({"name": "gpu", "status": "fail", "code": 79, "owner": "host"}, "no code of verify's"),
    ({"name": "gpu", "status": "fail", "code": "GPU_LOST\nDRAIN", "owner": "host"}, "no code of verify's"),
    ({"name": "gpu", "status": "warn", "code": "NO_SUCH", "owner": "host", "metrics": {}}, "no code of verify's"),
    ({"name": "g" * 100, "status": "fail", "code": "GPU_LOST", "owner": "host"}, "no check of verify's"),
    ({"name": "gpu\n", "status": "fail", "code": "GPU_LOST", "owner": "host"}, "no check of verify's"),
    ({"name": "gpu", "status": "pass", "code": "GPU_LOST", "owner": "host",
      "metrics": {"nvml_devices": {"value": 8.0}}}, "passes with code GPU_LOST"),
    ({"name": "gpu", "status": "pass", "metrics": {"nvml_devices": {"value": 1e15}}}, "1 to 4096"),
])
def test_the_prolog_refuses_a_code_or_a_name_no_verify_writes(check, said):
    """verify codes only what it did not pass, with a key of its catalog (verify/codes.py: codes are only added),
    and names its checks in lower case: any other code drained the node under a reason (`torchimages:gpu_lost`, one
    cut at 200 characters) that the breaker and return to service cannot read as ours. Slurm's prolog semantics:
    a report no verify could write is the tool's trouble (REPORT_INVALID), never a drain and never a pass."""
    v = decide(_report(check), gpus_expected_by_scheduler=True)
    assert (v.kind, v.code, v.drains) == (NOT_ASSESSED, "REPORT_INVALID", False), v
    assert said in v.summary


def test_every_code_of_verify_s_catalog_still_decides():
    """The catalog's own codes keep their verdicts (a host code drains, a job's does not)."""
    lost = decide(_report({"name": "gpu", "status": "fail", "code": "GPU_LOST", "owner": "host"}))
    assert lost.drains and lost.code == "GPU_LOST"
    shm = decide(_report({"name": "shm", "status": "fail", "code": "SHM_TOO_SMALL", "owner": "job"}))
    assert shm.kind == "fault" and not shm.drains


@pytest.mark.parametrize("mode", [" 8 local process(es), one per GPU", "8 LOCAL process(es), one per GPU",
                                  "8  local  processes, one per GPU"])
def test_an_nccl_record_respelling_the_probes_local_mode_still_cannot_claim_two_nodes(mode):
    """The earlier hunt's case, respelt: a record whose `mode` differs from the probe's wording by a space or a
    capital (no launcher writes it) slipped `nodes` 2 past the layout rule and was judged against the inter-node
    floor (11.8x it: a pass). FACTS.md: facts that contradict each other are refused, naming the two fields."""
    facts = nccl_facts(world=8)
    facts.update(nodes=2, mode=mode)
    assert_refused("nccl", facts, "ranks spawned on this one node", "nodes 2")
