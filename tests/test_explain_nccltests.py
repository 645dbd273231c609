"""Issue 35 item 3: nccl-tests' own output read by `verify explain` (verify/explain/nccltests.py), each excerpt from a
real public run (its URL above it): versions with and without `#wrong`, Group and the root column, launchers'
prefixes, with and without NCCL's INFO lines. What the text cannot show is never a pass."""
from __future__ import annotations

import pytest

from tests.helpers import ROOT
from verify import explain as ex
from verify.explain import nccl, nccltests
from verify.options import Options

pytestmark = pytest.mark.unit


def _rows(text):
    head = nccltests._HEAD.search(text)
    assert head
    return nccltests._rows(text, head.group(1))


def verdict(text):
    r = ex.explain_text(text, "nccl-tests.txt", Options())
    return r.status, r.code, r.owner


# https://github.com/nebius/soperator/pull/428 (srun --mpi=pmix, nccl-tests 2.13 header with Group), cut to 4 ranks
SRUN = """# nThread 1 nGpus 1 minBytes 536870912 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1887 on   worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1888 on   worker-1 device  1 [0x91] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid   1885 on   worker-0 device  0 [0x8d] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid   1886 on   worker-0 device  1 [0x91] NVIDIA H100 80GB HBM3
"""


def test_the_device_lines_give_ranks_nodes_and_the_gpu():
    assert nccl.ranks(SRUN) == (4, 2, "NVIDIA H100 80GB HBM3")


# https://github.com/aws/aws-k8s-tester/pull/503 (Open MPI --tag-output on p5.48xlarge): every line `[1,0]<stdout>:`
OMPI = """[1,0]<stdout>:#                                                              out-of-place                     in-place
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw  #wrong
[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[1,0]<stdout>:           8             2     float     sum      -1    12.90    0.00    0.00      0    12.87    0.00    0.00      0
[1,0]<stdout>:          16             4     float     sum      -1    12.88    0.00    0.00      0    12.83    0.00    0.00      0
[1,0]<stdout>:          32             8     float     sum      -1    22.25    0.00    0.00      0    13.34    0.00    0.00      0
[1,0]<stdout>:# Out of bounds values : 0 OK
[1,0]<stdout>:# Avg bus bandwidth    : 92.3405
"""


def test_open_mpi_tagged_rows_are_read_but_with_no_rank_lines_nothing_is_guessed():
    rows = _rows(OMPI)
    assert [(r["size"], r["redop"], r["root"], r["out"][0], r["in"][3]) for r in rows] == [
        (8, "sum", "-1", 12.9, 0), (16, "sum", "-1", 12.88, 0), (32, "sum", "-1", 22.25, 0)]
    facts = nccltests.parse(OMPI)
    assert facts["world_size"] is None and facts["sizes"] is None       # neither ranks nor the program printed
    assert verdict(OMPI)[0] != "pass"


def test_srun_l_prefixes_are_stripped_like_open_mpi_s():
    # srun -l prefixes each line with the task number (`0: `); the same rows as above
    text = OMPI.replace("[1,0]<stdout>:", "0: ")
    assert len(_rows(text)) == 3


def test_the_two_node_all_reduce_is_judged_like_its_translation():
    # tests/data/real-world/a3mega-h100-two-nodes-allreduce-338-busbw (mpirun, no NCCL INFO lines)
    from tests.helpers import ROOT
    raw = (ROOT / "tests/data/real-world/a3mega-h100-two-nodes-allreduce-338-busbw/raw.txt").read_text()
    facts = nccltests.parse(raw)
    assert (facts["world_size"], facts["nodes"], facts["device_name"], len(facts["sizes"])) == (
        16, 2, "NVIDIA H100 80GB HBM3", 31)
    assert facts["sizes"][-1] == {"size": 8589934592, "count": 2147483648, "type": "float", "redop": "sum",
                                  "time_us": 47535.0, "algbw": 180.71, "busbw": 338.82, "wrong": 0}
    assert verdict(raw) == ("pass", None, None)
    # one wrong element in-place is wrong data: the same judge fails it
    bad = raw.replace("47743  179.92  337.35      0", "47743  179.92  337.35      3")
    assert verdict(bad) == ("fail", "NCCL_WRONG_RESULT", "host")


# https://github.com/NVIDIA/nccl-tests/issues/37 (2020, nccl-tests before #wrong: an `error` column, no `#` before the
# column names or the footer); all_gather on 8 V100s
OLD_ALLGATHER = """all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100
                                             out-of-place                       in-place
       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00
 Out of bounds values : 2 FAILED
 Avg bus bandwidth    : 128.942
"""


def test_an_old_table_out_of_bounds_is_wrong_data_without_a_count():
    facts = nccltests.parse(OLD_ALLGATHER)
    assert facts["sizes"] is None                       # `error` is a deviation, not a count of wrong elements
    assert "Out of bounds values : 2 FAILED" in facts["error"]
    assert verdict(OLD_ALLGATHER) == ("fail", "NCCL_WRONG_RESULT", "host")


