"""Whose settings the prolog believes: the operator's, never a job's.

Slurm's prolog semantics: Prolog= runs as SlurmdUser with slurmd's environment (the operator's), but a job's first
step (`srun torchimages-prolog`) runs with the job's, which srun passes whole and a job may export anything into
(a .bashrc, a module file, the job script). There the prolog's knobs are the job's to set: TORCHIMAGES_BREAKER=1
lets one bad roll-out drain a whole partition, TORCHIMAGES_HANG_RUNS=2 drains a slowed node sooner,
TORCHIMAGES_STATE_DIR=/tmp/x reads a history and a kernel-log state of the job's making (a hang streak or a held Xid
that drains a healthy node; a clean one that waves a broken node through; a test-hooks switch), and
TORCHIMAGES_METRICS_DIR hides the run from node_exporter. So in a job's step none of them is read from the
environment: the operator's are the command line, this folder's `settings` file and, under Prolog=, slurmd's
environment. A step is known by SLURM_STEP_ID (slurmstepd sets it in every step; slurmd's Prolog= environment has
none) or `--mode step`, whatever SLURM_SCRIPT_CONTEXT says (a job can export that too).

`<state folder>/settings` holds `NAME=value` lines (`#` comments; `export ` and quotes as a shell file has them) of
the knobs below. It and verify's test-hooks
switch (verifyrun.TEST_HOOKS_FILE) are the operator's only as regular files, no link, that neither they nor their
folder are writable by group or others, nor belong to another user than root or the one running the prolog (a shared
folder a job could write, or one a job's user made, is no operator's word).
"""
from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections.abc import Iterator, Mapping

from . import context, knobhint, statefile

FILE = "settings"
CAP = 64 * 1024                     # a settings file is a few lines: more is no settings file
KNOBS = ("TORCHIMAGES_BREAKER", "TORCHIMAGES_HANG_RUNS", "TORCHIMAGES_METRICS_DIR", "TORCHIMAGES_CLOCK_SKEW",
         "TORCHIMAGES_RETURN_PASSES")
STATE_KNOB = "TORCHIMAGES_STATE_DIR"     # where this file is: never in it
DEFAULTS_HOLD = "not applied, the defaults hold"     # a setting of ours gone wrong: said, traced, gated on defaults


def job_env(env: Mapping[str, str], mode: str, revalidate: bool) -> bool:
    """Whether this environment is a job's (a step: Slurm runs it with the user's environment; or any run inside a
    job, SLURM_JOB_ID, that slurmd did not start as its Prolog=: a batch script running the prolog without srun has no
    SLURM_STEP_ID, nor has a shell ssh'd into its allocation, and either is the user's environment all the same).
    `make undrain` is an operator's by hand (its resume needs Slurm's operator rights), never a job's."""
    in_job = bool(env.get("SLURM_JOB_ID", "").strip()) and not context.by_slurmd(env)     # Prolog= or Epilog=
    return not revalidate and (mode == "step" or bool(env.get("SLURM_STEP_ID", "").strip()) or in_job)


def operators(folder: str, name: str) -> tuple[bool, str | None]:
    """(whether folder/name is the operator's file, why not where it exists but is not: a line, else None)."""
    path = os.path.join(folder, name)
    try:
        info = os.lstat(path)
        where = os.stat(folder)
    except FileNotFoundError:
        return False, None
    except OSError as exc:          # a folder the job's user may not search: the operator's settings, unapplied, said
        return False, f"{path} cannot be read ({exc.strerror}): {DEFAULTS_HOLD}"
    if not stat.S_ISREG(info.st_mode):
        return False, f"{path} is no regular file (a link, FIFO or folder): not the operator's, ignored: {DEFAULTS_HOLD}"
    if (info.st_mode | where.st_mode) & (stat.S_IWGRP | stat.S_IWOTH):
        return False, (f"{path} or its folder is writable by group or others, so a job could have written it: not "
                       f"the operator's, ignored: {DEFAULTS_HOLD} (chmod go-w both)")
    if (owners := {info.st_uid, where.st_uid} - {0, os.geteuid()}):
        # a folder a job's user made first (a state folder under /tmp, gone at each reboot) is theirs to fill, as
        # statefile.not_ours refuses its history and kernel-log state: its settings (TORCHIMAGES_BREAKER=1) were
        # believed by every Prolog= run as root (hunt98)
        return False, (f"{path} or its folder belongs to another user (uid {min(owners)}), so a job could have "
                       f"written it: not the operator's, ignored: {DEFAULTS_HOLD} (chown root both)")
    return True, None


