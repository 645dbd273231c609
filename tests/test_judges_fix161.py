# mypy: disable-error-code="arg-type, typeddict-item"
# (judges take their TypedDict facts; these tests hand them partial facts, as a translated record would)
"""Issue 35, batch 161: Slurm's own account of how a job or step ended, as an sbatch .out/.err prints it
(`slurmstepd: error: *** JOB N ON node CANCELLED AT t DUE TO TIME LIMIT ***`, `*** STEP N.M ... CANCELLED AT t ***`,
`Detected N oom-kill event(s) in StepId=... cgroup out-of-memory handler`, `srun: error: node: task N: Out Of Memory |
Terminated`, `srun: Job step aborted: ...`, `srun: error: Node failure on node`).
- a time limit, a cancel and a cgroup OOM kill are the job's: TRAIN_FAILED owner job, never a drain (TRAIN_FAILED's
  default owner is the host), never GPU_OUT_OF_MEMORY (the cgroup's memory is the host RAM the job asked for), and a
  step cancelled while its data phase ran is the job's end, not LOADER_FAILED;
- `Node failure` (slurmctld lost the node, NODE_FAIL) is Slurm's word about the node: owner host;
- `verify explain` reads these lines into the train facts' `failures` (verify/explain/slurmend.py); an exit code
  alone, or the lines quoted in prose, are not read as Slurm's account.
Real lines are quoted from corpus entries (by slug)."""
from __future__ import annotations

import pytest

from tests.judging import explained, raw, replayed, verdict
from verify.checks import CHECKS
from verify.explain import slurmend
from verify.judging import judge
from verify.options import Options

pytestmark = pytest.mark.unit

TIME_LIMIT = "slurm-worker-job-494583-and-step-0-cancelled-due-to-time-limit-step-aborted-47s-grace-node-name-elided"
CGROUP_OOM = "openmind-slurm-node107-pytorch-densenet201-benchmark-step-cgroup-oom-kill-task-0-out-of-memory-at-256gb"
CANCELLED = "slurm-ddp-lightning-rank0-test-set-preparation-29-min-step-6053-cancelled-task-0-terminated-nccl-blocking-wait-set"
JOB = ("fail", "TRAIN_FAILED", "job")


def train(*failures: dict) -> tuple[str, str | None, str | None]:
    return verdict(judge(CHECKS["train"], {"failures": list(failures)}, Options()))


# ---------------------------------------------------------- the judge: whose end it is
@pytest.mark.parametrize("slug", [TIME_LIMIT, CGROUP_OOM, CANCELLED])
def test_a_job_slurm_ended_is_the_jobs_on_the_facts_road(slug):
    assert replayed(slug) == {"train": JOB}


def test_a_time_limit_is_the_jobs_whatever_the_phase():
    line = "*** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***"       # TIME_LIMIT's
    for phase in ("timeout", "train", "died", "data"):
        assert train({"rank": None, "node": None, "phase": phase, "type": "CANCELLED", "message": line}) == JOB


def test_a_cgroup_oom_kill_is_the_jobs_host_memory_never_a_gpus():
    line = ("Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been killed by the "
            "cgroup out-of-memory handler.")                                                     # CGROUP_OOM's
    assert train({"rank": 0, "node": "node107", "phase": "died", "type": "Out Of Memory", "message": line}) == JOB
    # older Slurm's words, and srun's word alone, in the data phase too (not the loader's failure)
    older = "Detected 1 oom_kill event(s) in step 812.0 cgroup. Some of your processes may have been killed"
    assert train({"rank": 2, "node": "n1", "phase": "data", "type": "RuntimeError", "message": older}) == JOB
    assert train({"rank": 0, "node": "n1", "phase": "train", "type": "Out Of Memory", "message": "task 0"}) == JOB
    # torch's own CUDA out of memory stays the GPU's memory (the catalog's code)
    assert train({"rank": 0, "node": "n1", "phase": "train", "type": "OutOfMemoryError",
                  "message": "CUDA out of memory. Tried to allocate 2.00 GiB"})[1] == "GPU_OUT_OF_MEMORY"


def test_a_step_cancelled_in_the_data_phase_is_the_jobs_end_not_the_loaders():
    line = "*** STEP 6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***"                   # CANCELLED's
    assert train({"rank": 0, "node": "DEL2212S020", "phase": "data", "type": "Terminated", "message": line}) == JOB
    # a loader's own failure in the data phase is still the loader's
    assert train({"rank": 0, "node": "n1", "phase": "data", "type": "RuntimeError",
                  "message": "DataLoader worker (pid 12) exited unexpectedly"})[1] == "LOADER_FAILED"


