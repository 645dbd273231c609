"""Slurm's own account of how a job or step ended, as an sbatch .out/.err prints it (issue 35, batch 161), and whose
it is:

    slurmstepd: error: *** JOB 494583 ON node7 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
    slurmstepd: error: *** STEP 6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***
    slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been killed
        by the cgroup out-of-memory handler.
    srun: error: node107: task 0: Out Of Memory            (or: Terminated, Killed)
    srun: error: Node failure on node12                    (or: CANCELLED AT ... DUE TO NODE FAILURE)

A time limit, a cancel (scancel, a preemption, a requeue) and a cgroup OOM kill are the job's: Slurm ended it as
configured, for what it asked (its wall time, its `--mem`). The cgroup's memory is the host's RAM given to the job,
never a GPU's, so this is read before the CUDA catalog (whose "out of memory" is GPU_OUT_OF_MEMORY) and before the
loader's rule (a step cancelled while its data phase ran is the job's end, not the loader's failure); none drains a
node. `Node failure` is slurmctld's word that it lost the node (state NODE_FAIL), and a step slurmstepd could not end
with signals (`STEPD TERMINATED ... DUE TO JOB NOT ENDING WITH SIGNALS`, drained "Kill task failed") a process stuck in
the node's kernel, and a launch the node's prolog failed (`Job prolog failed`, drained "Prolog error"): evidence about
the host."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...codes import Owner

# slurmstepd's banner (src/slurmd/slurmstepd/req.c): `*** JOB|STEP id [ON node] CANCELLED AT time [DUE TO why] ***`
CANCELLED = re.compile(r"\*\*\*\s*(?:JOB|STEP)\s+\S+\s+(?:ON\s+\S+\s+)?CANCELLED AT\s+\S+(?:\s+DUE TO ([A-Z][A-Z ]*))?")
# the task/cgroup plugin's count of kills, older `oom_kill event(s) in step N.M cgroup`, and its memory limit
CGROUP_OOM = re.compile(r"\boom[-_]kill events?\(s\)|\bcgroup out-of-memory handler\b|"
                        r"\bExceeded (?:job|step) memory limit\b|\b(?:Job|Step) \S+ exceeded memory limit\b",
                        re.IGNORECASE)
# slurmstepd that could not kill the step's processes (`*** JOB N STEPD TERMINATED ON node AT t DUE TO JOB NOT ENDING
# WITH SIGNALS ***`; slurmctld drains the node "Kill task failed"): a process stuck in the kernel, the node's
UNKILLABLE = re.compile(r"\bDUE TO JOB NOT ENDING WITH SIGNALS\b|\bKill task failed\b")
# the node's prolog failing the job's launch (`Task launch for 23.0 failed on node hpc: Job prolog failed`; slurmctld
# drains the node `Prolog error`): a prolog decides about its node, so its failure is the node's set-up or state
PROLOG_FAILED = re.compile(r"\bJob prolog failed\b")
NODE_FAIL = re.compile(r"\bNode failure on\b|\bDUE TO NODE FAILURE\b|\bNODE_FAIL\b")
# srun's word for a task's end (`task 0: Out Of Memory`), or the state sacct gives the job, as a failure's type
_TASK_END = re.compile(r"Out Of Memory|OUT_OF_MEMORY|Terminated|Killed|CANCELLED|TIMEOUT|PREEMPTED")
_ABORTED = re.compile(r"\bJob step aborted: Waiting up to \d+ seconds\b|\bForce Terminated (?:StepId=|job step )")


class Ended(NamedTuple):
    why: str
    fix: str
    owner: Owner


_TIME = Ended("Slurm ended it at the wall-clock limit the job asked for (or its partition allows): the job's time, "
              "no fault of a GPU, the network or the node",
              "Ask for more time (--time), checkpoint and resubmit, or stop earlier; drain nothing.", "job")
_OOM = Ended("the kernel's cgroup OOM handler killed a process of the step for exceeding the host memory its job asked "
             "for (--mem): the job's sizing, not a GPU's memory and not the node",
             "Ask for more memory (--mem, --mem-per-cpu) or use less (smaller batches, fewer loader workers); read "
             "`sacct -j JOB -o MaxRSS,ReqMem`.", "job")
_CANCEL = Ended("Slurm cancelled it, or a signal from outside ended it (scancel, a preemption, a requeue, the "
                "job's own teardown of its step): no fault of a GPU, the network or the node is shown",
                "Read why the job was cancelled (`sacct -j JOB -o State,Reason`, the job's other ranks) before "
                "resubmitting; drain nothing.", "job")
_STUCK = Ended("slurmstepd could not end the step's processes with signals (a process stuck in the kernel: a driver "
               "or a file system not answering) and Slurm drains the node (Kill task failed): the node's",
               "Find the unkillable process on the node (`ps -eo pid,stat,wchan:32,cmd | grep ' D'`, dmesg) and "
               "reboot it before it takes jobs.", "host")
_PROLOG = Ended("the node's prolog failed the job's launch, and Slurm drains the node (`Prolog error`): the node's own "
                "set-up (its prolog script, or the state the prolog checks), not the job's",
                "Read the node's slurmd.log and the prolog's own output for why it failed; fix the script or the node, "
                "then resume it (`scontrol update nodename=NODE state=resume`).", "host")
_NODE = Ended("slurmctld lost the node during the job (Node failure, state NODE_FAIL): its slurmd stopped answering, "
              "the node's trouble (power, kernel, network to the controller), not the job's",
              "Read slurmctld's log and the node's (dmesg, slurmd.log) for why it stopped answering; drain it until "
              "it is understood.", "host")


def ended(failure: Mapping[str, Any]) -> Ended | None:
    """Whose end it is where the failure is Slurm's account of the job's or step's end; None otherwise (a CUDA error a
    message names, an exception the program raised, are judged by their own rules)."""
    kind = str(failure.get("type") or "").strip()
    text = f"{kind}: {failure.get('message') or ''}"
    if NODE_FAIL.search(text):
        return _NODE
    if UNKILLABLE.search(text):
        return _STUCK
    if PROLOG_FAILED.search(text):
        return _PROLOG
    if CGROUP_OOM.search(text) or (re.fullmatch(r"Out Of Memory|OUT_OF_MEMORY", kind) and "CUDA" not in text):
        return _OOM
    banner = CANCELLED.search(text)
    if banner:
        return _TIME if (banner.group(1) or "").startswith("TIME LIMIT") else _CANCEL
    if kind == "TIMEOUT":
        return _TIME
    if _ABORTED.search(text) or _TASK_END.fullmatch(kind):
        return _CANCEL
    return None
