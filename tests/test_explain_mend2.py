"""Issue 35 item 2 (mend2): lines as launchers print them, read by `verify explain`.
- Open MPI's output tags (verify/explain/launchers.py): 4.x's `--tag-output` `[1,0]<stdout>:` and its
  `--timestamp-output` ctime before it, 5.x's (PMIx) `[1,0]<stdout>: `, `tag-detailed`, `tag-fullname`, `rank` and
  bracketed ctime; 4.x tags the next piece of a line it forwarded in pieces again, so an nccl-tests row flushed in
  halves carries the tag inside it (batch 289's p5 EKS pair, aws-eks-p5-48xlarge-2x8-...);
- MPICH's and Intel MPI's `-prepend-rank` `[0] ` before NCCL's and nccl-tests' lines only; Slurm's `srun --label`;
- nccl-tests' sendrecv table with no program named (batch 289's 128-rank B200 job printed its own banner, no `#
  Collective test starting`): its in-place `#wrong` is `N/A`, never validated, which names it; `N/A` is "not
  checked", never 0 wrong elements.
What is no launcher's (a citation's `[1]`, a markdown list) is kept as it is, and read as nothing."""
from __future__ import annotations

import re
import time

import pytest

from tests.judging import raw
from verify import explain as ex
from verify.explain import launchers, nccltests, pasted
from verify.options import Options

pytestmark = pytest.mark.unit

P5 = "aws-eks-p5-48xlarge-2x8-h100-aws-ofi-nccl-1.9.2-nccl-2.22.3-efa-gdrdma-allreduce-488-busbw-healthy"
G4DN = "aws-g4dn-8xlarge-eks-karpenter-mpijob-2x1-no-efa-requested-fi-provider-sockets-nccl-socket-allreduce-2-gbs-job"
B200 = "b200-16x8-nccl-2.29.7-sendrecv-128-ranks-busbw-14.7-vs-42-on-2-nodes-same-ndr-rails-fabric-contention-host"

NCCL_LINE = "test-nccl-worker-0:25:66 [0] NCCL INFO Using network AWS Libfabric"
ROW = "  1073741824     268435456     float     sum      -1   4575.2  234.69  440.04      0   4572.1  234.85  440.34      0"


def verdict(text):
    r = ex.explain_text(text, "launched.txt", Options())
    return r.status, r.code, r.owner


@pytest.mark.parametrize("tag", [
    "[1,0]<stdout>:",                                   # Open MPI 4.x --tag-output
    "[1,12]<stderr>:",
    "Mon Jan  1 12:00:00 2024[1,0]<stdout>:",           # 4.x --timestamp-output --tag-output
    "Wed Nov 23 09:41:07 2022<stdout>:",                # 4.x --timestamp-output alone
    "[1,0]<stdout>: ",                                  # 5.x --output tag
    "[1,3][test-nccl-worker-1:37]<stdout>: ",           # 5.x --output tag-detailed
    "[prterun-login01-81234@1,3]<stdout>: ",            # 5.x --output tag-fullname
    "[3]<stdout>: ",                                    # 5.x --output rank
    "[Mon Jan  1 12:00:00 2024][1,0]<stdout>: ",        # 5.x --output tag,timestamp
    "[Mon Jan  1 12:00:00 2024]<stdout>: ",             # 5.x --output timestamp
])
def test_open_mpi_s_tags_come_off_ncc_l_lines_and_table_rows(tag):
    assert launchers.prefixes(tag + NCCL_LINE) == NCCL_LINE
    assert launchers.untagged(tag + ROW).split() == ROW.split()      # 4.x's tag has no blank: `: ?` takes the row's
    assert launchers.untagged("  " + tag + NCCL_LINE) == NCCL_LINE          # quoted indented (a CI log)
    assert launchers.untagged("2024-05-01T12:00:00.123Z " + tag + NCCL_LINE) == NCCL_LINE     # under kubectl's stamp


