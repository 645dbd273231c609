"""The one door to every judge: facts are checked for declared keys (facts schema 3, where the check names its
facts' type), shape and plausible figures before a judge sees them.

Live (`source` None): an implausible figure is MEASUREMENT_INVALID (host). Replay (`source` names the facts
file): FACTS_INVALID (job), naming the file and the field. A judge that raises on replayed facts is
FACTS_INVALID too: the record, not the image, is what broke.

An implausible figure is unknown, not a verdict on the rest: the facts are judged again with it (and every other
implausible single value) set to null, and a fault the rest shows stands, with the figures named in its details
(a GPU whose temperature sensor reads 1,000 C still has its uncorrectable ECC errors judged). A pass or a warning
never stands on such facts: the check stays MEASUREMENT_INVALID / FACTS_INVALID. Facts that contradict each other,
or a record of the wrong shape, are never judged.
"""
from __future__ import annotations

from typing import Any

from . import factschema, figures
from .baselines import BaselinesError
from .contract import Check
from .options import Options
from .result import FAIL, CheckResult

UNJUDGED = frozenset({"MEASUREMENT_INVALID", "FACTS_INVALID", "FACTS_INCOMPLETE", "INTERRUPTED", "CHECK_CRASHED"})


def invalid(name: str, found: list[str], source: str | None) -> CheckResult:
    where = f"{source}: " if source else ""
    code = "FACTS_INVALID" if source else "MEASUREMENT_INVALID"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return CheckResult(name, FAIL, f"{where}{found[0]}{more}", details=found[:20], code=code)


def judge(check: Check, facts: Any, options: Options, source: str | None = None) -> CheckResult:
    name = check.name
    found = factschema.unknown_keys(facts, check.facts_type) if check.facts_type else []
    if found:
        return invalid(name, found, source)
    found = figures.problems(facts, check.figures)
    if found:
        return _fault_in_the_rest(check, facts, options, found, source) or invalid(name, found, source)
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


def _fault_in_the_rest(check: Check, facts: dict[str, Any], options: Options, found: list[str],
                       source: str | None) -> CheckResult | None:
    """The fault the facts show once their implausible single values are unknown (null), or None: none, or facts
    whose problems are more than such values (a contradiction, a shape, a required field)."""
    rest, nulled = figures.without_implausible(facts, check.figures)
    if not nulled or figures.problems(rest, check.figures):
        return None
    try:
        result = check.judge(rest, options)
    except Exception:  # noqa: BLE001 - facts the judge cannot read without those values: invalid, as they were
        return None
    if result.status != FAIL or result.code in UNJUDGED or not result.owner:
        return None
    where = f"{source}: " if source else ""
    result.details.append(f"{where}judged without {len(nulled)} implausible figure(s), left unknown: "
                          + "; ".join(found[:5]))
    return result
