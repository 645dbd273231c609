"""Prometheus text-file metrics (node_exporter's textfile collector) for one node, with prometheus_client.

A temp file of an unguessable name, then a rename (statefile.replace): a scraper never reads half a file, and no link
planted where write_to_textfile's <path>.<pid>.<thread> would go is followed. One file a node,
DIR/torchimages_<node>.prom. Figures that are not finite numbers are left out (unknown is not zero).
`python -m verify.prolog.metrics REPORT.json --node N --dir DIR` does the same for any verify report (the fleet
side runs it: the host side never imports verify).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from typing import Any

from .metricsorder import kept_instead


class Unavailable(Exception):
    """prometheus_client is not installed: the one line says how to get it."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _checks(registry: Any, node: str, report: dict[str, Any]) -> None:
    from prometheus_client import Gauge
    status = Gauge("torchimages_check_status", "1 per check, labelled with its status, code and owner",
                   ["node", "check", "status", "code", "owner"], registry=registry)
    seconds = Gauge("torchimages_check_duration_seconds", "How long each check ran", ["node", "check"],
                    registry=registry)
    figure = Gauge("torchimages_check_figure", "Each check's key figures (metrics of its result)",
                   ["node", "check", "name", "unit"], registry=registry)
    for c in report.get("checks") or []:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            continue
        status.labels(node, c["name"], str(c.get("status")), str(c.get("code") or ""), str(c.get("owner") or "")).set(1)
        if (d := _number(c.get("duration_s"))) is not None:
            seconds.labels(node, c["name"]).set(d)
        raw = c.get("metrics")
        figures: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for name, m in figures.items():          # name -> {"value": v, "unit": u} (verify/result.py)
            if isinstance(m, dict) and (v := _number(m.get("value"))) is not None:
                figure.labels(node, c["name"], str(name), str(m.get("unit") or "")).set(v)
    phases = (report.get("environment") or {}).get("phases") if isinstance(report.get("environment"), dict) else None
    if isinstance(phases, dict):
        gauge = Gauge("torchimages_time_to_first_step_seconds", "Time to first step, per phase", ["node", "phase"],
                      registry=registry)
        for name, value in phases.items():      # every phase the report names (verify adds phases over time)
            if (v := _number(value)) is not None:
                gauge.labels(node, str(name)).set(v)


def registry_for(node: str, report: dict[str, Any] | None, outcome: dict[str, Any] | None = None) -> Any:
    """A CollectorRegistry with the node's verdict (outcome: verdict, code, owner, exit, duration_s, xids, history)
    and its report's checks, figures and phases."""
    try:
        from prometheus_client import CollectorRegistry, Gauge
    except ImportError:
        raise Unavailable("metrics not written: prometheus_client is not installed (pip install prometheus-client)") from None
    registry = CollectorRegistry()
    if outcome is not None:
        Gauge("torchimages_prolog_verdict", "1, labelled with the prolog's verdict, code and owner",
              ["node", "verdict", "code", "owner"], registry=registry).labels(
            node, str(outcome.get("verdict")), str(outcome.get("code") or ""), str(outcome.get("owner") or "")).set(1)
        Gauge("torchimages_prolog_exit_status", "The prolog's exit status", ["node"], registry=registry).labels(
            node).set(int(outcome.get("exit", -1)))
        if (n := _number(outcome.get("setting_problems"))) is not None:
            # the operator's knobs that were not applied (their defaults held): a fleet on defaults it was not set to
            Gauge("torchimages_prolog_setting_problems", "Settings of the prolog's not applied (their defaults held)",
                  ["node"], registry=registry).labels(node).set(n)
        for key, help_ in (("duration_s", "How long the prolog ran"), ("time", "When the prolog ran (epoch)")):
            if (v := _number(outcome.get(key))) is not None:
                name = "torchimages_prolog_duration_seconds" if key == "duration_s" else "torchimages_prolog_last_run_timestamp_seconds"
                Gauge(name, help_, ["node"], registry=registry).labels(node).set(v)
        _counts(registry, node, "torchimages_kernel_log_xid_events", "Xid/SXid events read from the kernel log by action",
                "action", outcome.get("xids") or {})
        _counts(registry, node, "torchimages_node_history_events", "Events in the node's drain history", "event",
                outcome.get("history") or {})
    if isinstance(report, dict):
        _checks(registry, node, report)
    return registry


def _counts(registry: Any, node: str, name: str, help_: str, label: str, values: dict[str, int]) -> None:
    from prometheus_client import Gauge
    gauge = Gauge(name, help_, ["node", label], registry=registry)
    for key, n in values.items():
        gauge.labels(node, key).set(n)


class Superseded(Exception):
    """The node's file holds a run that started after this one (prologs of jobs starting together): it is kept."""


LOCK_WAIT_S = 2.0


def write(directory: str, node: str, report: dict[str, Any] | None, outcome: dict[str, Any] | None = None,
          skew_s: float = 300.0, lock: str | None = None) -> str:
    """DIR/torchimages_<node>.prom, written atomically; its path. Unavailable or OSError on failure; Superseded when
    the file holds the outcome of a run that started after this one's (outcome["time"]). `lock`: a lock file that
    writers of this node's file share (the prolog's, in its state folder: node_exporter's folder gets no other file)."""
    registry = registry_for(node, report, outcome)          # Unavailable when prometheus_client is missing
    from prometheus_client import generate_latest

    from .statefile import LockBusy, locked, replace
    if os.path.lexists(directory) and not os.path.isdir(directory):
        raise NotADirectoryError(f"{directory} is not a folder (node_exporter's textfile collector reads a folder)")
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, f"torchimages_{node}.prom")
    started = _number((outcome or {}).get("time"))
    if started is None:
        replace(target, generate_latest(registry))
        return target
    # prologs of one node end in any order: one that began before a drain and passed after it wrote its pass over
    # the drain's outcome (node_exporter showed a drained node passing): which stands is metricsorder's rule, under
    # the lock, so that two writers never reorder between the look and the rename
    with contextlib.ExitStack() as held:
        if lock and not os.path.islink(os.path.dirname(lock)):   # a linked folder is refused, never followed
            with contextlib.suppress(LockBusy, OSError):    # no lock to be had: the look alone
                held.enter_context(locked(lock, LOCK_WAIT_S))
        if (kept := kept_instead(target, outcome or {}, skew_s)) is not None:
            raise Superseded(f"{target} holds {kept}: it is kept")
        # a temp file of a name nobody can guess (write_to_textfile's <path>.<pid>.<thread> would follow a link
        # planted there, as root), then a rename; node_exporter reads *.prom only, never the temp file
        replace(target, generate_latest(registry))
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m verify.prolog.metrics", description=__doc__.split("\n")[0])
    p.add_argument("report", help="a verify JSON report")
    p.add_argument("--node", required=True)
    p.add_argument("--dir", required=True, help="node_exporter's textfile collector folder")
    args = p.parse_args(argv)
    from .slurm import node_problem
    try:
        if problem := node_problem(args.node):
            raise ValueError(problem)
        # bounded and regular files only (verify's own report reader): /dev/zero, a FIFO or a report nested
        # 200,000 deep is one line, never a hang, a MemoryError or a traceback
        from .verifyrun import load_report
        report, problem, _ = load_report(os.path.realpath(args.report))
        if problem:
            raise ValueError(f"{args.report}: {problem}")
        print(write(args.dir, args.node, report if isinstance(report, dict) else None))
    except (OSError, ValueError, Unavailable) as exc:
        print(f"metrics: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from ..shared.closedpipe import guarded
    sys.exit(guarded(main))