def test_a_row_open_mpi_forwarded_in_pieces_is_read_whole():
    """4.x tags each piece it forwards (orte/mca/iof/base/iof_base_output.c): a row nccl-tests flushed in halves
    reads `... -1[1,0]<stdout>:    85.70 ...` (the p5 pair's every row)."""
    line = ("[1,0]<stdout>:           8             2     float     sum      -1[1,0]<stdout>:    85.70    0.00    0.00"
            "      0[1,0]<stdout>:    74.97    0.00    0.00      0")
    whole = "8 2 float sum -1 85.70 0.00 0.00 0 74.97 0.00 0.00 0"
    assert " ".join(launchers.untagged(line).split()) == whole and "<std" not in launchers.untagged(line)
    # prefixes() takes off what stands before the line only: said.py measures the cut by it
    assert launchers.prefixes(line).lstrip().startswith("8 ") and "<stdout>" in launchers.prefixes(line)
    stamped = ("Mon Jan  1 12:00:00 2024[1,0]<stdout>:           8             2     float     sum      -1"
               "Mon Jan  1 12:00:01 2024[1,0]<stdout>:    85.70    0.00    0.00      0")
    assert " ".join(launchers.untagged(stamped).split()) == "8 2 float sum -1 85.70 0.00 0.00 0"


def test_the_p5_pair_s_table_is_read_through_its_tags_and_judged():
    """Batch 289: every row of the p5 pair's table carries Open MPI's tag inside it; read whole, the 16-rank
    all-reduce's 32 sizes are judged (488 GB/s at 16 GiB over EFA with GDRDMA: healthy)."""
    facts = nccltests.parse(pasted.bare(raw(P5)))
    assert facts["world_size"] == 16 and facts["nodes"] == 2 and len(facts["sizes"]) == 32
    assert facts["sizes"][-1]["size"] == 17179869184 and facts["sizes"][-1]["busbw"] == 487.9
    assert all(r["wrong"] == 0 for r in facts["sizes"])
    r = ex.explain_text(raw(P5), "raw.txt", Options())
    assert (r.status, r.code) == ("pass", None) and "world size 16, 32 sizes" in r.summary, r.summary


def test_the_g4dn_job_s_tagged_lines_are_read_but_its_ranks_are_not_shown():
    """Batch 289: the tags come off (the Socket line and the 31 rows are read), but no device list or launch line
    says how many ranks ran: busbw = algbw fits a two-rank all-reduce or a sendrecv of any size, so the rows are not
    judged, and sockets on a node whose adapters the text does not show prove no fall-back."""
    bare = pasted.bare(raw(G4DN))
    assert "<stdout>" not in bare
    head = nccltests._HEAD.search(bare)
    assert head and len(nccltests._rows(bare, head.group(1))) == 31
    facts = nccltests.parse(bare)
    assert facts["nccl_log"]["networks"] == ["Socket"] and facts["sizes"] is None and facts["world_size"] is None
    assert verdict(raw(G4DN)) == ("skip", "FACTS_INCOMPLETE", None)


TABLE = """# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  40123 on    gpu-001 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  40124 on    gpu-001 device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  40125 on    gpu-001 device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  40126 on    gpu-001 device  3 [0x5d] NVIDIA H100 80GB HBM3
gpu-001:40123:40123 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    16777216       4194304     float     sum      -1    110.2  152.24  228.36      0    109.8  152.80  229.20      0
    33554432       8388608     float     sum      -1    180.5  185.90  278.85      0    179.9  186.52  279.78      0
    67108864      16777216     float     sum      -1    321.4  208.80  313.20      0    320.8  209.19  313.79      0
   134217728      33554432     float     sum      -1    600.1  223.66  335.49      0    599.2  224.00  336.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 290.123
#
"""


def _each_line(text, prefix):
    return "\n".join(prefix(n) + line for n, line in enumerate(text.splitlines()))


@pytest.mark.parametrize("prefix", [
    lambda n: "[0] ",                                   # MPICH / Intel MPI -prepend-rank (rank 0 prints the table)
    lambda n: "[1,0]<stdout>:",                         # Open MPI 4.x
    lambda n: "Mon Jan  1 12:00:00 2024[1,0]<stdout>:",
    lambda n: "[1,0][gpu-001:40123]<stdout>: ",         # Open MPI 5.x tag-detailed
    lambda n: f"{n % 4}: ",                             # srun --label
    lambda n: f"{n % 12:>2}: ",
], ids=["prepend-rank", "tag-output", "timestamp-output", "tag-detailed", "srun-label", "srun-label-padded"])
def test_a_launcher_s_prefix_on_every_line_of_nccl_tests_changes_nothing(prefix):
    plain = nccltests.parse(pasted.bare(TABLE))
    assert plain["world_size"] == 4 and len(plain["sizes"]) == 4 and plain["nccl_version"] == "2.21.5"
    launched = _each_line(TABLE, prefix)
    assert nccltests.parse(pasted.bare(launched)) == plain
    assert verdict(launched) == verdict(TABLE)


