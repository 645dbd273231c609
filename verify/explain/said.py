"""Whether a tool's message on a line is the tool saying it, or text that merely mentions it: a README's
"If you see `CUDA error: out of memory`, ...", a commit's "Fix CUDA error: ...", a program's source
(`raise RuntimeError("CUDA error: ...")`). A program prints its error at the start of a message: at the line's start
(under a launcher's prefix, taken off before), after an exception's name or a log record's head (`RuntimeError: `,
`what():  `, `E0501 ... file.cc:12] `, `(pid=1) `), or as the code it names (`code=214(cudaErrorECCUncorrectable)`);
mentioned, it follows a word of a sentence, a quote or a backtick. Read only for the message kinds whose verdict a
mention would give (a running program's CUDA error, NVML's refusal): a tool's tables and listings have no prose."""
from __future__ import annotations

import re

_HEAD = re.compile(r"(?:^|[-:\])>|]|\bcode=-?\d+\(|\b(?:returned|failed with))$")


def said(line: str, start: int) -> bool:
    """Whether the message at `start` of the line is said by the program that printed the line."""
    before = line[max(0, start - 60):start].rstrip()
    # inside a markdown code span (an odd backtick before it) or an HTML comment (an issue template's example)
    return line.count("`", 0, start) % 2 == 0 and line.find("<!--", 0, start) < 0 and bool(_HEAD.search(before))
