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
no clock writes (2026-02-30) is no evidence; one carrying a code verify does not write (BANANA, a failure without a
code: _foreign_code) is a report no verify wrote; and one that cannot be true (a check twice, a pass with a code, a
figure that fails its own pass: _contradicts) is listed as invalid, not assessed: a pass never stands on it and it
never drains a node.
"""
from __future__ import annotations

import json
import math
import os
import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from .. import ROOT
from ..durations import parse_time, shown
from ..errors import UserError, one_line
from ..fsutil import TooLarge, atomic_write, read_bounded
from .cluster import REPORT_BEGIN, REPORT_END
from .history import NodeHistory, history_json, history_lines
from .plausible import BUSBW_MAX_GBPS, NODE_NAME, UNJUDGED_CODES, VERIFY_CODES, node_key

FLEET_JSON = "fleet.json"
FLEET_KIND = "torchimages-fleet-report"
OUTLIER_BELOW = 0.8        # a figure below 0.8x its model's fleet median is an outlier
SLOW_START = 1.5           # a time to first step above 1.5x the fleet median is slow
MIN_NODES = 3              # a median of fewer nodes says nothing about which one is off
MAX_BYTES = 64 << 20       # a verify report is a few hundred KiB at most
MAX_DEPTH = 12             # folders below DIR (a job's reports sit one to four deep)
MAX_ENTRIES = 50_000       # names walked under DIR in all (a job of 4,096 nodes writes a few per node)
CLOCK_SKEW_S = 300.0       # a report created this far in the future is still believed (clocks differ); CLOCK_SKEW=
# before this no verify of schema 1 or 2 was written: an earlier `created` (1970, a BIOS's 2000) is a node's clock that
# was never set, and its report no evidence of when it ran
EARLIEST_CREATED = "2025-01-01T00:00:00Z"
SUFFIXES = (".json", ".log", ".txt")
PHASES = ("pull", "container_start", "import_torch", "cuda_init", "process_group_init", "first_batch", "first_step")
# A figure is a metric measured as a rate (higher is better); ratios, bytes and counts are not figures.
RATE_UNITS = frozenset({"GB/s", "MB/s", "GiB/s", "MiB/s", "TFLOP/s", "samples/s", "images/s", "tokens/s"})
# Above these no machine measures (HBM3e is ~8 TB/s, a B200 ~10 PFLOP/s sparse FP4): a report holding one is forged
# or corrupt, and is listed as invalid rather than compared (one such figure would move every median)
IMPOSSIBLE = {"GB/s": 1e5, "GiB/s": 1e5, "MB/s": 1e8, "MiB/s": 1e8, "TFLOP/s": 1e5, "samples/s": 1e9,
              "images/s": 1e9, "tokens/s": 1e12}
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
    slow_start: bool = False
    emulated: bool = False
    checks: tuple[str, ...] = ()    # the check names the report holds

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
    def ok(self) -> bool:
        return not self.why_not_ok          # one predicate: what the last line names is what fails the fleet

    @property
    def why_not_ok(self) -> str:
        """What keeps the fleet from passing, counted ('' when it passes): the last line a user reads."""
        failing = sum(1 for n in self.nodes if not n.passing)
        parts = [f"{count} {what}" for count, what in (
            (failing, "node(s) not passing"), (len(self.invalid), "file(s) that are no valid verify report"),
            (len(self.unreadable), "file(s) or folder(s) not readable"),
            (len(self.duplicates), "node(s) reported twice")) if count]
        return ", ".join(parts)


def drain_reason(code: str, summary: str) -> str:
    """The reason a Slurm drain (and the prolog helper) writes: `torchimages:<CODE> <summary>`, one line."""
    return one_line(f"torchimages:{code} {summary}".strip())


# ---------------------------------------------------------------------------------------------- reading

def _validators() -> dict[int, jsonschema.protocols.Validator]:
    found: dict[int, jsonschema.protocols.Validator] = {}
    for version, path in SCHEMAS.items():
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read verify's report schema {path} ({exc}); is the checkout complete?") from None
        found[version] = jsonschema.Draft202012Validator(schema)
    return found


def _why_invalid(doc: Any, validators: dict[int, jsonschema.protocols.Validator]) -> str | None:
    if not isinstance(doc, dict):
        return f"not a verify report (a JSON {type(doc).__name__}, not an object)"
    version = doc.get("schema_version")
    if version is None:
        return "not a verify report (no schema_version)"
    if isinstance(version, bool) or version not in validators:
        return f"schema_version {version!r} is none this checkout reads (1 or 2)"
    error = jsonschema.exceptions.best_match(validators[version].iter_errors(doc))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return f"does not validate against {SCHEMAS[version].name} at {where}: {error.message[:200]}"


def _blocks(text: str) -> Iterator[str]:
    """The reports a pod printed between the BEGIN/END VERIFY REPORT lines (`kubectl logs` saved to a file)."""
    lines: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(REPORT_BEGIN):
            lines = []
        elif line.startswith(REPORT_END) and lines is not None:
            yield "\n".join(lines)
            lines = None
        elif lines is not None:
            lines.append(line)


def _link_problem(path: Path, root: str, rel: str) -> str | None:
    """Why a symbolic link under DIR is listed rather than followed; None when what it points at lies inside DIR
    (read there, once) or is no report (a link to a file of another kind)."""
    if not os.path.exists(path):
        return "a symbolic link that resolves to nothing (dangling, or a loop): not read"
    target = os.path.realpath(path)
    if os.path.commonpath([root, target]) == root:
        return None
    if os.path.isdir(target) or Path(rel).suffix in SUFFIXES:
        return (f"a symbolic link out of DIR (to {target}): not followed; give DIR=<that folder>, or copy the "
                "reports in")
    return None


def _listing(top: Path, budget: int) -> list[os.DirEntry[str]]:
    """At most `budget` + 1 entries of one folder, by name (a folder of millions is not read whole)."""
    entries: list[os.DirEntry[str]] = []
    with os.scandir(top) as it:
        for entry in it:
            entries.append(entry)
            if len(entries) > budget:
                break
    return sorted(entries, key=lambda e: e.name)


def walk(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every .json, .log and .txt name under `folder` (hidden names left out), and (name, why) for each folder,
    link or name the bounded walk could not read. No symbolic link is followed (see _link_problem)."""
    root = os.path.realpath(folder)
    found: list[Path] = []
    unreadable: list[tuple[str, str]] = []
    pending, walked = [(folder, 0)], 0
    while pending:
        top, depth = pending.pop()
        where = top.relative_to(folder).as_posix()
        try:
            entries = _listing(top, MAX_ENTRIES - walked)
        except OSError as exc:
            unreadable.append((f"{where}/", f"the folder cannot be read ({exc.strerror or exc})"))
            continue
        walked += len(entries)
        if walked > MAX_ENTRIES:
            unreadable.append((f"{where}/", f"more than {MAX_ENTRIES:,} names under DIR: the rest not read"))
            break
        for entry in entries:
            rel = f"{where}/{entry.name}" if where != "." else entry.name
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    why = _link_problem(Path(entry.path), root, rel)
                    unreadable += [(rel, why)] if why else []
                elif entry.is_dir(follow_symlinks=False):
                    if depth + 1 > MAX_DEPTH:
                        unreadable.append((f"{rel}/", f"deeper than {MAX_DEPTH} folders below DIR: not read"))
                    else:
                        pending.append((Path(entry.path), depth + 1))
                elif Path(entry.name).suffix in SUFFIXES:
                    found.append(Path(entry.path))
            except OSError as exc:
                unreadable.append((rel, f"cannot be read ({exc.strerror or exc})"))
    return sorted(found), unreadable


