"""A Dockerfile parser just strict enough to refuse what `docker build` would misread.

It follows BuildKit's rules for line continuations (a trailing backslash joins the next line; blank and
comment lines inside a continuation are dropped) and heredocs, and reports an instruction that a stray
backslash swallowed, an unknown instruction, a file that ends mid-continuation, or no FROM at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

INSTRUCTIONS = frozenset({"ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
                          "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"})
HEREDOC = re.compile(r"<<-?\s*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1")


@dataclass(frozen=True)
class Instruction:
    line: int          # 1-based line where it starts
    keyword: str       # upper case
    text: str          # the whole logical line, continuations joined


class DockerfileError(ValueError):
    """`str()` is '<line>: <problem>'."""


def parse(text: str) -> list[Instruction]:
    lines = text.splitlines()
    out: list[Instruction] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i
        parts = [raw.rstrip()]
        while parts[-1].endswith("\\"):
            parts[-1] = parts[-1][:-1]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
            if i >= len(lines):
                raise DockerfileError(f"{start + 1}: the file ends inside a line continuation (a trailing backslash)")
            word = lines[i].split(maxsplit=1)[0] if lines[i].strip() else ""
            if not lines[i][:1].isspace() and word in INSTRUCTIONS:
                raise DockerfileError(f"{i + 1}: `{lines[i].strip()}` is swallowed by the line continuation that "
                                      f"starts at line {start + 1} (a trailing backslash with nothing after it)")
            parts.append(lines[i].rstrip())
        logical = " ".join(p.strip() for p in parts)
        keyword = logical.split(maxsplit=1)[0].upper()
        if keyword not in INSTRUCTIONS:
            raise DockerfileError(f"{start + 1}: unknown instruction {keyword!r}")
        i += 1
        if keyword in {"RUN", "COPY", "ADD"}:
            for match in HEREDOC.finditer(logical):
                end = match.group(2)
                while i < len(lines) and lines[i].strip() != end:
                    i += 1
                if i >= len(lines):
                    raise DockerfileError(f"{start + 1}: heredoc <<{end} is never closed")
                i += 1
        out.append(Instruction(start + 1, keyword, logical))
    if not any(ins.keyword == "FROM" for ins in out):
        raise DockerfileError("1: no FROM instruction")
    first = next(ins for ins in out if ins.keyword != "ARG")
    if first.keyword != "FROM":
        raise DockerfileError(f"{first.line}: {first.keyword} before the first FROM (only ARG may come first)")
    return out
