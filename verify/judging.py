"""The one door to every judge: facts are checked for declared keys (facts schema 3, where the check names its
facts' type), shape and plausible figures before a judge sees them.

Live (`source` None): an implausible figure is MEASUREMENT_INVALID (host). Replay (`source` names the facts
file): FACTS_INVALID (job), naming the file and the field. A judge that raises on replayed facts is
FACTS_INVALID too: the record, not the image, is what broke.
"""
from __future__ import annotations

from typing import Any

from . import factschema, figures
from .baselines import BaselinesError
from .contract import Check
from .options import Options
from .result import FAIL, CheckResult


def invalid(name: str, found: list[str], source: str | None) -> CheckResult:
    where = f"{source}: " if source else ""
    code = "FACTS_INVALID" if source else "MEASUREMENT_INVALID"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return CheckResult(name, FAIL, f"{where}{found[0]}{more}", details=found[:20], code=code)


def judge(check: Check, facts: Any, options: Options, source: str | None = None) -> CheckResult:
    name = check.name
    found = factschema.unknown_keys(facts, check.facts_type) if check.facts_type else []
    found = found or figures.problems(facts, check.figures)
    if found:
        return invalid(name, found, source)
    if source is None:
        return check.judge(facts, options)
    try:
        result = check.judge(facts, options)
    except BaselinesError:
        raise                       # the baselines file, not the record: one line naming it (cli)
    except Exception as exc:  # noqa: BLE001 - a record the judge cannot read is the record's fault
        return invalid(name, [f"the judge cannot read these facts ({type(exc).__name__}: {exc})"], source)
    if result.code == "MEASUREMENT_INVALID":     # on replay, facts that contradict themselves are the record's
        return invalid(name, [result.summary], source)
    return result
