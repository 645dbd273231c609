"""Slurm's Prolog/Epilog timeout (PrologTimeout, EpilogTimeout, PrologEpilogTimeout), read from slurm.conf, so that
the prolog's cap fits under it.

Slurm's prolog semantics: slurmd kills a Prolog= (or Epilog=) that runs past PrologEpilogTimeout and drains the node
("Prolog error"): a drain without our reason, which the breaker never counts and `make undrain` cannot return. The
prolog caps its own run at --budget + --grace (90 s by default) and documents "PrologEpilogTimeout at least cap +
10 s"; a slurm.conf that set it lower (60 s, a typo of 600) had Slurm drain every node whose preflight ran long (a
confirmation of a slow check, a roll-out that slows every node's import of torch): a partition taken down on a setting,
past the breaker. So under Prolog= the cap is fitted under the timeout slurm.conf gives (MARGIN_S for Python's start
and the stop of what runs), and said: a run that then has too little time is not assessed (our setting), never
Slurm's drain. Only slurmd's slurm.conf is read (SLURM_CONF where slurmd sets it, else Slurm's usual places): a job's
step is not under that timeout.

Which key: Slurm 25.05 added PrologTimeout and EpilogTimeout (src/common/read_config.c): each, where set, is the
timeout of its script and PrologEpilogTimeout only their default. A slurm.conf of 25.05 that set `PrologTimeout=60`
(and no PrologEpilogTimeout) had slurmd kill and drain the node at 60 s while the prolog, reading only
PrologEpilogTimeout, ran to its own 90 s cap; one that kept `PrologEpilogTimeout=30` for its epilogs beside
`PrologTimeout=600` capped every prolog at 20 s (no run assessed). So under Prolog= PrologTimeout decides where
given, under Epilog= EpilogTimeout, and PrologEpilogTimeout otherwise, as slurmd decides.

Read as Slurm's own parser reads it (src/common/parse_config.c), since a timeout slurmd sees and we miss drains the
node all the same: keys case-blind, `#` a comment, a value in double quotes (`PrologEpilogTimeout="30"`), a number as
strtol(.., 0) reads it, and `Include <file>` lines followed (case-blind; a relative path from slurm.conf's folder;
wildcards expanded), a few levels deep. slurm.conf is slurmd's own file, not a state file of ours: a symlink is
followed (/etc/slurm/slurm.conf -> a shared copy is the common layout; refused, the cap went unfitted on every such
node), but only a regular file is read, and at most CAP bytes of each from its head (where the global settings are).
"""
from __future__ import annotations

import glob
import itertools
import os
import re
import stat
from typing import Any

from . import statefile

MARGIN_S = 10.0                  # what the cap leaves under the timeout: STOP_S, Python's start, slurmd's own kill
PLACES = ("/etc/slurm/slurm.conf", "/run/slurm/conf/slurm.conf", "/usr/local/etc/slurm.conf", "/etc/slurm-llnl/slurm.conf")
CAP = 4 << 20
MAX_DEPTH = 8                    # Include within Include: more is a loop
MAX_FILES = 64
KEYS = ("PrologTimeout", "EpilogTimeout", "PrologEpilogTimeout")     # slurmd's script's own key first (25.05+)
_KEY = re.compile(r'(?:^|\s)(PrologEpilogTimeout|PrologTimeout|EpilogTimeout)\s*=\s*("[^"]*"|\S+)', re.IGNORECASE)
_INCLUDE = re.compile(r"^\s*include\s+(\S+)", re.IGNORECASE)
_CLUSTER = re.compile(r'(?:^|\s)ClusterName\s*=\s*("[^"]*"|\S+)', re.IGNORECASE)
CLUSTER = "ClusterName"          # found's key for the cluster's name read so far: an Include's %c (parse_config.c)


def _conf(env: dict[str, str]) -> str | None:
    given = env.get("SLURM_CONF", "")
    if os.path.isabs(given):
        return given
    return next((p for p in PLACES if os.path.isfile(p)), None)


def _read(path: str) -> tuple[str, int]:
    """(the head of a regular file, a link followed: at most CAP bytes; its size); OSError (statefile.Refused for a FIFO, a
    device or a folder: never a hang, never read whole)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise statefile.Refused(0, f"{path} is not a regular file ({statefile.kind(info.st_mode)}): not read")
        data = os.read(fd, CAP)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace"), info.st_size


def _seconds(value: str) -> float | None:
    """A timeout as Slurm's parser reads it (strtol base 0: 0x1e and 036 are 30), or None (UNLIMITED, 0, a word)."""
    text = value.strip('"').strip()
    try:
        number = int(text, 16) if re.fullmatch(r"0[xX][0-9a-fA-F]+", text) else \
            int(text, 8) if re.fullmatch(r"0[0-7]+", text) else int(text) if re.fullmatch(r"[0-9]+", text) else 0
    except ValueError:
        return None
    return float(number) if number > 0 else None


