"""What the trace of a run whose command line did not parse reads from it: an option's value as argparse would have
kept it, and the state folder that run would have used (verify/prolog/cli.py's ungated trace)."""
from __future__ import annotations

import os

from .config import DEFAULT_STATE_DIR


def _value(argv: list[str], option: str) -> str | None:
    """An option's value read from a command line that did not parse (what the trace of a bad setting needs): its
    last, as argparse keeps it (`--state-dir /a --state-dir /b` runs on /b: the trace went to /a's history)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == option and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(option + "="):
            found = arg.split("=", 1)[1]
    return found


def trace_state(option: str | None, env: dict[str, str], revalidate: bool) -> str | None:
    """The state folder the trace of a run that did not parse goes to: the one that run would have used (config's
    _knobs), or None where no folder is one (a blank option; a relative one where the prolog gates: the cwd is slurmd's
    or the job's). A TORCHIMAGES_STATE_DIR that is empty (unset) or relative where it gates is a bad knob whose default
    holds (hunt102: its trace was kept nowhere, while the run used /var/lib/torchimages)."""
    if option is not None:
        if not option.strip() or not (revalidate or os.path.isabs(option)):
            return None
        return os.path.abspath(option)
    knob = env.get("TORCHIMAGES_STATE_DIR", "").strip()
    if knob and (revalidate or os.path.isabs(knob)):
        return os.path.abspath(knob)
    return DEFAULT_STATE_DIR
