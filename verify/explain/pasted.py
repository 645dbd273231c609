"""What pasting and launchers do to a tool's output, undone once for every parser (verify/explain/__init__.py), in
order:
- the encoding: a byte-order mark, CRLF or lone CR line ends (Windows editors, progress bars), ANSI colour and cursor
  sequences (also where the copy lost the ESC: `[1;32mINFO[0m`, or shows it as `^[`);
- markdown: a GitHub quote (`> ` on each line, nested) and code fences (```` ``` ````, `~~~`) around the excerpt;
- a terminal's hard wrap (wrap.py): rows exactly W columns long joined back where the excerpt shows the wrap;
- the launchers' per-line prefixes, stacked in any order, and the tags a launcher put inside a line it forwarded in
  pieces (launchers.py);
- tabs expanded to 8-column stops, trailing blanks, blank lines and the indent every line shares dropped.
`as_printed` stops before the prefixes (a kernel log's stamp is its event's time); `bare` is the tool's own lines.
What is left is the tool's text, or text no parser recognises (said so by explain, never guessed)."""
from __future__ import annotations

import functools
import re

from .launchers import hosts, untagged
from .wrap import unwrap

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|"
                   # as `cat -v` shows it (`^[[32m`), and a colour whose ESC the copy dropped (`[0;32m`; not `[2m30s]`)
                   r"\^\[\[[0-?]*[ -/]*[@-~]|\[\d{1,3}(?:;\d{1,3})*m(?!\d+s\b)")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_QUOTES = re.compile(r"(?: {0,3}> ?)*")      # nested, taken off at once (one at a time was quadratic in `> > > ...`)


def encoding(text: str) -> str:
    """The text without its byte-order marks, CR line ends and ANSI sequences: the characters a reader saw."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _ANSI.sub("", text.replace("\ufeff", ""))


def markdown(lines: list[str]) -> list[str]:
    """Lines without a GitHub quote's `> ` (nested) and without the code fences around them. A quote is the excerpt's
    most lines or a run of three: a lone `> 3` is a wrapped `-> 3`'s rest, not a quote."""
    quoted = [bool(_QUOTE.match(line)) for line in lines]
    most = sum(quoted) * 2 >= sum(1 for line in lines if line.strip())
    out = []
    for n, line in enumerate(lines):
        if most or any(all(quoted[i:i + 3]) and len(quoted[i:i + 3]) == 3 for i in range(max(0, n - 2), n + 1)):
            line = line[_QUOTES.match(line).end():]  # type: ignore[union-attr]
        if not _FENCE.match(line):
            out.append(line)
    return out


def _lines(text: str) -> list[str]:
    return unwrap(markdown(encoding(text).split("\n")))


@functools.lru_cache(maxsize=4)
def views(text: str) -> tuple[str, str]:
    """(as_printed, bare) of one text, read once."""
    lines = _lines(text)
    return "\n".join(line.rstrip() for line in lines), _bare(lines)


def as_printed(text: str) -> str:
    """The text as the launcher printed it: encoding, markdown and a terminal's wrap undone, its prefixes kept (a
    kernel log's time stamp, a relay's)."""
    return views(text)[0]


def _dedent(lines: list[str]) -> list[str]:
    """Lines without the indent they all share (a markdown code block's four blanks, a quote in an e-mail)."""
    cut = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    return [line[cut:] for line in lines]


def bare(text: str) -> str:
    """The tool's own lines: as printed, then without the launchers' prefixes and the indent all lines share, tabs
    expanded, blank lines left out (no parser reads them; a paste that doubled every line end keeps NCCL's `Last
    error:` beside its message)."""
    return views(text)[1]


def _bare(lines: list[str]) -> str:
    kept = [line for line in (untagged(raw).expandtabs(8).rstrip() for raw in lines) if line]
    return "\n".join(_dedent(hosts(kept)))
