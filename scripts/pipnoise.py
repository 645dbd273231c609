"""pip's messages less the noise of the host's pip configuration: a local index (`extra-index-url = file:///...`)
that lacks a project, or a find-links folder missing, makes pip warn "Location '...' is ignored" once per package
(about 110 lines on `make setup`). Neither bears on the result: a package no source holds still ends in pip's own
error. A missing configured folder is said once; every other line passes unchanged.

Standard library only: scripts/bootstrap.sh pipes pip's stderr through `python3 scripts/pipnoise.py` before the
virtual environment has its packages."""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import unquote, urlsplit

# "neither a file nor a directory": a local index's page for a project it lacks (or a missing find-links file: URL);
# "non-existing path": a find-links folder that is not there
IGNORED = re.compile(r"^WARNING: Location '(?P<location>[^']+)' is ignored: it is (?:(?P<page>neither a file nor a "
                     r"directory)|either a non-existing path or lacks a specific scheme)\.?\s*$")


def local_path(location: str) -> str | None:
    """The path a local location names (file:// URL or plain path), None for a remote one."""
    if location.startswith("file:"):
        return unquote(urlsplit(location).path)
    return None if re.match(r"^[a-z][a-z0-9+.-]*://", location) else location


def quiet(lines: Iterable[str], is_dir: Callable[[str], bool] = os.path.isdir) -> Iterator[str]:
    """pip's lines without "Location ... is ignored" for a local location: a project page dropped where its index
    folder exists (the index lacks this project), a missing folder said once."""
    said: set[str] = set()
    for line in lines:
        match = IGNORED.match(line.rstrip("\n"))
        path = local_path(match["location"]) if match else None
        if match is None or path is None:
            yield line
            continue
        folder = (os.path.dirname(path.rstrip("/")) or "/") if match["page"] else path
        if is_dir(folder) or folder in said:
            continue
        said.add(folder)
        yield (f"note: pip skips {folder}: no such folder (named by this host's pip configuration: "
               f"`pip config list`, PIP_FIND_LINKS, PIP_EXTRA_INDEX_URL)\n")


def quieted(text: str) -> str:
    """quiet() over a whole captured output (the detail of an error that quotes pip)."""
    return "".join(quiet(text.splitlines(True)))


def main() -> int:
    for line in quiet(sys.stdin):
        sys.stderr.write(line)
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
