"""Hunt 83: hostile input against today's NCCL RAS, net-plugin shim and nvidia-smi fragment readers.

Each defect, its class, rating and fix:

1. A NCCL WARN naming a node's own cause (an IB completion error, `Cuda failure ... uncorrectable ECC`) in the same log as
   a RAS monitor event was judged the job's: the RAS kind, listed before NCCL's log, won the tie and read only RAS's
   lines. Withheld fault, high. ncclras.parse reads NCCL's WARN lines naming such a cause (rasreport.OWN_CAUSE) beside
   RAS's words, so the RAS rule gives way.
2. RAS words beside a failure its cause list does not name (`no CUDA-capable device`, `NVLink error`, a NET/OFI
   completion error) turned the host's fault into the job's on the facts road too. Withheld fault, high.
   rasreport.ras_verdict holds only where every part of the error is RAS's own (or, on a hang, the hang's line).
3. A net plugin's `mismatch enforced: NCCL_X=v (expected w)` anywhere in the error or NCCL's proof lines made any
   unnamed failure beside it the job's (`retry counter exceeded`, `ibv_reg_mr failed`, no CUDA device). Withheld
   fault, high. settings._refusal: the refusal decides only where it and its failing returns are all the error says.
4. `PEER_DEAD:` quoted in prose or a chat was read as a RAS monitor event: a job failure from no report. False
   failure, medium. The event must name its process (`PEER_DEAD: Process N ...`).
5. ncclras's table row and header regexes (`^\\s*...`) ran from every line start across the blank lines below it:
   quadratic (50,000 blank lines: 20 s), and a row was read across a cut line's end. Medium. `[^\\S\\n]` (a space
   within the line).
6. ncclras._blocks built a new list per `Errors` header (`blocks + [[]]`): quadratic (80,000 headers: 5.6 s). Medium.
   Appended in place.
7. fragment.FRAGMENT (`^\\s*<...`) the same quadratic run over blank lines (50,000: 4.8 s). Medium. `[^\\S\\n]*`.
8. (found after fix 2) reports printed one after another (`watch ncclras`, a paste of two runs) put the next run's
   `$ ncclras -v` prompt into the last Warnings block: with fix 2 no longer all RAS's words, the report fell to the
   unnamed NCCL error's default, the host's. False drain, high. ncclras._blocks ends a section at a line that is no
   RAS heading.
9. ncclras JSON's communicator `size` taken where it is a bool (world_size True) or beyond any job (10**30): a field
   invented from a value RAS never writes. Medium. An int (not bool), 1 to 2**22.
10. A lazy value before trailing space (`(.+?)\\s*$`: the shell prompt reader behind explain's ulimit kind, ib's and
   torchrun's fields, NCCL's `Using network`, nccl-tests' device lines, ...) retried a run of spaces from each of its
   characters: quadratic (40,000 spaces: 5 s; a 1 MB line: about an hour, a hang). Medium. `(.*\\S)\\s*$` in each.
11. `^\\s*` under re.MULTILINE (childfailed, ib, nvmljl, dcgmdiscovery, gpuburn, perftest, cudahidden, cuda, nvtop, smi,
   shared/rdma) ran over every blank line below each line start: quadratic (20,000 blank lines: 0.5 to 2.8 s each).
   Medium. `^[^\\S\\n]*`, the line's own indent.
12. shellimit._commands copied the rest of the lines per prompt line: quadratic in prompts (10 MB of repeated `$ ncclras
   -v` reports: 20 s in the ulimit kind's detect). Medium. Read by index.
"""
from __future__ import annotations

import json

import pytest

from tests.judging import RAS_DEAD as DEAD
from tests.judging import explained, nccl_verdict, verdict
from verify.explain import fragment, ncclras

pytestmark = pytest.mark.unit

MONITOR = " [2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 10.0.0.2 managing GPU 1\n"
IB = ("node1:1234:1300 [0] transport/net_ib.cc:1695 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43021> with "
      "status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0\n"
      "node1:1234:1300 [0] NCCL INFO transport/net.cc:1302 -> 6\n")
ECC = ("node1:1:2 [0] enqueue.cc:100 NCCL WARN Cuda failure 214 'uncorrectable ECC error encountered'\n"
       "node1:1:2 [0] NCCL INFO enqueue.cc:101 -> 1\n")
SHIM = " | NCCL/NET (shim) mismatch enforced: NCCL_MIN_NCHANNELS=8 (expected 4)"
RAS = " | DEAD 1 job process is considered dead (unreachable via the RAS network)"
HOST_FAULTS = ["init: NCCL WARN Error: no CUDA-capable device", "all_reduce: NCCL WARN NVLink error",
               "all_reduce: NCCL WARN NET/OFI Request completed with error. RC: 15. Error: Input/output error",
               "all_reduce: NCCL WARN NET/IB : retry counter exceeded",
               "all_reduce: NCCL WARN Call to ibv_reg_mr failed with error Bad address"]


@pytest.mark.parametrize(("log", "code"), [(IB, "NCCL_FAILED"), (ECC, "NCCL_FAILED")])
def test_a_nodes_own_cause_in_the_log_beside_a_ras_event_is_the_hosts(log, code):
    assert verdict(explained(log + MONITOR)) == ("fail", code, "host")
    assert verdict(explained(MONITOR)) == ("fail", "NCCL_FAILED", "job")


@pytest.mark.parametrize("error", HOST_FAULTS)
def test_ras_words_or_a_policy_refusal_beside_a_host_fault_never_hide_it(error):
    assert nccl_verdict(error=error)[2] == "host"
    assert nccl_verdict(error=error + RAS)[2] == "host"
    assert nccl_verdict(error=error + SHIM)[2] == "host"


