"""`--from-facts DIR`: read a facts folder (verify/FACTS.md), check its shape and version, judge it again.

Every record is validated before anything is judged: a wrong shape is one line (ReplayError, exit 2), an
implausible figure or a key facts schema 3 does not declare is the check's FACTS_INVALID (verify.judging).
Schema-1 records (no `facts_schema`) and schema-2 records are read as schema 3 by the one rule of
verify/factschema.py (FACTS.md, "Older records").
"""
from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import factschema, judging, strictjson
from .checks import CHECKS
from .codes import CODES, OWNERS
from .options import Options
from .result import PASS, SKIP, STATUSES, CheckResult
from .shared import clockskew

FACTS_SCHEMA = factschema.SCHEMA
KNOWN_SCHEMAS = factschema.KNOWN
MAX_RECORD_BYTES = 64 << 20
OPTION_CEILING = {"expect_gpus": 4096, "nccl_processes": 1024, "sdc_repeats": 1000, "matmul_n": 1 << 16,
                  "nccl_timeout_s": 86400, "arrow_min_ratio": 100}


class ReplayError(Exception):
    """The facts folder cannot be replayed: one line, exit 2."""


def clock_skew(env: dict[str, str] | None = None) -> float:
    """TORCHIMAGES_CLOCK_SKEW (verify/shared/clockskew.py: seconds, or with a unit; default 300)."""
    try:
        return clockskew.allowance(env)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None


def _earliest(text: str) -> datetime | None:
    """The first moment a recorded time can mean: an ISO 8601 time, or a translated record's year or month
    (`2025`, `2022-05`); None for anything else (a free-form date is informational, never judged)."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        # a text that starts with a year means no moment before that year's start, whatever follows (a month 13, a
        # day that is none); a year past 9999 (`99999-01-01`) is past any clock
        match = re.match(r"\+?(\d{4,})(?:-(\d{2}))?", text.strip())
        if not match:
            return None
        if int(match[1]) > 9999:
            return datetime.max.replace(tzinfo=timezone.utc)
        month = int(match[2]) if match[2] and 1 <= int(match[2]) <= 12 else 1
        when = datetime(max(1, int(match[1])), month, 1)
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def future_recorded(path: Path, recorded: Any, skew_s: float, now: float | None = None) -> None:
    """Facts recorded beyond the clock tolerance in the future are no evidence: refused in one line."""
    when = _earliest(recorded) if isinstance(recorded, str) else None
    if when is None:
        return
    ahead = when.timestamp() - (time.time() if now is None else now)
    if ahead > skew_s:
        raise ReplayError(f"{path}: recorded {recorded[:40]} is {ahead / 3600:.1f} h in the future, beyond the clock "
                          f"tolerance of {skew_s:g} s ({clockskew.ENV}): facts from the future are no evidence; "
                          "check the recording host's clock")


@dataclass
class Record:
    name: str
    path: Path
    facts: dict[str, Any] | None
    result: dict[str, Any] | None
    schema: int = factschema.SCHEMA


@dataclass
class Folder:
    host: dict[str, Any]
    records: list[Record]
    unknown: list[str]              # checks the record lists that this verify does not have
    options: Options


def read_json(path: Path) -> Any:
    """A JSON file: UTF-8 (a BOM allowed), bounded in size, no NaN/Infinity, no duplicate keys."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise ReplayError(f"{path}: larger than {MAX_RECORD_BYTES >> 20} MiB, not a facts record")
    try:
        text = raw.decode("utf-8-sig")
        return strictjson.loads(text)
    except UnicodeDecodeError:
        raise ReplayError(f"{path}: not UTF-8 text; a facts record is JSON") from None
    except RecursionError:
        raise ReplayError(f"{path}: nested too deeply to be a facts record") from None
    except ValueError as exc:
        raise ReplayError(f"{path}: not valid JSON ({exc})") from None


def _schema(path: Path, doc: dict[str, Any]) -> int:
    version = doc.get("facts_schema", 1)
    if type(version) is not int or version not in KNOWN_SCHEMAS:
        raise ReplayError(f"{path}: facts_schema {version!r} is not one this verify reads "
                          f"({', '.join(map(str, KNOWN_SCHEMAS))}); replay it with the verify that recorded it")
    return int(version)