def _lines(text: str) -> list[str]:
    """slurm.conf's lines, a line ending in a backslash joined to the next, each without its comment."""
    joined = re.sub(r"\\\n", "", text)
    return [re.split(r"(?<!\\)#", line, maxsplit=1)[0] for line in joined.splitlines()]


def _walk(path: str, home: str, depth: int, seen: list[str], found: dict[str, Any], notes: list[str]) -> None:
    if len(seen) >= MAX_FILES or depth > MAX_DEPTH:
        notes.append(f"slurm.conf's Include lines go deeper than {MAX_DEPTH} levels or past {MAX_FILES} files: "
                     f"{path} not read for its Prolog or Epilog timeout")
        return
    seen.append(path)
    try:
        text, size = _read(path)
    except OSError as exc:
        notes.append(f"slurm.conf not read for its Prolog or Epilog timeout ({statefile.problem(exc, path)})")
        return
    if size > CAP:
        notes.append(f"{path} holds {size} bytes: only its first {CAP} were read for its Prolog or Epilog timeout")
    for line in _lines(text):
        if m := _INCLUDE.match(line):
            named = m.group(1)
            if "%c" in named:
                # Slurm's include modifier: the ClusterName read so far, lower case (`Include /etc/slurm/%c/t.conf`:
                # read literally, the timeout in it went unread and the cap unfitted)
                if not found.get(CLUSTER):
                    notes.append(f"{path}: an Include names %c before any ClusterName (slurmd refuses it): "
                                 f"{named} not read for its Prolog or Epilog timeout")
                    continue
                named = named.replace("%c", found[CLUSTER])
            target = os.path.join(home, named) if not os.path.isabs(named) else named
            # iglob, at most MAX_FILES names: a pattern that walks the whole tree never holds the prolog's start
            names = sorted(itertools.islice(glob.iglob(target), MAX_FILES + 1)) if glob.has_magic(target) else [target]
            for name in names:
                if os.path.realpath(name) not in map(os.path.realpath, seen):
                    _walk(name, home, depth + 1, seen, found, notes)
            continue
        for value in _CLUSTER.findall(line):
            found[CLUSTER] = value.strip('"').strip().lower()
        for key, value in _KEY.findall(line):
            found.setdefault(next(k for k in KEYS if k.lower() == key.lower()), []).append(_seconds(value))


def prolog_timeout(env: dict[str, str]) -> tuple[float | None, str | None]:
    """(the timeout slurmd gives this script in seconds, or None where slurm.conf sets none or cannot be read; a
    note, or None)."""
    timeout, _, note = setting(env)
    return timeout, note


def setting(env: dict[str, str]) -> tuple[float | None, str, str | None]:
    """(the timeout slurmd gives this script, the key that set it, a note). The script's own key (PrologTimeout,
    under Epilog= EpilogTimeout: Slurm 25.05) where slurm.conf gives it, else PrologEpilogTimeout, as slurmd reads
    them; of two settings of that key the smaller (the cap must fit under whichever slurmd keeps). A key given only
    UNLIMITED (or 0) is no timeout, as for slurmd."""
    own = "EpilogTimeout" if env.get("SLURM_SCRIPT_CONTEXT", "").startswith("epilog") else "PrologTimeout"
    path = _conf(env)
    if path is None:
        return None, own, None
    found: dict[str, Any] = {}         # each key's settings (seconds, None for UNLIMITED or a word), the ClusterName
    notes: list[str] = []
    _walk(path, os.path.dirname(path), 0, [], found, notes)
    key = own if own in found else "PrologEpilogTimeout"
    numbers = [s for s in found.get(key, []) if s is not None]
    return (min(numbers) if numbers else None), key, ("; ".join(notes) or None)


def fitted(cap: float, timeout: float | None) -> float | None:
    """The cap that fits under the timeout (MARGIN_S below it), or None when `cap` fits already."""
    if timeout is None or cap + MARGIN_S <= timeout:
        return None
    return max(1.0, timeout - MARGIN_S)
