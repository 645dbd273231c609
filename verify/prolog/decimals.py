"""A number as an operator writes a setting (the prolog's options and knobs): one ASCII grammar, refused in one line
when it is none, not finite, or out of range. Pure."""
from __future__ import annotations

import math
import re

# a number as a setting is written: ASCII digits, one point, an exponent, ASCII spaces around. float() also takes
# '３０', '٣٠', '3_0', 'infinity' and '\xa030', which no one types as a setting and a terminal shows as another
DECIMAL = re.compile(r"[ \t\n]*\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?[ \t\n]*", re.ASCII)


def decimal(text: str) -> float | None:
    """A setting's number by DECIMAL, or None: not one, or one whose digits say more than 0 and that float() reads
    as 0 (1e-400: a breaker of 0 is "never drain", which nobody wrote)."""
    if not isinstance(text, str) or not DECIMAL.fullmatch(text):
        return None
    value = float(text)
    mantissa = re.split(r"[eE]", text)[0]
    return None if value == 0 and any(c in "123456789" for c in mantissa) else value


def finite_positive(text: str, what: str, most: float, unit: str = "seconds") -> float:
    """A number (of `unit`) from the command line; ValueError with the reason (nan, inf, 0, negative, too large,
    another script's digits)."""
    value = decimal(text)
    of = f" of {unit}" if unit else ""
    if value is None:
        raise ValueError(f"{what} {text!r} is not a finite number{of} (ASCII digits: 30, 2.5)")
    if not math.isfinite(value) or value <= 0 or value > most:
        raise ValueError(f"{what} {text!r} must be a finite number{of} above 0 and at most {most:.0f}")
    return value
