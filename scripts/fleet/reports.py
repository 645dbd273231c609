"""Which files under DIR are verify reports to believe: read bounded, validated against verify's schema, and refused
where they cannot be true (an impossible figure, a code verify never writes, a contradiction, a time no clock writes,
a replay).
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import jsonschema

from ..durations import parse_time, shown
from ..errors import UserError, one_line
from ..fsutil import TooLarge, read_bounded
from . import jsonrecord
from .cluster import REPORT_BEGIN, REPORT_END
from .model import (
    CLOCK_SKEW_S,
    EARLIEST_CREATED,
    FLEET_JSON,
    FLEET_KIND,
    ISOLATE_JSON,
    ISOLATE_KIND,
    MAX_BYTES,
    MAX_LOG_VALUES,
    MAX_VALUES,
    SCHEMAS,
)
from .nodes import _named, _node_name
from .plausible import NODE_NAME, report_problem
from .walk import _blocks, walk

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
    if type(version) is not int or version not in validators:
        # an int alone: a list or an object is no key of a dict (TypeError: the whole fleet report stopped on one
        # file, hunt103), a bool or 2.0 no version verify writes
        return f"schema_version {one_line(repr(version))[:40]} is none this checkout reads (1 or 2)"
    error = jsonschema.exceptions.best_match(validators[version].iter_errors(doc))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return f"does not validate against {SCHEMAS[version].name} at {where}: {error.message[:200]}"


def read_reports(folder: Path, unreadable: list[tuple[str, str]] | None = None, skew_s: float = CLOCK_SKEW_S,
                 max_age_s: float | None = None, no_report: list[str] | None = None,
                 ) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]:
    """(name, report) for every valid report under `folder`, and (name, why) for every invalid one; what could not
    be read at all is added to `unreadable` (or counted invalid when none is given); the logs with no report block
    in them, listed invalid, are named in `no_report` too."""
    validators = _validators()
    valid: list[tuple[str, dict[str, Any]]] = []
    invalid: list[tuple[str, str]] = []
    paths, cannot = walk(folder)
    read_too = set(paths)
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
            blocks = list(_blocks(text))
            if not blocks and path.with_suffix(".json") not in read_too:
                # a pod that died before printing its report, or a step whose report was never written: an input not
                # read is listed, never skipped (isolate's pair log beside its own .json is that report's output)
                invalid.append((name, f"no verify report in it (no {REPORT_BEGIN} line): the pod or step stopped "
                                "before printing one, or this is no verify log; not assessed (rerun verify there)"))
                if no_report is not None:
                    no_report.append(name)
            left = [MAX_LOG_VALUES]         # the values the log's blocks may hold together, spent block by block
            for n, block in enumerate(blocks, 1):
                if block is None:
                    invalid.append((f"{name}#{n}", f"a report block with no {REPORT_END} line: cut while printed "
                                    "(the pod stopped, or the log was truncated); rerun verify on that node"))
                else:
                    _take(f"{name}#{n}", block, validators, valid, invalid, skew_s=skew_s, max_age_s=max_age_s,
                          left=left)
            continue
        _take(name, text, validators, valid, invalid, ours=path.name == FLEET_JSON, skew_s=skew_s,
              isolate=path.name == ISOLATE_JSON, max_age_s=max_age_s)
    return valid, invalid


def _values(doc: Any, most: int = MAX_VALUES) -> int:
    """The JSON values in `doc` (itself, and every member and element, however deep), counted to just past `most`:
    a bound on the work the schema's validator and the report rules do on one file, which its bytes alone are not
    (a byte or two per value)."""
    count, pending = 0, [doc]
    while pending and count <= most:
        value = pending.pop()
        count += 1
        if isinstance(value, dict):
            count += len(value)         # its keys
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return count + len(pending)


def is_fleet_report(doc: Any) -> bool:
    """The shape write_fleet writes (a verify report carrying a `kind` field is no fleet report)."""
    return isinstance(doc, dict) and doc.get("kind") == FLEET_KIND and "schema_version" not in doc \
        and "checks" not in doc and isinstance(doc.get("nodes"), list)


def is_isolate_answer(doc: Any) -> bool:
    """The shape make isolate writes as its answer (isolate_run.decision_json): a verify report is never one."""
    return isinstance(doc, dict) and doc.get("kind") == ISOLATE_KIND and "schema_version" not in doc \
        and "checks" not in doc and isinstance(doc.get("pairs"), list)


def _take(name: str, text: str, validators: dict[int, jsonschema.protocols.Validator],
          valid: list[tuple[str, dict[str, Any]]], invalid: list[tuple[str, str]], ours: bool = False,
          skew_s: float = CLOCK_SKEW_S, isolate: bool = False, max_age_s: float | None = None,
          left: list[int] | None = None) -> None:
    try:
        doc = jsonrecord.loads(text)
    except ValueError as exc:
        invalid.append((name, f"not JSON ({one_line(exc)[:120]})"))
        return
    except RecursionError:
        invalid.append((name, "not JSON (nested too deeply)"))
        return
    if (values := _values(doc)) > MAX_VALUES:
        invalid.append((name, f"holds more than {MAX_VALUES:,} JSON values (an 8-GPU node's report holds about 1,700): "
                              "no report verify writes; not read further, not assessed"))
        return
    if left is not None:                    # a block of a saved log: the log's blocks share one bound
        if values > left[0]:
            left[0] = 0
            invalid.append((name, f"its log's report blocks hold more than {MAX_LOG_VALUES:,} JSON values together "
                                  "(an 8-GPU node's report holds about 1,700): not read further, not assessed (save "
                                  "each node's log, or its verify --json, on its own)"))
            return
        left[0] -= values
    if ours and is_fleet_report(doc):
        return                              # the fleet report written earlier, DIR/fleet.json: not a node's
    if isolate and is_isolate_answer(doc):
        return                              # make isolate's answer beside its pairs' reports: not a node's
    why = _why_invalid(doc, validators) or _forged(doc) or _phases_problem(doc) \
        or _created_problem(doc, skew_s, max_age_s=max_age_s) or _not_a_node_now(doc, name)
    if why:
        invalid.append((name, why))
    else:
        valid.append((name, doc))


def _forged(doc: dict[str, Any]) -> str | None:
    """Why the report is none verify writes (plausible.report_problem: a code outside its catalog, a failure or a
    warning without one, a pass with one, a check held twice, a figure its own pass contradicts), or None. Listed as
    invalid: not assessed, and never a drain line (Slurm's drain reason must be ours)."""
    why = report_problem(doc)
    return f"{why}: a report no verify wrote; not assessed, no drain" if why else None


# the longest phase of one verify run believed (verify/checks/train/verdict.py SECONDS, its facts' ceiling on a time;
# the launcher's pull and start verify/scheduler.py takes only below a day)
PHASE_MOST_S = 1e6


def _phases_problem(doc: dict[str, Any]) -> str | None:
    """Why the report's time to first step (environment.phases: each phase's seconds, null where not measured) is none
    verify writes, or None. verify writes an object of times, each 0 or more (verify/cli.py _phases, scheduler.py):
    a phase of -5 s, NaN, "3" or a list in its place was dropped as "not measured" without a word, and a negative one
    hid a slow start from the fleet's median. Not assessed, never a drain (hunt99; issue 36 class 8)."""
    env = doc.get("environment")
    raw = env.get("phases") if isinstance(env, dict) else None
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return (f"its environment.phases is a JSON {type(raw).__name__}, where verify writes an object of times: "
                "a report no verify wrote; not assessed, no drain")
    for key, value in raw.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 <= value <= PHASE_MOST_S:
            return (f"its time to first step's phase {one_line(str(key))[:40]!r} = {one_line(repr(value))[:20]} is no "
                    f"time verify writes (seconds, 0 to {PHASE_MOST_S:g}): a report no verify wrote; not assessed, "
                    "no drain")
    return None


def _created_problem(doc: dict[str, Any], skew_s: float, now: float | None = None,
                     max_age_s: float | None = None) -> str | None:
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
    if max_age_s is not None and -ahead > max_age_s:
        # MAX_AGE, as make report and make gate read it: a report of an earlier job left in a reused folder is no
        # evidence of the node now (it was ignored by make fleet-report without a word)
        return (f"created {shown(-ahead)} ago ({one_line(str(raw))[:40]}), older than MAX_AGE={shown(max_age_s)}: "
                "stale evidence, not of the node now; not assessed (rerun verify on that node)")
    return None


def _not_a_node_now(doc: dict[str, Any], file: str = "") -> str | None:
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
    if name is None and file and not NODE_NAME.fullmatch(stem := _node_name(doc, file)):
        # a report that names no node is named after its file: `n[1-4],x y.json` listed the drain line of a
        # hostlist (scontrol drains n1-n4 and x on it) and a newline in a file name printed a line of its own (hunt99)
        return (f"names no node, and its file's name {one_line(repr(stem))[:80]} is no one host name (a hostlist, a "
                "list, a newline, a space): not counted (rename it to the node's name, or rerun verify there)")
    return None