def read_reports(folder: Path, unreadable: list[tuple[str, str]] | None = None, skew_s: float = CLOCK_SKEW_S
                 ) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]:
    """(name, report) for every valid report under `folder`, and (name, why) for every invalid one; what could not
    be read at all is added to `unreadable` (or counted invalid when none is given)."""
    validators = _validators()
    valid: list[tuple[str, dict[str, Any]]] = []
    invalid: list[tuple[str, str]] = []
    paths, cannot = walk(folder)
    lost = invalid if unreadable is None else unreadable
    lost += cannot
    for path in paths:
        name = path.relative_to(folder).as_posix()
        try:
            text = read_bounded(path, MAX_BYTES, "verify report").decode("utf-8")
        except UnicodeDecodeError:
            invalid.append((name, "cannot read it (not UTF-8 text)"))
            continue
        except TooLarge as exc:
            invalid.append((name, str(exc.strerror)))
            continue
        except OSError as exc:
            lost.append((name, f"cannot read it ({exc.strerror or exc})"))
            continue
        if path.suffix != ".json":          # a saved log: only the report blocks in it count
            for n, block in enumerate(_blocks(text), 1):
                _take(f"{name}#{n}", block, validators, valid, invalid, skew_s=skew_s)
            continue
        _take(name, text, validators, valid, invalid, ours=name == FLEET_JSON, skew_s=skew_s)
    return valid, invalid


