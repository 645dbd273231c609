"""Whether a tool's message on a line is the tool saying it, or text that merely mentions it: a README's
"If you see `CUDA error: out of memory`, ...", a commit's "Fix CUDA error: ...", a program's source
(`raise RuntimeError("CUDA error: ...")`). A program prints its error at the start of a message: at the line's start
(under a launcher's prefix, taken off before), after an exception's name or a log record's head (`RuntimeError: `,
`what():  `, `E0501 ... file.cc:12] `, `(pid=1) `, a shell transcript's `# ` before a command's output), or as the code it names (`code=214(cudaErrorECCUncorrectable)`);
mentioned, it follows a word of a sentence, a quote or a backtick. Read only for the message kinds whose verdict a
mention would give (a running program's CUDA error, NVML's refusal): a tool's tables and listings have no prose."""
from __future__ import annotations

import re

from ..shared.fastre import fast
from .launchers import prefixes

_HEAD = re.compile(r"(?:^|[-:\])>#|]|\bcode=-?\d+\(|\b(?:returned|failed with))$")


def said(line: str, start: int) -> bool:
    """Whether the message at `start` of the line is said by the program that printed the line."""
    before = line[max(0, start - 60):start].rstrip()
    # inside a markdown code span (an odd backtick before it) or an HTML comment (an issue template's example)
    return line.count("`", 0, start) % 2 == 0 and line.find("<!--", 0, start) < 0 and bool(_HEAD.search(before))


# The older kinds (a kernel line, a relay's line, a CUDA refusal, NCCL's error, a memlock failure, a DCGM field) are
# read wherever a line holds them: their real excerpts are often quoted inside a poster's sentence ("got this in dmesg:
# NVRM: Xid ..."), so they are not asked for a program's head. Only what prose marks as not happening here is left
# out: a code span inside a sentence, or a clause that a condition, a pointer or an example opens.
_CUE = re.compile(r"(?<![\w.-])(?:if|see|when|whenever|unless|e\.g\.|eg\.|i\.e\.|for example|for instance|such as)"
                  r"(?=[\s,:(])", re.IGNORECASE)
# where a clause starts: after a sentence's end or a colon (not `e.g.`'s or `i.e.`'s dots, not a number's `1.5`)
_CLAUSE = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\beg)[.!?;:](?=\s)")
_WORD = re.compile(r"[A-Za-z]{2,}")
# a traceback quoting the program's own `raise` statement: the error's template, not the error (batch 115)
_RAISE = re.compile(r"\s*raise\s")
# the same statement under a log record's head the launcher prefixes do not take off (vLLM's `ERROR 08-27 05:12:18
# worker_base.py:382]     raise RuntimeError(f"NCCL error: {error_str}")`, batch 155): the message is the string
# literal a `raise` hands its exception
_RAISED = re.compile(r"\braise\s+[\w.]+\(\s*[frbuFRBU]{0,2}[\"']$")


def mentioned(line: str, start: int) -> bool:
    """Whether the message at `start` of the line is quoted in prose rather than printed: in an HTML comment, in a
    markdown code span with a sentence's words around it (`` DCGM logs `Detected XID 79 for GPU 0` here ``; a line
    that is one code span is the tool's, a table's cell a value), or in a clause opened by a cue (`If ...`, `See ...`, `... when ...`,
    `e.g. ...`). A launcher's prefix before it is no prose."""
    cut = len(line) - len(prefixes(line))
    if start < cut:
        return False
    if _RAISE.match(line, cut) or _RAISED.search(line, cut, start):
        return True     # a traceback's source line (`raise RuntimeError(f"NCCL error: {error_str}")`): the message's template
    if line.find("<!--", cut, start) >= 0:
        return True
    if line.count("`", cut, start) % 2 and not line.lstrip().startswith("|"):     # a table's cells hold values
        opened = line.rfind("`", cut, start)
        closed = line.find("`", start)
        if _WORD.search(line, cut, opened) or (closed >= 0 and _WORD.search(line, closed + 1)):
            return True
    clause = max((m.end() for m in _CLAUSE.finditer(line, cut, start)), default=cut)
    return bool(_CUE.search(line, clause, start))


def printed(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of `pattern` in the text that is not mentioned in prose (its first few on a line: a line holds
    one message, a hostile one thousands, each read back to the line's start)."""
    pos, line_start, on_line = 0, -1, 0
    pattern = fast(pattern)         # the same matches, each position left at one test where the first characters are known
    while found := pattern.search(text, pos):
        start = text.rfind("\n", 0, found.start()) + 1
        on_line = on_line + 1 if start == line_start else 1
        line_start = start
        if on_line > 8:
            end = text.find("\n", found.start())
            if end < 0:
                return None
            pos = end + 1
            continue
        end = text.find("\n", found.start())
        if not mentioned(text[start:end if end >= 0 else len(text)], found.start() - start):
            return found
        pos = max(found.end(), found.start() + 1)
    return None


def printed_lines(text: str, message: re.Pattern[str]) -> list[str]:
    """The text's lines without those whose first message (`message`) is mentioned in prose."""
    return [line for line in text.splitlines() if not ((m := message.search(line)) and mentioned(line, m.start()))]
