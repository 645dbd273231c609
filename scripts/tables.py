"""The one place that turns outcomes into the tables and lines a user reads."""
from __future__ import annotations

from pathlib import Path

from . import ROOT
from .builder.buildkit import BuildOutcome
from .plan.spec import ImageSpec
from .run_verify import VerifyOutcome


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def build_table(outcomes: list[BuildOutcome]) -> str:
    rows = [f"{'TAG':<46} {'RESULT':<7} {'TIME':>7} {'SIZE':>9}  IMAGE ID"]
    for o in outcomes:
        size = f"{o.size / 1e9:.2f} GB" if o.size else "-"
        seconds = f"{o.seconds:.1f}s" if o.seconds < 10 else f"{o.seconds:.0f}s"
        rows.append(f"{o.tag:<46} {'ok' if o.ok else 'FAILED':<7} {seconds:>7} {size:>9}  {o.image_id or '-'}")
    return "\n".join(rows)


def build_failure(outcome: BuildOutcome, stopping: bool) -> str:
    lines = [f"\n{outcome.tag}: build FAILED" + (f"; last lines of {outcome.log}:" if outcome.log else ":")]
    lines += ["   " + line for line in (outcome.error or "").splitlines()]
    if stopping:
        lines.append("stopping (KEEP_GOING=1 builds the rest after a failure)")
    return "\n".join(lines)


def verdict(o: VerifyOutcome) -> str:
    return ("NOT RUN" if o.problem else "TIMEOUT" if o.exit_code is None
            else "FAIL" if o.exit_code != 0 or o.mismatches else "pass")


def check_columns(outcomes: list[VerifyOutcome]) -> list[str]:
    """The check names, in the order the reports list them (the check list lives in verify/ only)."""
    names: dict[str, None] = {}
    for o in outcomes:
        names.update(dict.fromkeys(o.statuses))
    return list(names)


def verify_summary(outcomes: list[VerifyOutcome]) -> str:
    names = check_columns(outcomes)
    width = {n: max(5, len(n)) for n in names}
    rows = [f"{'TAG':<46} {'VERDICT':<8} " + " ".join(f"{n:<{width[n]}}" for n in names) + "  REPORT"]
    for o in outcomes:
        rows.append(f"{o.tag:<46} {verdict(o):<8} " + " ".join(f"{o.statuses.get(n, '-'):<{width[n]}}" for n in names)
                    + f"  {_shown(o.json_path) if o.json_path else '-'}")
    for o in outcomes:
        if o.problem:
            rows.append(f"{o.tag}: {o.problem}")
        elif o.mismatches:
            rows.append(f"{o.tag}: versions differ from images/{o.tag}/spec.json: " + "; ".join(o.mismatches))
        elif o.mismatches is not None:
            rows.append(f"{o.tag}: torch, Python, CUDA, cuDNN and NCCL inside the image match its spec")
    return "\n".join(rows)


def image_list(specs: list[ImageSpec]) -> str:
    return "\n".join(f"{s.tag:48} {s.description}{'  [default]' if s.default else ''}" for s in specs)


def base_rows(rows: list[tuple[str, str, float]]) -> str:
    return "\n".join(f"{tag:<40} {outcome:<13} {seconds:5.0f}s" for tag, outcome, seconds in rows)