def read(folder: str) -> tuple[dict[str, str], list[str]]:
    """(the knobs of folder/settings, its problems: one line each). One rule for every setting of ours (config.py
    reads the environment's knobs by it too): a bad line (no setting, a misspelt name, a knob given twice) or a file
    that cannot be one is said and left out, and its knobs' defaults hold; the node stays gated. It was a
    CONFIG_ERROR that ran the node ungated, where a misspelt TORCHIMAGES_* variable kept it gated on defaults."""
    path = os.path.join(folder, FILE)
    ok, why = operators(folder, FILE)
    if not ok:
        return {}, [why] if why else []
    try:
        tail = statefile.read_tail(path, CAP + 1)
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        if exc.errno == errno.EACCES:
            return {}, [f"{path} cannot be read ({exc.strerror}): the prolog's settings must be readable by whoever "
                        f"runs it (a job's step runs as the job's user: chmod 0644); {DEFAULTS_HOLD}"]
        return {}, [f"{path}: {statefile.problem(exc, path)}; {DEFAULTS_HOLD}"]
    if tail.size > CAP:
        return {}, [f"{path} holds {tail.size} bytes, more than any settings file ({CAP} at most): not read; "
                    f"{DEFAULTS_HOLD}"]
    values: dict[str, str] = {}
    problems: list[str] = []
    twice: set[str] = set()
    for number, line, unreadable in _lines(tail.text):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if unreadable:
            problems.append(f"{path} line {number}: {text[:80]!r} {unreadable}: the line is not applied, the defaults "
                            "hold for it")
            continue
        name, sep, value = text.partition("=")
        name = re.sub(r"^export\s+", "", name.strip()).strip()    # a file written as /etc/default's shell lines
        value = _value(value.strip())
        if not sep or name not in KNOBS:
            meant = knobhint.near(name, KNOBS) if name else None
            hint = f"did you mean {meant}? " if meant else ""
            problems.append(f"{path} line {number}: {text[:80]!r} is no setting ({hint}it holds NAME=value lines of "
                            f"{', '.join(KNOBS)}): the line is not applied, the defaults hold for it")
        elif name in values or name in twice:
            problems.append(f"{path} line {number}: {name} given twice (which one holds?): neither is applied, its "
                            "default holds; keep one")
            values.pop(name, None)
            twice.add(name)
        else:
            values[name] = value
    return values, problems


def salvage(folder: str, name: str) -> str | None:
    """One knob's value from folder/settings read leniently, for the trace of a run a bad option stopped (cli.ungated:
    CONFIG_ERROR, before the file was read as read() reads it): the file still names the operator's metrics folder,
    where node_exporter must show the CONFIG_ERROR instead of the last run's pass. None: not the operator's file, not
    readable, or the knob not given exactly once."""
    if not operators(folder, FILE)[0]:
        return None
    try:
        tail = statefile.read_tail(os.path.join(folder, FILE), CAP + 1)
    except OSError:
        return None
    if tail.size > CAP:
        return None
    found = []
    for _, line, unreadable in _lines(tail.text):
        key, sep, value = line.strip().partition("=")
        if unreadable:
            continue
        if sep and re.sub(r"^export\s+", "", key.strip()).strip() == name:
            found.append(_value(value.strip()))
    return found[0] if len(found) == 1 else None


