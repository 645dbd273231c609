"""One install step's files, set apart for a layer of their own (stdlib only: it runs on the build stage's Python).

A cross build (an arm64 image on an x86 builder) installs the venv on the builder's own platform, where nothing is
emulated, and copies each part into the target image with one COPY, so the image keeps the layers a native build
has (venv, cuda, torch, rest). This script takes what one step changed under ROOT (ctime after the step's stamp, as
the template's `find -cnewer` does) into OUT/<same path>:

- files and symlinks are moved (`--copy`: copied, for the venv's own files, which later steps still run);
- directories (and every folder above an entry) are made in OUT with the source's mode and times, and never moved:
  an earlier part's files stay put;
- times are set last, deepest first, so filling a directory does not change the time it carries.

    python3 layerpart.py --stamp /tmp/uv/stamp --root /opt --out /parts/torch [--copy]
"""
from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
from pathlib import Path


def changed(root: Path, since_ns: int) -> list[Path]:
    """Every entry under root (root included) whose status changed after since_ns, parents before children."""
    found: list[Path] = []
    for here, dirs, files in os.walk(root):
        dirs.sort()
        for name in [here, *(os.path.join(here, f) for f in sorted(files)),
                     *(os.path.join(here, d) for d in dirs if os.path.islink(os.path.join(here, d)))]:
            if os.lstat(name).st_ctime_ns > since_ns:
                found.append(Path(name))
    return found


def set_apart(entries: list[Path], out: Path, copy: bool) -> int:
    """Move (or copy) the entries to out/<their absolute path>; returns how many files and links went. Every folder
    on the way (changed or not) is made with its source's mode and times: COPY gives the target's folders those."""
    dirs: dict[Path, os.stat_result] = {}
    moved = 0
    for entry in entries:
        info = os.lstat(entry)
        dest = out / entry.relative_to(entry.anchor)
        for parent in entry.parents[:-1]:             # every folder above it but the filesystem's root
            dirs.setdefault(out / parent.relative_to(parent.anchor), os.lstat(parent))
        if stat.S_ISDIR(info.st_mode):
            dest.mkdir(parents=True, exist_ok=True)
            dirs[dest] = info
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if copy:
            shutil.copy2(entry, dest, follow_symlinks=False)
        else:
            os.rename(entry, dest)
        moved += 1
    for dest, info in sorted(dirs.items(), key=lambda d: len(d[0].parts), reverse=True):
        os.chmod(dest, stat.S_IMODE(info.st_mode))
        os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stamp", required=True, help="the step's stamp file: entries changed after its mtime go")
    parser.add_argument("--root", required=True, help="the folder the step installed into (/opt)")
    parser.add_argument("--out", required=True, help="where the part's tree is made (/parts/<name>)")
    parser.add_argument("--copy", action="store_true", help="copy instead of moving (later steps still need them)")
    args = parser.parse_args(argv)
    try:
        since = os.stat(args.stamp).st_mtime_ns
        moved = set_apart(changed(Path(args.root), since), Path(args.out), args.copy)
    except OSError as exc:
        print(f"error: cannot set apart {args.root} into {args.out}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: {moved} files and links")
    return 0


if __name__ == "__main__":
    sys.exit(main())
