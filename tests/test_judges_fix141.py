"""Issue 35, batches 141 and 142 (DCGM diagnostics; torch.distributed.elastic's `ChildFailedError` summaries).
The classes fixed:
- torchrun's failure summary (the `Failures:` / `Root Cause (first observed failure):` table, the agent's `failed
  (exitcode: -N) local_rank: R`, a bare `ChildFailedError`) and its rendezvous that never formed
  (`RendezvousConnectionError`, `DistStoreError`) are read by `verify explain` into the train facts' `failures`;
- a worker the launcher reports killed by SIGKILL (the OOM killer or the launcher) or SIGBUS (a mapping /dev/shm or the
  disk could not back), a rendezvous/c10d store not reached, and a summary with no cause shown are the job's
  (TRAIN_FAILED, never a drain); SHM_TOO_SMALL only where the failure shows /dev/shm; a CUDA error beside it keeps the
  catalog's owner (an uncorrectable ECC error, the host's);
- a bus error in an NCCL record (NCCL's shared-memory segments are the one file it maps) is SHM_TOO_SMALL, the job's;
- a driver-API error whose name is printed on the next, indented line (`returned error 214` / `(CUDA_ERROR_ECC_...)`)
  is one message.
Real lines are quoted with their slugs (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, replayed, verdict
from verify.checks import CHECKS
from verify.checks.train import launcher
from verify.explain import childfailed
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

K8S = "k8s-worker-pod-grpo-accelerate-deepspeed-childfailederror-rank0-exitcode-minus-9-signal-9-sigkill-no-other-failures"
COLOSSAL = "colossalai-torchrun-dataset-map-local-rank-1-failed-exitcode-minus-7-sigbus-peers-sent-sigterm"
DOCKER = "docker-container-default-64m-shm-nccl-caught-signal-7-bus-error-in-ncclgroupend-childfailederror-fixed-by-shm-size-6g"
RDZV = "torchrun-elastic-nnodes-1-3-c10d-rendezvous-client-socket-timed-out-60s-rendezvousconnectionerror-c10d-store"
L40S = "l40s-slurm-ci-node-cuctxcreate-error-214-cuda-error-ecc-uncorrectable-every-gpu-job-fails-node-excluded"

JOB_FAILED = ("fail", "TRAIN_FAILED", "job")


def _table(exitcode: str, traceback: str, host: str = "node-7") -> str:
    # the table as torch prints it (K8S's, with its values as parameters)
    return f"""torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-05-21_15:43:03
  host      : {host}
  rank      : 3 (local_rank: 3)
  exitcode  : {exitcode}
  error_file: <N/A>
  traceback : {traceback}