def _lines(text: str) -> Iterator[tuple[int, str, str | None]]:
    """(number, line, why it is no line of text or None) of each of a settings file's lines, as the shell reads them:
    split at a newline alone (a CRLF's carriage return dropped; an editor's byte-order mark too). str.splitlines also
    split at a bare carriage return, a form feed, U+0085 or U+2028, so one line (`X=3<CR>TORCHIMAGES_BREAKER=1`) was
    two settings where the shell reads one; and the file is read as UTF-8 with each undecodable byte replaced, so a
    path of other bytes (`/srv/m\\xff`) named another folder than the operator's, and a NUL reached the system call
    (`embedded null byte`): such a line holds a control character or bytes that are not UTF-8, and is no setting
    (hunt103)."""
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        line = line.removesuffix("\r")
        if "\ufffd" in line:
            yield number, line, "holds bytes that are not UTF-8 text (a setting is one)"
        elif odd := next((c for c in line if c != "\t" and unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cs")), None):
            yield number, line, f"holds the control character U+{ord(odd):04X} (a NUL, a bare carriage return), which no " \
                                "setting's value holds"
        else:
            yield number, line, None


def _value(value: str) -> str:
    """A shell line's value: a quoted one without its quotes, and the shell's comment after either (`X="0.2"  # ten %`,
    `X=0.2  # ten %`) left out; a `#` inside a word is the word's (`/srv/node#1`), as in the shell."""
    if value and value[0] in "'\"":
        end = value.find(value[0], 1)
        if end > 0 and re.fullmatch(r"(\s+#.*)?\s*", value[end + 1:]):
            return value[1:end]
        return value                  # an unclosed quote: refused by the knob's own parser, in one line
    return re.split(r"\s#", value, maxsplit=1)[0].strip()


def pick(name: str, env: Mapping[str, str], job: bool, file: Mapping[str, str], folder: str) -> tuple[str, str] | None:
    """(value, where it came from) of one knob: slurmd's or a person's environment, else the settings file; a job's
    environment never. An empty variable is unset (the shell's ${X:-default}): the file's value holds where it gives
    one (hunt102: `TORCHIMAGES_BREAKER=` in slurmd's unit put the default 0.10 over the file's 0.05, said as "its
    default holds"); else the empty value is returned, for unset_blanks to say."""
    if not job and name in env and (env[name].strip() or name not in file):
        return env[name], name
    if name in file:
        return file[name], f"{os.path.join(folder, FILE)} {name}"
    return None


def unset_blanks(given: Mapping[str, tuple[str, str]],
                 defaults: Mapping[str, str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """(the knobs given a value, a note for each given empty). One rule for every TORCHIMAGES_* knob the prolog reads,
    as the shell's ${X:-default} reads it: empty (or blanks) is unset and the default holds, said in one line (it was
    CONFIG_ERROR for TORCHIMAGES_BREAKER=, the default for TORCHIMAGES_CLOCK_SKEW=, silence for _METRICS_DIR=)."""
    kept = {name: found for name, found in given.items() if found[0].strip()}
    return kept, [blank_note(where, defaults.get(name, "")) for name, (_, where) in given.items() if name not in kept]


def blank_over_file(env: Mapping[str, str], job: bool, file: Mapping[str, str], folder: str) -> list[str]:
    """One note for each knob slurmd's (or a person's) environment gives empty where the settings file gives it: read
    as unset, the file's value holds (pick)."""
    return [f"{name} is empty: read as unset, {os.path.join(folder, FILE)}'s {name} holds" for name in KNOBS
            if not job and name in env and not env[name].strip() and name in file]


def blank_note(where: str, default: str) -> str:
    return f"{where} is empty: read as unset, its default holds ({default})"


def ignored(env: Mapping[str, str]) -> list[str]:
    """One note for each knob a job's environment sets: ignored, and where the operator sets it."""
    return [f"{name} in a job's step is the job's environment (Slurm runs a step with the user's): ignored; the "
            f"operator sets it on the srun line or in the state folder's {FILE} file"
            for name in (*KNOBS, STATE_KNOB) if name in env]
