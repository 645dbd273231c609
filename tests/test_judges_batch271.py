"""Batches 271 to 276 (issue 35): the lead's review.

- torch's Flight Recorder analysis (`torchfrtrace`, `python -m torch.distributed.flight_recorder.fr_trace`) was filed
  as NCCL_FAILED, owner **host** (a healthy node drained) on the facts road and not recognised by `verify explain`.
  Its `Not all ranks joining collective` (three wordings across torch 2.5 to 2.10) is a rank that never issued the
  collective the others wait in: the job's hang (NCCL_TIMEOUT, job), as the watchdog's timeout; its `Collective
  sequence number: N has errors` with a type, size or dtype mismatch is the job's desync (NCCL_FAILED, job).
  verify/checks/nccl/flightrec.py, verify/explain/frtrace.py.
- torch's `NCCL error in: <file>:<line>,` wrapped at its comma lost its reason on the explain road (`invalid argument`
  on the next line), and NCCL's refusal fell to the host; the reason is now read across the wrap.
- NCCL refusing torch's own symmetric-memory call (`.../c10d/symm_mem/...: invalid usage` / `invalid argument`): the
  arguments were torch's, not the program's: the image's (batches 249 and 271, both translators); the same refusal from
  ProcessGroupNCCL (the program's tensors) stays the job's. verify/checks/nccl/misuse.py.
- Batch 272: nccl-tests tables `verify explain` did not judge: a page's markdown that took each line's `#` for a
  heading mark prints the column line `size count type ... wrong` (it was read as a table before `#wrong`: no counts),
  and all_gather_perf's 0-byte rows (`-b 0`) hid the ranks its shares give (verify/explain/nccltests.py).
- Batch 273: `dcgmi health`'s power violation (`Detected clocks event due to power violation in GPU 0. ... This GPU can
  still perform workload.`, DCGM_FR_CLOCKS_EVENT_POWER) left the GPU unassessed (warn, host) beside readings that pass:
  it is the power cap lowering the clocks under load, said beside the verdict, never a fault; a thermal violation stays
  unread (verify/explain/dcgmhealth.py).
- Batch 276: a CUDA error's number after `#` (`cudaRuntimeGetVersion() failed with error #35`, printf's `error #%d`)
  was not decoded (GPU_NOT_VISIBLE on the facts road, a pass on the explain road); Windows' nvidia-smi's `Unable to
  detect the device handle for GPU0000:B1:00.0: Unknown Error` (a Hyper-V GPU-PV guest) was not recognised.
- Batch 275: a socket connect that dialled a loopback address (`socketStartConnect: Connect to 127.0.0.1<45069>
  failed : Software caused connection abort`, srun task 10 of a multi-node job) was the way between the nodes (host): a
  peer offered its `lo`, the job's NCCL_SOCKET_IFNAME (verify/checks/nccl/connect.py); a one-line paste's `Last error:`
  on the same line as torch's error was not read by explain.
Real lines from the entries named by slug (each source.md gives its URL); hand-made lines say so.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.explain import dcgmhealth
from verify.judging import judge
from verify.options import Options
from verify.shared import cuda_errors

pytestmark = pytest.mark.unit

FR = "torchcomms-fr-trace-cli-2-ranks-gloo-cpu-torchrun-rank-1-sleeps-all-reduce-seq-4-not-all-ranks-joining-missing-rank-1-job"
SYMM = ("h100-x8-ngc-26.04-torch-2.12-nccl-2.29.7-symm-mem-nccl-backend-rendezvous-as-first-op-failed-to-window-"
        "register-invalid-argument-image")
DEVCOMM = "torch-symm-mem-nccl-2.29.2-nccldevcommcreate-invalid-usage-memset-requirements-not-initializer-image"


def _nccl(error: str, **facts: Any) -> tuple[str, str | None, str | None]:
    record = {"backend": "nccl", "world_size": 2, "nodes": 1, "sizes": None, "error": error, **facts}
    return verdict(judge(CHECKS["nccl"], record, Options()))


def test_the_flight_recorders_missing_rank_is_the_jobs_hang_on_both_roads():
    assert replayed(FR) == {"nccl": ("fail", "NCCL_TIMEOUT", "job")}
    r = explained(raw(FR), "fr.txt")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_TIMEOUT", "job")
    assert "missing ranks: {1}" in r.summary


# the analyser's other wordings of the same finding (torch 2.5-2.7's tutorial output, its first print): hand-made in
# the analyser's own format strings (torch/distributed/flight_recorder/components/utils.py)
@pytest.mark.parametrize("text", [
    "Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\n"
    "missing ranks: {1}\ninput sizes: [[3, 4]]\noutput sizes: [[3, 4]]\nexpected ranks: 2\ncollective state: scheduled\n",
    "Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce  Missing ranks are {1, 3}\n",
    "$ torchfrtrace --prefix trace_ /tmp/\nNot all ranks joining collective, sequence number: 12\n"
    "group info: 1:tp_group\ncollective: nccl:_allgather_base\nmissing ranks: {6}\nworld size: 8\n",
])
def test_every_wording_of_a_missing_rank_is_the_jobs_hang_handmade(text):
    r = explained(text, "fr.txt")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_TIMEOUT", "job")


@pytest.mark.parametrize("kind", ["COLLECTIVE_TYPE_MISMATCH", "SIZE_OR_SYNTAX_MISMATCH", "COLLECTIVE_DTYPE_MISMATCH"])
def test_a_desync_the_flight_recorder_names_is_the_jobs_handmade(kind):
    text = (f"Collective sequence number: 7 has errors\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\n"
            f"Culprit rank 1; Error type: {kind}, expected all_reduce, got broadcast\n")
    r = explained(text, "fr.txt")
    assert (r.name, *verdict(r)) == ("nccl", "fail", "NCCL_FAILED", "job")
    assert _nccl(f"all_reduce: {' '.join(text.split())}") == ("fail", "NCCL_FAILED", "job")


def test_a_finding_free_analysis_is_nothing_to_judge_handmade():
    text = "No errors found for this collective entry, There could be some other reasons why we see collective timeout.\n"
    r = explained(text, "fr.txt")
    assert r.status == "skip" and r.owner is None


def test_a_missing_rank_beside_a_cause_of_the_nodes_keeps_the_cause_handmade():
    # the flight recorder says who never joined, not why: a completion error the rank's log shows stays the link's
    error = ("all_reduce: Not all ranks joining collective, sequence number: 4 missing ranks: {1} | NCCL WARN NET/IB : "
             "Got completion from peer 10.0.0.2<47324> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
             "::ffff:10.0.0.1 remoteGidsfe80::1 hca mlx5_0")
    status, code, owner = _nccl(error)
    assert (status, owner) == ("fail", "host"), (code, owner)


def test_a_wrapped_nccl_error_keeps_its_reason_on_the_explain_road():
    r = explained(raw(SYMM), "job.log")
    assert "invalid argument" in r.summary and r.owner != "host"


def test_ncclS_refusal_of_torchs_symmetric_memory_is_the_images():
    assert replayed(DEVCOMM) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert replayed(SYMM) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert verdict(explained(raw(SYMM), "job.log")) == ("fail", "NCCL_FAILED", "image")


def test_the_same_refusal_from_the_programs_own_collective_stays_the_jobs_handmade():
    error = ("all_reduce: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
             "ProcessGroupNCCL.cpp:3356, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.29.7")
    assert _nccl(error) == ("fail", "NCCL_FAILED", "job")


A4 = "gcp-a4-b200-2x8-roce-dstack-nccl-tests-all-reduce-8m-to-8g-683-busbw-zero-wrong-healthy"
A3 = "gcp-a3-mega-gke-tcpxo-2x8-cluster-toolkit-all-gather-256b-to-8g-188.7-busbw-zero-wrong-healthy"


def test_a_table_whose_hash_marks_markdown_took_is_judged():
    r = explained(raw(A4), "a4.txt")
    assert (r.name, *verdict(r)) == ("nccl", "pass", None, None)
    assert "world size 16" in " ".join(r.details)


def test_wrong_elements_under_a_markdown_stripped_column_line_fail():
    # the same real table with one row's out-of-place count changed to 3: the count is read, and it fails
    rows = raw(A4).splitlines()
    at = next(n for n, line in enumerate(rows) if line.strip().startswith("268435456"))
    cells = rows[at].split()
    cells[8] = "3"
    rows[at] = "  " + "  ".join(cells)
    assert verdict(explained("\n".join(rows) + "\n", "a4.txt")) == ("fail", "NCCL_WRONG_RESULT", "host")


def test_zero_byte_rows_do_not_hide_the_ranks_an_all_gathers_shares_give():
    r = explained(raw(A3), "a3.txt")
    assert (r.name, *verdict(r)) == ("nccl", "pass", None, None)
    assert "world size 16" in " ".join(r.details)


L4 = ("l4-gcp-g2-dcgm-4.6.1-health-c-power-system-warning-clocks-event-power-violation-71-of-72w-100pct-util-83c-"
      "training-healthy")


def test_dcgms_power_violation_is_the_power_cap_said_beside_a_pass():
    r = explained(raw(L4), "l4.txt")
    assert (r.name, *verdict(r)) == ("gpu", "pass", None, None)
    assert any("dcgmi health" in d for d in r.details)
    assert [line for line in dcgmhealth.said(raw(L4)) if "power violation" in line and "no fault" in line]
    assert not dcgmhealth.unread(raw(L4))


def _health_box() -> str:
    text = raw(L4)
    return text[text.index("$ dcgmi health -c"):text.index("$ nvidia-smi --query-gpu")]


def test_a_power_violation_alone_is_no_pass():
    # the health report alone reads nothing of the GPU: a power cap at work is no evidence of health either
    r = explained(_health_box(), "health.txt")
    assert r.status != "pass"


def test_a_thermal_violation_stays_unassessed_handmade():
    # DCGM_FR_CLOCKS_EVENT_THERMAL's message in the same box (dcgm_errors.h's wording), hand-made
    box = _health_box().replace("-> Power system     ", "-> Thermal system   ").replace(
        "Detected clocks event due to power violation in GPU 0. ", "Detected clocks event due to thermal violation in GPU 0.")
    r = explained(box + raw(L4)[raw(L4).index("$ nvidia-smi --query-gpu"):], "health.txt")
    assert verdict(r) == ("warn", "HEALTH_NOT_ASSESSED", "host")


K520 = "grid-k520-ec2-361.42-nvidia-docker-digits-4.0-cudaruntimegetversion-error-35-cuda-8-build-on-cuda-7.5-driver-host"
HYPERV = ("a10-hyper-v-gpu-pv-windows-guest-nvidia-smi-unable-to-detect-device-handle-b1-00-0-unknown-error-nvdebugdump-"
          "gpu-0x1-fails-host")


def test_a_cuda_errors_number_after_a_hash_is_decoded():
    assert replayed(K520) == {"gpu": ("fail", "DRIVER_TOO_OLD", "host")}
    assert verdict(explained(raw(K520), "digits.log")) == ("fail", "DRIVER_TOO_OLD", "host")
    decoded = cuda_errors.decode("cudaGetDeviceCount failed with error #35")
    assert decoded is not None and decoded.code == "DRIVER_TOO_OLD"
    assert cuda_errors.decode("fixed in issue #35 and PR #802") is None       # a number needs the words that carry one


def test_windows_nvidia_smis_lost_handle_is_a_lost_gpu():
    assert replayed(HYPERV) == {"gpu": ("fail", "GPU_LOST", "host")}
    r = explained(raw(HYPERV), "smi.txt")
    assert (r.name, *verdict(r)) == ("gpu", "fail", "GPU_LOST", "host")


LOOPBACK = ("aws-srun-task-10-torch-nccl-2.18.5-first-broadcast-unhandled-system-error-socketstartconnect-127.0.0.1-abort-"
            "socket-ifname-enp-fix-job")
_ABORT = "Last error: socketStartConnect: Connect to {}<45069> failed : Software caused connection abort"
_TORCH = ("init: NCCL error in: ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for "
          "details), NCCL version 2.18.5 ncclSystemError: System call (e.g. socket, malloc) or external library call "
          "failed or device error. ")


def test_a_connect_dialling_loopback_across_nodes_is_the_jobs_on_both_roads():
    assert replayed(LOOPBACK) == {"nccl": ("fail", "NCCL_FAILED", "job")}
    r = explained(raw(LOOPBACK), "srun.log")              # one line: the paste joined torch's lines
    assert verdict(r) == ("fail", "NCCL_FAILED", "job") and "127.0.0.1" in r.summary


def test_loopback_on_one_node_and_a_routable_abort_stay_the_hosts_handmade():
    assert _nccl(_TORCH + _ABORT.format("127.0.0.1"), nodes=1) == ("fail", "NCCL_FAILED", "host")
    assert _nccl(_TORCH + _ABORT.format("10.0.0.2"), nodes=2) == ("fail", "NCCL_FAILED", "host")
    assert _nccl(_TORCH + _ABORT.format("127.0.1.1"), nodes=None) == ("fail", "NCCL_FAILED", "job")