============================================================
"""


def _train(*failures: dict) -> tuple:
    return verdict(judge(CHECKS["train"], {"failures": list(failures)}, Options()))


# ------------------------------------------------------------------------------------- the ChildFailedError table
def test_the_root_cause_table_is_read_into_the_failure_of_its_rank_and_host():
    facts = childfailed.parse(_table("-9 (pid: 14750)", "Signal 9 (SIGKILL) received by PID 14750"))
    assert facts["failures"] == [{"rank": 3, "node": "node-7", "phase": "died", "type": "SIGKILL",
                                  "message": "exitcode: -9 (pid: 14750); Signal 9 (SIGKILL) received by PID 14750"}]


def test_a_sigkill_in_the_table_is_the_jobs_never_a_drain():
    # K8S: `exitcode  : -9 (pid: 14750)`, `traceback : Signal 9 (SIGKILL) received by PID 14750`
    assert verdict(explained(_table("-9 (pid: 14750)", "Signal 9 (SIGKILL) received by PID 14750"))) == JOB_FAILED
    assert replayed(K8S) == {"train": JOB_FAILED}


def test_a_table_with_no_cause_shown_is_the_jobs():
    text = _table("1 (pid: 2231)", "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    assert childfailed.parse(text)["failures"][0]["message"] == "exitcode: 1 (pid: 2231)"
    assert verdict(explained(text)) == JOB_FAILED


def test_the_root_cause_comes_before_the_other_failures():
    text = _table("-9 (pid: 14750)", "Signal 9 (SIGKILL) received by PID 14750").replace(
        "  <NO_OTHER_FAILURES>", "[1]:\n  time      : x\n  host      : node-8\n  rank      : 4 (local_rank: 0)\n"
        "  exitcode  : -15 (pid: 1)\n  error_file: <N/A>\n  traceback : Signal 15 (SIGTERM) received by PID 1")
    assert [f["rank"] for f in childfailed.parse(text)["failures"]] == [3, 4]


def test_a_cuda_ecc_error_beside_the_table_stays_the_hosts():
    text = "RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + _table("1 (pid: 9)", "<N/A>")
    assert verdict(explained(text)) == ("fail", "ECC_UNCORRECTABLE", "host")


# ------------------------------------------------------------------------------------------ the agent's own lines
def test_the_agents_sigbus_line_is_the_jobs_and_not_shm_too_small_unless_shm_is_shown():
    # COLOSSAL: the agent's line, no /dev/shm message
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 1 (pid: 5621) of "
            "binary: /usr/bin/python3.10")
    assert childfailed.parse(line)["failures"][0]["type"] == "SIGBUS"
    assert verdict(explained(line)) == JOB_FAILED
    assert replayed(COLOSSAL) == {"train": JOB_FAILED}
    # the same signal with the loader's /dev/shm message recorded is the container's /dev/shm
    assert _train({"rank": None, "node": None, "phase": "data", "type": "SIGBUS", "message": "exitcode: -7",
                   "shm_error": "No space left on device"}) == ("fail", "SHM_TOO_SMALL", "job")


def test_an_exception_the_loader_raised_stays_the_loaders():
    assert _train({"rank": 0, "node": "n", "phase": "data", "type": "RuntimeError",
                   "message": "DataLoader worker (pid 9) exited unexpectedly"}) == ("fail", "LOADER_FAILED", "job")


def test_the_rendezvous_store_not_reached_is_the_jobs():
    # RDZV: the agent's inner socket error and its exception
    text = ("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to "
            "192.0.0.1:1234\ntorch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to "
            "the C10d store has failed. See inner exception for details.\n")
    failure = childfailed.parse(text)["failures"][0]
    assert (failure["phase"], failure["type"]) == ("init", "RendezvousConnectionError")
    assert verdict(explained(text)) == JOB_FAILED
    assert replayed(RDZV) == {"train": JOB_FAILED}
    assert _train({"rank": None, "node": None, "phase": "init", "type": "DistStoreError",
                   "message": "Timed out after 901 seconds waiting for clients. 1/2 clients joined."}) == JOB_FAILED


def test_a_training_failure_the_launcher_does_not_describe_keeps_its_owner():
    # no signal, no rendezvous, not the launcher's words: the train check's own rule as before (TRAIN_FAILED's owner)
    assert _train({"rank": 0, "node": "n", "phase": "train", "type": "ValueError", "message": "bad shape"}) == (
        "fail", "TRAIN_FAILED", "host")
    assert launcher.signal_of({"type": "ChildFailedError", "message": "exitcode: 1"}) is None


# ----------------------------------------------------------------------------------------------- NCCL's bus error
def test_a_bus_error_in_nccls_frames_is_shm_too_small():
    # DOCKER: UCX's handler's line and NCCL's frames under it
    text = ("[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
            "==== backtrace (tid:   3095) ====\n"
            " 2 0x000000000007587d ncclGroupEnd()  ???:0\n"
            " 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0\n"
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n")
    r = explained(text)
    assert (r.name, *verdict(r)) == ("nccl", "fail", "SHM_TOO_SMALL", "job")
    assert replayed(DOCKER) == {"nccl": ("fail", "SHM_TOO_SMALL", "job")}
    assert nccl_verdict(error="Caught signal 7 (Bus error: nonexistent physical address)") == (
        "fail", "SHM_TOO_SMALL", "job")


def test_a_bus_error_whose_frames_are_not_ncclss_is_not_read_as_ncclss():
    text = ("[h:1 :0:2] Caught signal 7 (Bus error: nonexistent physical address)\n==== backtrace (tid: 2) ====\n"
            " 0 0x0000000000043090 memcpy()  ???:0\n")
    assert explained(text).name != "nccl"


# -------------------------------------------------------------------------------- a CUDA error split over two lines
def test_a_driver_api_error_whose_name_is_on_the_next_line_is_one_message():
    # L40S: NVHPC's OpenACC runtime
    text = ("Accelerator Fatal Error: call to cuCtxCreate returned error 214\n"
            "  (CUDA_ERROR_ECC_UNCORRECTABLE): uncorrectable ECC error encountered\n"
            "mfc: ERROR > syscheck failed with exit code 1.\n")
    assert verdict(explained(text)) == ("fail", "ECC_UNCORRECTABLE", "host")
    assert replayed(L40S) == {"gpu": ("fail", "ECC_UNCORRECTABLE", "host")}


def test_shm_exhaustion_shown_beside_a_launchers_signal_is_shm_too_small_in_any_phase():
    assert _train({"rank": 1, "node": "n", "phase": "died", "type": "ChildFailedError",
                   "message": "Signal 7 (SIGBUS) received by PID 5621",
                   "shm_error": "ERROR: Unexpected bus error encountered in worker. This might be caused by "
                                "insufficient shared memory (shm)."}) == ("fail", "SHM_TOO_SMALL", "job")


def test_a_cuda_ecc_error_in_the_tables_traceback_is_the_hosts():
    text = _table("1 (pid: 9)", "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    assert verdict(explained(text)) == ("fail", "ECC_UNCORRECTABLE", "host")
    facts = childfailed.parse(text)
    assert _train(*facts["failures"]) == ("fail", "TRAIN_FAILED", "host")  # mendf: the cause is the gpu check's finding; the collective's own code, the cause's owner


def test_a_host_torch_did_not_fill_is_no_node_name():
    assert childfailed.parse(_table("-6 (pid: 9)", "Signal 6 (SIGABRT) received by PID 9", host="<N/A>"))[
        "failures"][0]["node"] is None
    # a SIGABRT with nothing beside it (torch's watchdog aborting, a failed assert) names no fault of the node
    assert verdict(explained(_table("-6 (pid: 9)", "Signal 6 (SIGABRT) received by PID 9"))) == JOB_FAILED


def test_a_launcher_above_torchrun_reporting_its_child_killed_is_the_jobs():
    text = ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py']' died with "
            "<Signals.SIGKILL: 9>.\n")
    assert childfailed.parse(text)["failures"][0]["type"] == "SIGKILL"
    assert verdict(explained(text)) == JOB_FAILED
