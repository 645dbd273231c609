"""Slurm's PrologEpilogTimeout, read from slurm.conf, so that the prolog's cap fits under it.

Slurm's prolog semantics: slurmd kills a Prolog= (or Epilog=) that runs past PrologEpilogTimeout and drains the node
("Prolog error"): a drain without our reason, which the breaker never counts and `make undrain` cannot return. The
prolog caps its own run at --budget + --grace (90 s by default) and documents "PrologEpilogTimeout at least cap +
10 s"; a slurm.conf that set it lower (60 s, a typo of 600) had Slurm drain every node whose preflight ran long (a
confirmation of a slow check, a roll-out that slows every node's import of torch): a partition taken down on a setting,
past the breaker. So under Prolog= the cap is fitted under the timeout slurm.conf gives (MARGIN_S for Python's start
and the stop of what runs), and said: a run that then has too little time is not assessed (our setting), never
Slurm's drain. Only slurmd's slurm.conf is read (SLURM_CONF where slurmd sets it, else Slurm's usual places): a job's
step is not under that timeout.
"""
from __future__ import annotations

import os
import re

from . import statefile

MARGIN_S = 10.0                  # what the cap leaves under the timeout: STOP_S, Python's start, slurmd's own kill
PLACES = ("/etc/slurm/slurm.conf", "/run/slurm/conf/slurm.conf", "/usr/local/etc/slurm.conf", "/etc/slurm-llnl/slurm.conf")
CAP = 4 << 20
_KEY = re.compile(r"(?:^|\s)PrologEpilogTimeout\s*=\s*(\S+)", re.IGNORECASE)


def _conf(env: dict[str, str]) -> str | None:
    given = env.get("SLURM_CONF", "")
    if os.path.isabs(given):
        return given
    return next((p for p in PLACES if os.path.isfile(p)), None)


def prolog_timeout(env: dict[str, str]) -> tuple[float | None, str | None]:
    """(PrologEpilogTimeout in seconds, or None where slurm.conf sets none or cannot be read; a note, or None). Of two
    settings the smaller: the cap must fit under whichever slurmd keeps."""
    path = _conf(env)
    if path is None:
        return None, None
    try:
        text = statefile.read_tail(path, CAP).text
    except OSError as exc:
        return None, f"slurm.conf not read for PrologEpilogTimeout ({statefile.problem(exc, path)})"
    found: list[float] = []
    for line in text.splitlines():
        for value in _KEY.findall(line.split("#", 1)[0]):
            if value.isdigit() and int(value) > 0:
                found.append(float(value))
    return (min(found) if found else None), None


def fitted(cap: float, timeout: float | None) -> float | None:
    """The cap that fits under the timeout (MARGIN_S below it), or None when `cap` fits already."""
    if timeout is None or cap + MARGIN_S <= timeout:
        return None
    return max(1.0, timeout - MARGIN_S)
