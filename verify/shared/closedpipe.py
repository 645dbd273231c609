"""A stdout its reader closed (`verify explain FILE | head -1`) ends the program quietly, never in a traceback.

Python's recipe (the `signal` module's docs, "Note on SIGPIPE"): on BrokenPipeError, point stdout at /dev/null so the
interpreter's own flush at exit does not raise a second time, and exit with the status a shell gives a program that
SIGPIPE ended (141). The one helper of verify's entry points (`python -m verify`, `verify explain`, the prolog, the
metrics exporter); scripts/ keeps the same rule at its own boundary (scripts/cli.py: neither side imports the other).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

CLOSED = 141                  # 128 + SIGPIPE: what a shell reports for `cmd | head -1` cut short


def to_devnull(stream: Any = None) -> None:
    """stdout's descriptor (or `stream`'s) pointed at /dev/null: what is still buffered, or written after, goes
    nowhere and never raises again (a failed write leaves its text buffered, and the interpreter's own flush at exit
    would fail too: exit 120, which Slurm's Prolog= reads as a failed prolog)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (stream if stream is not None else sys.stdout).fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # no descriptor at all (None): nothing to flush into it
        pass


def say(text: str) -> None:
    """One line on stderr that never raises: a stderr closed or unwritable (a wrapper's `2>&-`, /dev/full) is no
    reason to stop what the line comes before (the prolog's drain)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        to_devnull(sys.stderr)


def guarded(main: Callable[[], int], closed: int = CLOSED) -> int:
    """main()'s exit status, with a closed stdout ending quietly: `closed` where the pipe broke while main ran (it
    did not finish), main's own status where only the last flush found the reader gone (it decided, and its status
    says what; the prolog's exit status is the node's verdict)."""
    try:
        status = main()
    except BrokenPipeError:
        to_devnull()
        return closed
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:     # None where the program started with that descriptor closed (`>&-`)
                stream.flush()
        except (OSError, ValueError):  # the reader left, a full disk, a stream closed: the status stands
            to_devnull(stream)
    return status
