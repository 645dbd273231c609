"""Issue 35, batch 122 (nccl-tests figures) and the contract gap its translator found: nccl-tests prints an
all_gather_perf, reduce_scatter_perf or alltoall_perf row's `count` per rank (src/all_gather.cu's
AllGatherGetCollByteCount: `base = count/nranks`, printed as `nbytes / wordSize`) while `size` is the whole
message, and its busbw factor is the collective's (doc/PERFORMANCE.md: all-reduce 2(n-1)/n; all-gather,
reduce-scatter, alltoall (n-1)/n; sendrecv, broadcast, reduce 1). `NcclFacts.collective` names the program; the
count rule and the bus factor are the collective's; only an all-reduce's busbw meets verify's all-reduce baselines.
Real tables are quoted with their URLs (a slug names a corpus entry)."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.verify_handmade import nccl_facts
from verify import explain as ex
from verify.checks import CHECKS
from verify.checks.nccl.collective import bus_factor
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

CORPUS = ROOT / "tests" / "data" / "real-world"
GB10 = "gb10-dgx-spark-pair-qsfp-nccl-2.28.3-all-gather-16g-18.9-busbw-mtu-1500-healthy-before-jumbo-frames"
A40 = "a40-two-nodes-gpu23-gpu24-sendrecv-perf-256b-to-4k-31-us-latency-zero-wrong"
A100_SENDRECV = "a100-x8-nvlink-nccl-tests-sendrecv-perf-128m-to-1g-195-gbs-busbw-zero-wrong"
P4D = "aws-2x-p4d-24xlarge-multi-efa-public-ips-all-reduce-8b-to-128b-176-us-zero-wrong"

# https://github.com/NVIDIA/nccl-tests/issues/313 (the command line) and #314 (the same run's table, pid 173504):
# eight H20-3e in one process, alltoall_perf; the in-place #wrong of alltoall is N/A
H20_ALLTOALL = """\
/root/nccl-tests-master/build/alltoall_perf -b 1M -e 32G -f 2 -g 8 -n 100
# nThread 1 nGpus 8 minBytes 1048576 maxBytes 34359738368 step: 2(factor) warmup iters: 5 iters: 100 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 173504 on  TENCENT64 device  0 [0x03] NVIDIA H20-3e
#  Rank  1 Group  0 Pid 173504 on  TENCENT64 device  1 [0x16] NVIDIA H20-3e
#  Rank  2 Group  0 Pid 173504 on  TENCENT64 device  2 [0x1c] NVIDIA H20-3e
#  Rank  3 Group  0 Pid 173504 on  TENCENT64 device  3 [0x2e] NVIDIA H20-3e
#  Rank  4 Group  0 Pid 173504 on  TENCENT64 device  4 [0x84] NVIDIA H20-3e
#  Rank  5 Group  0 Pid 173504 on  TENCENT64 device  5 [0x9c] NVIDIA H20-3e
#  Rank  6 Group  0 Pid 173504 on  TENCENT64 device  6 [0xb6] NVIDIA H20-3e
#  Rank  7 Group  0 Pid 173504 on  TENCENT64 device  7 [0xbb] NVIDIA H20-3e
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576         32768     float    none      -1    58.14   18.04   15.78      0    57.87   18.12   15.85    N/A
     2097152         65536     float    none      -1    58.94   35.58   31.14      0    58.10   36.10   31.58    N/A
     4194304        131072     float    none      -1    59.35   70.67   61.84      0    59.23   70.81   61.96    N/A
"""

# https://github.com/NVIDIA/nccl-tests/issues/37 (corpus: v100-sxm2-32gb-x8-nvlink-all-gather-4gib-out-of-bounds-2-
# failed-maintainer-fixed-in-master): all_gather_perf of 2020 (an `error` column, no #wrong) whose validation failed
V100_ALLGATHER = """\
all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100
                                             out-of-place                       in-place
       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00
 Out of bounds values : 2 FAILED