def is_fleet_report(doc: Any) -> bool:
    """The shape write_fleet writes (a verify report carrying a `kind` field is no fleet report)."""
    return isinstance(doc, dict) and doc.get("kind") == FLEET_KIND and "schema_version" not in doc \
        and "checks" not in doc and isinstance(doc.get("nodes"), list)


def _take(name: str, text: str, validators: dict[int, jsonschema.protocols.Validator],
          valid: list[tuple[str, dict[str, Any]]], invalid: list[tuple[str, str]], ours: bool = False,
          skew_s: float = CLOCK_SKEW_S) -> None:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        invalid.append((name, f"not JSON ({one_line(exc)[:120]})"))
        return
    except RecursionError:
        invalid.append((name, "not JSON (nested too deeply)"))
        return
    if ours and is_fleet_report(doc):
        return                              # the fleet report written earlier, DIR/fleet.json: not a node's
    why = _why_invalid(doc, validators) or _impossible(doc) or _foreign_code(doc) or _contradicts(doc) \
        or _created_problem(doc, skew_s) or _not_a_node_now(doc)
    if why:
        invalid.append((name, why))
    else:
        valid.append((name, doc))


def _impossible(doc: dict[str, Any]) -> str | None:
    """The first rate no machine reaches (IMPOSSIBLE) or no measurement gives (below 0), said with its value; None
    when every figure is possible. A refused figure makes the whole report invalid: never dropped in silence."""
    for check in doc.get("checks") or []:
        metrics = check.get("metrics") if isinstance(check, dict) else None
        for metric, m in (metrics.items() if isinstance(metrics, dict) else ()):
            value = m.get("value") if isinstance(m, dict) else None
            limit = IMPOSSIBLE.get(str(m.get("unit"))) if isinstance(m, dict) else None
            if isinstance(value, float) and not math.isfinite(value):      # verify judges no figure that is not
                return f"{check.get('name')}.{metric} = {value} is not a finite number: a forged or corrupt report"
            if limit is None or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            if value > limit or value != value:
                return (f"{check.get('name')}.{metric} = {value:g} {m.get('unit')} is impossible (above {limit:g}): "
                        f"a forged or corrupt report, not compared")
            if value < 0:
                return (f"{check.get('name')}.{metric} = {value:g} {m.get('unit')} is negative: no rate is; a forged "
                        f"or corrupt report, not compared")
    return None


# a passing (or warning) check whose own figures say it cannot pass: (check, metric) -> the test a value fails
CANNOT_PASS: dict[tuple[str, str], tuple[Callable[[float], bool], str]] = {("nccl", "wrong"): (lambda v: v > 0, "wrong elements in an all-reduce fail it"),
               ("nccl", "busbw_ratio"): (lambda v: v > 3.0, "over 3x its GPU's baseline is no measurement"),
               ("nccl", "busbw_max"): (lambda v: v > BUSBW_MAX_GBPS, "above any link (NVLink5: 900 GB/s per GPU)"),
               ("gpu", "nvml_devices"): (lambda v: v != v or v < 1, "a gpu check passes only on the GPUs NVML lists"),
               ("gpu", "torch_devices"): (lambda v: v != v or v < 1, "a gpu check passes only on the GPUs torch sees")}


