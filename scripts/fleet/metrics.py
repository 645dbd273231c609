"""Prometheus text-file metrics of the fleet report (`make fleet-report METRICS_DIR=...`), one file a node.

node_exporter's textfile collector reads METRICS_DIR/torchimages_fleet_<node>.prom, written to a temp file of an
unguessable name and renamed (fsutil.atomic_write), so a scraper never reads half a file and no planted link is
followed. The names are those of
verify/prolog/metrics.py (with the same help text) where the same thing is meant, so operators see one family:
torchimages_check_figure, torchimages_time_to_first_step_seconds, torchimages_node_history_events. Every series
carries source="fleet", so it never collides with the prolog's own file for the node. A phase or figure that is
unknown is left out, never 0.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..fsutil import atomic_write
from .history import EVENTS

if TYPE_CHECKING:
    from .fleet import Fleet, Node
    from .history import NodeHistory

SOURCE = "fleet"
SAFE_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")    # whole (fullmatch): `$` lets "n1\n" through


def _gauges(registry: Any) -> dict[str, Any]:
    from prometheus_client import Gauge
    labels = ["source", "node"]
    return {
        "verdict": Gauge("torchimages_fleet_verdict", "1, labelled with the node's verdict, code and owner in the "
                         "fleet report", [*labels, "verdict", "code", "owner"], registry=registry),
        "passing": Gauge("torchimages_fleet_passing", "1 when the node's reports pass (or warn), 0 otherwise",
                         labels, registry=registry),
        # the help texts of verify/prolog/metrics.py, word for word: one family in node_exporter
        "figure": Gauge("torchimages_check_figure", "Each check's key figures (metrics of its result)",
                        [*labels, "check", "name", "unit"], registry=registry),
        "ratio": Gauge("torchimages_fleet_figure_ratio", "Each figure over its GPU model's fleet median",
                       [*labels, "check", "name"], registry=registry),
        "outliers": Gauge("torchimages_fleet_outliers", "The node's figures below the fleet's outlier line",
                          labels, registry=registry),
        "phase": Gauge("torchimages_time_to_first_step_seconds", "Time to first step, per phase",
                       [*labels, "phase"], registry=registry),
        "slow": Gauge("torchimages_fleet_slow_start", "1 when the node's time to first step is above the fleet's "
                      "slow line", labels, registry=registry),
    }


def _history_gauges(registry: Any) -> dict[str, Any]:
    from prometheus_client import Gauge
    labels = ["source", "node"]
    return {
        "events": Gauge("torchimages_node_history_events", "Events in the node's drain history",
                        [*labels, "event"], registry=registry),
        "window": Gauge("torchimages_node_history_events_window", "Events in the node's drain history within the "
                        "flap window", [*labels, "event"], registry=registry),
        "inspect": Gauge("torchimages_node_inspect", "1 when the node is flagged for hardware inspection",
                         labels, registry=registry),
        "drained": Gauge("torchimages_node_drained", "1 when the node's history stands drained (no return to "
                         "service since its last drain)", labels, registry=registry),
        "bad": Gauge("torchimages_node_history_bad_lines", "Lines of the node's history that were skipped",
                     labels, registry=registry),
        "last": Gauge("torchimages_node_history_last_event_timestamp_seconds", "When the node's last history event "
                      "happened (epoch), labelled with it", [*labels, "event"], registry=registry),
    }


def _node(g: dict[str, Any], node: str, reports: list[Node], compared_starts: bool) -> None:
    passing = all(n.passing for n in reports)
    worst = next((n for n in reports if not n.passing), reports[0])
    g["verdict"].labels(SOURCE, node, worst.verdict, worst.code or "", worst.owner or "").set(1)
    g["passing"].labels(SOURCE, node).set(1 if passing else 0)
    compared = [f for n in reports for f in n.figures if f.median is not None]
    if compared:                                    # fewer than MIN_NODES peers: not compared, so no count at all
        g["outliers"].labels(SOURCE, node).set(sum(f.outlier for f in compared))
    for n in reports:
        for f in n.figures:
            if math.isfinite(f.value):
                g["figure"].labels(SOURCE, node, f.check, f.metric, f.unit).set(f.value)
            if f.ratio is not None:
                g["ratio"].labels(SOURCE, node, f.check, f.metric).set(f.ratio)
        for phase, seconds in n.phases.items():
            if seconds is not None:                 # unknown is left out, never 0
                g["phase"].labels(SOURCE, node, phase).set(seconds)
        if n.phases_total is not None and compared_starts:
            g["slow"].labels(SOURCE, node).set(1 if n.slow_start else 0)


def _history(g: dict[str, Any], node: str, h: NodeHistory) -> None:
    if h.error:                                     # unknown: no count at all, not zeros
        return
    counts = dict.fromkeys(EVENTS, 0)          # every event, as the prolog's file has them
    for e in h.events:
        counts[e["event"]] += 1
    for event, count in counts.items():
        g["events"].labels(SOURCE, node, event).set(count)
    for event, count in h.window.items():
        g["window"].labels(SOURCE, node, event).set(count)
    g["inspect"].labels(SOURCE, node).set(1 if h.inspect else 0)
    g["drained"].labels(SOURCE, node).set(1 if h.drained is not None else 0)
    g["bad"].labels(SOURCE, node).set(len(h.bad_lines))
    if h.last is not None:
        g["last"].labels(SOURCE, node, h.last["event"]).set(h.last["epoch"])


def registry_for(node: str, reports: list[Node], history: NodeHistory | None, compared_starts: bool = False) -> Any:
    """The node's registry; compared_starts: the fleet had a time-to-first-step median (else no slow flag)."""
    from prometheus_client import CollectorRegistry
    registry = CollectorRegistry()
    if reports:
        _node(_gauges(registry), node, reports, compared_starts)
    if history is not None:
        _history(_history_gauges(registry), node, history)
    return registry


