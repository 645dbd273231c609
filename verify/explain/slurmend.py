"""Slurm's own account of how a job or step ended, as an sbatch .out/.err prints it (issue 35, batch 161):

    srun: Job step aborted: Waiting up to 47 seconds for job step to finish.
    slurmstepd: error: *** JOB 494583 ON node7 CANCELLED AT 2024-04-20T09:09:37 DUE TO TIME LIMIT ***
    slurmstepd: error: *** STEP 6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***
    slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have been killed
        by the cgroup out-of-memory handler.
    srun: error: node107: task 0: Out Of Memory            (Terminated, Killed, Exited with exit code N)
    srun: error: Node failure on node12
    slurmstepd: error: *** JOB 9325965 STEPD TERMINATED ON n3384 AT t DUE TO JOB NOT ENDING WITH SIGNALS ***

Into the train facts' `failures` (FACTS.md, `TrainFailure`): one per task srun names (`rank` its task number, the rank
under srun's launch; `node` srun's), or one with `rank` null where no task is named; `phase` `timeout` for a time
limit, else `died`; `type` srun's word for the task's end (`Out Of Memory`, `Terminated`), else `CANCELLED`, `Out Of
Memory`, `Node failure` or `STEPD TERMINATED`; `message` slurmstepd's line that says why (the OOM kill, the banner),
else srun's. A node the poster elided (`ON ...`) is null. Judged by the train check (verify/checks/train/slurmend.py):
the job's; a node failure, a step slurmstepd could not kill and a launch the node's prolog failed (`srun: error: Task
launch for 23.0 failed on node hpc: Job prolog failed`), the host's. An exit code alone names no cause: it is
read only beside one of the lines above."""
from __future__ import annotations

import re
from typing import Any

from .said import printed

_STEPD = r"slurmstepd(?:\[\d+\])?: error: "
_BANNER = re.compile(_STEPD + r"(\*\*\* ?(?:JOB|STEP) \S+ (?:ON (\S+) )?CANCELLED AT \S+[^\n]*)")
_OOM = re.compile(_STEPD + r"((?:Detected \d+ oom[-_]kill events?(?:\(s\))?|Exceeded (?:job|step) memory limit|"
                           r"(?:Job|Step) \S+ exceeded memory limit)[^\n]*)")
# slurmstepd that could not end the step (verify/checks/train/slurmend.py: the node's)
_STUCK = re.compile(_STEPD + r"(\*\*\* ?(?:JOB|STEP) \S+ STEPD TERMINATED ON (\S+) AT \S+ "
                             r"DUE TO JOB NOT ENDING[^\n]*)")
_TASK = re.compile(r"srun: error: ([^\s:]+): tasks? (\d+)[-,\d]*: (Out Of Memory|Terminated|Killed|"
                   r"Exited with exit code \d+)")
_NODE = re.compile(r"srun: error: (Node failure on ([^\s:]+))")
# srun told that the node's prolog failed the launch (slurmd runs Prolog= before the job's first step; on its failure
# slurmctld drains the node `Prolog error`): the node's own set-up (verify/checks/train/slurmend.py), batch 267
_PROLOG = re.compile(r"srun: error: ((?:Task launch for \S+ failed on node ([^\s:]+)|Application launch failed): Job "
                     r"prolog failed)")
_MOST = 64
_ABORTED = re.compile(r"srun: (Job step aborted: Waiting up to \d+ seconds for job step to finish\.?)")


def _all(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """Every printed match (a line that quotes the words in prose is none), the first _MOST: a log of thousands of
    tasks is read in linear time, and its first tasks are those the judge names."""
    found: list[re.Match[str] | None] = []
    pos = 0
    while len(found) < _MOST and (m := printed(pattern, text[pos:])) is not None:
        found.append(pattern.search(text, pos + m.start()))
        pos += m.end()
    return [m for m in found if m is not None]


def _node(name: str | None) -> str | None:
    return name if name and re.search(r"\w", name) else None      # `ON ...`: elided by the poster


def detect(text: str) -> bool:
    if "slurmstepd" not in text and "srun:" not in text:
        return False
    decisive = [m for m in _all(_TASK, text) if not m.group(3).startswith("Exited")]
    return bool(decisive or any(printed(p, text) for p in (_BANNER, _OOM, _NODE, _STUCK, _PROLOG, _ABORTED)))


def parse(text: str) -> dict[str, Any]:
    oom, node, stuck, prolog, banner, aborted = (printed(p, text) for p in (_OOM, _NODE, _STUCK, _PROLOG, _BANNER,
                                                                            _ABORTED))
    # the line that says why: the OOM kill, the node lost, the step not ending, the node's prolog, the cancel's
    # banner, srun's abort
    cause = oom or node or stuck or prolog or banner or aborted
    kind = next(k for m, k in ((oom, "Out Of Memory"), (node, "Node failure"), (stuck, "STEPD TERMINATED"),
                               (prolog, "Job prolog failed"), (True, "CANCELLED")) if m)   # as Slurm words it
    timeout = bool(cause is banner and banner and "DUE TO TIME LIMIT" in banner.group(1))
    phase = "timeout" if timeout else "died"
    message = cause.group(1).strip()[:400] if cause else None
    failures: list[dict[str, Any]] = []
    for task in _all(_TASK, text):
        rank, where = int(task.group(2)), task.group(1)
        if any(f["rank"] == rank and f["node"] == where for f in failures):
            continue
        failures.append({"rank": rank, "node": _node(where), "phase": phase, "type": task.group(3),
                         "message": message or task.group(0)[len("srun: error: "):][:400]})
    if not failures:
        where = next((m.group(2) for m in (node, stuck, prolog, banner) if m is not None and cause is m), None)
        failures.append({"rank": None, "node": _node(where), "phase": phase, "type": kind,
                         "message": message or kind})
    return {"failures": failures}
