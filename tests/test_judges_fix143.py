"""Issue 35, batch 143 (nccl-tests tables). The classes fixed:
- nccl-tests rows pasted without the column line (an excerpt that starts mid-table, under Open MPI's `[1,0]<stdout>:`
  tags) are nccl-tests' output where their own arithmetic says so (size = count x the type's bytes x a whole number of
  ranks): two such rows, or one beside nccl-tests' footer (`# Out of bounds values`, `# Avg bus bandwidth`); an
  in-place `#wrong` of `N/A` (alltoall never validates its in-place run) keeps the row;
- the excerpt's last row cut in its in-place half keeps its whole out-of-place figures;
- rows of no reduction and no root (redop `none`, root -1) with no program named are an all_gather's or an alltoall's
  (the same arithmetic; an in-place `N/A` names alltoall), and one rank's share (size = count x bytes x n) gives the
  world size a cut or missing device list does not;
- NCCL's own lines below the table (`Destroy COMPLETE`) are read by the table's reader: no second verdict of the run;
- a bare `unhandled cuda error` (nccl-tests' `<host>: Test NCCL failure common.cu:1204 '... / '`) names no cause:
  NCCL_FAILED, owned by the job, never a drain; the WARN above such a line (`Failed to open libnvidia-ml.so.1`) is its
  cause and keeps the owner its rules give;
- an all-reduce's rows recorded without a world size imply it where exactly one n fits busbw = algbw x 2(n-1)/n on
  every row within the printed rounding.
Real lines are quoted with their slugs (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, verdict
from verify.checks import CHECKS
from verify.checks.nccl import barefail
from verify.checks.nccl.impliedworld import implied_world
from verify.explain import nccltests
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

BOTTLEROCKET = "bottlerocket-efa-installer-pr-alltoall-16-ranks-2k-to-512k-zero-wrong-in-place-na-latency-bound"
H800 = "h800-8-nodes-64-ranks-alltoall-8m-24.4-busbw-zero-wrong-out-of-place-the-1g-dip-not-in-the-excerpt"
PAIR = "two-gpus-0-and-1-all-gather-bf16-16m-to-112m-77-to-126-busbw-zero-wrong-nvlink-class-pair"
DESTROY = "two-gpus-one-process-all-reduce-128m-25.9-busbw-zero-wrong-destroy-complete-the-g4-hang-was-nvls"
HCA = "multi-node-all-reduce-1g-to-16g-367-busbw-zero-wrong-then-unhandled-cuda-error-on-hca-128-108-107-no-cause"
BASELINE = "nccl-2.19.3-four-nodes-all-reduce-1g-to-16g-385-to-391-busbw-zero-wrong-baseline-of-a-2.20.3-regression-report"

# BOTTLEROCKET's rows: Open MPI's tag, alltoall of 16 ranks, in-place not validated
ALLTOALL = (
    "        [1,0]<stdout>:      262144          4096     float    none      -1   161.17    1.63    1.52       0   "
    "151.94    1.73    1.62    N/A\n"
    "        [1,0]<stdout>:      524288          8192     float    none      -1   212.76    2.46    2.31       0   "
    "223.82    2.34    2.20    N/A\n")
# H800's head and its one row, cut in the in-place half
HEAD = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
        "(GB/s)\n")
CUT = "     8388608         32768     float    none      -1    337.8   24.83   24.44      0    295.6   28.38\n"
# PAIR's command line and two of its rows
GATHER = ("./build/all_gather_perf -b 16M -e 1024M -i 16777216 -g 2 -d bfloat16\n\n" + HEAD +
          "    16777216       4194304  bfloat16    none      -1    108.8  154.20   77.10      0    98.19  170.86   85.43"
          "      0\n"
          "   100663296      25165824  bfloat16    none      -1    400.9  251.11  125.56      0    348.1  289.19  144.59"
          "      0\n")
# DESTROY's whole excerpt
DESTROYED = (
    "   134217728      33554432     float     sum      -1   5190.8   25.86   25.86      0   5186.6   25.88   25.88      0\n"
    "deepseek:2081594:2081611 [0] NCCL INFO comm 0x55f6848de3b0 rank 0 nranks 2 cudaDev 0 busId f000 - Destroy COMPLETE\n"
    "deepseek:2081594:2081611 [1] NCCL INFO comm 0x55f68495f4f0 rank 1 nranks 2 cudaDev 1 busId 34000 - Destroy "
    "COMPLETE\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 8.62002 \n#\n")


def test_headless_rows_under_a_launcher_tag_with_in_place_na_are_an_alltoall_of_their_share():
    """BOTTLEROCKET: no column line, no device line; 2048 x 4 x 16 = size names 16 ranks, `N/A` in place alltoall."""
    assert nccltests.detect(ALLTOALL)
    facts = nccltests.parse(ALLTOALL)
    assert (facts["collective"], facts["world_size"], len(facts["sizes"])) == ("alltoall", 16, 2)
    assert verdict(explained(ALLTOALL)) == ("pass", None, None)
    wrong = ALLTOALL.replace("2.31       0", "2.31      12")
    assert verdict(explained(wrong))[:2] == ("fail", "NCCL_WRONG_RESULT")


def test_one_headless_row_is_a_table_only_beside_its_footer():
    """DESTROY: one row, nccl-tests' footer, NCCL's `Destroy COMPLETE` lines: one run, judged (two ranks, sum, no
    root: an all-reduce's or a sendrecv's figures); a lone row with nothing of nccl-tests beside it is not a table."""
    r = explained(DESTROYED)
    assert verdict(r) == ("pass", None, None), r.summary
    assert not nccltests.detect(DESTROYED.splitlines()[0] + "\n")


def test_the_last_row_cut_in_place_keeps_its_out_of_place_figures_and_its_share_names_the_ranks():
    """H800: a device list cut (`......`) and the 8 MiB row broken off in place: 8388608 = 32768 x 4 x 64 ranks, no
    program named, redop none: an all_gather's or an alltoall's, the same verdict."""
    text = ("#  Rank  0 Group  0 Pid 2324954 on GPU-NODE09 device  0 [0x0a] NVIDIA H800\n......\n"
            "#  Rank 63 Group  0 Pid 2278521 on GPU-NODE16 device  7 [0xc1] NVIDIA H800\n#\n" + HEAD + CUT)
    facts = nccltests.parse(text)
    assert facts["world_size"] == 64 and facts["nodes"] is None and facts["collective"] in ("all_gather", "alltoall")
    assert facts["sizes"][0]["busbw"] == 24.44 and facts["sizes"][0]["wrong"] == 0
    assert verdict(explained(text)) == ("pass", None, None)
    # a cut row above another row is no row (only the excerpt's last line breaks off)
    assert not nccltests._rows(CUT + CUT.replace("337.8", "337.9") + "x\n", nccltests._HEADLESS)


def test_a_named_per_rank_program_without_device_lines_counts_its_ranks_by_its_share():
    """PAIR: `all_gather_perf ... -g 2`, no `# Rank` lines: 16777216 = 4194304 x 2 bytes x 2 ranks."""
    facts = nccltests.parse(GATHER)
    assert (facts["collective"], facts["world_size"]) == ("all_gather", 2)
    assert verdict(explained(GATHER)) == ("pass", None, None)


def test_a_table_whose_validation_was_off_is_never_a_pass():
    """`-c 0` prints `N/A` in every #wrong: nothing validated, with or without the column line."""
    rows = ("    33554432       8388608     float     sum      -1    190.1  176.51  308.89    N/A    189.5  177.07  "
            "309.87    N/A\n   134217728      33554432     float     sum      -1    613.2  218.88  383.04    N/A    "
            "612.6  219.10  383.43    N/A\n")
    assert explained(HEAD + rows + "# Avg bus bandwidth    : 349.752\n").status != "pass"
    assert explained(rows).status != "pass"