def test_mpich_s_rank_inside_a_row_forwarded_in_pieces_comes_off():
    """Hydra prepends its pattern to each piece it writes (src/pm/hydra/mpiexec/uiu.c): a row flushed in halves."""
    line = "[0]     16777216       4194304     float     sum      -1[0]     110.2  152.24  228.36      0[0]     109.8"
    assert launchers.untagged(line) == "    16777216       4194304     float     sum      -1    110.2  152.24  228.36      0    109.8"


@pytest.mark.parametrize("line", [
    "[0] gpu-001:40123:40123 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "[12] gpu-002:5120:5188 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<54321> with error 12",
    "[0] NCCL version 2.21.5+cuda12.4",
    "[0] # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20",
    "[0] #  Rank  0 Group  0 Pid  40123 on    gpu-001 device  0 [0x18] NVIDIA H100 80GB HBM3",
    "[0] #",
    "[0] # Out of bounds values : 0 OK",
    "[0]     16777216       4194304     float     sum      -1    110.2  152.24  228.36      0",
    "[3] gpu-001: Test NCCL failure common.cu:1005 'remote process exited or there was a network error / '",
])
def test_mpich_s_prepended_rank_comes_off_before_nccl_s_and_nccl_tests_lines(line):
    assert launchers.prefixes(line) == line.split(" ", 1)[1]


@pytest.mark.parametrize("line", [
    "[1] https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
    "[1] See NCCL's documentation of NCCL_IB_HCA for the HCA list",
    "[2] 16 GPUs in 2 nodes, busbw 440 GB/s",
    "[1] # not a heading of nccl-tests",
    "[0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",         # NCCL's device index of a line quoted without its host
    "- [1,0] the first rank's output",
    "- [0] run all_reduce_perf -b 8 -e 128M -f 2 -g 8",
    "1. [1] check the busbw column",
    "* 0 2 float sum -1 are the first columns",
    "[x] 16777216 4194304 float done",
    "1:1 ratio of NICs to GPUs",
    "[1,0] <stdout> is where Open MPI writes",
])
def test_prose_and_lists_are_no_launcher_s_prefix(line):
    assert launchers.prefixes(line) == line
    assert launchers.untagged(line) == line


def test_a_note_with_citations_and_a_markdown_list_is_read_as_nothing():
    note = ("We ran nccl-tests across the two nodes [1] and saw low numbers.\n"
            "[1] https://github.com/NVIDIA/nccl-tests\n"
            "[2] 16 GPUs in 2 nodes, busbw 440 GB/s expected\n"
            "- [0] run all_reduce_perf -b 8 -e 128M -f 2 -g 8\n"
            "- [1] compare the busbw column with the baseline\n"
            "1. [1,0] is rank 0 of job 1 in Open MPI's tags\n")
    assert ex.kind_of(note) is None
    r = ex.explain_text(note, "note.md", Options())
    assert r.status == "skip" and r.summary.startswith("not recognised")


# batch 289's B200 job (togethercomputer/together-nccl-tests, benchmarks/B200/sendrecv-p2p-scaling/run1), cut to its
# first node's ranks and the largest sizes: its own banner, no `# Collective test starting`, in-place `#wrong` `N/A`
SENDRECV = """>>> SendRecv bandwidth sweep (1KB to 256MB) — 128 GPUs...
# nThread 1 nGpus 1 minBytes 1024 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 145928 on use3a-ss-b200-gpu-160 device  0 [0x17] NVIDIA B200
#  Rank  1 Group  0 Pid 145929 on use3a-ss-b200-gpu-160 device  1 [0x3d] NVIDIA B200
#  Rank  2 Group  0 Pid 158020 on use3a-ss-b200-gpu-161 device  0 [0x17] NVIDIA B200
#  Rank  3 Group  0 Pid 158021 on use3a-ss-b200-gpu-161 device  1 [0x3d] NVIDIA B200
NCCL version 2.29.7+cuda12.9
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
    33554432       8388608     float     sum      -1   2308.8   14.53   14.53      0   2283.3   14.70   14.70    N/A
    67108864      16777216     float     sum      -1   4592.4   14.61   14.61      0   4539.7   14.78   14.78    N/A
   134217728      33554432     float     sum      -1   9146.2   14.67   14.67      0   9067.8   14.80   14.80    N/A
   268435456      67108864     float     sum      -1    18295   14.67   14.67      0    18165   14.78   14.78    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 7.46667
#
"""


