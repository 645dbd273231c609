"""The fleet report's terms: its bounds, what a figure is, and the records of one node's report and of the fleet
(scripts/fleet/fleet.py reads them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import ROOT, durations
from ..errors import one_line
from .history import NodeHistory
from .plausible import node_key

FLEET_JSON = "fleet.json"
FLEET_KIND = "torchimages-fleet-report"
# make isolate's answer, written beside the pairs' reports (scripts/fleet/isolate_run.py): ours, never a node's report
ISOLATE_JSON = "isolate.json"
ISOLATE_KIND = "torchimages-isolate"
OUTLIER_BELOW = 0.8        # a figure below 0.8x its model's fleet median is an outlier
SLOW_START = 1.5           # a time to first step above 1.5x the fleet median is slow
MIN_NODES = 3              # a median of fewer nodes says nothing about which one is off
MAX_BYTES = 64 << 20       # a verify report is a few hundred KiB at most
# JSON values (objects, keys, lists, strings, numbers) in one report: an 8-GPU node's holds ~1,700, verify's ceiling of
# 4,096 GPUs ~850,000; 64 MiB of `["x", "x", ...]` holds 13 million, and the schema's validator spent minutes on each
# (hunt99)
MAX_VALUES = 1_000_000
# ... and in all the report blocks of one saved log: 31 blocks of 400,000 values each (every one under MAX_VALUES) in
# one 60 MB log took make fleet-report a minute (hunt100); two of verify's largest reports, ~1,200 8-GPU nodes' blocks
MAX_LOG_VALUES = 2 * MAX_VALUES
MAX_DEPTH = 12             # folders below DIR (a job's reports sit one to four deep)
MAX_ENTRIES = 50_000       # names walked under DIR in all (a job of 4,096 nodes writes a few per node)
CLOCK_SKEW_S = 300.0       # a report created this far in the future is still believed (clocks differ); CLOCK_SKEW=
# before this no verify of schema 1 or 2 was written: an earlier `created` is a clock never set (scripts/durations.py)
EARLIEST_CREATED = durations.EARLIEST_CREATED
SUFFIXES = (".json", ".log", ".txt")
PHASES = ("pull", "container_start", "import_torch", "cuda_init", "process_group_init", "first_batch", "first_step")
# A figure is a metric measured as a rate (higher is better); ratios, bytes and counts are not figures.
RATE_UNITS = frozenset({"GB/s", "MB/s", "GiB/s", "MiB/s", "TFLOP/s", "samples/s", "images/s", "tokens/s"})
# Rates that are not a node's figure: the LZ4 path arrow shows as the copy to avoid, the algbw beside busbw, the
# DataLoader's 0-worker reference; train's rate of a whole multi-node group (not one node's) and its model TFLOP/s
# (tokens/s says the same).
NOT_FIGURES = frozenset({("arrow", "lz4_throughput"), ("nccl", "algbw_max"), ("dataloader", "samples_per_s_0_workers"),
                         ("train", "group_tokens_per_s"), ("train", "model_TFLOPs_per_rank")})
DEVICE = re.compile(r"^(?P<family>.+)_dev(?P<index>\d+)$")
PASSING = frozenset({"pass", "warn"})
# The figures the table shows (check, metric without _devN) → column header; the others are in fleet.json and in
# the outlier list.
COLUMNS = {("gpu", "bf16_TFLOPs"): "bf16 TFLOP/s", ("gpu", "d2d_GBps"): "d2d GB/s", ("nccl", "busbw_max"): "busbw GB/s",
           ("arrow", "zero_copy_throughput"): "arrow GB/s", ("dataloader", "samples_per_s"): "loader samples/s",
           ("train", "tokens_per_s"): "train tokens/s"}
SCHEMAS = {2: ROOT / "verify" / "report.schema.json", 1: ROOT / "verify" / "report.v1.schema.json"}


@dataclass
class Figure:
    check: str
    metric: str                 # as the report names it: bf16_TFLOPs_dev3
    family: str                 # without the device: bf16_TFLOPs
    device: int | None
    value: float
    unit: str
    model: str
    median: float | None = None
    peers: int = 0              # nodes in the median
    ratio: float | None = None
    outlier: bool = False

    @property
    def key(self) -> str:
        return f"{self.check}.{self.metric}"


@dataclass
class Node:
    """One valid report: a node's local checks, or the collective's report from global rank 0."""

    report: str                 # the file, relative to DIR (a log file's block: file#n)
    node: str
    verdict: str                # pass, warn, fail, skip, interrupted, empty
    code: str | None
    owner: str | None
    summary: str
    model: str
    replay: bool
    figures: list[Figure] = field(default_factory=list)
    phases: dict[str, float | None] = field(default_factory=dict)
    drain: list[str] = field(default_factory=list)
    # a host-owned failure of a collective across nodes this node's report holds: said, never a drain (collective.py)
    group_notes: list[str] = field(default_factory=list)
    slow_start: bool = False
    emulated: bool = False
    checks: tuple[str, ...] = ()    # the check names the report holds
    across: tuple[str, ...] = ()    # those of its checks that ran across nodes (collective.group_nodes)
    expect_gpus: int = 0            # the GPUs verify was told the node has (--expect-gpus: the job's allocation)
    gpu_judged: bool = False        # its gpu check passed, warned or failed (not skipped, not absent)
    group: int = 0                  # the most nodes a collective check of the report ran across (0: none did)
    local: bool = False             # it holds a check of this node alone (make slurm's per-node report)

    @property
    def passing(self) -> bool:
        return self.verdict in PASSING

    @property
    def phases_total(self) -> float | None:
        values = [v for v in self.phases.values() if v is not None]
        return round(sum(values), 3) if values else None


@dataclass
class Fleet:
    folder: Path
    nodes: list[Node]
    invalid: list[tuple[str, str]]           # (file, why)
    notes: list[str]
    phase_median: float | None
    duplicates: dict[str, list[str]] = field(default_factory=dict)   # node → its reports that hold the same checks
    histories: dict[str, NodeHistory] | None = None   # node → its drain history; None: STATE_DIR not given
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file or folder, why): not read at all

    @property
    def outliers(self) -> list[tuple[Node, Figure]]:
        return [(n, f) for n in self.nodes for f in n.figures if f.outlier]

    @property
    def drains(self) -> dict[str, list[str]]:
        """node → its distinct drain reasons, in report order."""
        found: dict[str, list[str]] = {}
        for n in self.nodes:
            for reason in n.drain:
                if reason not in found.setdefault(n.node, []):
                    found[n.node].append(reason)
        return found

    @property
    def gpus_unjudged(self) -> list[str]:
        """Nodes whose reports say the job gave them GPUs (--expect-gpus N: Slurm's --gres, the pod's request), yet
        none of them judged a gpu check (absent, or skipped): their GPUs are unknown, never a pass (the prolog's
        GPU_NOT_ASSESSED, Slurm's prolog semantics)."""
        expected: dict[str, str] = {}
        judged: set[str] = set()
        for n in self.nodes:
            key = node_key(n.node).split(".")[0]
            if n.expect_gpus > 0:
                expected.setdefault(key, n.node)
            if n.gpu_judged:
                judged.add(key)
        return [name for key, name in expected.items() if key not in judged]

    @property
    def unreported(self) -> tuple[int, int]:
        """(nodes the collective ran across, nodes with a report of their own) where fewer nodes reported than the
        collective counted, else (0, 0). make slurm's job writes one report per node beside the collective's: a node
        whose verify hung (a GPU stuck) or never started writes none, and the fleet passed on the others' alone
        (evidence lost in silence). Only where the folder holds per-node reports (make isolate's pairs write one report
        a pair, by design)."""
        across = max((n.group for n in self.nodes), default=0)
        local = {node_key(n.node).split(".")[0] for n in self.nodes if n.local}
        return (across, len(local)) if local and across > len(local) else (0, 0)

    @property
    def ok(self) -> bool:
        return not self.why_not_ok          # one predicate: what the last line names is what fails the fleet

    @property
    def why_not_ok(self) -> str:
        """What keeps the fleet from passing, counted ('' when it passes): the last line a user reads."""
        failing = sum(1 for n in self.nodes if not n.passing)
        # with STATE_DIR, the drain history is part of the answer: a node flagged for hardware inspection (drained
        # again after a resume: NVSentinel's flap rule) and not back in service since is no healthy node, and a
        # history read in part or not at all is events unknown, not none (the prolog's --revalidate refuses a
        # garbled one alike): neither is a pass
        histories = list((self.histories or {}).values())
        flagged = sum(1 for h in histories if h.awaiting)
        # a node with a report whose history stands drained (drained after its reports, or still drained while a job
        # that began before the drain reported a pass) is a fault on record: no report of it hides that
        # (by its short name too: verify's report names the host as gethostname does, n1.cluster.local, the prolog's
        # history as Slurm names the node, n1)
        reported = {node_key(n.node).split(".")[0] for n in self.nodes}
        drained = sum(1 for name, h in (self.histories or {}).items() if node_key(name).split(".")[0] in reported
                      and not h.error and not h.awaiting and h.drained is not None)
        unread = sum(1 for h in histories if h.error or h.bad_lines)
        unjudged = len(self.gpus_unjudged)
        across, own = self.unreported
        parts = [f"{count} {what}" for count, what in (
            (failing, "node(s) not passing"), (len(self.invalid), "file(s) that are no valid verify report"),
            (len(self.unreadable), "file(s) or folder(s) not readable"),
            (len(self.duplicates), "node(s) reported twice"),
            (flagged, "node(s) flagged for hardware inspection"),
            (drained, "node(s) drained in their history, not back in service since"),
            (unread, "drain history file(s) not wholly read"),
            (unjudged, "node(s) given GPUs (--expect-gpus) whose reports judged none"),
            (across - own, f"node(s) of the collective across {across} with no report of their own")) if count]
        return ", ".join(parts)


def drain_reason(code: str, summary: str) -> str:
    """The reason a Slurm drain (and the prolog helper) writes: `torchimages:<CODE> <summary>`, one line."""
    return one_line(f"torchimages:{code} {summary}".strip())
