"""Issue 35, batches 193-195 (fix193), fixed for the class:
- torch's monitored barrier naming the ranks that never arrived (`Ranks 4, 5, 6, 7 failed to pass monitoredBarrier
  in 2000000 ms`, from `monitored_barrier()` or the TORCH_DISTRIBUTED_DEBUG=DETAIL wrapper) with no cause shown is a
  timeout like torch's watchdog's: NCCL_TIMEOUT, owner job, never a drain (verify/checks/nccl/barrier.py); `verify
  explain` reads the line as the rank's error; its other failure, a rank that reached the barrier and lost its
  send/recv with rank 0 (`... successfully reached monitoredBarrier, but received errors while waiting for send/recv
  from rank 0`), is a peer gone: NCCL_FAILED, the job's (verify/checks/nccl/casualty.py);
- DCGM output where the tool, not the GPU, is at fault: NVSentinel's gpu-health-monitor event as kubectl shows it
  (`ErrorCode:DCGM_FR_... GPU:0 PCI:... GPU_UUID:GPU-... <DCGM's message>`) names a GPU the monitor read; its message
  fills a field only where DCGM's words say one (dcgmi health's reader), so an injected power-violation value, like a
  real power clock event, leaves the GPU not assessed: warn HEALTH_NOT_ASSESSED, never a fault nor a pass
  (verify/explain/nvsevent.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict

pytestmark = pytest.mark.unit

WRAPPER = "llamafactory-8x-h20-deepspeed-all-gather-rank0-ranks-6-failed-to-pass-monitored-barrier-detail-wrapper-job"
ISSUE = "nccl-issue-rank0-monitored-barrier-ranks-4-5-6-7-failed-to-pass-in-2000000-ms-cause-not-shown"
TIMEOUT = ("fail", "NCCL_TIMEOUT", "job")


@pytest.mark.parametrize("slug, line", [
    (WRAPPER, "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms"),
    (ISSUE, "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms"),
])
def test_a_monitored_barrier_missing_ranks_with_no_cause_is_the_jobs_timeout_on_both_roads(slug, line):
    assert line in raw(slug)
    assert replayed(slug) == {"nccl": TIMEOUT}
    assert verdict(explained(raw(slug))) == TIMEOUT


@pytest.mark.parametrize("line", [
    # one rank, torch's singular wording (the class, not the example)
    "RuntimeError: Rank 1 failed to pass monitoredBarrier in 30000 ms",
    "[rank3]: RuntimeError: [Rank 3]: Ranks 0, 12 failed to pass monitoredBarrier in 600000 ms",
])
def test_the_barriers_line_in_any_wording_is_a_timeout_never_a_drain(line):
    assert nccl_verdict(error=f"barrier: {line}") == TIMEOUT
    assert verdict(explained(f"{line}\n")) == TIMEOUT


def test_a_cause_shown_beside_the_barrier_still_decides():
    # the GPU's fault the rank logged names the cause: the barrier's timeout does not hide it
    text = ("RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
            "RuntimeError: [Rank 0]: Ranks 1 failed to pass monitoredBarrier in 30000 ms\n")
    assert verdict(explained(text)) == ("fail", "ECC_UNCORRECTABLE", "host")


def test_a_rank_that_reached_the_barrier_and_lost_its_peer_is_the_jobs_never_a_drain():
    # torch's ProcessGroupGloo wording as a job printed it (a public training log; the peer, rank 0, crashed first)
    line = ("[rank1]:[E325 17:13:23.163175227 ProcessGroupGloo.cpp:145] Rank 1 successfully reached monitoredBarrier, "
            "but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.")
    assert nccl_verdict(error=f"barrier: {line}") == ("fail", "NCCL_FAILED", "job")
    assert verdict(explained(f"{line}\n")) == ("fail", "NCCL_FAILED", "job")


POWER = "nvsentinel-gpupowerwatch-dcgm-fr-clock-throttle-power-injected-field-240-gpu0-no-real-fault"
EVENT = ("  GpuPowerWatch  GpuPowerWatchIsNotHealthy  2m34s  gpu-health-monitor  ErrorCode:DCGM_FR_CLOCK_THROTTLE_POWER "
         "GPU:0 PCI:0001:00:00.0 GPU_UUID:GPU-4af877ac-a2b7-9586-06e1-d900b47f2505 Detected clocks event due to power "
         "violation in GPU 0. Monitor the power conditions. This GPU can still perform workload. Recommended "
         "Action=CONTACT_SUPPORT;")
NOT_ASSESSED = ("warn", "HEALTH_NOT_ASSESSED", "host")


def test_an_nvsentinel_event_of_a_clock_event_leaves_the_gpu_not_assessed_on_both_roads():
    assert EVENT in raw(POWER)
    assert replayed(POWER) == {"gpu": NOT_ASSESSED}
    assert verdict(explained(raw(POWER))) == NOT_ASSESSED
    # the same event as a node condition's message, another GPU and code whose words name no field
    other = ("GpuThermalWatch  True  ErrorCode:DCGM_FR_CLOCK_THROTTLE_THERMAL GPU:3 PCI:0000:9d:00.0 "
             "GPU_UUID:GPU-d1816eb1-2926-4fbc-13f6-1cf1ba1b921b Detected clocks event due to thermal violation in "
             "GPU 3. Recommended Action=NONE;\n")
    assert verdict(explained(other)) == NOT_ASSESSED


def test_an_nvsentinel_event_whose_dcgm_words_name_a_fault_is_judged_by_them():
    dbe = ("GpuMemWatch  GpuMemWatchIsNotHealthy  1m  gpu-health-monitor  ErrorCode:DCGM_FR_VOLATILE_DBE_DETECTED GPU:2 "
           "PCI:0000:3b:00.0 GPU_UUID:GPU-4af877ac-a2b7-9586-06e1-d900b47f2505 Detected 3 volatile double-bit ECC "
           "error(s) in GPU 2. Recommended Action=CONTACT_SUPPORT;\n")
    got = verdict(explained(dbe))
    assert got[0] == "fail" and got[2] == "host"
