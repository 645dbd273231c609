"""The fleet report written out: its table, DIR/fleet.json.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..errors import UserError, one_line
from ..fsutil import atomic_write, read_bounded
from .history import history_json, history_lines
from .model import COLUMNS, FLEET_JSON, FLEET_KIND, MAX_BYTES, MIN_NODES, OUTLIER_BELOW, SLOW_START, Fleet, Node
from .reports import is_fleet_report

# ---------------------------------------------------------------------------------------------- output

def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def _columns(nodes: list[Node]) -> list[tuple[tuple[str, str], str]]:
    present = {(f.check, f.family) for n in nodes for f in n.figures}
    return [(key, title) for key, title in COLUMNS.items() if key in present]


def _cell(node: Node, key: tuple[str, str]) -> str:
    """The node's lowest value of a figure (its weakest device), '!' when any of its devices is an outlier."""
    mine = [f for f in node.figures if (f.check, f.family) == key]
    if not mine:
        return "-"
    return _num(min(f.value for f in mine)) + ("!" if any(f.outlier for f in mine) else "")


def format_fleet(report: Fleet) -> str:
    nodes = report.nodes
    columns = _columns(nodes)
    widths = {"node": max([4, *(len(n.node) for n in nodes)]), "model": max([5, *(len(n.model) for n in nodes)]),
              "code": max([4, *(len(n.code or "-") for n in nodes)])}
    head = (f"{'NODE':<{widths['node']}}  {'MODEL':<{widths['model']}}  {'VERDICT':<11}  {'CODE':<{widths['code']}}  "
            f"{'OWNER':<5}  " + "  ".join(f"{title:>{max(len(title), 8)}}" for _, title in columns) + "  REPORT")
    lines = [head]
    for n in nodes:
        verdict = n.verdict.upper() if not n.passing else n.verdict
        lines.append(f"{n.node:<{widths['node']}}  {n.model:<{widths['model']}}  {verdict:<11}  "
                     f"{n.code or '-':<{widths['code']}}  {n.owner or '-':<5}  "
                     + "  ".join(f"{_cell(n, key):>{max(len(title), 8)}}" for key, title in columns)
                     + f"  {one_line(n.report)}{' (replay)' if n.replay else ''}")
    passing = sum(n.passing for n in nodes)
    lines.append(f"\n{len(nodes)} report(s) from {len({n.node for n in nodes})} node(s): {passing} passing, "
                 f"{len(nodes) - passing} not passing" + (f", {len(report.invalid)} invalid" if report.invalid else "")
                 + (f", {len(report.unreadable)} unreadable" if report.unreadable else ""))
    failing = [n for n in nodes if not n.passing and n.summary]
    if failing:
        lines.append("not passing:")
        lines += [f"  {n.node} ({one_line(n.report)}): {n.verdict}: {n.summary[:200]}" for n in failing]
    outliers = report.outliers
    if outliers:
        lines.append(f"outliers (below {OUTLIER_BELOW}x the median of the same model across nodes; '!' above):")
        for n, f in outliers:
            lines.append(f"  {n.node}: {f.key} {_num(f.value)} {f.unit} = {f.ratio:.2f}x the {f.model} median "
                         f"{_num(f.median)} of {f.peers} nodes")
    drains = report.drains
    if drains:
        lines.append("drain (a failing check owned by the host):")
        for node, reasons in drains.items():
            lines += [f"  {node}: {reason[:300]}" for reason in reasons]
    lines += _phase_lines(report)
    if report.duplicates:
        lines.append("duplicate node names (not ok):")
        lines += [f"  {node}: {len(names)} reports of the same checks ({', '.join(map(one_line, names))}): two hosts with one name, "
                  f"or two runs in one folder" for node, names in report.duplicates.items()]
    across, reported = report.unreported
    if across:
        lines.append(f"missing reports (not ok): the collective ran across {across} nodes, {reported} of them wrote a "
                     f"report of their own: {across - reported} node(s) wrote none (its verify hung, was killed or "
                     "never started; the job's log names it): not assessed, never a pass")
    if report.invalid:
        lines.append("invalid reports (not counted):")
        lines += [f"  {one_line(name)}: {why}" for name, why in report.invalid]
    if report.unreadable:
        lines.append("unreadable (not read: the fleet does not pass until they are):")
        lines += [f"  {one_line(name)[:200]}: {why}" for name, why in report.unreadable[:50]]
        lines += [f"  ... and {len(report.unreadable) - 50} more"] if len(report.unreadable) > 50 else []
    lines += history_lines(report.histories) if report.histories is not None else \
        ["drain history: not read (give STATE_DIR=<the prolog's --state-dir> to show drains, resumes, inspections)"]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def _phase_lines(report: Fleet) -> list[str]:
    timed = [n for n in report.nodes if n.phases]
    if not timed:
        return []
    names = list(dict.fromkeys(p for n in timed for p in n.phases))
    width = max([4, *(len(n.node) for n in timed)])
    lines = ["time to first step (s):",
             f"  {'NODE':<{width}}  " + "  ".join(f"{p:>{max(len(p), 6)}}" for p in names) + f"  {'total':>7}"]
    for n in timed:
        lines.append(f"  {n.node:<{width}}  " + "  ".join(f"{_num(n.phases.get(p)):>{max(len(p), 6)}}" for p in names)
                     + f"  {_num(n.phases_total):>7}" + (f"  SLOW: above {SLOW_START}x the median "
                                                         f"{_num(report.phase_median)}" if n.slow_start else ""))
    return lines


