"""The knob a misspelt name meant: one rule for the prolog's environment and its state folder's settings file.

Close by letters (difflib: another case, a letter dropped or swapped), or by words: a name whose words after the
prefix are all words of exactly one knob, in order (the clock-skew knob named without CLOCK, a word dropped, which
difflib's ratio put below its cutoff; hunt105). The prefix may be misspelt itself (a letter dropped)."""
from __future__ import annotations

import difflib
from collections.abc import Sequence

PREFIX = "TORCHIMAGES"


def _words(name: str) -> tuple[str, list[str]]:
    head, _, rest = name.upper().replace("-", "_").partition("_")
    return head, [w for w in rest.split("_") if w]


def _in_order(part: list[str], whole: list[str]) -> bool:
    it = iter(whole)
    return all(w in it for w in part)


def near(name: str, knobs: Sequence[str], cutoff: float = 0.8) -> str | None:
    """The one knob `name` most likely meant, or None (nothing close, or more than one by words)."""
    spelt = name.upper().replace("-", "_")
    close = difflib.get_close_matches(spelt, list(knobs), n=1, cutoff=cutoff)
    if close:
        return close[0]
    head, words = _words(spelt)
    if not words or difflib.SequenceMatcher(None, head, PREFIX).ratio() < 0.8:
        return None
    by_words = [k for k in knobs if _words(k)[0] == PREFIX and _in_order(words, _words(k)[1])]
    return by_words[0] if len(by_words) == 1 else None
