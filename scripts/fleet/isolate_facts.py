"""Whether a pair's report is evidence of that pair now (standard library only: `make isolate`'s runner).

NVSentinel's isolation rule: a node is cleared only by a measurement of the link it shares with a known-good
partner. A report whose nccl check ran on one node (each node all-reduced over its own links: a launcher that lost
--nnodes), with fewer ranks than the pair has nodes, across more nodes than the pair, or written on a Slurm node
outside the pair (SLURMD_NODENAME: the step ran elsewhere) measured no link of the pair;
one stamped before the step began or in the future (past TORCHIMAGES_CLOCK_SKEW) is no evidence of this step. Either
is the tool's or the launcher's trouble, no node's: the pair is not assessed (it neither clears nor strikes a node,
and the answer is never clean while it is on record).
"""
from __future__ import annotations

import os
from typing import Any

from ..durations import parse_skew, parse_time, shown
from .plausible import node_key

SKEW_ENV = "TORCHIMAGES_CLOCK_SKEW"
SKEW_DEFAULT_S = 300.0


def skew(env: dict[str, str] | os._Environ[str] | None = None) -> float:
    """TORCHIMAGES_CLOCK_SKEW (5m, 300, 1h, 0; unset or empty: 5 minutes); UserError, one line, for anything else
    (durations.parse_skew: the one parser of the knob, CLOCK_SKEW's and the prolog's grammar and range)."""
    text = (os.environ if env is None else env).get(SKEW_ENV, "").strip()
    return parse_skew(text, SKEW_ENV) if text else SKEW_DEFAULT_S


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _slurm_node(report: dict[str, Any]) -> str | None:
    """The Slurm node the report says it was written on (environment.scheduler.node: SLURMD_NODENAME), or None."""
    env = report.get("environment")
    scheduler = env.get("scheduler") if isinstance(env, dict) else None
    if not isinstance(scheduler, dict) or scheduler.get("kind") != "slurm":
        return None
    node = scheduler.get("node")
    return node.strip() if isinstance(node, str) and node.strip() else None


def pair_problem(report: dict[str, Any], check: dict[str, Any], pair: tuple[str, ...], began: float | None,
                 ended: float | None, skew_s: float = SKEW_DEFAULT_S, per_node: int | None = None) -> str | None:
    """Why this passing report measured no link of `pair` in this step (one line), or None. `per_node`: the ranks
    the step started on each node (torchrun's --nproc-per-node: one per GPU, one on CPU nodes)."""
    data: dict[str, Any] = check["data"] if isinstance(check.get("data"), dict) else {}
    nodes, world = _count(data.get("nodes")), _count(data.get("world_size"))
    if nodes is not None and nodes != len(pair):
        return (f"its nccl check ran across {nodes} node(s), not the pair's {len(pair)}: no link of the pair was "
                "measured (the launcher's --nnodes?)")
    where = _slurm_node(report)
    if where is not None and node_key(where) not in {node_key(n) for n in pair}:
        return (f"it was written on {where[:80]!r} (SLURMD_NODENAME), which is not one of the pair {'+'.join(pair)}: "
                "the step ran elsewhere, no link of the pair was measured")
    if world is not None and world < len(pair):
        return f"its nccl check ran {world} rank(s), fewer than the pair's {len(pair)} nodes: no link of the pair measured"
    if world is not None and per_node and world != per_node * len(pair):
        # the step starts --nproc-per-node ranks on each node, so its group has exactly that many: another number is
        # another launch's report (8 GPUs a node, 2 ranks: 7 of each node's GPUs never all-reduced)
        return (f"its nccl check ran {world} rank(s), not the {per_node * len(pair)} the step started ({per_node} on "
                "each node of the pair): not this step's measurement")
    # verify's nccl check writes its world size and its report its `created` (verify/report.py; `nodes` only since
    # issue 36, so an older image's report without it is judged on its figures): a pass that does not say how many
    # ranks it ran, or when, shows no link of this pair measured in this step (hunt81)
    unsaid = ([] if world is not None else ["world_size"]) + ([] if "created" in report else ["created"])
    if unsaid:
        return (f"its passing report does not say {' or '.join(unsaid)}: no link of the pair is shown measured in "
                "this step (every report verify writes says both)")
    if "created" in report and began is not None and ended is not None:
        when = parse_time(report.get("created"))
        if when is None:
            return f"its created {str(report.get('created'))[:40]!r} is no time a clock writes: not evidence of this step"
        stamp = when.timestamp()
        if stamp > ended + skew_s:
            return (f"created {shown(stamp - ended)} after its step ended, beyond {SKEW_ENV}={shown(skew_s)}: evidence "
                    "from the future is none (check the nodes' clocks)")
        # created is written to the second, truncated: a report of a step that began at x.9 may say x
        if stamp < began - skew_s - 1:
            return (f"created {shown(began - stamp)} before its step began: a report left from another run, not this "
                    "step's")
    return None