def test_a_sendrecv_table_is_named_by_its_in_place_n_a():
    facts = nccltests.parse(SENDRECV)
    assert facts["collective"] == "sendrecv" and facts["world_size"] == 4 and facts["nodes"] == 2
    assert [(r["size"], r["busbw"], r["wrong"]) for r in facts["sizes"]] == [
        (33554432, 14.53, 0), (67108864, 14.61, 0), (134217728, 14.67, 0), (268435456, 14.67, 0)]
    assert "in-place #wrong N/A" in facts["mode"] and facts["error"] is None
    r = ex.explain_text(SENDRECV, "sendrecv.txt", Options())
    assert (r.status, r.code) == ("pass", None) and "sendrecv verified" in r.summary, r.summary
    assert "bandwidth not assessed" in r.summary          # verify's baselines are all-reduce figures


def test_the_b200_job_s_whole_table_is_read_as_a_sendrecv():
    facts = nccltests.parse(pasted.bare(raw(B200)))
    assert facts["collective"] == "sendrecv" and facts["world_size"] == 128 and facts["nodes"] == 16
    assert len(facts["sizes"]) == 19 and facts["sizes"][-1]["busbw"] == 14.67
    assert verdict(raw(B200))[:2] == ("pass", None)


def test_n_a_in_place_is_not_checked_never_zero_wrong_elements():
    """The out-of-place count is the row's `wrong`; the in-place side nccl-tests did not check adds none, and a
    wrong count out of place is wrong data whatever the other side printed."""
    wrong = SENDRECV.replace("14.61      0   4539.7", "14.61     12   4539.7")
    facts = nccltests.parse(wrong)
    assert [r["wrong"] for r in facts["sizes"]] == [0, 12, 0, 0]
    assert verdict(wrong)[:2] == ("fail", "NCCL_WRONG_RESULT")
    # -c 0: nothing validated, either side `N/A`: no row is "0 wrong", no sizes, no pass
    unchecked = re.sub(r"(?m)^( +\d+ +\d+ +float +sum +-1 +\S+ +\S+ +\S+ +)0(?= )", r"\1N/A", SENDRECV)
    assert unchecked.count("N/A") == 8
    facts = nccltests.parse(unchecked)
    assert facts["sizes"] is None and facts["collective"] is None
    assert verdict(unchecked)[0] != "pass"


def test_an_in_place_count_or_no_reduction_is_no_sendrecv():
    counted = SENDRECV.replace("    N/A\n", "      0\n")
    facts = nccltests.parse(counted)
    assert facts["collective"] != "sendrecv" and facts["sizes"] is None     # 4 ranks, busbw = algbw: no all-reduce
    # an alltoall's rows (no reduction, one rank's share) stay an alltoall's
    alltoall = SENDRECV.replace("     sum      -1", "    none      -1")
    for size, count in ((33554432, 8388608), (67108864, 16777216), (134217728, 33554432), (268435456, 67108864)):
        alltoall = alltoall.replace(f"{size:>12}  {count:>12}", f"{size:>12}  {count // 4:>12}")
    assert nccltests.parse(alltoall)["collective"] == "alltoall"
    # a root (broadcast, reduce) is no sendrecv's
    rooted = SENDRECV.replace("     sum      -1", "     sum       0")
    assert nccltests.parse(rooted)["collective"] != "sendrecv"


def test_the_launchers_prefixes_stay_linear_on_hostile_lines():
    lines = ["[1,0]<stdout>:" + "Mon Jan  1 12:00:00 2024[1,0]<stdout>" * 3000,
             "[1,0]<stdout>:" + "[" * 100000,
             "[0] " + "1 " * 100000,
             "[0]     8 2 float sum -1" + "[0] " * 50000,
             "[" + "a" * 100000 + "@1,0]<stdout>",
             "Mon Jan  1 12:00:00 2024" * 5000]
    start = time.perf_counter()
    for line in lines:
        launchers.untagged(line)
    assert time.perf_counter() - start < 2
