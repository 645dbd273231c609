# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Wording and reading defects a blind translator found where the verdict was right:
- a failed collective's summary names the collective the log shows (torch's `OpType=BROADCAST`, its flight recorder's
  `nccl:_allgather_base`, NCCL's `ncclBroadcast(` / `AllGather: opCount`, nccl-tests' program, or the record's leading
  phase), or none where none is shown: an all-reduce only for verify's own probe (verify/checks/nccl/opname.py);
  `verify explain` writes the collective it reads as the error's phase, `collective: ` where it reads none;
- `verify explain` counts NCCL's connections of the one host it judges (FACTS.md: a paste is read host by host, the
  first host that shows a fault, else the first host), never two hosts' connections as one node's;
- a record with no collective whose log shows NCCL's sockets and no fabric says so, never "no network choice";
- `verify explain` reads a CUDA call that failed with one of cudaGetErrorString's texts without the `CUDA error:`
  prefix (`ds4: CUDA synchronize failed: an illegal memory access was encountered`), never a sentence quoting one."""
from __future__ import annotations

from typing import Any

import pytest

from tests.judging import CORPUS, explained, verdict
from verify.checks import CHECKS
from verify.checks.nccl import opname
from verify.explain import cuda, kernel
from verify.explain import nccl as explain_nccl
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit


def _judged(**facts: Any) -> Any:
    return judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, **facts}, Options())


# ------------------------------------------------------------------------------- the collective a failure names
# the corpus's openrlhf-ray-ppo-vllm-weight-broadcast-seqnum-1-... line, as Ray prints it
BROADCAST = ("(RayWorkerWrapper pid=92234, ip=172.19.24.110) [rank1]:[E1224 13:23:05.483840160 ProcessGroupNCCL.cpp:542] "
             "[Rank 12] Collective WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=778567680, NumelOut=778567680, "
             "Timeout(ms)=1800000) raised the following async exception: NCCL error: remote process exited or there "
             "was a network error, NCCL version 2.21.5\n")


@pytest.mark.parametrize("printed, name", [
    ("OpType=BROADCAST", "broadcast"), ("OpType=ALLREDUCE", "all_reduce"), ("OpType=ALLREDUCE_COALESCED", "all_reduce"),
    ("OpType=REDUCE", "reduce"), ("OpType=ALLGATHER", "all_gather"), ("OpType=_ALLGATHER_BASE", "all_gather"),
    ("OpType=ALLGATHER_COALESCED", "all_gather"), ("OpType=GATHER", "gather"), ("OpType=SCATTER", "scatter"),
    ("OpType=REDUCE_SCATTER", "reduce_scatter"), ("OpType=_REDUCE_SCATTER_BASE", "reduce_scatter"),
    ("OpType=ALLTOALL_BASE", "all_to_all"), ("OpType=ALLTOALL", "all_to_all"), ("OpType=SEND", "send"),
    ("OpType=RECV", "recv"), ("OpType=RECVANYSOURCE", "recv"), ("OpType=BARRIER", "barrier"),
    ("OpType=COALESCED", "coalesced"), ("OpType=_ALLREDUCE_SPARSE", "all_reduce"),
    ("collective: nccl:_allgather_base", "all_gather"), ("profiling name nccl:all_to_all", "all_to_all"),
    ("NCCL operation ncclBroadcast(buff, count, ...) failed", "broadcast"),
    ("node:1:2 [0] NCCL INFO ReduceScatter: opCount 3 sendbuff 0x7f", "reduce_scatter"),
    ("Test NCCL failure all_gather_perf common.cu:1045", "all_gather"),
])
def test_every_collective_torch_and_nccl_print_is_named(printed, name):
    assert opname.shown(f"x {printed} y") == name


def test_no_collective_shown_is_none():
    assert opname.shown("OpType=UNKNOWN NCCL error: remote process exited") is None
    assert opname.shown("nccl:debug socket closed; AllReduce was fast") is None


@pytest.mark.parametrize("error, more, opening", [
    # the translation's phase, the operation in the error's own words, nothing shown
    ("broadcast: NCCL error: remote process exited or there was a network error", {}, "broadcast over nccl failed"),
    ("collective: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=_ALLGATHER_BASE, "
     "NumelIn=1, NumelOut=8, Timeout(ms)=600000) ran for 600049 milliseconds before timing out.", {},
     "all-gather over nccl in the job hung"),
    ("all_to_all: NCCL error: remote process exited or there was a network error", {}, "all-to-all over nccl failed"),
    ("collective: NCCL error: remote process exited or there was a network error", {}, "a collective over nccl failed"),
    ("init: NCCL error: remote process exited or there was a network error", {}, "a collective over nccl failed"),
    # verify's own probe runs an all-reduce: said so where nothing else is named
    ("init: NCCL error: remote process exited or there was a network error", {"mode": "4 local processes"},
     "all-reduce over nccl failed"),
    # nccl-tests' program recorded
    ("collective: NCCL error: remote process exited or there was a network error", {"collective": "sendrecv"},
     "sendrecv over nccl failed"),
])
def test_a_failure_names_the_collective_the_record_shows(error, more, opening):
    r = _judged(error=error, **more)
    assert r.status == "fail" and r.summary.startswith(opening), r.summary


def test_explain_names_the_broadcast_its_log_shows_on_both_roads():
    facts = explain_nccl.parse(BROADCAST)
    assert facts["error"].startswith("broadcast: NCCL error: remote process exited")
    r = explained(BROADCAST)
    assert verdict(r) == ("fail", "NCCL_FAILED", "job")
    assert r.summary.startswith("broadcast over nccl failed: broadcast: "), r.summary
    assert "all_reduce" not in r.summary and "all-reduce" not in r.summary


def test_explain_names_no_collective_where_its_log_shows_none():
    text = "[rank0]: torch.distributed.DistBackendError: NCCL error: remote process exited or there was a network error\n"
    assert explain_nccl.parse(text)["error"].startswith("collective: ")
    r = explained(text)
    assert r.status == "fail" and r.summary.startswith("a collective over nccl failed: collective: "), r.summary


# --------------------------------------------------------------- NCCL's connections of the one host it judges
RAVEN = "deepspeed-raven-ravg1038-ravg1040-hpcx-ibext-mlx5-0-ib-sharp-beside-mlx5-1-roce-via-net-ibext-0-without-gdrdma-host"


def _channel(host: str, n: int, gdr: bool) -> str:
    return (f"{host}:4135{n}:4183{n} [{n}] NCCL INFO Channel 0{n}/0 : {n}[{n}] -> 4[0] [send] via NET/IB/0"
            f"{'/GDRDMA' if gdr else ''}\n")


def test_two_hosts_connections_are_not_one_nodes():
    """The corpus's two Raven nodes: ravg1040 (the paste's first host) made three NET connections, ravg1038 two;
    the record is ravg1040's, as its translation's."""
    facts = explain_nccl.parse((CORPUS / RAVEN / "raw.txt").read_text())
    assert facts["nccl_log"]["net_channels"] == {"IBext": {"connections": 3, "gdr": 0}}
    r = explained((CORPUS / RAVEN / "raw.txt").read_text())
    assert verdict(r) == ("warn", "FABRIC_GDR_OFF", "host") and "NCCL's 3 IB/RoCE connection(s)" in r.summary


def test_the_host_whose_connections_show_the_fault_is_judged():
    text = "".join(_channel("gpu01", n, True) for n in range(3)) + "".join(_channel("gpu02", n, False) for n in range(2))
    assert explain_nccl.parse(text)["nccl_log"]["net_channels"] == {"IB": {"connections": 2, "gdr": 0}}
    healthy = "".join(_channel("gpu01", n, True) for n in range(3)) + "".join(_channel("gpu02", n, True) for n in range(2))
    assert explain_nccl.parse(healthy)["nccl_log"]["net_channels"] == {"IB": {"connections": 3, "gdr": 3}}


def test_connections_of_no_named_host_are_counted_as_printed():
    one = "".join(_channel("gpu01", n, False) for n in range(3))
    assert explain_nccl.parse(one)["nccl_log"]["net_channels"] == {"IB": {"connections": 3, "gdr": 0}}
    untagged = one + "Channel 01/0 : 5[1] -> 0[0] [send] via NET/IB/0\n" + _channel("gpu02", 1, False)
    assert explain_nccl.parse(untagged)["nccl_log"]["net_channels"] == {"IB": {"connections": 5, "gdr": 0}}


# ------------------------------------------------------------------ sockets shown, no fabric: said as shown
ORPO = "trl-orpo-accelerate-deepspeed-one-host-ec206899-four-ranks-nccl-net-plugin-internal-net-ib-no-device-socket-eth0-nothing-to-judge"


def test_a_log_of_sockets_and_no_fabric_says_so_and_judges_nothing():
    r = explained((CORPUS / ORPO / "raw.txt").read_text())
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None)
    assert "NCCL's log shows its sockets (network Socket on eth0) and no RDMA fabric" in r.summary, r.summary
    assert "no network choice" not in r.summary


@pytest.mark.parametrize("log, said", [
    ({"network": "Socket", "networks": ["Socket"], "interface": "eth0:10.0.0.5<0>"}, "its sockets (network Socket on eth0)"),
    ({"networks": [], "interface": None}, "NCCL's log (if any) shows no network choice"),
])
def test_no_collective_says_what_the_log_shows(log, said):
    r = _judged(nccl_log=log, error=None)
    assert verdict(r) == ("skip", "FACTS_INCOMPLETE", None) and said in r.summary, r.summary


# ------------------------------------------------- a CUDA call that failed with cudaGetErrorString's text, no prefix
DS4 = "gb10-dgx-spark-ds4-server-prefill-xid13-warp-out-of-range-address-then-xid43-cuda-illegal-memory-access-job"


@pytest.mark.parametrize("line", [
    "ds4: CUDA end commands failed: an illegal memory access was encountered",         # the corpus's ds4-server
    "ds4: CUDA synchronize failed: an illegal memory access was encountered",
    "[ERROR] cudaDeviceSynchronize failed: unspecified launch failure",
    "RuntimeError: cudaMemcpyAsync failed with error 'misaligned address'",
    "worker 3: CUDA kernel launch failed: uncorrectable ECC error encountered",
    "E0312 12:00:01.000 engine.cc:88] cuMemAlloc failed: out of memory",
])
def test_a_cuda_call_that_failed_with_the_runtimes_words_is_read(line):
    assert cuda.runtime_errors(f"starting\n{line}\n") == [{"index": None, "text": line}]
    assert explained(f"{line}\n").name == "gpu"


@pytest.mark.parametrize("line", [
    # advice and prose quoting the message: no program said it here
    "If you see `CUDA synchronize failed: an illegal memory access was encountered`, rerun with CUDA_LAUNCH_BLOCKING=1.",
    "If you see CUDA synchronize failed: an illegal memory access was encountered, rerun with CUDA_LAUNCH_BLOCKING=1",
    "When cudaMemcpy failed: an illegal memory access was encountered it usually means a bad pointer.",
    # no CUDA call named as what failed, or a sentence between the call and the failure
    "custom op failed: an illegal memory access was encountered",
    "CUDA is fine. The job failed: out of memory",
])
def test_a_sentence_quoting_the_runtimes_words_is_not_read(line):
    assert cuda.runtime_errors(f"{line}\n") == []


def test_the_ds4_servers_cuda_lines_are_read_beside_its_xids():
    """Its translation records both lines beside the kernel's Xid 13 and 43; the verdict stays the Xid rule's."""
    r = explained((CORPUS / DS4 / "raw.txt").read_text())
    assert r.name == "gpu" and verdict(r) == ("warn", "XID_ERROR", "job")
    facts = kernel.parse((CORPUS / DS4 / "raw.txt").read_text())
    assert [e["text"] for e in facts["cuda_errors"]] == [
        "ds4: CUDA end commands failed: an illegal memory access was encountered",
        "ds4: CUDA synchronize failed: an illegal memory access was encountered"]
