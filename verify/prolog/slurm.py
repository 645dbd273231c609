"""Slurm as the prolog sees it: a node name that is one node, sinfo's view of a partition, the breaker, our drain
reasons, a node's Gres and host name, and scontrol commands that say what they did (argv on stderr) and what Slurm
answered.

Our drain reason is `torchimages:<CODE> #<epoch>.<mark> <summary>`, the mark a digest of the node, the code and the
epoch: the breaker and --revalidate count a reason as ours only when it parses strictly and its mark matches its
node, so an operator's hand-written `torchimages: ...` (or one copied from another node) is never taken for ours.
The mark guards against mistakes, not malice: whoever can run scontrol can drain and resume anyway."""
from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from ..shared.closedpipe import say
from . import statefile
from .verdict import REASON_PREFIX, one_line

REASON_MAX = 200
_REASON = re.compile(r"^torchimages:([A-Z][A-Z0-9_]{1,47}) #(\d{1,12})\.([0-9a-f]{10})(?: |$)")

# one node: a hostlist (`n[1-64]`, `a,b`) would make scontrol act on many. Slurm's NodeName may be a fully qualified
# name (slurm.conf), longer than one 63-character DNS label: refusing one left every prolog of such a cluster
# ungated. NODE_MAX keeps each file named after the node within NAME_MAX (255; the longest is the metrics' temp file,
# .tmp-torchimages_<node>.prom-XXXXXXXX: 31 more)
NODE_MAX = 200
_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")     # whole: `$` alone lets "n1\n" through
TIMEOUT_S = 60.0
OUTPUT_CAP = 16 << 20           # bytes a Slurm command may print (sinfo of 100,000 nodes is a few MiB)
# the seconds a Slurm command may take now: the prolog sets it to what is left of its cap (None: TIMEOUT_S)
limit: Callable[[], float] | None = None


def node_problem(name: str) -> str | None:
    if len(name) > NODE_MAX:
        return (f"node name {name[:40]!r}... is {len(name)} characters: more than the {NODE_MAX} the prolog's state "
                "files can be named after (a DNS name, FQDN included, is rarely over 100)")
    if name.upper() == "ALL":
        # Slurm's word for every node (a partition's Nodes=ALL; node lists read it so): a drain or resume of "ALL"
        # would act on the whole cluster, and no node is named so (slurm.conf could not tell it from the keyword)
        return f"node name {name!r} is Slurm's word for every node, not one node name"
    if _NODE.fullmatch(name):
        return None
    return (f"node name {name!r} is not one node name (letters, digits, '-', '_', '.'); a hostlist such as "
            f"n[1-64] or a,b would make scontrol act on many nodes")


# sinfo's NODE STATE CODES (man sinfo; src/common/slurm_protocol_defs.c node_state_string): `~` powered off, `%`
# being powered down, `!` to be powered down (taken from scheduling); a state that is the power flag alone
# (`POWERED_DOWN`, `POWER_DOWN`, older Slurm's powered-off state, `POWERING_DOWN`, a `CLOUD` node not started); with
# --Format=StateComplete the flags follow the base state (`idle+cloud+powered_down`). `#` (powering up) is a node on
# its way into service: this very node, its prolog running, may still be listed so.
POWER_SUFFIXES = ("~", "%", "!")
POWER_STATES = frozenset({"powered_down", "power_down", "powering_down", "cloud"})
POWER_FLAGS = frozenset({"powered_down", "power_down", "powering_down"})
# base states that take a node out of service by someone's word other than a drain (man scontrol: DOWN, FAIL "expected
# to fail soon ... per system administrator request", FAILING its allocated form): Slurm's resume clears either
TAKEN_OUT = frozenset({"down", "fail", "failing"})


