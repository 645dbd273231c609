"""A big alternation of phrases, searched over a whole log, made fast by a guard on its first character.

Python's re tries every alternative at every position: the CUDA catalog's words (about 60 alternations of phrases,
case-insensitive) took 2.4 s on a 2 MB training log. A lookahead of the characters any alternative can start with,
`(?=[cCuU...])`, lets the engine leave a position at one test; it matches exactly what the pattern matches (the
lookahead is compiled with the same flags, so case folding is the same). Where the first characters cannot be
worked out (an alternative that may start with anything, a class such as `\\w`), the pattern is returned as it is.
The parse uses re's own parser (`re._parser`, `sre_parse` before 3.11); if its shape is not the one expected, the
pattern is returned as it is: the guard only ever saves time.
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache
from typing import Any

if sys.version_info >= (3, 11):        # re's own parser (private: sre_* before 3.11)
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
else:
    import sre_constants as _c
    import sre_parse as _p

_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT)


def _class_chars(items: Any) -> set[str] | None:
    out: set[str] = set()
    for op, arg in items:
        if op is _c.LITERAL:
            out.add(chr(arg))
        elif op is _c.RANGE and arg[1] - arg[0] < 256:
            out.update(chr(c) for c in range(arg[0], arg[1] + 1))
        else:                       # a category (\w, \d), a negation, a wide range: any character may start it
            return None
    return out


def _firsts(seq: Any) -> set[str] | None:
    """The characters a match of `seq` can start with, or None where that is not known or it may match nothing."""
    for op, arg in seq:
        if op is _c.AT or (op in (_c.ASSERT, _c.ASSERT_NOT) and arg[0] < 0):
            continue                # \b, ^, a lookbehind: zero-width, the next item starts the match
        if op is _c.LITERAL:
            return {chr(arg)}
        if op is _c.IN:
            return _class_chars(arg)
        if op is _c.BRANCH:
            out: set[str] = set()
            for branch in arg[1]:
                if (first := _firsts(branch)) is None:
                    return None
                out |= first
            return out
        if op is _c.SUBPATTERN:
            return _firsts(arg[-1])
        if op in _REPEATS and arg[0] > 0:
            return _firsts(arg[2])
        return None
    return None


def guarded(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` behind a lookahead of the characters its matches can start with (the same matches, found faster
    over long text), or `pattern` itself where those characters cannot be worked out."""
    try:
        first = _firsts(_p.parse(pattern.pattern, pattern.flags).data)
    except Exception:  # noqa: BLE001 - a parser of another shape: no guard, never a wrong pattern
        return pattern
    if not first:
        return pattern
    chars = sorted({c for ch in first for c in (ch, ch.lower(), ch.upper())})
    return re.compile(f"(?=[{''.join(re.escape(c) for c in chars)}])(?:{pattern.pattern})", pattern.flags)


@lru_cache(maxsize=512)
def fast(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`guarded(pattern)`, worked out once per pattern: for the helpers that scan a whole text with a pattern their
    callers hand them (said.printed, cuda's line finder), so that every caller's pattern is guarded at one place."""
    try:
        return guarded(pattern)
    except re.error:        # a pattern of inline global flags (`(?i)...`) cannot be wrapped: as it is
        return pattern