@pytest.mark.parametrize("error", [
    "all_reduce: HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for "
    "details) / '",                                                                                    # HCA
    "init: NCCL Error 1: unhandled cuda error",
])
def test_a_bare_unhandled_cuda_error_is_the_jobs(error):
    assert barefail.bare(error)
    r = judge(CHECKS["nccl"], {"backend": "nccl", "error": error, "sizes": None}, Options())
    assert verdict(r) == ("fail", "NCCL_FAILED", "job"), r.summary


def test_an_unhandled_cuda_error_with_its_call_named_is_not_bare():
    assert not barefail.bare("all_reduce: enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'; Test NCCL "
                             "failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'")


def test_hosts_failing_with_a_bare_cuda_error_after_a_clean_sweep_are_the_jobs():
    """HCA: the units line, clean rows, then `Test NCCL failure` from several hosts with no cause."""
    text = ("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
            "(GB/s)\n"
            " 17179869184    4294967296     float     sum      -1    93457  183.83  367.29      0    93420  183.90  "
            "367.44      0\n"
            "HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n"
            " .. HCA-128 pid 757466: Test failure common.cu:915\n"
            "HCA-108: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '\n")
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")


def test_the_warn_above_a_bare_nccl_tests_failure_is_its_cause():
    """rtx-a6000-x3-nccl-2.26.2-roce-failed-to-open-libnvidia-ml-unhandled-system-error: the WARN names what failed."""
    text = ("[2025-06-12 16:57:52] gpu0301:842624:842643 [0] misc/nvmlwrap.cc:74 NCCL WARN Failed to open "
            "libnvidia-ml.so.1\ngpu0301:842624:842643 [0] NCCL INFO misc/nvmlwrap.cc:200 -> 2\n"
            "gpu0301:842624:842645 [2] NCCL INFO Using network IB\n"
            "gpu0301: Test NCCL failure common.cu:1119 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '\n")
    r = explained(text)
    assert r.code == "NCCL_FAILED" and r.owner != "job" and "libnvidia-ml" in r.summary, r.summary


ROWS = [  # BASELINE's rows: busbw / algbw = 1.9375 = 2 x 31/32
    {"size": 1073741824, "count": 268435456, "type": "float", "redop": "sum", "time_us": 5397.8, "algbw": 198.92,
     "busbw": 385.41, "wrong": 0},
    {"size": 17179869184, "count": 4294967296, "type": "float", "redop": "sum", "time_us": 85110.0, "algbw": 201.86,
     "busbw": 391.1, "wrong": 0},
]


def test_an_all_reduce_without_its_world_size_is_judged_where_its_figures_name_one():
    assert implied_world(ROWS, "all_reduce", 4) == 32
    assert implied_world(ROWS, "all_reduce", 3) is None            # 32 ranks are no whole number per node of 3
    assert implied_world(ROWS, "all_gather", None) is None
    # small figures fit several n: none implied (tests/test_judges_batch37.py's rows stay not assessed)
    small = [{**ROWS[0], "algbw": 1.5, "busbw": 2.9}]
    assert implied_world(small, "all_reduce", None) is None
    base = {"backend": "nccl", "collective": "all_reduce", "world_size": None, "nodes": 4, "error": None}
    r = judge(CHECKS["nccl"], {**base, "sizes": ROWS}, Options())
    assert r.status == "pass" and "world size 32" in r.summary, r.summary
    r = judge(CHECKS["nccl"], {**base, "sizes": [{**ROWS[0], "busbw": 380.0}]}, Options())
    assert r.status == "skip", r.summary