# https://github.com/NVIDIA/nccl-tests/issues/82 (2021, broadcast over sockets with -c 0: `#   Rank  0 Pid` without
# Group, a root column and no redop, `N/A` where validation is off, NCCL WARN lines between)
BROADCAST = """# nThread 1 nGpus 1 minBytes 8 maxBytes 2147483648 step: 2(factor) warmup iters: 10 iters: 100 validation: 0
#
# Using devices
#   Rank  0 Pid  14926 on v100-gpu-1 device  0 [0x00] Tesla V100-PCIE-16GB
#   Rank  1 Pid   9210 on v100-gpu-5 device  0 [0x00] Tesla V100-PCIE-16GB

v100-gpu-1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
NCCL version 2.9.6+cuda11.2

v100-gpu-5:9210:9210 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
#
#                                                     out-of-place                       in-place
#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2   float       0    45.82    0.00    0.00    N/A    38.17    0.00    0.00    N/A
"""


def test_a_broadcast_without_validation_is_read_but_not_judged_as_an_all_reduce():
    facts = nccltests.parse(BROADCAST)
    assert (facts["world_size"], facts["nodes"], facts["device_name"], facts["nccl_version"], facts["sizes"]) == (
        2, 2, "Tesla V100-PCIE-16GB", "2.9.6", None)
    rows = _rows(BROADCAST)
    assert [(r["root"], r["out"][3]) for r in rows] == [("0", None)]
    kind = ex.kind_of(BROADCAST)
    assert kind and kind.name == "nccl-tests output"
    assert verdict(BROADCAST)[0] != "pass"


# https://github.com/NVIDIA/nccl-tests/issues/128 (reduce_scatter on 2x4 GPUs, nccl-tests 2.13: sizes of 0 first)
REDUCE_SCATTER = """#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           0             0     float     sum      -1     5.70    0.00    0.00      0     5.54    0.00    0.00      0
         128             4     float     sum      -1    32.31    0.00    0.00      0    25.35    0.01    0.00      0
         256             8     float     sum      -1    24.01    0.01    0.01      0    23.18    0.01    0.01      0
"""


def test_a_table_that_names_neither_program_nor_ranks_is_said_not_guessed():
    assert nccltests.parse(REDUCE_SCATTER)["sizes"] is None
    assert verdict(REDUCE_SCATTER)[0] == "skip"
    # named as an all-reduce, the size of 0 is left out (it moves nothing) and the rest judged
    named = "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on a device  0 [0x1] NVIDIA H100 " \
            "80GB HBM3\n#  Rank  1 Group  0 Pid 2 on a device  1 [0x2] NVIDIA H100 80GB HBM3\n" + REDUCE_SCATTER
    assert [r["size"] for r in nccltests.parse(named)["sizes"]] == [128, 256]


def test_wrong_elements_of_another_collective_are_wrong_data():
    text = "# Collective test starting: reduce_scatter_perf\n" + REDUCE_SCATTER.replace(
        "23.18    0.01    0.01      0", "23.18    0.01    0.01     12") + "# Out of bounds values : 1 FAILED\n"
    facts = nccltests.parse(text)
    # one rank's share (size = count x 4 x n) gives 8 ranks past the 0-byte row (batch 272): the rows are judged
    assert facts["world_size"] == 8 and sum(r["wrong"] for r in facts["sizes"]) == 12
    assert verdict(text) == ("fail", "NCCL_WRONG_RESULT", "host")
    headless = text.replace("# Collective test starting: reduce_scatter_perf\n", "")
    assert nccltests.parse(headless)["sizes"] is None       # no program named: a reduction's rows are not guessed


def test_a_table_pasted_without_its_column_line_is_read_and_its_figures_say_how_many_ranks():
    """tests/data/real-world/a100-3x8-four-hdr-allreduce-96-busbw-at-nic-line-rate: four of 24 device lines and the
    rows without their column line. An all-reduce's busbw is algbw x 2(n-1)/n, so the figures give n = 24 where the
    trimmed device lines show 4 (how many nodes is then unknown); rows whose #wrong is not a count are not read."""
    raw = ROOT / "tests/data/real-world/a100-3x8-four-hdr-allreduce-96-busbw-at-nic-line-rate/raw.txt"
    facts = nccltests.parse(raw.read_text())
    assert (facts["world_size"], facts["nodes"], len(facts["sizes"])) == (24, None, 6)
    assert nccltests._implied_world([{"out": [1.0, 50.0, 50.0, 0]}]) is None          # busbw = algbw: not an all-reduce
    old = "      1048576        262144     float     sum      -1   1.23e+03   0.85   1.49  2e-07   1.20e+03   0.87   1.53  2e-07\n"
    assert nccltests._rows(old, nccltests._HEADLESS) and not nccltests.parse(
        "#  Rank  0 Group  0 Pid 1 on n1 device  0 [0x10] NVIDIA A100-SXM4-40GB\n" + old
        + "# Out of bounds values : 0 OK\n")["sizes"]
