"""The image's pip/uv constraints, made from its lock at build time (stdlib only: it runs on the image's Python).

torch, torchvision, torchaudio, triton and the CUDA wheels (nvidia-*, cuda-*) are pinned to the versions the lock
installed; the image sets PIP_CONSTRAINT and UV_CONSTRAINT to the file, so `pip install torch==<another>` (or a
package that wants another torch) fails with pip's own conflict message instead of replacing the verified torch,
while any package that fits installs as usual. Overriding on purpose: `PIP_CONSTRAINT= pip install ...`
(UV_CONSTRAINT= for uv), or a derived image's `ENV PIP_CONSTRAINT=`.

    python3 constraints.py --lock requirements.lock --out /etc/pip/constraint.txt
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

CONSTRAINT_PATH = "/etc/pip/constraint.txt"     # where NGC's images keep theirs
PINNED = re.compile(r"^(torch|torchvision|torchaudio|triton|nvidia-(?!ml-py$)[a-z0-9-]+|cuda-[a-z0-9-]+)$")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(;[^\\]*)?")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def constraints(lock_text: str) -> list[str]:
    """`name==version[ ; marker]` lines for the pinned packages of a lock (uv pip compile --generate-hashes), in
    the lock's order; nvidia-ml-py (NVML's Python bindings, not a CUDA library) stays free."""
    lines = []
    for raw in lock_text.splitlines():
        match = _PIN.match(raw.strip())
        if match and PINNED.match(canonical(match.group(1))):
            marker = (match.group(3) or "").strip()
            lines.append(f"{canonical(match.group(1))}=={match.group(2)}" + (f" {marker}" if marker else ""))
    return lines


def render(lock_text: str, source: str) -> str:
    head = [f"# Made from {source} at build time: the torch of this image and the CUDA wheels it was verified with.",
            "# pip reads it through PIP_CONSTRAINT, uv through UV_CONSTRAINT. To replace torch on purpose:",
            "#   PIP_CONSTRAINT= pip install torch==<version>     (uv: UV_CONSTRAINT= uv pip install ...)"]
    return "\n".join(head + constraints(lock_text)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", required=True)
    parser.add_argument("--out", default=CONSTRAINT_PATH)
    args = parser.parse_args(argv)
    lock = Path(args.lock)
    text = lock.read_text(encoding="utf-8")
    if not constraints(text):
        print(f"error: {lock} pins no torch: not an image lock", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(render(text, "/usr/share/torchimages/requirements.lock"), encoding="utf-8")
    os.chmod(tmp, 0o644)
    os.replace(tmp, out)
    print(f"constraints: {len(constraints(text))} packages pinned -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
