"""Ray's memory monitor killing a job's workers for host RAM (issue 35, batch 173), as a driver or raylet prints it:

    Memory on the node (IP: 169.254.181.2, ID: 708c...) where the task (actor ID: ..., name=RayWorkerVllm.__init__,
        pid=308, memory used=11.15GB) was running was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage
        threshold of 0.95. Ray killed this worker (ID: 79a5...) because it was the most recently scheduled task; ...
    (raylet) [2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / actors)
        killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 8289..., IP:
        172.24.0.226) over the last time period. To see more ...

Into the train facts' `failures` (FACTS.md, `TrainFailure`): one per node Ray names, `rank` null (a Ray worker is no
rank), `node` Ray's node IP, `phase` `died` (killed from outside), `type` `Killed`, `message` Ray's sentence (the
monitor's up to its first semicolon, the raylet's up to `over the last time period.`), unwrapped. The job's workers
outgrew the node's RAM: the train check judges the kill the job's. A count of 0 killed is no kill."""
from __future__ import annotations

import re
from typing import Any


def _loose(pattern: str) -> re.Pattern[str]:
    """A terminal wraps Ray's long lines anywhere, even inside a word, and a paste drops the space before a break:
    the text is read with its breaks removed, each space of the pattern any run of spaces, or none."""
    return re.compile(pattern.replace(" ", " *"))


_MONITOR = _loose(r"(Memory on the node \(IP: ([\d.:a-fA-F]+)[^)]*\) where the task .{0,400}?which exceeds the "
                      r"memory usage threshold of [\d.]+\.\s*Ray killed this worker[^;\n]*)")
_RAYLET = _loose(r"((\d+) Workers \(tasks / actors\) killed due to memory pressure \(OOM\).{0,200}?at node "
                     r"\(ID: \w+, IP: ([\d.:a-fA-F]+)\) over the last time period\.)")


def _flat(text: str) -> str:
    return re.sub(r"[ \t]*\r?\n", "", text)


def detect(text: str) -> bool:
    if "memory" not in text:
        return False
    flat = _flat(text)
    return bool(_MONITOR.search(flat) or any(int(m.group(2)) > 0 for m in _RAYLET.finditer(flat)))


def parse(text: str) -> dict[str, Any]:
    flat = _flat(text)
    failures: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    found = [(m.start(), m.group(2), m.group(1)) for m in _MONITOR.finditer(flat)]
    found += [(m.start(), m.group(3), m.group(1)) for m in _RAYLET.finditer(flat) if int(m.group(2)) > 0]
    for _, node, message in sorted(found):
        message = re.sub(r"\s+", " ", message).strip()[:400]
        if (node, message) in seen:
            continue
        seen.add((node, message))
        failures.append({"rank": None, "node": node, "phase": "died", "type": "Killed", "message": message})
    return {"failures": failures}