def write_metrics(report: Fleet, folder: Path, histories: dict[str, NodeHistory] | None = None) -> list[Path]:
    """folder/torchimages_fleet_<node>.prom for every node of the report (and every node with a history), each
    written atomically; the paths. UserError (one line) when prometheus_client is missing or a file cannot be
    written; a node name that cannot name a file is skipped and said by the caller (returned paths omit it)."""
    try:
        from prometheus_client import generate_latest
    except ImportError:
        raise UserError("METRICS_DIR: prometheus_client is not installed: run make setup (requirements-metrics.txt), "
                        "or leave METRICS_DIR empty") from None
    histories = histories or {}
    by_node: dict[str, list[Node]] = {}
    for n in report.nodes:
        by_node.setdefault(n.node, []).append(n)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for node in dict.fromkeys([*by_node, *histories]):
            if not SAFE_NODE.fullmatch(node):
                continue
            target = folder / f"torchimages_fleet_{node}.prom"
            # a temp file of a name nobody can guess, then a rename (fsutil.atomic_write): write_to_textfile's
            # <path>.<pid>.<thread> follows a link planted there, as root (the prolog's metrics refuse it alike)
            atomic_write(target, generate_latest(registry_for(node, by_node.get(node, []), histories.get(node),
                                                              report.phase_median is not None)), mode=0o644)
            written.append(target)
    except OSError as exc:
        raise UserError(f"METRICS_DIR={folder}: cannot write the metrics ({exc.strerror or exc}); give a writable "
                        f"folder (node_exporter's --collector.textfile.directory)") from None
    return written


def skipped_nodes(report: Fleet, histories: dict[str, NodeHistory] | None = None) -> list[str]:
    names = dict.fromkeys([*(n.node for n in report.nodes), *(histories or {})])
    return [n for n in names if not SAFE_NODE.fullmatch(n)]