"""


def _facts(slug: str) -> dict[str, Any]:
    return json.loads((CORPUS / slug / "facts" / "nccl.json").read_text())["facts"]


def _verdict(facts: dict[str, Any]) -> tuple[str, str | None, str | None]:
    r = judge(CHECKS["nccl"], facts, Options())
    return r.status, r.code, r.owner


def _h20_rows() -> list[dict[str, Any]]:
    return [{"size": s, "count": c, "type": "float", "redop": "none", "time_us": t, "algbw": a, "busbw": b, "wrong": 0}
            for s, c, t, a, b in ((1048576, 32768, 58.14, 18.04, 15.78), (2097152, 65536, 58.94, 35.58, 31.14),
                                  (4194304, 131072, 59.35, 70.67, 61.84))]


def _h20(**changes: Any) -> dict[str, Any]:
    """nccl-tests#314's table as FACTS.md's letter records it (one node, eight ranks)."""
    return {"backend": "nccl", "device_name": "NVIDIA H20-3e", "world_size": 8, "nodes": 1, "gpus": 8,
            "mode": "nccl-tests alltoall_perf -g 8, one process", "sizes": _h20_rows(), "collective": "alltoall",
            "error": None, **changes}


def test_a_per_rank_count_is_no_contradiction_for_the_collectives_that_print_it():
    """Class: all_gather / reduce_scatter / alltoall rows (count x bytes x ranks = size). The GB10 pair's real
    all_gather row (`17179869184 2147483648 float none -1 453650 37.87 18.94 0`, dgx-spark-playbooks#25) passes; the
    H20-3e alltoall table (nccl-tests#314) passes, its busbw not held to the all-reduce baselines."""
    r = judge(CHECKS["nccl"], _facts(GB10), Options())
    assert (r.status, r.code) == ("pass", None) and "all-gather verified" in r.summary, r.summary
    assert "bandwidth not assessed" in r.summary, r.summary
    assert _verdict(_h20()) == ("pass", None, None)
    assert _verdict(_h20(collective="reduce_scatter")) == ("pass", None, None)     # same count form and factor


def test_the_count_form_follows_the_collective_and_the_world_size():
    gb10 = _facts(GB10)
    whole = {**gb10, "collective": "all_reduce"}
    assert _verdict(whole)[:2] == ("fail", "MEASUREMENT_INVALID")        # an all-reduce counts the whole message
    other_world = {**gb10, "world_size": 4}
    r = judge(CHECKS["nccl"], other_world, Options())
    assert (r.status, r.code) == ("fail", "MEASUREMENT_INVALID") and "across 4 ranks" in r.summary, r.summary
    # collective not known: either form may be the one printed, so neither contradicts (the busbw factor then is
    # the all-reduce's, as before the field: at two ranks (n-1)/n is not 2(n-1)/n: still no pass on it)
    unknown = {**gb10, "collective": None}
    r = judge(CHECKS["nccl"], unknown, Options())
    assert "element(s) are" not in r.summary and "busbw" in r.summary, r.summary
    # world size unknown: the per-rank form cannot be checked; right rows of unknown ranks stay not assessed
    r = judge(CHECKS["nccl"], {**gb10, "world_size": None}, Options())
    assert (r.status, r.code, r.owner) == ("skip", "FACTS_INCOMPLETE", None), r.summary
    # no whole number of ranks gives the size: refused whatever the world size
    odd = copy.deepcopy(_h20(world_size=None))
    odd["sizes"][0]["count"] = 32769
    assert _verdict(odd)[:2] == ("fail", "MEASUREMENT_INVALID")