def _need(path: Path, cond: bool, why: str) -> None:
    if not cond:
        raise ReplayError(f"{path}: {why}")


def _check_result(path: Path, result: Any) -> None:
    _need(path, isinstance(result, dict), "`result` must be an object or null")
    _need(path, result.get("status") in STATUSES, f"result.status {result.get('status')!r} is not one of {', '.join(STATUSES)}")
    _need(path, isinstance(result.get("summary"), str), "result.summary must be a string")
    duration = result.get("duration_s", 0.0)
    _need(path, isinstance(duration, (int, float)) and not isinstance(duration, bool) and math.isfinite(duration)
          and 0 <= duration <= 1e7, f"result.duration_s {duration!r} is not a number of seconds (0 to 1e7)")
    for key, kind in (("details", list), ("metrics", dict), ("data", dict)):
        _need(path, isinstance(result.get(key, kind()), kind), f"result.{key} must be a {kind.__name__}")
    _need(path, all(isinstance(d, str) for d in result.get("details", [])), "result.details must be strings")
    for key, metric in result.get("metrics", {}).items():
        _need(path, isinstance(metric, dict) and set(metric) == {"value", "unit"} and isinstance(metric["unit"], str)
              and isinstance(metric["value"], (int, float)) and not isinstance(metric["value"], bool),
              f"result.metrics.{key} must be {{\"value\": number, \"unit\": string}}")
    for key in ("code", "owner", "remedy", "output"):
        _need(path, result.get(key) is None or isinstance(result[key], str), f"result.{key} must be a string or null")
    _need(path, result.get("code") is None or result["code"] in CODES, f"result.code {result.get('code')!r} is not a code "
          "this verify knows (verify/codes.py)")
    _need(path, result.get("owner") is None or result["owner"] in OWNERS,
          f"result.owner {result.get('owner')!r} is not one of {', '.join(OWNERS)}")


def _record(base: Path, name: str) -> Record:
    path = base / f"{name}.json"
    doc = read_json(path)
    _need(path, isinstance(doc, dict), f"a facts record is an object, not {type(doc).__name__}")
    schema = _schema(path, doc)
    extra = sorted(set(doc) - {"check", "facts_schema", "facts", "result"})
    _need(path, not extra, f"`{extra[0] if extra else ''}` is not a key of a facts record (check, facts_schema, facts, "
          "result): misspelt?")
    _need(path, doc.get("check", name) == name, f"records check {doc.get('check')!r}, not {name!r}")
    facts, result = doc.get("facts"), doc.get("result")
    _need(path, facts is None or isinstance(facts, dict), "`facts` must be an object or null")
    if result is not None:
        _check_result(path, result)
    return Record(name, path, facts, result, schema)


def _options(path: Path, recorded: Any, overrides: dict[str, Any]) -> Options:
    """The options the record was made with, then the flags given on this command line."""
    _need(path, recorded is None or isinstance(recorded, dict), "`options` must be an object")
    defaults = Options()
    values: dict[str, Any] = {}
    for f in fields(Options):
        if f.name in (recorded or {}):
            value, want = recorded[f.name], type(getattr(defaults, f.name))
            ok = (isinstance(value, bool) if want is bool else
                  isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
                  and (want is float or value == int(value)))
            _need(path, ok and (want is bool or value <= OPTION_CEILING.get(f.name, 1 << 50)),
                  f"options.{f.name} {value!r} is not a valid {want.__name__}")
            values[f.name] = want(value)
    values.update(overrides)
    options = Options(**{**{f.name: getattr(defaults, f.name) for f in fields(Options)}, **values})
    _need(path, options.nccl_min_bytes <= options.nccl_max_bytes and options.nccl_timeout_s > 0,
          "options: nccl_min_bytes above nccl_max_bytes, or nccl_timeout_s not positive")
    return options


_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "integer": (int,),
                                           "boolean": (bool,), "null": (type(None),)}


