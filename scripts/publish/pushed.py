"""The push record ($(REPORTS_DIR)/push/pushed.json, written by `make push`) read back: a tag pinned by digest.

Slurm and Kubernetes outputs run exactly what was pushed and verified, never what a tag points at now:

    from .pushed import pinned
    image = pinned(settings.push_dir / "pushed.json", spec.tag)          # registry/repo@sha256:...
    # one platform of a multi-platform image (its manifest, the digest `make attest` signs):
    image = pinned(settings.push_dir / "pushed.json", spec.tag, "linux/arm64")

`make slurm`, `make isolate` and `make k8s-verify` (commands/common.py's `cluster_image`) call it when the record
holds the tag (pushed to REGISTRY), and otherwise refuse in one line naming `make push` (UNPINNED=1 runs the registry
tag); `make gate IMAGE=<tag>` and `make report IMAGE=<tag>` resolve a tag the same way.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import UserError

DIGEST_REF = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")


def read_record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} not found: run `make push IMAGE=<tag> REGISTRY=host:port` first") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is unreadable ({exc}); push again") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a push record (a JSON object of tag -> digests); push again")
    return data


def pinned(record: Path | dict[str, Any], tag: str, platform: str | None = None) -> str:
    """`registry/repo@sha256:...` for `tag` from the push record: the tag's own digest (an index for a
    multi-platform image), or with `platform` that platform's manifest digest."""
    data = read_record(record) if isinstance(record, Path) else record
    entry = data.get(tag)
    if not isinstance(entry, dict):
        raise UserError(f"{tag} is not in the push record: make push IMAGE={tag} REGISTRY=... first")
    if platform is not None:
        platforms = entry.get("platforms") or {}
        if platforms:
            entry = platforms.get(platform)
            if not isinstance(entry, dict):
                raise UserError(f"{tag}: {platform} is not in the push record (pushed: "
                                f"{', '.join(sorted(platforms)) or 'none'})")
    reference = entry.get("reference")
    if not isinstance(reference, str) or not DIGEST_REF.match(reference):
        raise UserError(f"{tag}: the push record holds no digest reference ({str(reference)[:80]!r}); push again")
    return reference