@dataclass(frozen=True)
class NodeRow:
    name: str
    state: str        # sinfo's %T: idle, allocated, drained, draining, mixed, down*...
    reason_text: str  # sinfo's %E: "none" when there is none

    @property
    def drained(self) -> bool:
        return "drain" in self.state.lower()    # sinfo writes drained, scontrol DRAIN: one state however it is cased

    @property
    def taken_out(self) -> bool:
        """Out of service without a drain: DOWN (an operator's `state=down reason=...`, Slurm's own) or FAIL/FAILING
        (`state=fail`). A drain of ours over it replaced their reason with ours, and `make undrain`'s resume then
        cleared their DOWN or FAIL with our drain (hunt102)."""
        return bool(set(self.state.strip().lower().rstrip("*~%!#$@^-").split("+")) & TAKEN_OUT)

    @property
    def ours(self) -> bool:
        return self.drained and parse_reason(self.reason_text, self.name) is not None

    @property
    def powered_off(self) -> bool:
        """Off, or on its way off, by Slurm's power saving: no node in service (`POWERED_OFF` below)."""
        state = self.state.strip().lower()
        return state.endswith(POWER_SUFFIXES) or state in POWER_STATES or \
            bool(set(state.rstrip("*~%!#$@^-").split("+")[1:]) & POWER_FLAGS)

    @property
    def claimed(self) -> int:
        """When our drain reason says the node was drained (epoch), 0 when it is not ours."""
        found = parse_reason(self.reason_text, self.name) if self.drained else None
        return found[1] if found else 0


def _mark(node: str, code: str, epoch: int) -> str:
    return hashlib.sha256(f"torchimages|{node}|{code}|{epoch}".encode()).hexdigest()[:10]


def reason(node: str, code: str, summary: str, epoch: float) -> str:
    """Slurm's drain reason: `torchimages:<CODE> #<epoch>.<mark> <summary>`, one printable line of at most 200
    characters (no double quote)."""
    t = int(epoch)
    text = one_line(f"{REASON_PREFIX}{code} #{t}.{_mark(node, code, t)} {summary}").replace('"', "'")
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def parse_reason(text: str, node: str) -> tuple[str, int] | None:
    """(code, epoch) of a drain reason torchimages wrote for `node`; None for anyone else's."""
    m = _REASON.match(text.strip())
    if not m or _mark(node, m.group(1), int(m.group(2))) != m.group(3):
        return None
    return m.group(1), int(m.group(2))


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
    total: int            # the nodes counted: those in service or ours, not one powered off or out by another's word
    powered_off: int = 0  # the partition's nodes powered off (by power saving) and not ours: not counted
    out_others: int = 0   # nodes out of service by anyone else's word (drained, DOWN, FAIL): no capacity, not counted

    @property
    def open(self) -> bool:
        """This drain is allowed only while ours and this one fit in the share of the nodes that could serve."""
        return self.drained_ours + 1 > self.allowed

    def line(self, share: float, partition: str | None) -> str:
        where = f"partition {partition}" if partition else "the cluster"
        off = f" ({self.powered_off} more powered off, not counted)" if self.powered_off else ""
        others = (f" ({self.out_others} more out of service by others: drained, DOWN or FAIL, no capacity, not counted)"
                  if self.out_others else "")
        return (f"{self.drained_ours} of {self.total} node(s) of {where}{off}{others} already drained by torchimages; "
                f"the breaker allows {self.allowed} ({share:.0%})")


def _out_by_others(r: NodeRow, node: str) -> bool:
    return r.name != node and not r.ours and (r.drained or r.taken_out)


def breaker(rows: list[NodeRow], node: str, share: float) -> Breaker:
    """At most floor(share x nodes) drained by torchimages at once (at least 1 when share > 0, none when 0), counted
    on the nodes that could be in service: a node powered off by Slurm's power saving is no capacity (a partition of
    ten, eight powered off, let the last node up be drained beside one of ours), nor one another took out of service
    (drained with another reason, DOWN or FAIL: 60 of 100 nodes down let a 10 % breaker drain 10 of the 40 left,
    hunt105; it now allows 4), unless it is ours (drained by us, then powered off or down: still ours to hold against
    the share) or this node (its prolog runs). Only ours hold places: an operator's maintenance drains never use up
    the share (issue 36: an operator's drain, even one written `torchimages: ...` by hand, is not ours)."""
    others = [r for r in rows if _out_by_others(r, node) and not r.powered_off]
    counted = [r for r in rows if r.ours or r.name == node or not (r.powered_off or _out_by_others(r, node))]
    allowed = 0 if share <= 0 else max(1, math.floor(share * len(counted) + 1e-9))
    ours = sum(1 for r in counted if r.ours and r.name != node)
    return Breaker(allowed, ours, len(counted), len(rows) - len(counted) - len(others), len(others))


