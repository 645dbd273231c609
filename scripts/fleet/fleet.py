"""The fleet report: every node's verify report of one job, side by side (`make fleet-report DIR=<job output>`).

Reads every verify JSON report under DIR (recursively; and the reports a Kubernetes pod prints between the
BEGIN/END VERIFY REPORT lines, in saved `kubectl logs` files), validates each against verify's own schema (version
2, or version 1), and writes one table and DIR/fleet.json:

- per node: verdict, the failing check's code and owner, the figures (every metric measured as a rate: GB/s,
  TFLOP/s, samples/s, ...), the time-to-first-step phases when the report has them;
- each figure against the median of the same GPU model across the fleet's passing reports (CPU nodes group as
  "cpu"): below OUTLIER_BELOW x the median is an outlier, even when the node's own check passed it against its
  baseline. A median needs MIN_NODES nodes; with fewer the figures are shown, not compared, and the report says so;
- the nodes to drain: a failing check owned by `host` gives `torchimages:<CODE> <summary>`, the reason string a
  Slurm drain uses;
- a node whose phases add up to more than SLOW_START x the fleet median is flagged.

A report that was interrupted, holds no check, or judged nothing is never counted as passing. An invalid file is
listed as such, with why, and never stops the report. DIR is hostile input: the walk is bounded (MAX_DEPTH folders
deep, MAX_ENTRIES names), follows no symbolic link (one whose target lies inside DIR is read there; one out of DIR,
dangling or looping is listed), opens regular files only (O_NOFOLLOW, O_NONBLOCK: a FIFO never blocks it) and reads
at most MAX_BYTES of each. What it cannot read is listed as unreadable and the fleet does not pass: a report it
could not see is never a node it can call healthy. A report created in the future (beyond CLOCK_SKEW) or at a time
no clock writes (2026-02-30) is no evidence; one no verify writes (a code outside its catalog, a failure or a warning
without one, a pass with one, a check twice, a figure that fails its own pass: plausible.report_problem, the rule the
prolog and `make isolate` apply too) is listed as invalid, not assessed: a pass never stands on it and it never drains
a node.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UserError, one_line
from . import boards
from .model import CLOCK_SKEW_S, FLEET_JSON, FLEET_KIND, Figure, Fleet, Node, drain_reason
from .nodes import _compare, _slow_starts, read_node
from .output import fleet_json, format_fleet, write_fleet
from .plausible import node_key
from .reports import is_fleet_report, read_reports
from .walk import walk

# the fleet report's public names, in the parts that hold them: model (terms), walk (the folder), reports (which files
# are reports to believe), nodes (a node's row, the comparison), output (the table, fleet.json); this module joins them
__all__ = ["FLEET_JSON", "FLEET_KIND", "Figure", "Fleet", "Node", "drain_reason", "duplicates", "fleet", "fleet_json",
           "format_fleet", "is_fleet_report", "read_node", "read_reports", "walk", "write_fleet"]


def fleet(folder: Path, skew_s: float = CLOCK_SKEW_S, max_age_s: float | None = None) -> Fleet:
    """Read and compare every report under `folder`; UserError (exit 2) when it holds none and nothing unreadable."""
    if not folder.is_dir():
        raise UserError(f"DIR={folder} is not a folder: give the folder the job wrote its verify reports into")
    unreadable: list[tuple[str, str]] = []
    logs_only: list[str] = []
    valid, invalid = read_reports(folder, unreadable, skew_s, max_age_s, logs_only)
    if not valid and not unreadable and len(invalid) == len(logs_only):
        # nothing that is or may be a report: the wrong folder, said as such (its logs named, none left out)
        logs = f" ({len(logs_only)} log(s) without one: {', '.join(logs_only[:5])})" if logs_only else ""
        raise UserError(f"no verify report under {folder}{logs}: give the folder the job wrote its reports into "
                        f"(`verify --json` files, or saved `kubectl logs`)")
    notes: list[str] = []
    nodes = []
    for name, doc in valid:
        try:
            nodes.append(read_node(name, doc))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:   # valid, yet a shape this reader missed
            invalid.append((name, f"valid, but not readable as a node's report ({type(exc).__name__}: "
                                  f"{one_line(exc)[:120]})"))
    spelt: dict[str, str] = {}
    for n in nodes:               # N1 and n1 are one host (DNS): named as its first report spells it
        n.node = spelt.setdefault(node_key(n.node), n.node)
    copied = boards.shared(nodes, dict(valid))      # one GPU in two nodes' reports: neither is evidence (boards.py)
    invalid += list(copied.items())
    nodes = [n for n in nodes if n.report not in copied]
    notes += [line for n in nodes for line in n.group_notes]
    emulated = [n.node for n in nodes if n.emulated]
    if emulated:
        notes.append(f"{', '.join(emulated)}: ran under CPU emulation: figures not compared")
    _compare(nodes, notes)
    median = _slow_starts(nodes, notes)
    return Fleet(folder, nodes, invalid, notes, median, duplicates(nodes), unreadable=unreadable)


def _scoped(n: Node) -> set[tuple[str, bool]]:
    """The report's checks, each with whether it ran across nodes: make slurm runs train both on each node alone
    (node-<node>.json) and across the nodes (nccl.json, from global rank 0), so rank 0's node holds a train check in
    two reports of one healthy job, which is no duplicate (it failed every healthy multi-node fleet: hunt99)."""
    return {(name, name in n.across) for name in n.checks}


def duplicates(nodes: list[Node]) -> dict[str, list[str]]:
    """node → its reports that hold a check another of its reports holds too, at the same scope (on the node alone,
    or across nodes): two hosts answering to one name, or two runs in one folder (a node's local report beside the
    collective's from rank 0 is no duplicate)."""
    # by node and check, once each (every report against every other was quadratic: 8,192 reports of a 4,096-node
    # job took 2 s, and one saved log of 100,000 report blocks, minutes: hunt99)
    held: dict[tuple[str, tuple[str, bool]], list[Node]] = {}
    for n in nodes:
        for scoped in _scoped(n):
            held.setdefault((n.node, scoped), []).append(n)
    twice = {id(n) for reports in held.values() if len(reports) > 1 for n in reports}
    found: dict[str, list[str]] = {}
    for n in nodes:
        if id(n) in twice and n.report not in (listed := found.setdefault(n.node, [])):
            listed.append(n.report)
    return found

