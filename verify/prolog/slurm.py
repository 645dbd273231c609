"""Slurm as the prolog sees it: a node name that is one node, sinfo's view of a partition, the breaker, and
scontrol commands that say what they did (argv on stderr) and what Slurm answered."""
from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

from .verdict import REASON_PREFIX

# one node: a hostlist (`n[1-64]`, `a,b`) would make scontrol act on many
_NODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
TIMEOUT_S = 60.0


def node_problem(name: str) -> str | None:
    if _NODE.match(name):
        return None
    return (f"node name {name!r} is not one node name (letters, digits, '-', '_', '.'); a hostlist such as "
            f"n[1-64] or a,b would make scontrol act on many nodes")


@dataclass(frozen=True)
class NodeRow:
    name: str
    state: str        # sinfo's %T: idle, allocated, drained, draining, mixed, down*...
    reason_text: str  # sinfo's %E: "none" when there is none

    @property
    def drained(self) -> bool:
        return "drain" in self.state

    @property
    def ours(self) -> bool:
        return self.drained and self.reason_text.startswith(REASON_PREFIX)


def parse_sinfo(text: str) -> list[NodeRow]:
    """`sinfo -h -N -o %N|%T|%E` lines, one row per node (a node in several partitions once)."""
    rows: dict[str, NodeRow] = {}
    for line in text.splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3 and parts[0].strip():
            rows.setdefault(parts[0].strip(), NodeRow(parts[0].strip(), parts[1].strip(), parts[2].strip()))
    return list(rows.values())


def sinfo_argv(partition: str | None = None, node: str | None = None) -> list[str]:
    argv = [shutil.which("sinfo") or "sinfo", "-h", "-N", "-o", "%N|%T|%E"]
    if partition:
        argv += ["-p", partition]
    if node:
        argv += ["-n", node]
    return argv


@dataclass(frozen=True)
class Breaker:
    allowed: int          # how many nodes torchimages may hold drained in the partition
    drained_ours: int     # how many it holds now (this node not counted)
    total: int

    @property
    def open(self) -> bool:
        return self.drained_ours + 1 > self.allowed

    def line(self, share: float, partition: str | None) -> str:
        where = f"partition {partition}" if partition else "the cluster"
        return (f"{self.drained_ours} of {self.total} node(s) of {where} already drained by torchimages; "
                f"the breaker allows {self.allowed} ({share:.0%})")


def breaker(rows: list[NodeRow], node: str, share: float) -> Breaker:
    """At most floor(share x nodes) drained by torchimages at once (at least 1 when share > 0, none when 0)."""
    total = len(rows)
    allowed = 0 if share <= 0 else max(1, math.floor(share * total + 1e-9))
    ours = sum(1 for r in rows if r.ours and r.name != node)
    return Breaker(allowed, ours, total)


def run(argv: list[str], dry_run: bool = False) -> tuple[int, str]:
    """(exit status, what it printed) of a Slurm command, its argv said on stderr first; 127 where it cannot run."""
    print("torchimages-prolog: " + " ".join(argv), file=sys.stderr, flush=True)
    if dry_run:
        return 0, ""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return proc.returncode, proc.stdout if proc.returncode == 0 else (proc.stdout + proc.stderr).strip()


def scontrol(*args: str, dry_run: bool = False) -> str | None:
    """None when scontrol did it; else one line that says what Slurm answered."""
    argv = [shutil.which("scontrol") or "scontrol", *args]
    rc, out = run(argv, dry_run)
    if rc == 0:
        return None
    return f"scontrol {' '.join(args[:2])} refused (exit {rc}): {' '.join(out.split())[-200:] or 'no message'}"


def rows(partition: str | None = None, node: str | None = None) -> tuple[list[NodeRow] | None, str]:
    """sinfo's rows, or None with why they could not be had."""
    rc, out = run(sinfo_argv(partition, node))
    if rc != 0:
        return None, f"sinfo failed (exit {rc}): {' '.join(out.split())[-200:] or 'no message'}"
    found = parse_sinfo(out)
    if not found:
        return None, f"sinfo listed no node{f' of partition {partition}' if partition else ''}"
    return found, ""