def over(rows: list[NodeRow], node: str, share: float) -> bool:
    """After this node's claim, re-counted: True when torchimages now holds more than the breaker allows with it
    (prologs on other nodes claimed at the same time); the claim is then given back. Of any two racing claims the
    later re-count sees the earlier, so they never both stay past the share."""
    return breaker(rows, node, share).open


# the fields of a node's record whose value is free text someone wrote (scontrol update reason=..., comment=...,
# extra=...): Slurm prints them after NodeName, NodeHostName and Gres, and what follows them is theirs, not Slurm's
FREE_TEXT = re.compile(r"\s(?:Reason|Comment|Extra)=")


def _record(text: str) -> str:
    """Slurm's own fields of each record line: a line cut where its first free-text field starts (an operator's
    `Reason=GPU swapped Gres=gpu:1 [root@...]` names no Gres of the node)."""
    return "\n".join(FREE_TEXT.split(line, maxsplit=1)[0] for line in text.splitlines())


def node_fields(text: str) -> dict[str, str]:
    """`scontrol show node -o NAME`'s Key=Value fields (the values without spaces: NodeHostName, Gres, State),
    Slurm's own: the text of a reason, comment or extra someone wrote is never read as fields."""
    return {m.group(1): m.group(2) for m in re.finditer(r"(?:^|\s)([A-Za-z]+)=(\S*)", _record(text))}


def gres_gpus(gres: str) -> int | None:
    """The GPUs a node's Gres names (`gpu:8`, `gpu:h100:8(S:0-1)`, `gpu:a100:4,gpu:t4:2`); None when it names none."""
    total = 0
    for item in re.sub(r"\([^)]*\)", "", gres).split(","):
        parts = item.strip().split(":")
        if parts[0] == "gpu" and len(parts) >= 2 and parts[-1].isascii() and parts[-1].isdigit():
            total += int(parts[-1])
    return total or None


PROOF_FIELDS = ("NodeName", "NodeHostName", "Gres")    # what return to service reads of a node's record


def node_info(node: str) -> tuple[dict[str, str] | None, str]:
    rc, out = run([shutil.which("scontrol") or "scontrol", "show", "node", "-o", node], quiet=True)
    if rc != 0:
        return None, f"scontrol show node failed (exit {rc}): {' '.join(out.split())[-200:] or 'no message'}"
    fields = node_fields(out)
    if fields.get("NodeName") != node:
        return None, f"scontrol show node does not list {node}"
    # one node's record names each field once: two records, or a field twice (NodeHostName=a ... NodeHostName=b,
    # Gres twice), say two things of the node, and the last one read proved which host it is
    keys = re.findall(r"(?:^|\s)([A-Za-z]+)=", _record(out))
    if twice := next((k for k in PROOF_FIELDS if keys.count(k) > 1), None):
        return None, f"scontrol show node {node} names {twice} {keys.count(twice)} times: not one node's record"
    return fields, ""


def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
    """(exit status, what it printed) of a Slurm command, its argv said on stderr first (not for a quiet query);
    127 where it cannot run."""
    if not quiet:
        say("torchimages-prolog: " + " ".join(argv))      # never raises: an unwritable stderr never skips a drain
    if dry_run:
        return 0, ""
    try:
        proc = statefile.run_tail(argv, limit() if limit else TIMEOUT_S, OUTPUT_CAP)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    if proc.cut:          # a listing cut short would count some nodes only: the breaker must not count on it
        return 126, f"{os.path.basename(argv[0])} printed more than {OUTPUT_CAP:,} bytes: not read"
    return proc.returncode, out if proc.returncode == 0 else (out + err).strip()


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