def test_a_preemption_is_the_jobs_and_a_node_failure_the_hosts():
    preempted = "*** JOB 77 ON gpu12 CANCELLED AT 2025-01-02T03:04:05 DUE TO PREEMPTION ***"
    assert train({"rank": None, "node": "gpu12", "phase": "died", "type": "CANCELLED", "message": preempted}) == JOB
    failed = ("*** JOB 77 ON gpu12 CANCELLED AT 2025-01-02T03:04:05 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR "
              "DETAILS ***")
    assert train({"rank": None, "node": "gpu12", "phase": "died", "type": "CANCELLED",
                  "message": failed}) == ("fail", "TRAIN_FAILED", "host")
    assert train({"rank": None, "node": "gpu12", "phase": "died", "type": "Node failure",
                  "message": "Node failure on gpu12"}) == ("fail", "TRAIN_FAILED", "host")


def test_verifys_own_rank_that_never_answered_keeps_its_verdict():
    # probing.py's own timeout (lowercase `timeout`, no Slurm words): not Slurm's account, TRAIN_FAILED's default owner
    assert train({"rank": 1, "node": "n1", "phase": "timeout", "type": "timeout",
                  "message": "rank 1 gave no answer in 600 s"}) == ("fail", "TRAIN_FAILED", "host")


# ---------------------------------------------------------- verify explain: the lines read
@pytest.mark.parametrize("slug", [TIME_LIMIT, CGROUP_OOM, CANCELLED])
def test_slurms_lines_are_explained_as_the_jobs(slug):
    assert verdict(explained(raw(slug))) == JOB


def test_the_lines_are_read_into_the_failures_facts_md_declares():
    assert slurmend.parse(raw(TIME_LIMIT))["failures"] == [{
        "rank": None, "node": None, "phase": "timeout", "type": "CANCELLED",
        "message": "*** JOB 494583 ON ... CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***"}]
    oom = slurmend.parse(raw(CGROUP_OOM))["failures"]
    assert [(f["rank"], f["node"], f["phase"], f["type"]) for f in oom] == [(0, "node107", "died", "Out Of Memory")]
    assert oom[0]["message"].startswith("Detected 1 oom-kill event(s) in StepId=37205392.0.")
    cancelled = slurmend.parse(raw(CANCELLED))["failures"]
    assert [(f["rank"], f["node"], f["type"]) for f in cancelled] == [(0, "DEL2212S020", "Terminated")]
    assert cancelled[0]["message"] == "*** STEP 6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***"


def test_a_node_failure_is_explained_as_the_hosts():
    text = ("srun: error: Node failure on gpu-a17\n"
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            "srun: error: gpu-a17: tasks 0-3: Killed\n")
    failures = slurmend.parse(text)["failures"]
    assert (failures[0]["rank"], failures[0]["node"], failures[0]["message"]) == (0, "gpu-a17", "Node failure on gpu-a17")
    assert verdict(explained(text)) == ("fail", "TRAIN_FAILED", "host")


def test_an_exit_code_alone_or_a_quote_in_prose_is_not_slurms_account():
    assert not slurmend.detect("srun: error: compute-1: task 0: Exited with exit code 2\n")
    prose = ("If you see `slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***` "
             "in your log, ask for more time.\n")
    assert not slurmend.detect(prose)
    # pyxis's own errors under slurmstepd's head are not an end of the job's
    assert not slurmend.detect("slurmstepd: error: pyxis: couldn't start container\n")


def test_a_step_slurm_could_not_kill_is_the_nodes():
    # slurmstepd gives up on processes stuck in the kernel and slurmctld drains the node (Kill task failed)
    text = ("slurmstepd: error: *** JOB 9325965 ON n3384 CANCELLED AT 2023-01-13T09:48:47 DUE TO TIME LIMIT ***\n"
            "slurmstepd: error: *** JOB 9325965 STEPD TERMINATED ON n3384 AT 2023-01-13T09:58:47 DUE TO JOB NOT "
            "ENDING WITH SIGNALS ***\n")
    failures = slurmend.parse(text)["failures"]
    assert (failures[0]["node"], failures[0]["type"]) == ("n3384", "STEPD TERMINATED")
    assert verdict(explained(text)) == ("fail", "TRAIN_FAILED", "host")
    # the time limit alone stays the job's
    assert verdict(explained(text.splitlines()[0] + "\n")) == JOB


def test_older_slurms_memory_limit_words_are_the_jobs():
    text = "slurmstepd: error: Job 4711 exceeded memory limit (9437184 > 8388608), being killed\n"
    assert slurmend.detect(text)
    assert verdict(explained(text)) == JOB