def fleet_json(report: Fleet) -> dict[str, Any]:
    return {
        "kind": FLEET_KIND, "version": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rules": {"outlier_below": OUTLIER_BELOW, "slow_start_above": SLOW_START, "min_nodes": MIN_NODES},
        "ok": report.ok,
        "nodes": [{"node": n.node, "report": n.report, "verdict": n.verdict, "passing": n.passing, "code": n.code,
                   "owner": n.owner, "summary": n.summary, "model": n.model, "replay": n.replay, "emulated": n.emulated,
                   "figures": {f.key: {"value": f.value, "unit": f.unit, "model": f.model, "median": f.median,
                                       "nodes": f.peers, "ratio": f.ratio, "outlier": f.outlier} for f in n.figures},
                   "phases": n.phases, "phases_total": n.phases_total, "slow_start": n.slow_start, "drain": n.drain}
                  for n in report.nodes],
        "outliers": [{"node": n.node, "report": n.report, "figure": f.key, "value": f.value, "unit": f.unit,
                      "model": f.model, "median": f.median, "ratio": f.ratio} for n, f in report.outliers],
        "drain": [{"node": node, "reason": reason} for node, reasons in report.drains.items() for reason in reasons],
        "phase_median_s": report.phase_median,
        "invalid": [{"report": name, "why": why} for name, why in report.invalid],
        "unreadable": [{"path": name, "why": why} for name, why in report.unreadable],
        "duplicates": [{"node": node, "reports": names} for node, names in report.duplicates.items()],
        "unreported": report.unreported[0] - report.unreported[1],
        "notes": report.notes,
        "history": None if report.histories is None else history_json(report.histories),
        "inspect": None if report.histories is None else
        [{"node": n, "why": h.inspect} for n, h in report.histories.items() if h.inspect],
    }


def write_fleet(report: Fleet) -> Path:
    """DIR/fleet.json, replacing only an earlier fleet report: a node's report that happens to bear the name is kept
    (UserError, exit 2, with what to do)."""
    path = report.folder / FLEET_JSON
    if path.exists() or path.is_symlink():
        try:
            # bounded, no link followed, no FIFO waited on: a fleet.json of gigabytes is no fleet report, never read whole
            earlier = json.loads(read_bounded(path, MAX_BYTES, "fleet report").decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            earlier = None
        if not is_fleet_report(earlier):
            raise UserError(f"{path} exists and is not a fleet report (a node's report of that name?): not "
                            f"overwritten; rename it and run make fleet-report again")
    atomic_write(path, json.dumps(fleet_json(report), indent=1) + "\n")
    return path
