"""The job's own knobs given to make slurm and make isolate: read once, when make writes the job, and written into it.

TORCHIMAGES_JOIN_TIMEOUT (the rendezvous' join timeout, make slurm and make isolate) and TORCHIMAGES_ISOLATE_TIMEOUT
(a pair's step, make isolate) were read only by the job, from the environment sbatch had: `make isolate
TORCHIMAGES_ISOLATE_TIMEOUT=60`, then sbatch from another shell, ran with the default 300 s, and a value no job could
read was found only on the compute node. Now make validates what it was given (one line, exit 2, no job written) and
writes it in as the job's default; an sbatch of its own still wins, as for TORCHIMAGES_CLOCK_SKEW (isolate_job), and
is checked again where the job reads it (slurm.JOIN_GUARD, isolate_run). One rule for every TORCHIMAGES_* knob (as the
prolog's, verify/prolog/settings.unset_blanks): empty is unset, its default holds, and that is said in one line.
"""
from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping

from ..errors import UserError

JOIN = "TORCHIMAGES_JOIN_TIMEOUT"
ISOLATE = "TORCHIMAGES_ISOLATE_TIMEOUT"
JOIN_MAX_S = 999999                  # slurm.JOIN_GUARD's six digits


def blank_note(name: str, default: str) -> str:
    return f"{name} is empty: read as unset, its default holds ({default})"


def given(env: Mapping[str, str], name: str, default: str) -> tuple[str | None, list[str]]:
    """(the knob's value, or None where unset or empty; the note for an empty one)."""
    if name not in env:
        return None, []
    text = env[name].strip()
    return (text, []) if text else (None, [blank_note(name, default)])


def join_timeout(env: Mapping[str, str], default: int) -> tuple[int | None, list[str]]:
    """TORCHIMAGES_JOIN_TIMEOUT in whole seconds, 1 to JOIN_MAX_S (the job's guard: torchrun's int() also reads '٣٠٠'
    and 0 times out at once), or None; UserError for anything else."""
    text, notes = given(env, JOIN, f"{default} s")
    if text is None:
        return None, notes
    if not re.fullmatch(r"[1-9][0-9]{0,5}", text, re.ASCII):       # as the guard reads it: no leading 0
        raise UserError(f"{JOIN}={text!r} is not a whole number of seconds (ASCII digits, 1 to {JOIN_MAX_S}): unset it "
                        f"for {default} s, or give e.g. 600")
    return int(text), notes


def isolate_timeout(env: Mapping[str, str], default: float, most: float) -> tuple[float | None, list[str]]:
    """TORCHIMAGES_ISOLATE_TIMEOUT in seconds as the runner reads it (number), or None."""
    text, notes = given(env, ISOLATE, f"{default:g} s")
    return (None if text is None else number(text, ISOLATE, 0, most)), notes


def number(text: str, what: str, low: float, high: float, whole: bool = False) -> float:
    """A knob's number within [low, high] (a whole one where asked), else UserError naming it and its range."""
    # ASCII digits only: float() and int() also read '٣' (Arabic-Indic), '３' (full width) and '1_0'
    plain = re.fullmatch(r"\s*[0-9]+\s*" if whole else r"\s*\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?\s*",
                         text, re.ASCII)
    try:
        value = (float(text) if not whole else int(text.strip())) if plain else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and low <= value <= high) or (not whole and value <= 0):
        kind = f"a whole number from {low:g}" if whole else "a number of seconds above 0"
        raise UserError(f"{what}={text!r} is not {kind} up to {high:g}: fix it, or unset it for the default")
    return value


def job_lines(name: str, var: str, value: str) -> list[str]:
    """The job's lines that export `var`: sbatch's own `name`, else `value` (make's, or the default); an empty `name`
    said and read as unset (the rule above, in the job's shell; ${X:-} alone read it so without a word)."""
    said = shlex.quote(f"torchimages: {blank_note(name, f'{value} s')}")
    return [f'if [ -n "${{{name}+set}}" ] && [ -z "$(printf %s "${name}" | tr -d " \\t")" ]; then echo {said} >&2; '
            f"unset {name}; fi",
            f"export {var}=${{{name}:-{value}}}"]


# Every TORCHIMAGES_* name the launch targets (make slurm, isolate, k8s-verify, fleet-report), their jobs and the
# prolog read or set. One close to a knob a person gives and not itself one of these is a misspelt setting, said in
# one line as the prolog says its own (verify/prolog/config.misspelt): `TORCHIMAGES_JOIN_TIMOUT=600 make isolate`
# wrote a job that waited the default 300 s without a word.
GIVEN_KNOBS = (JOIN, ISOLATE, "TORCHIMAGES_CLOCK_SKEW", "TORCHIMAGES_HOST_PYTHON", "TORCHIMAGES_REPORTS",
               "TORCHIMAGES_IMAGE", "TORCHIMAGES_PYTHON", "TORCHIMAGES_BUNDLE", "TORCHIMAGES_BREAKER",
               "TORCHIMAGES_HANG_RUNS", "TORCHIMAGES_STATE_DIR", "TORCHIMAGES_METRICS_DIR", "TORCHIMAGES_RETURN_PASSES")
SET_BY_JOBS = ("TORCHIMAGES_REPORTS_IN", "TORCHIMAGES_NODE_SCRIPT", "TORCHIMAGES_NODE_SCRIPT_END", "TORCHIMAGES_NODE",
               "TORCHIMAGES_LAUNCHER", "TORCHIMAGES_ISOLATE_STEP", "TORCHIMAGES_GROUP", "TORCHIMAGES_DOCKER_STEP",
               "TORCHIMAGES_SQSH_SHA256", "TORCHIMAGES_T0", "TORCHIMAGES_PULL_S", "TORCHIMAGES_HOST_ARCH",
               "TORCHIMAGES_DRIVER_MIN", "TORCHIMAGES_STEP_LD_LIBRARY_PATH", "TORCHIMAGES_DEBUG", "TORCHIMAGES_ARCH",
               "TORCHIMAGES_RUN_DIR", "TORCHIMAGES_BUNDLE_IMAGE", "TORCHIMAGES_ACCESS", "TORCHIMAGES_SQSH_TEST_IMAGE",
               "TORCHIMAGES_SLURM_TEST_IMAGE")


def misspelt(env: Mapping[str, str]) -> list[str]:
    """One line for each TORCH* variable that is no name of ours but close to a knob (another case, a letter dropped
    or swapped, the prefix misspelt)."""
    import difflib
    known = set(GIVEN_KNOBS) | set(SET_BY_JOBS)
    lines = []
    for name in sorted(env):
        if not name.upper().startswith("TORCH") or name in known:
            continue
        near = difflib.get_close_matches(name.upper().replace("-", "_"), GIVEN_KNOBS, n=1, cutoff=0.85)
        if near:
            lines.append(f"{name} is no setting of make's or its job's: did you mean {near[0]}? (ignored; its "
                         "default holds)")
    return lines
