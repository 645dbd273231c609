"""The plan stage's commands: render (and its --check), lint, list, compat, docs-codes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .common import (
    err,
    out,
    shown,
)

if TYPE_CHECKING:
    pass

import argparse

from ..settings import Settings


def cmd_render(settings: Settings, args: argparse.Namespace) -> int:
    from ..plan.compat import load_compat
    from ..plan.matrix import load_matrix
    from ..render import drift, rendered_files, write_images
    specs = load_matrix(settings.matrix, load_compat(settings.compat))
    files = rendered_files(specs, settings.templates)
    if args.check:
        from ..builder.lock import check_locks
        changed = drift(files, settings.images)
        stale = check_locks(specs, settings.images, err)     # a missing or stale requirements.lock fails too
        if changed or stale:
            err("images/ is out of date with matrix.yaml and templates/ (rendered files are generated, never edited):")
            for rel in changed + stale:
                err(f"  images/{rel}")
            err("fix: run `make render`" + (" and `make lock`" if stale else "") + " and commit images/")
            return 1
        out(f"images/ matches a fresh render and every requirements.lock its image's inputs ({len(specs)} images)")
        return 0
    removed = write_images(files, settings.images, settings.build_dir)
    for spec in specs:
        out(f"  images/{spec.tag}/{'   (default)' if spec.default else ''}")
    for name in removed:
        out(f"  removed images/{name}{'/' if '.' not in name[-5:] else ''} (no longer in the matrix)")
    out(f"rendered {len(specs)} images from {settings.matrix.name}")
    from ..builder.lock import check_locks
    stale = check_locks(specs, settings.images, lambda line: None)   # unresolved stubs: check-render warns
    if stale:
        out(f"{len(stale)} lock(s) no longer match matrix.yaml (make build refuses them until `make lock`):")
        for line in stale:
            out(f"  images/{line}")
    return 0


def cmd_lint(settings: Settings, args: argparse.Namespace) -> int:
    from ..lint import lint
    files = sorted(settings.images.glob("*/Dockerfile"))
    ok, output = lint(files)
    if output:
        out(output)
    out(f"hadolint: {len(files)} Dockerfiles, {'no findings' if ok else 'findings above'}")
    return 0 if ok else 1


def cmd_list(settings: Settings, args: argparse.Namespace) -> int:
    from ..render import load_rendered
    from ..tables import image_list
    specs = load_rendered(settings.images)
    out(next(s.tag for s in specs if s.default) if args.default else image_list(specs))
    return 0


def cmd_compat(settings: Settings, args: argparse.Namespace) -> int:
    from ..plan.compat_refresh import refresh
    for line in refresh(settings.child_env, settings.compat):
        out(line)
    out("compat.yaml refreshed from PyPI metadata; review `git diff compat.yaml`, then `make render`")
    return 0


def cmd_docs_codes(settings: Settings, args: argparse.Namespace) -> int:
    from ..docs import write_codes_doc
    out(f"wrote {shown(settings, write_codes_doc(settings.root))} from verify/codes.py")
    return 0
