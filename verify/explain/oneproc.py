"""One process driving several GPUs proves one node (issue 35, batch 95).

NCCL prefixes each line with `host:pid:tid [cudaDev]`. A single process (one host, one pid) that logs for several
device indices (`[0]` .. `[3]`: one process, several ranks, as lmdeploy's or a single-process multi-GPU group does)
cannot span nodes: its group is on one node. Several pids on one host prove nothing (another host's ranks may be
cut from the excerpt). A line cut at its start (`mdeploy-...:1:1` under `lmdeploy-...:1:1`) is the same host."""
from __future__ import annotations

import re

_PREFIX = re.compile(r"(?<![\w.-])([\w.-]+):(\d+):\d+ \[(\d+)\] NCCL (?:INFO|WARN) ")


def one_node(text: str) -> bool:
    """Whether all NCCL's lines come from one process that logs for two or more device indices."""
    seen = [(m.group(1), m.group(2), m.group(3)) for m in _PREFIX.finditer(text, 0, 1 << 20)]
    if not seen:
        return False
    hosts = {h for h, _, _ in seen}
    longest = max(hosts, key=len)
    return (len({p for _, p, _ in seen}) == 1 and all(longest.endswith(h) for h in hosts)
            and len({d for _, _, d in seen}) >= 2)
