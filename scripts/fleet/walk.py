"""The fleet folder walked as hostile input: bounded in depth and names, no symbolic link followed out of DIR, and
the report blocks of saved `kubectl logs` files.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .cluster import REPORT_BEGIN, REPORT_END
from .model import MAX_DEPTH, MAX_ENTRIES, SUFFIXES


def _blocks(text: str) -> Iterator[str | None]:
    """The reports a pod printed between the BEGIN/END VERIFY REPORT lines (`kubectl logs` saved to a file); None for
    a block cut before its END line (the pod stopped while printing it, or the log was truncated): a report that may
    have said a fault, which the reader lists, never skips."""
    lines: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(REPORT_BEGIN):
            if lines and any(x.strip() for x in lines):
                yield None                  # a BEGIN again before the END: the block before it was cut
            lines = []
        elif line.startswith(REPORT_END) and lines is not None:
            yield "\n".join(lines)
            lines = None
        elif lines is not None:
            lines.append(line)
    if lines is not None:
        yield None


def _link_problem(path: Path, root: str, rel: str) -> str | None:
    """Why a symbolic link under DIR is listed rather than followed; None when what it points at lies inside DIR
    (read there, once) or is no report (a link to a file of another kind)."""
    if not os.path.exists(path):
        return "a symbolic link that resolves to nothing (dangling, or a loop): not read"
    target = os.path.realpath(path)
    if os.path.commonpath([root, target]) == root:
        return None
    if os.path.isdir(target) or Path(rel).suffix in SUFFIXES:
        return (f"a symbolic link out of DIR (to {target}): not followed; give DIR=<that folder>, or copy the "
                "reports in")
    return None


def _listing(top: Path, budget: int) -> list[os.DirEntry[str]]:
    """At most `budget` + 1 entries of one folder, by name (a folder of millions is not read whole)."""
    entries: list[os.DirEntry[str]] = []
    with os.scandir(top) as it:
        for entry in it:
            entries.append(entry)
            if len(entries) > budget:
                break
    return sorted(entries, key=lambda e: e.name)


def walk(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every .json, .log and .txt name under `folder` (hidden names left out), and (name, why) for each folder,
    link or name the bounded walk could not read. No symbolic link is followed (see _link_problem)."""
    root = os.path.realpath(folder)
    found: list[Path] = []
    unreadable: list[tuple[str, str]] = []
    pending, walked = [(folder, 0)], 0
    while pending:
        top, depth = pending.pop()
        where = top.relative_to(folder).as_posix()
        try:
            entries = _listing(top, MAX_ENTRIES - walked)
        except OSError as exc:
            unreadable.append((f"{where}/", f"the folder cannot be read ({exc.strerror or exc})"))
            continue
        walked += len(entries)
        if walked > MAX_ENTRIES:
            unreadable.append((f"{where}/", f"more than {MAX_ENTRIES:,} names under DIR: the rest not read"))
            break
        for entry in entries:
            rel = f"{where}/{entry.name}" if where != "." else entry.name
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    why = _link_problem(Path(entry.path), root, rel)
                    unreadable += [(rel, why)] if why else []
                elif entry.is_dir(follow_symlinks=False):
                    if depth + 1 > MAX_DEPTH:
                        unreadable.append((f"{rel}/", f"deeper than {MAX_DEPTH} folders below DIR: not read"))
                    else:
                        pending.append((Path(entry.path), depth + 1))
                elif Path(entry.name).suffix in SUFFIXES:
                    found.append(Path(entry.path))
            except OSError as exc:
                unreadable.append((rel, f"cannot be read ({exc.strerror or exc})"))
    return sorted(found), unreadable