def test_the_bus_factor_is_the_collective_s():
    assert [bus_factor(c, 8) for c in ("all_reduce", "all_gather", "alltoall", "sendrecv", "broadcast", None)] == [
        1.75, 0.875, 0.875, 1.0, 1.0, 1.75]
    skewed = copy.deepcopy(_h20())
    skewed["sizes"][2]["busbw"] = 70.67                       # algbw x 1, not x 7/8
    assert _verdict(skewed)[:2] == ("fail", "MEASUREMENT_INVALID")
    # sendrecv_perf on eight NVLink A100s (slug a100-x8-...-sendrecv-...): `1073741824 268435456 float sum -1 5503.4
    # 195.10 195.10 0`: busbw = algbw is sendrecv's factor; recorded without the field it is read as an all-reduce's
    sendrecv = _facts(A100_SENDRECV)
    assert sendrecv["collective"] == "sendrecv" and _verdict(sendrecv) == ("pass", None, None)
    before = {k: v for k, v in sendrecv.items() if k != "collective"}
    assert _verdict(before)[:2] == ("fail", "MEASUREMENT_INVALID")


def test_another_collective_s_busbw_meets_no_all_reduce_baseline_only_the_ceiling():
    """doc/PERFORMANCE.md defines each collective's busbw by its own factor (comparable with the hardware's peak),
    not as an all-reduce's; verify's baselines are all-reduce figures: a low all-gather is no BANDWIDTH_LOW (no false
    drain), an impossible one is still no measurement."""
    h100 = nccl_facts(peak=40.0)                               # eight H100s, 40 GB/s: far below their all-reduce
    assert _verdict(h100)[:2] == ("fail", "BANDWIDTH_LOW")
    gather = copy.deepcopy(h100)
    for row in gather["sizes"]:                                # the same sweep as all_gather_perf prints it
        row.update(count=row["count"] // 8, busbw=round(row["algbw"] * 7 / 8, 3))
    r = judge(CHECKS["nccl"], {**gather, "collective": "all_gather"}, Options())
    assert (r.status, r.code) == ("pass", None) and "all-reduce figures" in r.summary, r.summary
    fast = copy.deepcopy(_h20())
    for row in fast["sizes"]:
        row.update(time_us=round(row["size"] / 5000e3, 3), algbw=5000.0, busbw=4375.0)
    assert _verdict(fast)[:2] == ("fail", "MEASUREMENT_INVALID")


def test_wrong_elements_of_any_collective_are_wrong_data():
    """A per-rank collective's wrong elements fail as an all-reduce's do. The H20-3e row with #wrong set (a derived
    variant of nccl-tests#314's real row; no public per-rank table with a #wrong count was found) through the facts;
    the real V100 all_gather_perf whose validation failed (nccl-tests#37) through `verify explain`."""
    wrong = copy.deepcopy(_h20())
    wrong["sizes"][1]["wrong"] = 4096
    r = judge(CHECKS["nccl"], wrong, Options())
    assert (r.status, r.code, r.owner) == ("fail", "NCCL_WRONG_RESULT", "host") and "alltoall" in r.summary, r.summary
    e = ex.explain_text(V100_ALLGATHER, "ag.txt", Options())
    assert (e.status, e.code) == ("fail", "NCCL_WRONG_RESULT"), e.summary
    assert ex.nccltests.parse(V100_ALLGATHER)["collective"] == "all_gather"


def test_explain_records_the_program_and_its_rows():
    facts = ex.nccltests.parse(H20_ALLTOALL)
    assert facts["collective"] == "alltoall" and facts["world_size"] == 8 and len(facts["sizes"]) == 3
    assert facts["sizes"][0] == {"size": 1048576, "count": 32768, "type": "float", "redop": "none", "time_us": 58.14,
                                 "algbw": 18.04, "busbw": 15.78, "wrong": 0}
    e = ex.explain_text(H20_ALLTOALL, "a2a.txt", Options())
    assert (e.status, e.code) == ("pass", None) and "alltoall verified" in e.summary, e.summary
    # the same rows with no program named: an all-reduce's factor does not fit them, but no reduction, no root and
    # 1048576 = 32768 x 4 x 8 ranks are an all_gather's or an alltoall's, and the in-place `N/A` (alltoall never
    # validates it) names alltoall (batch 143, tests/test_judges_fix143.py)
    bare = "\n".join(line for line in H20_ALLTOALL.splitlines() if "alltoall_perf" not in line)
    assert ex.nccltests.parse(bare)["collective"] == "alltoall"
    assert ex.explain_text(bare, "a2a.txt", Options()).status == "pass"
    # a reduction's rows whose factor fits no all-reduce are still no program's: nothing judged, no pass
    summed = bare.replace("none", " sum")
    assert ex.nccltests.parse(summed)["sizes"] is None
    assert ex.explain_text(summed, "a2a.txt", Options()).status != "pass"


def test_a_two_rank_reduction_without_its_program_is_judged_as_the_pair_it_can_only_be():
    """Class: a table with no program named, two ranks, `sum` to no root, count x bytes = size: an all_reduce's or a
    sendrecv's, whose figures agree at two ranks (busbw = algbw). Slug a40-two-nodes-...: `256 64 float sum -1 34.24
    0.01 0.01 0 33.65 0.01 0.01 N/A` on gpu23 and gpu24; the in-place N/A (not validated) adds nothing, and it names
    the program: all_reduce validates its in-place run, sendrecv never does (mend2, tests/test_explain_mend2.py)."""
    text = (CORPUS / A40 / "raw.txt").read_text()
    facts = ex.nccltests.parse(text)
    assert facts["collective"] == "sendrecv" and len(facts["sizes"]) == 5 and facts["world_size"] == 2
    assert [r["wrong"] for r in facts["sizes"]] == [0] * 5
    e = ex.explain_text(text, "raw.txt", Options())
    assert (e.status, e.code) == ("pass", None) and "sendrecv verified" in e.summary, e.summary
    counted = text.replace("    N/A\n", "      0\n")         # the in-place side counted: either program, as before
    assert ex.nccltests.parse(counted)["collective"] is None
    e = ex.explain_text(counted, "raw.txt", Options())
    assert (e.status, e.code) == ("pass", None) and "collective verified" in e.summary, e.summary


def test_a_sweep_of_tiny_messages_prints_busbw_0_and_that_is_no_contradiction():
    """Class: nccl-tests prints two decimals, so 8-128 B in ~176 us is busbw 0.00 (slug aws-2x-p4d-...: `8 2 float
    sum -1 182.04 0.00 0.00 0`); across two ranks that is rounding, never "no bus bandwidth at all"."""
    facts = {**_facts(P4D), "world_size": 2}
    assert _verdict(facts) == ("pass", None, None)
    big = copy.deepcopy(facts)
    for row in big["sizes"]:
        row.update(size=row["size"] << 20, count=row["count"] << 20, algbw=round(row["size"] / row["time_us"] / 1e3, 2))
    assert _verdict(big)[:2] == ("fail", "MEASUREMENT_INVALID")    # megabytes at 0.00 GB/s: no measurement


@pytest.mark.parametrize("device", ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"])
def test_a_sweep_of_latency_bound_messages_measures_no_bandwidth(device):
    """Class (the batch's three entries: "no size shown is large enough to measure the link's bandwidth"): rows
    under 1 MiB only (verify's own sweep starts there) are held to no baseline: 8-128 B at 176 us across two
    instances (slug aws-2x-p4d-...) is no BANDWIDTH_LOW of the H100's inter-node floor, a false drain before."""
    facts = {**_facts(P4D), "world_size": 16, "device_name": device}
    r = judge(CHECKS["nccl"], facts, Options())
    assert (r.status, r.code) == ("pass", None) and "bandwidth not assessed" in r.summary, r.summary
    assert "latency-bound" in r.summary or "no busbw baseline" in r.summary, r.summary
    assert _verdict({**facts, "sizes": [dict(row, wrong=1) for row in facts["sizes"]]})[:2] == (
        "fail", "NCCL_WRONG_RESULT")                              # wrong data is judged at any size