def test_ras_alone_and_the_refusal_alone_stay_the_jobs():
    assert nccl_verdict(error="all_reduce: " + RAS[3:]) == ("fail", "NCCL_FAILED", "job")
    assert nccl_verdict(error="init: " + SHIM[3:]) == ("fail", "NCCL_FAILED", "job")
    assert nccl_verdict(error="all_reduce: Watchdog caught collective operation timeout" + RAS)[1:] == (
        "NCCL_TIMEOUT", "job")


@pytest.mark.parametrize("text", ["user: we saw PEER_DEAD: in the RAS docs, is that bad?\n",
                                  "From the docs:\nPEER_DEAD: a peer went away\n"])
def test_ras_words_in_prose_are_no_report(text):
    assert not ncclras.detect(text)
    assert explained(text).status != "fail"


def _fast(fn, arg):
    """The reader on an input that once took it quadratic time; how long: `python -m verify.explain.bench`."""
    return fn(arg)


def test_blank_lines_and_repeated_headers_are_read_in_linear_time():
    _fast(ncclras.parse, "\n" * 300_000 + "x")
    _fast(ncclras.parse, "Errors\n======\n" * 60_000)
    _fast(fragment.FRAGMENT.search, "\n" * 300_000 + "x")


def test_a_table_row_is_never_read_across_lines():
    head = "Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors\n"
    assert ncclras.parse(head + "    0         1          2       3-4\n8         7  RUNNING  INCOMPLETE\n")[
        "world_size"] is None
    assert ncclras.parse(head + "    0         1          2       3-4         8         7  RUNNING  OK\n")[
        "world_size"] == 8


def test_reports_printed_one_after_another_stay_the_jobs():
    text = "$ ncclras -v\n" + DEAD + "$ ncclras -v\n" + DEAD
    assert verdict(explained(text)) == ("fail", "NCCL_FAILED", "job")
    assert "ncclras -v" not in ncclras.parse(text)["error"]


@pytest.mark.parametrize("size", [True, 10**30, -3, "8", 1.5])
def test_a_json_size_ras_never_writes_is_not_read(size):
    report = {"nccl_version": "2.29.1", "communicators": [{"size": size, "ranks": [], "missing_ranks": [
        {"rank": 1, "host": "b", "pid": 2, "status": {"considered_dead": True}}]}]}
    facts = ncclras.parse(json.dumps(report))
    assert facts["world_size"] is None and "considered dead" in facts["error"]


SPACES = " " * 30_000


@pytest.mark.parametrize(("pattern", "line"), [
    ("verify.explain.shellimit:_PROMPT", "user@h:~$ ls" + SPACES + "x"),
    ("verify.explain.ib:_FIELD", "Port: 1" + SPACES + "x"),
    ("verify.explain.childfailed:_FIELD", "  host : a" + SPACES + "x"),
    ("verify.checks.nccl.ncclog:_RANK", "h:1:2 [0] NCCL INFO Using network IB" + SPACES + "x"),
    ("verify.explain.collectenv:_GPU", "GPU 0: A100" + SPACES + "x"),
    ("verify.explain.mmcvenv:_GPUS", "GPU 0: A100" + SPACES + "x"),
    ("verify.explain.autopilot:_MODEL", "] GPU_MODEL: A100" + SPACES + "x"),
    ("verify.explain.gpuburn:_ERROR", "Couldn't init a GPU test: e" + SPACES + "x"),
    ("verify.explain.nccl:DEVICE_LINE", "#  Rank  0 Group  0 Pid  1 on h device  0 [0x07] A100" + SPACES + "x"),
    ("verify.explain.nccl:DEVICE_LINE", "\n" * 30_000 + "x"),
])
def test_a_field_before_a_long_run_of_spaces_is_read_in_linear_time(pattern, line):
    """10. `(.+?)\\s*$` (a lazy value before trailing space) retried the space run from each of its characters:
    quadratic (40,000 spaces: 5 s; a 1 MB line: an hour). Medium. `(.*\\S)\\s*$`, the same value in one pass."""
    import importlib
    module, name = pattern.split(":")
    regex = getattr(importlib.import_module(module), name)
    found = regex.search(line)             # how long: `python -m verify.explain.bench`
    assert found is None or found.groups()[-1].endswith("x")


@pytest.mark.parametrize("pattern", [
    "verify.explain.childfailed:_TABLE", "verify.explain.childfailed:_ENTRY", "verify.explain.ib:_RDMA_DEV",
    "verify.explain.ib:_NO_DEVICES", "verify.explain.ib:_CUT", "verify.explain.nvmljl:_TUPLE",
    "verify.explain.dcgmdiscovery:_FOUND", "verify.explain.gpuburn:_END", "verify.explain.perftest:_IBDEV2NETDEV",
    "verify.explain.cudahidden:_CUT_ROW", "verify.explain.cuda:_SMI_L", "verify.explain.nvtop:_DEVICE"])
def test_a_line_start_indent_never_runs_over_blank_lines(pattern):
    """11. `^\\s*` under re.MULTILINE ran from every line start over all the blank lines below it: quadratic (20,000
    blank lines: 0.5 to 2.8 s per reader). Medium. `^[^\\S\\n]*`, the line's own indent."""
    import importlib
    module, name = pattern.split(":")
    regex = getattr(importlib.import_module(module), name)
    found = regex.search("\n \n" * 30_000 + "x")
    assert found is None or "\n \n" not in found.group(0)


def test_many_prompts_are_read_in_linear_time():
    """12. shellimit._commands sliced the rest of the text per prompt line: quadratic in prompts (10 MB of repeated
    `$ ncclras -v` reports: 20 s in the ulimit kind's detect alone). Medium. Read by index."""
    from verify.explain import shellimit
    _fast(shellimit.memlock, "$ ncclras -v\n" * 40_000)