def _environment(path: Path, env: dict[str, Any]) -> None:
    """The recorded environment goes into the report: each field the report schema names must have its type."""
    schema = json.loads(Path(__file__).with_name("report.schema.json").read_text(encoding="utf-8"))
    for key, rule in schema["properties"]["environment"]["properties"].items():
        if key not in env:
            continue
        value = env[key]
        if "enum" in rule:
            ok = value in rule["enum"]
        else:
            kinds = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
            ok = any(isinstance(value, _JSON_TYPES[k]) and not (isinstance(value, bool) and k != "boolean")
                     for k in kinds)
        _need(path, ok, f"environment.{key} {value!r} is not what a report holds ({rule.get('type') or rule.get('enum')})")


def load(directory: str, only: list[str] | None, overrides: dict[str, Any]) -> Folder:
    base = Path(directory)
    hpath = base / "host.json"
    if hpath.exists() and not hpath.is_file():
        raise ReplayError(f"--from-facts {directory}: host.json is not a regular file (a folder, FIFO or device)")
    if not hpath.is_file():
        raise ReplayError(f"--from-facts {directory}: no host.json; record facts with `python -m verify --save-facts DIR`")
    host = read_json(hpath)
    _need(hpath, isinstance(host, dict), f"host.json is an object, not {type(host).__name__}")
    _schema(hpath, host)
    recorded = host.get("checks")
    _need(hpath, isinstance(recorded, list) and all(isinstance(n, str) for n in recorded),
          "`checks` must be a list of check names")
    names = only if only is not None else list(dict.fromkeys(recorded))
    known = [n for n in names if n in CHECKS]
    unknown = [n for n in names if n not in CHECKS]
    if not known:
        raise ReplayError(f"--from-facts {directory}: nothing to judge: the record lists "
                          f"{', '.join(names) if names else 'no checks'}; this verify judges {', '.join(CHECKS)}")
    odd = [n for n in known if (base / f"{n}.json").exists() and not (base / f"{n}.json").is_file()]
    if odd:
        raise ReplayError(f"--from-facts {directory}: {odd[0]}.json is not a regular file (a folder, FIFO or device)")
    missing = [n for n in known if not (base / f"{n}.json").is_file()]
    if missing:
        raise ReplayError(f"--from-facts {directory}: no facts for check {', '.join(missing)} "
                          f"(recorded: {', '.join(map(str, recorded)) or 'none'})")
    for key in ("hostname", "recorded"):
        _need(hpath, host.get(key) is None or isinstance(host[key], str), f"`{key}` must be a string or null")
    future_recorded(hpath, host.get("recorded"), clock_skew())
    for key in ("environment", "tool"):
        _need(hpath, host.get(key) is None or isinstance(host[key], dict), f"`{key}` must be an object or null")
    _environment(hpath, host.get("environment") or {})
    return Folder(host, [_record(base, n) for n in known], unknown, _options(hpath, host.get("options"), overrides))


def judge(record: Record, options: Options) -> CheckResult:
    """The record's facts judged today; without facts, its recorded verdict (said so); with neither, a failure."""
    if record.facts is not None:
        facts = factschema.upgrade(record.name, record.facts, record.schema)
        result = judging.judge(CHECKS[record.name], facts, options, source=str(record.path))
        result.details.append("replayed from recorded facts")
        result.duration_s = float((record.result or {}).get("duration_s") or 0.0)
        return result
    if record.result is not None and record.result.get("status") == PASS:
        return CheckResult(record.name, SKIP, f"the record holds a {record.result['status']} verdict but no facts to judge "
                           "again: a verdict stands only on figures", code="FACTS_INCOMPLETE",
                           details=[f"recorded: {record.result.get('summary', '')}"[:500]])
    if record.result is not None:
        result = CheckResult.from_dict({k: v for k, v in record.result.items()
                                        if k in CheckResult.__dataclass_fields__ and k != "name"} | {"name": record.name})
        result.details.append("recorded verdict kept: no facts to judge again")
        return result
    return judging.invalid(record.name, ["neither facts nor a result recorded"], str(record.path))


def unknown_result(name: str) -> CheckResult:
    return CheckResult(name, SKIP, f"the record has a check {name!r} this verify does not know: not judged",
                       remedy="Replay with the verify that recorded it.", code="FACTS_INVALID")