def _contradicts(doc: dict[str, Any]) -> str | None:
    """Why the report cannot be true, or None: a check held twice (verify writes one result per check), a pass or
    a warning that carries a code (verify gives one only to a verdict it did not pass), or one whose own figure
    fails it (CANNOT_PASS). A pass never stands on it: the report is listed as invalid, with why."""
    checks = [c for c in doc.get("checks") or [] if isinstance(c, dict)]
    names = [c.get("name") for c in checks]
    if twice := next((n for n in names if names.count(n) > 1), None):
        return f"holds the {one_line(str(twice))[:40]} check {names.count(twice)} times: verify writes one result per check"
    for c in (c for c in checks if c.get("status") in PASSING):
        if c.get("status") == "pass" and c.get("code"):
            return f"{c.get('name')} passes with code {one_line(str(c['code']))[:40]}: verify codes only what it does not pass"
        raw = c.get("metrics")
        metrics: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for (check, metric), (fails, why) in CANNOT_PASS.items():
            m = metrics.get(metric) if c.get("name") == check else None
            value = m.get("value") if isinstance(m, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and fails(value):
                return f"{check} {c.get('status')}es with {metric} {value:g}: {why}; a forged or corrupt report"
    return None


def _foreign_code(doc: dict[str, Any]) -> str | None:
    """Why a check's code is none verify writes, or None: verify codes every result it does not pass, and only with
    a key of its catalog (verify/codes.py, copied as VERIFY_CODES). A code outside it (BANANA) or a failure without
    one is a report no verify wrote: not assessed, and never a drain line (Slurm's drain reason must be ours)."""
    for c in (c for c in doc.get("checks") or [] if isinstance(c, dict)):
        code = c.get("code")
        if code is not None and not (isinstance(code, str) and code in VERIFY_CODES):
            return (f"its {one_line(str(c.get('name')))[:40]} check carries code {one_line(repr(code))[:60]}, which "
                    f"is no code of verify's (verify/codes.py): a report no verify wrote; not assessed, no drain")
        if code is None and c.get("status") == "fail":
            return (f"its {one_line(str(c.get('name')))[:40]} check fails with no code: verify codes every failure; a "
                    f"report no verify wrote; not assessed, no drain")
    return None


def _created_problem(doc: dict[str, Any], skew_s: float, now: float | None = None) -> str | None:
    """Why the report's `created` is no evidence of when it ran, or None: a time no calendar has (2026-02-30, hour
    24: the schema's pattern holds it, no clock writes it), or one more than `skew_s` seconds from now (a wrong clock,
    or a forged date; CLOCK_SKEW, the tolerance make report and make gate apply to signed times). Not assessed."""
    raw = doc.get("created")
    when = parse_time(raw)
    if when is None:
        return (f"created {one_line(repr(raw))[:40]} is no time a clock writes (no such date or hour): not evidence "
                f"of when it ran; not assessed (check that node's clock, or the file)")
    ahead = when.timestamp() - (time.time() if now is None else now)
    if ahead > skew_s:
        return (f"created {shown(ahead)} in the future ({one_line(str(raw))[:40]}), beyond the clock "
                f"tolerance CLOCK_SKEW={shown(skew_s)}: not evidence; not assessed (check that node's clock)")
    return None


def _not_a_node_now(doc: dict[str, Any]) -> str | None:
    """Why the report is no evidence of a node of this job, or None: a replay of recorded facts (verify --from-facts
    judged a record, not the node now), a `created` before any verify (a clock never set), a node name that is no one
    host name (the name a drain line and the metrics' file would carry)."""
    replay = doc.get("replay")
    if replay:
        facts = replay.get("facts_dir") if isinstance(replay, dict) else None
        return (f"a replay of recorded facts ({one_line(str(facts))[:80]}: verify --from-facts): it judged a record, "
                "not a node of this job now; not counted")
    when, earliest = parse_time(doc.get("created")), parse_time(EARLIEST_CREATED)
    if when and earliest and when < earliest:
        return (f"created {one_line(str(doc.get('created')))[:40]}, before any verify report: that node's clock was "
                "never set (check it); not evidence of when it ran")
    name = _named(doc)
    if name is not None and not NODE_NAME.fullmatch(name):
        return (f"names its node {one_line(repr(name))[:80]}, which is no one host name (a hostlist, a list, a "
                "newline, a space or a path): a forged or corrupt report, not counted")
    return None


# ---------------------------------------------------------------------------------------------- one node

def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _named(doc: dict[str, Any]) -> str | None:
    """The node the report names itself: the scheduler's node, else the host name (None: it names none)."""
    env: dict[str, Any] = doc["environment"] if isinstance(doc.get("environment"), dict) else {}
    scheduler: dict[str, Any] = env["scheduler"] if isinstance(env.get("scheduler"), dict) else {}
    return _text(scheduler.get("node")) or _text(env.get("hostname"))


def _node_name(doc: dict[str, Any], name: str) -> str:
    return _named(doc) or Path(name.split("#")[0]).stem


def _model(doc: dict[str, Any]) -> tuple[str, dict[int, str]]:
    """The node's GPU model (NVML names from the gpu check, else the environment's), and per torch device index
    the model where devices differ; "cpu" without a GPU."""
    names: dict[int, str] = {}
    gpu = next((c for c in doc["checks"] if c.get("name") == "gpu"), None)
    data = gpu.get("data") if gpu and isinstance(gpu.get("data"), dict) else {}
    devices = [d for d in data.get("devices") or [] if isinstance(d, dict) and _text(d.get("name"))]
    by_nvml = {d.get("index"): str(d["name"]).strip() for d in devices}
    for m in data.get("torch_to_nvml") or []:
        if isinstance(m, dict) and isinstance(m.get("torch_index"), int) and m.get("nvml_index") in by_nvml:
            names[m["torch_index"]] = by_nvml[m["nvml_index"]]
    models = sorted(set(by_nvml.values()))
    if not models:      # a report without the gpu check's devices: the environment's GPU names, where it has them
        env = doc.get("environment") or {}
        listed = env.get("gpus") or env.get("gpu_names")
        named = [g.get("name") if isinstance(g, dict) else g for g in (listed if isinstance(listed, list) else [])]
        models = sorted({text for text in map(_text, named) if text})
    if not models:
        return "cpu", names
    return (models[0] if len(models) == 1 else " + ".join(models)), names


def _verdict(doc: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The node's verdict and the check that decides it (the first failure, else the first warning)."""
    checks = [c for c in doc["checks"] if isinstance(c, dict)]
    worst = next((c for c in checks if c.get("status") == "fail"), None) or \
        next((c for c in checks if c.get("status") == "warn"), None)
    if doc.get("interrupted") or doc.get("status") == "interrupted":
        cut = next((c for c in checks if c.get("code") == "INTERRUPTED"), None)
        return "interrupted", cut or worst
    if not checks:
        return "empty", None
    status = doc.get("status")
    if worst is not None and worst.get("status") == "fail":
        return "fail", worst                # whatever the status field says
    if status in ("pass", "warn") and not any(c.get("status") in ("pass", "warn") for c in checks):
        return "skip", None                 # nothing was judged: never a pass
    return (status if isinstance(status, str) else "fail"), worst


def _figures(doc: dict[str, Any], model: str, per_device: dict[int, str]) -> list[Figure]:
    found = []
    for check in doc["checks"]:
        for metric, m in (check.get("metrics") or {}).items():
            unit, value = m.get("unit"), m.get("value")
            if unit not in RATE_UNITS or isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                continue
            match = DEVICE.match(metric)
            if (check["name"], match["family"] if match else metric) in NOT_FIGURES:
                continue
            device = int(match["index"]) if match else None
            found.append(Figure(check["name"], metric, match["family"] if match else metric, device, float(value),
                                unit, per_device.get(device, model) if device is not None else model))
    return found


def _phases(doc: dict[str, Any]) -> dict[str, float | None]:
    raw = (doc.get("environment") or {}).get("phases")
    if not isinstance(raw, dict):
        return {}
    ordered = [p for p in PHASES if p in raw] + sorted(k for k in raw if k not in PHASES and isinstance(k, str))
    phases: dict[str, float | None] = {}
    for key in ordered:
        value = raw[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        phases[key] = round(float(value), 3) if ok else None
    return phases


def read_node(name: str, doc: dict[str, Any]) -> Node:
    verdict, decisive = _verdict(doc)
    model, per_device = _model(doc)
    env = doc.get("environment") or {}
    summary = "" if decisive is None else str(decisive.get("summary") or "")
    if verdict == "empty":
        summary = "no check ran: the report holds no result"
    elif verdict == "skip" and decisive is None:
        summary = "nothing was judged (every check skipped)"
    elif verdict == "interrupted" and not summary:
        summary = f"interrupted by {doc.get('interrupted') or 'a signal'}"
    node = Node(report=name, node=_node_name(doc, name), verdict=verdict,
                code=decisive.get("code") if decisive else None, owner=decisive.get("owner") if decisive else None,
                summary=one_line(summary), model=model, replay=bool(doc.get("replay")),
                emulated=env.get("emulated") is True, phases=_phases(doc),
                checks=tuple(str(c.get("name")) for c in doc["checks"] if isinstance(c, dict)))
    if not node.emulated:       # figures under CPU emulation measure the emulator: reported by verify, not compared
        node.figures = _figures(doc, model, per_device)
    for check in doc["checks"]:
        # a measurement that went wrong (MEASUREMENT_INVALID is verify's own trouble, owner host by default) is
        # not assessed, as the prolog has it: the tool's trouble never lists a node to drain
        if check.get("status") == "fail" and check.get("owner") == "host" and check.get("code") not in UNJUDGED_CODES:
            node.drain.append(drain_reason(str(check.get("code") or "HOST_FAULT"), str(check.get("summary") or "")))
    return node


# ---------------------------------------------------------------------------------------------- the fleet

def _compare(nodes: list[Node], notes: list[str]) -> None:
    groups: dict[tuple[str, str, str], list[tuple[Node, Figure]]] = {}
    for n in nodes:
        for f in n.figures:
            groups.setdefault((f.model, f.check, f.family), []).append((n, f))
    few: dict[tuple[str, int], list[str]] = {}
    for (model, check, family), members in groups.items():
        healthy = [f.value for n, f in members if n.passing]     # a failed or cut-off run is no reference
        count = len({n.node for n, _ in members if n.passing})
        if count < MIN_NODES:
            few.setdefault((model, count), []).append(f"{check}.{family}")
            continue
        median = statistics.median(healthy)
        for _, f in members:
            f.median, f.peers = median, count
            if median > 0:
                f.ratio = round(f.value / median, 3)
                f.outlier = f.value < OUTLIER_BELOW * median
    for (model, count), keys in sorted(few.items()):
        notes.append(f"{model}: {', '.join(sorted(keys))} from {count} passing node(s), fewer than {MIN_NODES}: "
                     f"shown, not compared with a median")


def _slow_starts(nodes: list[Node], notes: list[str]) -> float | None:
    timed = [n for n in nodes if n.phases_total is not None]
    if not timed:
        return None
    if len({n.node for n in timed}) < MIN_NODES:
        notes.append(f"time to first step from {len({n.node for n in timed})} node(s), fewer than {MIN_NODES}: "
                     f"shown, not compared with a median")
        return None
    median = statistics.median(n.phases_total for n in timed if n.phases_total is not None)
    for n in timed:
        n.slow_start = n.phases_total is not None and median > 0 and n.phases_total > SLOW_START * median
    return median


def fleet(folder: Path, skew_s: float = CLOCK_SKEW_S) -> Fleet:
    """Read and compare every report under `folder`; UserError (exit 2) when it holds none and nothing unreadable."""
    if not folder.is_dir():
        raise UserError(f"DIR={folder} is not a folder: give the folder the job wrote its verify reports into")
    unreadable: list[tuple[str, str]] = []
    valid, invalid = read_reports(folder, unreadable, skew_s)
    if not valid and not invalid and not unreadable:
        raise UserError(f"no verify report under {folder}: give the folder the job wrote its reports into "
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
    emulated = [n.node for n in nodes if n.emulated]
    if emulated:
        notes.append(f"{', '.join(emulated)}: ran under CPU emulation: figures not compared")
    _compare(nodes, notes)
    median = _slow_starts(nodes, notes)
    return Fleet(folder, nodes, invalid, notes, median, duplicates(nodes), unreadable=unreadable)


def duplicates(nodes: list[Node]) -> dict[str, list[str]]:
    """node → its reports that hold a check another of its reports holds too: two hosts answering to one name, or
    two runs in one folder (a node's local report beside the collective's from rank 0 is no duplicate)."""
    found: dict[str, list[str]] = {}
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            if a.node == b.node and set(a.checks) & set(b.checks):
                listed = found.setdefault(a.node, [])
                listed += [r for r in (a.report, b.report) if r not in listed]
    return found


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
                     + f"  {n.report}{' (replay)' if n.replay else ''}")
    passing = sum(n.passing for n in nodes)
    lines.append(f"\n{len(nodes)} report(s) from {len({n.node for n in nodes})} node(s): {passing} passing, "
                 f"{len(nodes) - passing} not passing" + (f", {len(report.invalid)} invalid" if report.invalid else "")
                 + (f", {len(report.unreadable)} unreadable" if report.unreadable else ""))
    failing = [n for n in nodes if not n.passing and n.summary]
    if failing:
        lines.append("not passing:")
        lines += [f"  {n.node} ({n.report}): {n.verdict}: {n.summary[:200]}" for n in failing]
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
        lines += [f"  {node}: {len(names)} reports of the same checks ({', '.join(names)}): two hosts with one name, "
                  f"or two runs in one folder" for node, names in report.duplicates.items()]
    if report.invalid:
        lines.append("invalid reports (not counted):")
        lines += [f"  {name}: {why}" for name, why in report.invalid]
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
            earlier = json.loads(path.read_text(encoding="utf-8")) if path.is_file() and not path.is_symlink() else None
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            earlier = None
        if not is_fleet_report(earlier):
            raise UserError(f"{path} exists and is not a fleet report (a node's report of that name?): not "
                            f"overwritten; rename it and run make fleet-report again")
    atomic_write(path, json.dumps(fleet_json(report), indent=1) + "\n")
    return path
