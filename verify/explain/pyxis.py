"""A container Slurm's pyxis plugin (with enroot) could not start, as slurmstepd prints it in the job's output
(issue 35, batch 313):

    slurmstepd: error: pyxis: seccomp filter failed: Function not implemented
    slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
    srun: error: cn03: task 0: Exited with exit code 1

    slurmstepd: error: pyxis: failed to import docker image
    slurmstepd: error: pyxis: printing contents of log file ...
    slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied

Into the train facts' failures (FACTS.md, `TrainFailure`): one per task srun names (`rank` its task number, `node`
srun's), or one with `rank` and `node` null; `phase` `init` (the container never started); `type` pyxis's own summary
(`failed to import docker image`, `container start failed`, `couldn't start container`), else the SPANK plugin's
(`spank plugin task_init failed`); `message` the pyxis line (enroot's log line as pyxis prints it) whose words
name a class (verify/checks/train/pyxis.py), after `slurmstepd: error: `. Read only where one does: any other pyxis
failure is not recognised here (this tool cannot tell whose it is)."""
from __future__ import annotations

import re
from typing import Any

from ..checks.train.pyxis import cause
from .said import printed

_LINE = re.compile(r"^[ \t]*slurmstepd(?:\[\d+\])?: error: (pyxis:[^\n]*?)[ \t]*$", re.MULTILINE)
_SUMMARY = re.compile(r"pyxis: (failed to import docker image|container start failed|couldn't start container|"
                      r"failed to create container filesystem)")
_SPANK = re.compile(r"spank: required plugin spank_pyxis\.so: (task_init(?:_privileged)?)\(\) failed")
_TASK = re.compile(r"srun: error: ([^\s:]+): tasks? (\d+)[-,\d]*: ")
_MOST = 64


def _message(text: str) -> str | None:
    """The first pyxis line printed whose words name a class, as printed after `slurmstepd: error: `."""
    for line in _LINE.finditer(text):
        if cause(line.group(1)) is not None and printed(re.compile(re.escape(line.group(1))), text):
            return line.group(1)[:400]
    return None


def detect(text: str) -> bool:
    return "pyxis:" in text and _message(text) is not None


def _type(text: str) -> str:
    if summary := _SUMMARY.search(text):
        return summary.group(1)
    if spank := _SPANK.search(text):
        return f"spank plugin {spank.group(1)} failed"
    return "pyxis error"


def parse(text: str) -> dict[str, Any]:
    message = _message(text)
    if message is None:
        return {"failures": []}
    kind = _type(text)
    failures: list[dict[str, Any]] = []
    for task in list(_TASK.finditer(text))[:_MOST]:
        rank, node = int(task.group(2)), task.group(1)
        if not any(f["rank"] == rank and f["node"] == node for f in failures):
            failures.append({"rank": rank, "node": node, "phase": "init", "type": kind, "message": message})
    if not failures:
        failures.append({"rank": None, "node": None, "phase": "init", "type": kind, "message": message})
    return {"failures": failures}
