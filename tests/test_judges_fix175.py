"""Issue 35, batches 175 (torch's watchdog, Flight Recorder and heartbeat timeouts) and 178 (GPU machines 2025-2026):
the classes their blind translations showed the judges or `verify explain` getting wrong.
- torch's watchdog failure line in every wording (2.3-2.5: `Exception (either an error or timeout) detected by
  watchdog at work: N`, 2.6+: `failure detected by watchdog at work sequence id: N PG status: ...`), with the Flight
  Recorder's notices and nothing it caught, is a bare class of failure: NCCL_FAILED, owner job, never the host's; the
  heartbeat monitor's `Received a dump signal due to a collective timeout from this local rank` says the timeout:
  NCCL_TIMEOUT, owner job. `verify explain` reads these lines as NCCL's, not as the elastic agent's exit below them;
- `nvidia-smi topo -m` (GPUs with their NUMA node, no health field) beside a health read of the same GPUs is an
  inventory the other read answers: its "no health field read" is not the file's verdict.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict
from verify.checks.nccl.watchdog import only_watchdog

pytestmark = pytest.mark.unit

MVSNET = ("cl-mvsnet-sync-bn-ddp-deadlock-seqnum-716-last-enqueued-747-flight-recorder-disabled-dump-signal-"
          "exitcode-minus-6")
BASICSR = "basicsr-three-ranks-watchdog-allreduce-seqnum-808-600s-last-enqueued-811-no-cause-in-log"
G7E = ("aws-g7e-2x-rtx-pro-6000-blackwell-se-570.172.08-dcgm-3.3.9-diag-r3-deployment-pass-hardware-skip-all-idle-25c-"
       "ecc-0-sw-power-cap-bit")

# cl-mvsnet-... (torch 2.6+), basicsr-... (torch 2.4): the failure line as each prints it
FAILED_26 = ("[rank0]:[E1213 17:24:49.082111648 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 0]  "
             "failure detected by watchdog at work sequence id: 716 PG status: last enqueued work: 747, last completed "
             "work: 715")
FAILED_24 = ("[rank0]:[E626 06:24:44.160366013 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
             "Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, "
             "last completed NCCL work: 807.")
NO_RECORDER = ("[rank0]:[E1213 17:24:49.082137518 ProcessGroupNCCL.cpp:730] Stack trace of the failed collective not "
               "found, potentially because FlightRecorder is disabled. You can enable it by setting "
               "TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.")
FIRST_PG = ("[rank0]:[E1213 17:24:49.082246429 ProcessGroupNCCL.cpp:2573] [PG ID 0 PG GUID 0(default_pg) Rank 0] First "
            "PG on this rank to signal dumping.")
DUMP = ("[rank0]:[E1213 17:24:49.328237228 ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received "
        "a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug "
        "info. Last enqueued NCCL work: 747, last completed NCCL work: 715.")
AGENT = ("E1213 17:25:50.704000 1497962 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed "
         "(exitcode: -6) local_rank: 0 (pid: 1498377) of binary: /home/zhengyifei24/miniconda3/envs/ZYF312/bin/python")


# ------------------------------------------------------- torch's watchdog failure line: a bare class, the job's
@pytest.mark.parametrize("error", [f"watchdog: {FAILED_26}", f"all_reduce: {FAILED_24}",
                                   f"all_reduce: {FAILED_26} | {NO_RECORDER} | {FIRST_PG}"])
def test_the_watchdogs_failure_line_alone_is_the_jobs_failure_never_a_drain(error):
    assert only_watchdog(error)
    assert nccl_verdict(error=error) == ("fail", "NCCL_FAILED", "job")


def test_the_watchdogs_failure_line_with_what_it_caught_is_no_bare_class():
    # torch prints the NCCL error it caught beside the line: that error is the failure, judged by its own rules
    assert not only_watchdog(f"all_reduce: {FAILED_24} NCCL error: remote process exited or there was a network error")


@pytest.mark.parametrize("error", [f"all_reduce: {DUMP}", f"watchdog: {FAILED_26}; {DUMP}"])
def test_the_monitors_dump_on_a_collective_timeout_is_the_jobs_hang(error):
    assert nccl_verdict(error=error) == ("fail", "NCCL_TIMEOUT", "job")


def test_a_deadlocked_sync_bn_job_is_the_jobs_hang_on_both_roads():
    assert replayed(MVSNET) == {"nccl": ("fail", "NCCL_TIMEOUT", "job")}
    assert verdict(explained(raw(MVSNET))) == ("fail", "NCCL_TIMEOUT", "job")


def test_explain_reads_the_watchdogs_failure_line_as_nccls_not_as_the_agents_exit():
    # without the monitor's dump line only the failure line says what failed: NCCL's bare failure, no timeout guessed
    r = explained("\n".join([FAILED_26, NO_RECORDER, FIRST_PG, AGENT]))
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job")
    assert "failure detected by watchdog" in r.summary


# ------------------------------------------------------- nvidia-smi topo -m: an inventory beside a health read
TOPO = """        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      PIX     0-47    0               N/A
GPU1    PIX      X      0-47    0               N/A"""


def test_topo_beside_a_health_read_of_its_gpus_is_no_unread_health():
    text = raw(G7E)
    assert TOPO in text and "0, NVIDIA RTX PRO 6000 Blackwell Server Edition, 25, 30.39 W, 600.00 W, 0, 0" in text
    assert verdict(explained(text)) == ("pass", None, None)


def test_topo_alone_still_reads_no_health():
    assert verdict(explained(TOPO)) == ("warn", "HEALTH_NOT_ASSESSED", "host")
