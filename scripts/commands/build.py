"""The build stage's commands: base, build, lock, stage-wheels, and the cold-build and cold-start benchmarks."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .common import (
    err,
    out,
    selected,
)

if TYPE_CHECKING:
    from ..builder.buildkit import BuildRequest

import argparse
from collections.abc import Callable
from pathlib import Path

from ..errors import UserError
from ..settings import Settings


def cmd_base(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.base import base_targets, make_bases, make_platform_bases, split_by_route
    from ..builder.engine import connect, find_build_client
    from ..plan.platforms import host_platform
    from ..render import load_rendered
    from ..tables import base_rows
    platform = settings.platform if settings.platform != "all" else None
    # PLATFORM without IMAGE: every image built for it (the default image may be amd64 only).
    specs = selected(settings) if settings.image or platform is None else load_rendered(settings.images)
    if platform is not None and not any(platform in s.platforms for s in specs):
        having = [s.tag for s in load_rendered(settings.images) if platform in s.platforms]
        raise UserError(f"no selected image is built for {platform}; images with it: {', '.join(having) or 'none'} "
                        f"(add {platform} to an image's `platforms:` in matrix.yaml and `make render`)")
    targets = base_targets(specs, platform)
    if args.only_unreachable and settings.platform is None:     # make build without PLATFORM: first platforms
        targets = [t for t in targets if t.platform == t.spec.platforms[0]]
    native, other = split_by_route(targets, host_platform())
    client = connect(settings.child_env)
    rows = make_bases(client, native, force=settings.force, log=out, only_unreachable=args.only_unreachable)
    if other:
        cli = find_build_client(settings.docker_cli)
        rows += make_platform_bases(client, cli.argv, {**settings.child_env, **cli.env}, other, force=settings.force,
                                    log=out, only_unreachable=args.only_unreachable)
    if not rows:
        out("the selected images start from NVIDIA's devel images: nothing to bootstrap")
    else:
        out(base_rows(rows))
    return 0


def cmd_build(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.buildkit import build_all
    from ..builder.engine import connect, find_build_client
    from ..plan.spec import Release, Target, builds
    from ..tables import build_failure, build_table
    specs = selected(settings)
    units = builds(specs, settings.platform)
    client = connect(settings.child_env)
    cli = find_build_client(settings.docker_cli)
    first = units[0]
    shown = ",".join(first.platforms) if isinstance(first, Release) else settings.platform
    out(f"building {len(specs)} image(s) with {cli.describe()}" + (f" for {shown}" if shown else ""))
    request = _build_request(settings)
    outcomes = build_all(client, cli, units, request, keep_going=settings.keep_going, echo=out,
                         on_failure=lambda o, stopping: err(build_failure(o, stopping)))
    out()
    out(build_table(outcomes))
    built = [u.local_tag for u, o in zip(units, outcomes, strict=False) if o.ok and isinstance(u, Target)]
    if built:
        from ..builder.layers import family, family_table
        out("\nwhat each image costs a node (unpacked; compressed per layer: make bench-start):")
        out(family_table(client, family(client, built, specs[0].repository)))
    failed = [o for o in outcomes if not o.ok]
    skipped = len(specs) - len(outcomes)
    if failed:
        logs = ", ".join(str(o.log) for o in failed if o.log)
        err(f"\n{len(failed)} build(s) failed" + (f"; full logs: {logs}" if logs else "") +
            (f"; {skipped} not attempted" if skipped else ""))
        return 1
    if len(specs) == 1:
        one = None if isinstance(first, Release) else settings.platform
        out(f"\nnext: make verify IMAGE={specs[0].tag}" + (f" PLATFORM={one}" if one else ""))
    return 0


def _build_request(settings: Settings) -> BuildRequest:
    from ..builder.buildkit import BuildRequest
    return BuildRequest(images_dir=settings.images, logs=settings.logs, wheels_stage=settings.wheels_stage,
                        root=settings.root, ca=settings.ca_cert, folders=settings.wheels,
                        base_override=settings.base_image, network=settings.build_network, env=settings.child_env,
                        extra_build_args=settings.extra_build_args, uv_cache=settings.uv_cache,
                        timeout=settings.build_timeout)


def cmd_lock(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.lock import lock_folders, refresh
    from ..render import load_rendered, select
    specs = select(load_rendered(settings.images), settings.image or "all")
    folders = lock_folders(settings.wheels)
    out(f"locking {len(specs)} image(s); wheel folders: {', '.join(map(str, folders)) or 'none'}")
    failures = refresh(specs, settings.images, folders, env=settings.child_env, uv=settings.uv,
                       force=settings.force, echo=out)
    for failure in failures:
        err(f"error: {failure}")
    return 1 if failures else 0


def cmd_stage_wheels(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.lock import stage_for_build
    from ..builder.wheels import stage_wheels
    specs = selected(settings)
    if len(specs) != 1:
        raise UserError("stage-wheels prepares build/wheels for one image: IMAGE=<tag>")
    spec, folders = specs[0], list(settings.wheels)
    stage_wheels(spec, folders, settings.wheels_stage)
    one = settings.platform not in (None, "all")      # a CI row names its platform; else every one of the image
    for target in spec.targets(settings.platform) if one else spec.every_target:
        staged, offline = stage_for_build(target, settings.images, folders, settings.wheels_stage, settings.uv_cache,
                                          warn=err)
        out(f"build/wheels for {spec.tag} ({target.platform}): {', '.join(staged)}{' (offline-complete)' if offline else ''}")
    return 0


def cmd_bench_build(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.bench import run_bench
    from ..builder.engine import connect, find_build_client
    specs = selected(settings)
    if len(specs) != 1:
        raise UserError("bench-build compares one image: IMAGE=<tag>")
    return run_bench(connect(settings.child_env), find_build_client(settings.docker_cli), specs[0],
                     _build_request(settings), runs=settings.bench_runs, rounds=settings.bench_rounds,
                     json_out=settings.bench_json,
                     bench_dir=settings.build_dir / "bench", echo=out)


def cmd_bench_start(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.bench import BENCH_REPOSITORY
    from ..builder.startbench import run_start
    specs = selected(settings)
    if len(specs) != 1:
        raise UserError("bench-start compares one image: IMAGE=<tag>")
    plain = f"{BENCH_REPOSITORY}:{specs[0].tag}-plain-pip"     # what `make bench-build` leaves in the engine

    def squash(image: str, tag: str, folder: Path, echo: Callable[[str], None]) -> Path:
        """make sqsh's file of the image (zstd), for the squashfs row."""
        from ..builder.engine import connect
        from ..publish.sqsh import make_sqsh
        return make_sqsh(connect(settings.child_env), image, tag, tag, folder, echo=echo)[0]
    return run_start(specs[0], plain, settings.build_dir, settings.bench_start_json, after=settings.bench_after,
                     squash=squash, echo=out)
