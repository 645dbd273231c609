"""`python -m scripts <command>`: one command table (name → handler, help, knobs), the one error boundary.

Each command names the knobs (environment variables, or their flags) it uses; `Settings.load` parses and
checks exactly those, once. Only `render` (and `check-render`) read matrix.yaml and compat.yaml; every other
command reads images/<tag>/spec.json through `render.load_rendered`. Exit statuses: 0 done, 1 a build, a
check or a drift check failed, 2 bad input or environment (one line saying what to fix), 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import MatrixError, UserError, one_line
from .settings import KNOBS, Settings

if TYPE_CHECKING:
    from .builder.buildkit import BuildRequest
    from .fleet.slurm import Job
    from .plan.spec import ImageSpec
    from .publish.registry import Credentials

OCI_INDEX_TYPE = "application/vnd.oci.image.index.v1+json"

Handler = Callable[[Settings, argparse.Namespace], int]


def out(text: str = "") -> None:
    print(text, flush=True)


def err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- handlers ----

def cmd_render(settings: Settings, args: argparse.Namespace) -> int:
    from .plan.compat import load_compat
    from .plan.matrix import load_matrix
    from .render import drift, rendered_files, write_images
    specs = load_matrix(settings.matrix, load_compat(settings.compat))
    files = rendered_files(specs, settings.templates)
    if args.check:
        from .builder.lock import check_locks
        changed = drift(files, settings.images)
        stale = check_locks(specs, settings.images, err)     # a missing or stale requirements.lock fails too
        if changed or stale:
            err("images/ is out of date with matrix.yaml and templates/ (rendered files are generated, never edited):")
            for rel in changed + stale:
                err(f"  images/{rel}")
            err("fix: run `make render`" + (" and `make lock`" if stale else "") + " and commit images/")
            return 1
        out(f"images/ matches a fresh render ({len(specs)} images)")
        return 0
    removed = write_images(files, settings.images, settings.build_dir)
    for spec in specs:
        out(f"  images/{spec.tag}/{'   (default)' if spec.default else ''}")
    for name in removed:
        out(f"  removed images/{name}{'/' if '.' not in name[-5:] else ''} (no longer in the matrix)")
    out(f"rendered {len(specs)} images from {settings.matrix.name}")
    from .builder.lock import check_locks
    stale = check_locks(specs, settings.images, lambda line: None)   # unresolved stubs: check-render warns
    if stale:
        out(f"{len(stale)} lock(s) no longer match matrix.yaml (make build refuses them until `make lock`):")
        for line in stale:
            out(f"  images/{line}")
    return 0


def cmd_lint(settings: Settings, args: argparse.Namespace) -> int:
    from .lint import lint
    files = sorted(settings.images.glob("*/Dockerfile"))
    ok, output = lint(files)
    if output:
        out(output)
    out(f"hadolint: {len(files)} Dockerfiles, {'no findings' if ok else 'findings above'}")
    return 0 if ok else 1


def cmd_list(settings: Settings, args: argparse.Namespace) -> int:
    from .render import load_rendered
    from .tables import image_list
    specs = load_rendered(settings.images)
    out(next(s.tag for s in specs if s.default) if args.default else image_list(specs))
    return 0


def cmd_compat(settings: Settings, args: argparse.Namespace) -> int:
    from .plan.compat_refresh import refresh
    for line in refresh(settings.child_env, settings.compat):
        out(line)
    out("compat.yaml refreshed from PyPI metadata; review `git diff compat.yaml`, then `make render`")
    return 0


def _selected(settings: Settings) -> list[ImageSpec]:
    from .render import load_rendered, select
    return select(load_rendered(settings.images), settings.image)


def _one_platform(settings: Settings, command: str) -> str | None:
    if settings.platform == "all":
        raise UserError(f"PLATFORM=all is for make build (one multi-platform buildx build); make {command} takes one "
                        f"platform, e.g. PLATFORM=linux/arm64")
    return settings.platform


def cmd_base(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.base import base_targets, make_bases, make_platform_bases, split_by_route
    from .builder.engine import connect, find_build_client
    from .plan.platforms import host_platform
    from .render import load_rendered
    from .tables import base_rows
    platform = settings.platform if settings.platform != "all" else None
    # PLATFORM without IMAGE: every image built for it (the default image may be amd64 only).
    specs = _selected(settings) if settings.image or platform is None else load_rendered(settings.images)
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
    from .builder.buildkit import build_all
    from .builder.engine import connect, find_build_client
    from .plan.spec import Release, Target, builds
    from .tables import build_failure, build_table
    specs = _selected(settings)
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
        from .builder.layers import family, family_table
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
    from .builder.buildkit import BuildRequest
    return BuildRequest(images_dir=settings.images, logs=settings.logs, wheels_stage=settings.wheels_stage,
                        root=settings.root, ca=settings.ca_cert, folders=settings.wheels,
                        base_override=settings.base_image, network=settings.build_network, env=settings.child_env,
                        extra_build_args=settings.extra_build_args, uv_cache=settings.uv_cache,
                        timeout=settings.build_timeout)


def cmd_verify(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.engine import connect
    from .fsutil import check_writable
    from .run_verify import echo_to_stdout, find_local_image, verify_all
    from .tables import verify_summary
    ref = _outside_matrix(settings)
    if ref is not None:                       # IMAGE=<any local image, not a matrix tag>
        local = find_local_image(ref, lambda: connect(settings.child_env))
        if local.client is not None:
            return _verify_foreign(settings, ref, local.client)
        _matrix_refusal(settings, local.why_not)
    specs = _selected(settings)
    platform = _one_platform(settings, "verify")
    targets = [spec.targets(platform)[0] for spec in specs]
    check_writable(settings.reports)
    client = connect(settings.child_env)
    outcomes = verify_all(client, targets, shm_size=settings.shm_size, timeout=settings.verify_timeout,
                          extra_args=list(settings.verify_args), reports=settings.reports, echo=echo_to_stdout)
    out()
    out(verify_summary(outcomes))
    if any(o.problem for o in outcomes):
        return 2
    return 0 if all(o.exit_code == 0 and not o.mismatches for o in outcomes) else 1


def _outside_matrix(settings: Settings) -> str | None:
    """The one image name IMAGE gives when it is no rendered tag (nor a list, nor all); None: a matrix selection."""
    from .render import requested_tags
    name = settings.image.strip()
    if requested_tags(settings.image) != (name,) or name == "all" or (settings.images / name / "spec.json").is_file():
        return None
    return name


def _matrix_refusal(settings: Settings, why_not: str) -> None:
    """IMAGE is neither a matrix tag nor a local image: the matrix's own error, with why no local image was
    found when the lookup itself failed."""
    try:
        _selected(settings)
    except UserError as exc:
        if why_not:
            raise UserError(f"{exc} ({why_not})") from None
        raise


def _verify_foreign(settings: Settings, ref: str, client: object) -> int:
    """Verify any local image with this checkout's verify/ mounted."""
    from .fsutil import check_writable
    from .run_verify import echo_to_stdout, verify_foreign_image
    from .tables import verify_summary
    check_writable(settings.reports)
    outcome = verify_foreign_image(client, ref, shm_size=settings.shm_size, timeout=settings.verify_timeout,
                                   extra_args=list(settings.verify_args), reports=settings.reports,
                                   echo=echo_to_stdout)
    out()
    out(verify_summary([outcome]))
    return 0 if outcome.exit_code == 0 else 1


def cmd_ci_matrix(settings: Settings, args: argparse.Namespace) -> int:
    from .publish.ci_matrix import ci_matrix_json
    from .render import load_rendered
    out(ci_matrix_json(load_rendered(settings.images), args.per))
    return 0


def cmd_bake(settings: Settings, args: argparse.Namespace) -> int:
    from .fsutil import atomic_write
    from .publish.bake import bake_json
    from .render import load_rendered
    specs = load_rendered(settings.images)
    path = Path(args.output).absolute() if args.output else settings.bake_file
    atomic_write(path, bake_json(specs, settings.registry))
    shown = os.path.relpath(path, settings.root) if path.is_relative_to(settings.root) else str(path)
    out(f"wrote {shown}: {len(specs)} targets; build them all with `mkdir -p build/wheels && docker buildx bake "
        f"-f {shown}` (a group: `docker buildx bake -f {shown} runtime`)")
    return 0


def _registry_image(settings: Settings, image: str) -> str:
    return f"{settings.registry}/{image}" if settings.registry else image


def _cluster_image(settings: Settings, spec: ImageSpec, launcher: str | None = None) -> str:
    """What the nodes run: the digest `make push` recorded for the tag (what was verified and attested), else the
    registry tag. A record pushed to another REGISTRY than the one given is not used (the tag is, and it is said)."""
    from .publish.pushed import pinned, read_record
    record_path = settings.push_dir / "pushed.json"
    tagged = _registry_image(settings, spec.image)
    record = read_record(record_path) if record_path.is_file() else {}
    if spec.tag not in record:
        return _unpushed(settings, tagged, launcher or settings.launcher)
    reference = pinned(record, spec.tag)
    if settings.registry and not reference.startswith(settings.registry.rstrip("/") + "/"):
        out(f"  note: {spec.tag} was pushed as {reference}, not to REGISTRY={settings.registry}: the job runs the tag "
            f"{tagged}")
        return tagged
    out(f"  image: {reference} (the digest make push recorded for {spec.tag})")
    return reference


def _unpushed(settings: Settings, tagged: str, launcher: str) -> str:
    """The tag itself, when a registry is named or the local name is asked for (LOCAL_IMAGE=1, or a launcher that
    never pulls: none runs a venv, oci a bundle); otherwise a job no node could pull, refused in one line."""
    from .fleet.cluster import local_name_refusal
    problem = local_name_refusal(tagged, settings.registry, settings.local_image, launcher)
    if problem:
        raise UserError(problem)
    return tagged


def _shown(settings: Settings, path: Path) -> str:
    return os.path.relpath(path, settings.root) if path.is_relative_to(settings.root) else str(path)


def _node_platform(settings: Settings, spec: ImageSpec) -> str | None:
    """PLATFORM picks the nodes of that architecture (it must be one of the image's); None: any of the image's."""
    platform = _one_platform(settings, "k8s-verify/slurm")
    return spec.targets(platform)[0].platform if platform else None


def cmd_k8s(settings: Settings, args: argparse.Namespace) -> int:
    import yaml

    from .fleet.cluster import job_name, k8s_manifests, k8s_wait, rdma_hint
    from .fsutil import atomic_write
    specs = _selected(settings)
    from .fleet.cluster import default_gpus
    nodes = settings.nodes
    for spec in specs:
        gpus = default_gpus(spec, settings.gpus)
        docs = k8s_manifests(spec, _cluster_image(settings, spec, "kubernetes"), nodes, gpus,
                             platform=_node_platform(settings, spec), rdma=settings.rdma_resource)
        name = job_name(spec.tag, nodes)
        path = settings.k8s_dir / f"{name}.yaml"
        atomic_write(path, yaml.safe_dump_all(docs, sort_keys=False))
        shown = _shown(settings, path)
        out(f"wrote {shown}\n  kubectl apply -f {shlex.quote(shown)} && {k8s_wait(name)}\n  kubectl logs -l job-name={name} --tail=-1   # reports between the BEGIN/END VERIFY REPORT lines")
    hint = rdma_hint(nodes, gpus, settings.rdma_resource)
    if hint:
        out(hint)
    return 0


def _sqsh_sha256(settings: Settings, spec: ImageSpec) -> str:
    """SQSH's sha256 from its sidecar (make sqsh's <file>.json beside it), which must be of this image's tag."""
    from .publish.sqsh import read_sidecar
    if settings.launcher != "pyxis":
        raise UserError(f"SQSH is for LAUNCHER=pyxis (enroot mounts the squashfs), not LAUNCHER={settings.launcher}")
    found = read_sidecar(Path(settings.sqsh + ".json"))
    if found.get("tag") != spec.tag:
        raise UserError(f"{settings.sqsh} was made from {str(found.get('tag'))[:80]!r}, not {spec.tag}: give IMAGE= "
                        f"its tag, or the squashfs of {spec.tag} (make sqsh IMAGE={spec.tag})")
    pushed = settings.push_dir / "pushed.json"
    if pushed.is_file():
        from .publish.pushed import read_record
        from .publish.sqsh import recorded_sha256s
        recorded = recorded_sha256s(read_record(pushed).get(spec.tag))
        if recorded and found["sha256"] not in recorded:
            raise UserError(f"{settings.sqsh}.json says sha256 {found['sha256'][:16]}..., but make push recorded (and "
                            f"make attest signs) {', '.join(r[:16] + '...' for r in recorded)} for {spec.tag}: make sqsh "
                            f"again from the pushed image, or push this one")
    out(f"  image: {settings.sqsh} (squashfs of {spec.tag}, sha256 {found['sha256'][:16]}..., checked before the step)")
    return str(found["sha256"])


def _slurm_job(settings: Settings, spec: ImageSpec) -> Job:
    from .fleet.slurm import Job
    venv = Path(settings.child_env.get("VENV") or ".venv")
    venv = venv if venv.is_absolute() else settings.root / venv
    from .fleet.cluster import default_gpus
    sha = _sqsh_sha256(settings, spec) if settings.sqsh else ""
    return Job(spec, settings.sqsh or _cluster_image(settings, spec), settings.nodes, default_gpus(spec, settings.gpus),
               settings.launcher,
               platform=_node_platform(settings, spec), preflight=settings.preflight,
               verify_args=settings.verify_args, python=str(venv / "bin" / "python"), checkout=str(settings.root),
               bundle=str((settings.slurm_dir / f"{spec.tag}.bundle").absolute()), sqsh=settings.sqsh,
               sqsh_sha256=sha)


def cmd_slurm(settings: Settings, args: argparse.Namespace) -> int:
    from .fleet.slurm import slurm_script
    from .fsutil import atomic_write
    specs = _selected(settings)
    for spec in specs:
        job = _slurm_job(settings, spec)
        path = settings.slurm_dir / f"{job.name}.sbatch"
        atomic_write(path, slurm_script(job))
        out(f"wrote {_shown(settings, path)} (launcher {job.launcher})")
        if job.launcher == "oci" and not Path(job.bundle, "config.json").is_file():
            out(f"  first: make oci-bundle IMAGE={spec.tag}   # the runc bundle the job runs, {_shown(settings, Path(job.bundle))}")
        out(f"  sbatch {shlex.quote(_shown(settings, path))}")
    return 0


def cmd_isolate(settings: Settings, args: argparse.Namespace) -> int:
    from .fleet.isolate_job import isolate_name, isolate_script
    from .fsutil import atomic_write
    if settings.nodes < 2:
        raise UserError(f"NODES={settings.nodes}: isolation all-reduces in pairs; give NODES=2 or more")
    for spec in _selected(settings):
        job = _slurm_job(settings, spec)
        path = settings.slurm_dir / f"{isolate_name(job)}.sbatch"
        atomic_write(path, isolate_script(job))
        out(f"wrote {_shown(settings, path)} (launcher {job.launcher}; pairs of nodes, at most "
            f"{_rounds(settings.nodes)} rounds)\n  sbatch {shlex.quote(_shown(settings, path))}")
    return 0


def _rounds(nodes: int) -> int:
    from .fleet.isolate import max_rounds
    return max_rounds(nodes)


def cmd_oci_bundle(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.engine import connect
    from .fleet.slurm import make_bundle
    specs = _selected(settings)
    client = connect(settings.child_env)
    for spec in specs:
        folder = make_bundle(client, spec.image, (settings.slurm_dir / f"{spec.tag}.bundle").absolute(), echo=out)
        out(f"wrote {_shown(settings, folder)} (rootfs, config.json, reports/); the job: make slurm LAUNCHER=oci "
            f"IMAGE={spec.tag}")
    return 0


def cmd_sqsh(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.engine import connect
    from .publish.sqsh import make_sqsh, record_in_push
    client = connect(settings.child_env)
    platform = _one_platform(settings, "sqsh")
    for spec in _selected(settings):
        target = spec.targets(platform)[0]
        path, found = make_sqsh(client, target.local_tag, spec.tag, target.report_name, settings.sqsh_dir,
                                settings.sqsh_comp, echo=out)
        out(f"wrote {_shown(settings, path)} ({found['size'] / 2**20:.0f} MiB, {found['compression']}), sha256 "
            f"{found['sha256']}\n  sidecar {_shown(settings, path)}.json; on the cluster: copy both to shared storage, "
            f"then make slurm LAUNCHER=pyxis IMAGE={spec.tag} SQSH=/shared/path/{path.name}")
        if record_in_push(settings.push_dir / "pushed.json", spec.tag, found):
            out(f"  recorded beside {spec.tag}'s digest in {_shown(settings, settings.push_dir / 'pushed.json')}; "
                f"make attest names it in the signed statements")
    return 0


def cmd_fleet_report(settings: Settings, args: argparse.Namespace) -> int:
    from .fleet.fleet import fleet, format_fleet, write_fleet
    if settings.fleet_dir is None:
        raise UserError("no folder given: make fleet-report DIR=<the folder the job wrote its verify reports into>")
    report = fleet(settings.fleet_dir, skew_s=settings.clock_skew)
    if settings.state_dir is not None:
        from .fleet.history import read_state
        report.histories = read_state(settings.state_dir, [n.node for n in report.nodes])
    out(format_fleet(report))
    out(f"wrote {_shown(settings, write_fleet(report))}")
    if settings.metrics_dir is None:
        out("metrics: not written (give METRICS_DIR=<node_exporter's textfile folder> to write them)")
    else:
        from .fleet.metrics import skipped_nodes, write_metrics
        written = write_metrics(report, settings.metrics_dir, report.histories)
        out(f"metrics: {len(written)} file(s) written into {_shown(settings, settings.metrics_dir)}")
        for name in skipped_nodes(report, report.histories):
            out(f"metrics: node name {name!r} cannot name a file: not written")
    return 0 if report.ok else 1


# ---- the release path: locks, staged wheels, the cold-build benchmark, push, attest, report ----

def cmd_lock(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.lock import lock_folders, refresh
    from .render import load_rendered, select
    specs = select(load_rendered(settings.images), settings.image or "all")
    folders = lock_folders(settings.wheels)
    out(f"locking {len(specs)} image(s); wheel folders: {', '.join(map(str, folders)) or 'none'}")
    failures = refresh(specs, settings.images, folders, env=settings.child_env, uv=settings.uv,
                       force=settings.force, echo=out)
    for failure in failures:
        err(f"error: {failure}")
    return 1 if failures else 0


def cmd_stage_wheels(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.lock import stage_for_build
    from .builder.wheels import stage_wheels
    specs = _selected(settings)
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
    from .builder.bench import run_bench
    from .builder.engine import connect, find_build_client
    specs = _selected(settings)
    if len(specs) != 1:
        raise UserError("bench-build compares one image: IMAGE=<tag>")
    return run_bench(connect(settings.child_env), find_build_client(settings.docker_cli), specs[0],
                     _build_request(settings), runs=settings.bench_runs, rounds=settings.bench_rounds,
                     json_out=settings.bench_json,
                     bench_dir=settings.build_dir / "bench", echo=out)


def cmd_bench_start(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.bench import BENCH_REPOSITORY
    from .builder.startbench import run_start
    specs = _selected(settings)
    if len(specs) != 1:
        raise UserError("bench-start compares one image: IMAGE=<tag>")
    plain = f"{BENCH_REPOSITORY}:{specs[0].tag}-plain-pip"     # what `make bench-build` leaves in the engine

    def squash(image: str, tag: str, folder: Path, echo: Callable[[str], None]) -> Path:
        """make sqsh's file of the image (zstd), for the squashfs row."""
        from .builder.engine import connect
        from .publish.sqsh import make_sqsh
        return make_sqsh(connect(settings.child_env), image, tag, tag, folder, echo=echo)[0]
    return run_start(specs[0], plain, settings.build_dir, settings.bench_start_json, after=settings.bench_after,
                     squash=squash, echo=out)


def _creds(settings: Settings) -> Credentials:
    from .publish.registry import Credentials
    return Credentials(settings.registry_user, settings.registry_password, settings.registry_insecure)


def cmd_push(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.engine import connect
    from .publish.push import push_images
    if not settings.registry:
        raise UserError("no registry given: make push REGISTRY=host:port (e.g. REGISTRY=127.0.0.1:5000)")
    specs = _selected(settings)
    platform = _one_platform(settings, "push")
    client = None if settings.index_only else connect(settings.child_env)
    rows = push_images(client, specs, settings.registry, settings.push_dir, _creds(settings), platform=platform,
                       index_only=settings.index_only, echo=out, sqsh_dir=settings.sqsh_dir)
    for row in rows:
        if row.media_type == OCI_INDEX_TYPE:
            out(f"{row.tag:<48} -> {row.reference} (image index)")
            for plat, rec in row.platforms.items():
                out(f"  {plat:<46} -> {rec['reference']}")
        else:
            tags = [f" ({plat}, tag {rec['tag']}; the index: make push INDEX_ONLY=1)" for plat, rec in row.platforms.items()]
            out(f"{row.source:<48} -> {row.reference}" + "".join(tags))
    costs = {name: layers for row in rows for name, layers in row.layers.items()}
    if costs:
        from .publish.layercost import cost_table
        out("\nwhat each pushed image costs a node (compressed: the registry's blobs; unpacked: the engine):")
        out(cost_table(costs))
    out(f"digests recorded in {_shown(settings, settings.push_dir / 'pushed.json')}; after `make verify`: make attest")
    return 0


def cmd_keygen(settings: Settings, args: argparse.Namespace) -> int:
    from .publish.signing import keygen
    assert settings.key_dir is not None
    private, public, keyid = keygen(settings.key_dir, settings.key_type, force=settings.force)
    out(f"wrote {private} (private, mode 0600: never copy it into the repository or an image) and {public} "
        f"(public; give it to readers as TRUST=)\nkey id {keyid}\nnext: make attest signs with it (SIGNING_KEY= "
        f"picks another); make report IMAGE=...@sha256:... TRUST={public}")
    return 0


def _signer(settings: Settings) -> object:
    from .publish.signing import load_signer
    if settings.signing_key is None:
        raise UserError("no signing key: make keygen, or SIGNING_KEY=<private key file>")
    if not settings.signing_key.exists() and settings.signing_key.name == "signing-key.pem":
        raise UserError(f"no signing key at {settings.signing_key}: run `make keygen` once, or give "
                        f"SIGNING_KEY=<private key file> (ECDSA P-256 or Ed25519, PEM)")
    return load_signer(settings.signing_key)


def cmd_attest(settings: Settings, args: argparse.Namespace) -> int:
    from .builder.engine import connect
    from .publish.attest import attest_from_reports
    specs = _selected(settings)
    signer = _signer(settings)          # before anything is pushed: a missing or bad key attaches nothing
    for line in attest_from_reports(connect(settings.child_env), specs, settings.push_dir, settings.reports, signer,
                                    _creds(settings), platform=_one_platform(settings, "attest"),
                                    images_dir=settings.images, env=settings.child_env):
        out(line)
    return 0


def _trust(settings: Settings) -> list[object]:
    from .publish.signing import load_trust
    if not settings.trust:
        raise UserError("no TRUST keys: give TRUST=<public key file(s) or folder> (make keygen writes "
                        "~/.config/torchimages/signing-key.pub); nothing unsigned is believed")
    return list(load_trust(settings.trust))


def _digest_ref(settings: Settings, text: str, command: str) -> str:
    """IMAGE as a digest reference: given as one, or a tag pinned from the push record."""
    from .publish.pushed import pinned
    if "@sha256:" in text:
        return text
    if text and "/" not in text and ":" not in text:
        return pinned(settings.push_dir / "pushed.json", text, settings.platform)
    raise UserError(f"IMAGE={text or '(empty)'} is not a digest reference: make {command} "
                    f"IMAGE=host:port/repo@sha256:... (or a tag make push recorded)")


def cmd_report(settings: Settings, args: argparse.Namespace) -> int:
    from .fleet.gate import parse_require
    from .publish.report import expire, fetch_report, format_report
    ref = _digest_ref(settings, args.ref or settings.image, "report")
    requirements, max_age = _split_age(settings, parse_require(settings.require))
    summary = fetch_report(ref, _trust(settings), _creds(settings), deadline_s=settings.report_timeout,  # type: ignore[arg-type]
                           skew_s=settings.clock_skew)
    expire(summary, max_age, skew_s=settings.clock_skew)
    if requirements:
        summary.unmet = _unmet(summary, requirements)
    out(format_report(summary))
    return 0 if summary.verified and not summary.unmet else 1


def _split_age(settings: Settings, requirements: list[Any]) -> tuple[list[Any], float | None]:
    """REQUIRE without its age terms, and the strictest maximum age of MAX_AGE and REQUIRE's age<= (None: any)."""
    from .durations import parse_duration
    ages = [parse_duration(r.value, f"REQUIRE {r}") for r in requirements if r.key == "age"]
    if settings.max_age is not None:
        ages.append(settings.max_age)
    return [r for r in requirements if r.key != "age"], (min(ages) if ages else None)


def _unmet(summary: object, requirements: Sequence[Any]) -> list[str]:
    """What REQUIRE misses in the newest trusted attestation among those REQUIRE's node= and signer= select (the
    newest evidence wins: an older attestation that would meet it does not)."""
    from .fleet.gate import SELECTORS, unmet
    from .publish.report import Summary
    assert isinstance(summary, Summary)

    def facts(att: Any) -> dict[str, Any]:
        return {**att.host, "verdict": att.status, "signer": att.signer.source, "keyid": att.signer.keyid}
    selectors = [r for r in requirements if r.key in SELECTORS]
    candidates = [a for a in summary.attestations if not unmet(selectors, facts(a))]
    scope = f" of {' '.join(map(str, selectors))}" if selectors else ""
    if not candidates:
        return [f"{requirements[0]} (no trusted attestation{scope}: {summary.reason or 'none matches'})"]
    newest = candidates[0]
    if newest.problem:
        return [f"{requirements[0]} (the newest trusted attestation{scope} is not believed: {newest.problem})"]
    if not summary.verified and summary.chosen is newest:
        return [f"{requirements[0]} ({summary.reason})"]
    return unmet(requirements, facts(newest))


def cmd_gate(settings: Settings, args: argparse.Namespace) -> int:
    from .fleet.gate import floor_problem, gate_line, host_driver, image_labels, parse_require
    from .publish.registry import Registry, parse_ref
    from .publish.report import clean, expire, fetch_report
    from .render import readable_specs
    reference = _digest_ref(settings, args.ref or settings.image, "gate")
    requirements, max_age = _split_age(settings, parse_require(settings.require))
    if not any(r.key == "verdict" for r in requirements):
        requirements = [*parse_require("verdict=pass,warn"), *requirements]
    ref = parse_ref(reference)
    assert ref.digest is not None
    problems: list[str] = []
    # the driver floor first: it needs no trust, and it is what a node can fix by itself
    import time
    reg = Registry(ref.registry, _creds(settings), timeout=min(60.0, settings.report_timeout),
                   deadline=time.monotonic() + settings.report_timeout)
    labels = image_labels(reg, ref.repository, ref.digest)
    driver = settings.host_driver or host_driver()
    floor = floor_problem(labels, driver, readable_specs(settings.images))   # the matrix's tags, if any, for the hint
    if floor:
        problems.append(floor)
    summary = fetch_report(reference, _trust(settings), _creds(settings), deadline_s=settings.report_timeout,  # type: ignore[arg-type]
                           skew_s=settings.clock_skew)
    expire(summary, max_age, skew_s=settings.clock_skew)
    if not summary.attestations:
        problems.append(f"no trusted attestation: {summary.reason}")
    else:
        problems += [f"the newest trusted attestation does not meet {m}" for m in _unmet(summary, requirements)]
    chosen = summary.chosen
    passed = (f"{' '.join(map(str, requirements))}, signed by {chosen.signer_name}, node {chosen.host['node']}"
              if chosen else "")
    floor_ok = f"; driver {driver} meets the floor {labels.get('io.torchimages.cuda.driver-min')}" \
        if labels.get("io.torchimages.cuda.driver-min") and driver else ""
    out(clean(gate_line(reference, problems, passed + floor_ok), 2000))
    return 1 if problems else 0


def cmd_docs_codes(settings: Settings, args: argparse.Namespace) -> int:
    from .docs import write_codes_doc
    out(f"wrote {_shown(settings, write_codes_doc(settings.root))} from verify/codes.py")
    return 0


# ---- the command table ----

@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    knobs: tuple[str, ...] = ()
    extra: Callable[[argparse.ArgumentParser], None] | None = None


def _check_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true", help="fail if images/ differs from a fresh render")


def _default_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--default", action="store_true", help="print only the default image's tag")


def _force_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only-unreachable", action="store_true",
                   help="only where the registry base is neither in the engine nor pullable (make build)")


def _ref_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", nargs="?", default="", help="registry/repo@sha256:... (default: IMAGE)")


def _per_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--per", choices=["platform", "tag"], default="platform",
                   help="one row per (image, platform) with its native runner (default), or one per image")


def _output_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", help="file to write (default build/docker-bake.json)")


SCALE = ("IMAGE", "NODES", "GPUS", "REGISTRY", "PLATFORM", "LOCAL_IMAGE")
COMMANDS: tuple[Command, ...] = (
    Command("render", "validate matrix.yaml against compat.yaml and write images/<tag>/", cmd_render, (), _check_flag),
    Command("docs-codes", "regenerate docs/codes.md's failure-code table from verify/codes.py", cmd_docs_codes),
    Command("lint", "hadolint every images/*/Dockerfile", cmd_lint),
    Command("list", "list the rendered images", cmd_list, (), _default_flag),
    Command("compat", "refresh compat.yaml from PyPI metadata (network)", cmd_compat),
    Command("base", "bootstrap the distro bases the images need (debootstrap + import)", cmd_base, ("IMAGE", "PLATFORM", "FORCE"),
            _force_flag),
    Command("build", "build images with BuildKit", cmd_build,
            ("IMAGE", "KEEP_GOING", "CA_CERT", "WHEELS", "BASE_IMAGE", "BUILD_NETWORK", "PLATFORM", "EXTRA_BUILD_ARGS",
             "BUILD_TIMEOUT")),
    Command("verify", "run the verify suite inside built images", cmd_verify,
            ("IMAGE", "SHM_SIZE", "VERIFY_TIMEOUT", "VERIFY_ARGS", "PLATFORM")),
    Command("ci-matrix", "print the rendered images as JSON for a CI strategy.matrix", cmd_ci_matrix, (), _per_flag),
    Command("bake", "write build/docker-bake.json (one target per image)", cmd_bake, ("REGISTRY",), _output_flag),
    Command("k8s-verify", "write Kubernetes Job/Indexed Job manifests that verify IMAGE on NODES x GPUS", cmd_k8s,
            (*SCALE, "RDMA_RESOURCE")),
    Command("slurm", "write a Slurm batch script that verifies IMAGE on NODES x GPUS through LAUNCHER (pyxis, docker, "
            "oci, none)", cmd_slurm, (*SCALE, "LAUNCHER", "PREFLIGHT", "VERIFY_ARGS", "SQSH")),
    Command("isolate", "write a Slurm batch script that finds which of NODES nodes makes the all-reduce fail or slow "
            "(pairs, then suspects against known-good nodes; at most ceil(log2 N)+1 rounds)", cmd_isolate,
            (*SCALE, "LAUNCHER")),
    Command("oci-bundle", "make the runc bundle of IMAGE for make slurm LAUNCHER=oci (docker export + runc spec)",
            cmd_oci_bundle, ("IMAGE",)),
    Command("sqsh", "write IMAGE's root filesystem as one reproducible squashfs for enroot/pyxis nodes "
            "($(BUILD_DIR)/sqsh/<tag>.sqsh + .json sidecar with its sha256)", cmd_sqsh, ("IMAGE", "PLATFORM", "SQSH_COMP")),
    Command("fleet-report", "one table and DIR/fleet.json over every node's verify report under DIR: verdicts, "
            "codes, figures against their model's fleet median, nodes to drain, time to first step", cmd_fleet_report,
            ("DIR", "STATE_DIR", "METRICS_DIR", "CLOCK_SKEW")),
    Command("lock", "write images/<tag>/requirements.lock (uv pip compile, hashes; IMAGE default: all)", cmd_lock,
            ("IMAGE", "WHEELS", "FORCE")),
    Command("stage-wheels", "fill build/wheels for IMAGE (locked local wheels + uv's wheel) for bake and CI",
            cmd_stage_wheels, ("IMAGE", "WHEELS", "PLATFORM")),
    Command("bench-build", "cold build: IMAGE vs plain one-stage pip and uv Dockerfiles (build time, size, import torch)",
            cmd_bench_build, ("IMAGE", "CA_CERT", "WHEELS", "BASE_IMAGE", "BUILD_NETWORK", "BENCH_RUNS",
                              "BENCH_ROUNDS")),
    Command("bench-start", "cold start: IMAGE vs the plain pip image through a loopback registry into Docker (gzip) "
            "and containerd (gzip, zstd): pull, start, import torch (CUDA init, first batch on a GPU)",
            cmd_bench_start, ("IMAGE", "BENCH_AFTER")),
    Command("push", "push IMAGE's built image to REGISTRY and print its digest (several platforms: one tag, an OCI "
            "image index)", cmd_push, ("IMAGE", "REGISTRY", "PLATFORM", "INDEX_ONLY", "REGISTRY_INSECURE")),
    Command("keygen", "write a signing key pair for make attest (ECDSA P-256 or Ed25519) outside the repository",
            cmd_keygen, ("KEY_DIR", "KEY_TYPE", "FORCE")),
    Command("attest", "sign IMAGE's verify report, SBOM and build provenance (in-toto, DSSE) and attach them to its "
            "pushed digest (OCI referrers)", cmd_attest, ("IMAGE", "PLATFORM", "REGISTRY_INSECURE", "SIGNING_KEY")),
    Command("report", "verify, then print, the newest signed verify result attached to IMAGE (registry/repo@sha256:... "
            "or a tag make push recorded; TRUST= keys; REQUIRE= makes it a gate; MAX_AGE= expires it)", cmd_report,
            ("IMAGE", "REGISTRY_INSECURE", "TRUST", "REQUIRE", "MAX_AGE", "CLOCK_SKEW", "REPORT_TIMEOUT", "PLATFORM"),
            _ref_arg),
    Command("gate", "one line, exit 0 only when IMAGE (a digest, or a pushed tag) has a trusted attestation meeting "
            "REQUIRE and its driver floor fits this host's driver", cmd_gate,
            ("IMAGE", "PLATFORM", "REGISTRY_INSECURE", "TRUST", "REQUIRE", "MAX_AGE", "CLOCK_SKEW", "HOST_DRIVER",
             "REPORT_TIMEOUT"),
            _ref_arg),
)
PATH_FLAGS = {"MATRIX": ("--matrix", "matrix file (default: matrix.yaml)"),
              "COMPAT": ("--compat", "upstream facts (default: compat.yaml)"),
              "IMAGES_DIR": ("--images-dir", "rendered images (default: images/)")}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts",
                                     description="Verified PyTorch images: render, lint, build, verify, publish.")
    for var, (flag, what) in PATH_FLAGS.items():
        parser.add_argument(flag, dest=var, default=None, help=f"{what}; variable {var}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        for knob in command.knobs:
            row = KNOBS[knob]
            if row.switch:
                p.add_argument(row.flag, dest=knob, action="store_const", const="1", default=None,
                               help=f"{row.help}; variable {knob}")
            else:
                p.add_argument(row.flag, dest=knob, default=None, help=f"{row.help}; variable {knob}")
        if command.extra:
            command.extra(p)
        p.set_defaults(command_entry=command)
    return parser


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The one error boundary: a UserError is one line and exit 2 (or its own code); nothing else escapes."""
    env = dict(os.environ if environ is None else environ)
    try:
        args = build_parser().parse_args(argv)
        command: Command = args.command_entry
        flags = {name: getattr(args, name, None) for name in (*PATH_FLAGS, *command.knobs)}
        settings = Settings.load(env, flags, command.knobs)
        return int(command.handler(settings, args) or 0)
    except MatrixError as exc:          # one line per problem, each kept one line
        err("error: " + "\n".join(one_line(p) for p in exc.problems))
        return exc.exit_code
    except UserError as exc:            # one line, whatever a variable held (a newline in IMAGE stays \n)
        err(f"error: {exc.shown()}")
        return exc.exit_code
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except BrokenPipeError:
        return 141
    except Exception as exc:  # noqa: BLE001 - the boundary: a bug is one line too, with a way to see more
        if env.get("TORCHIMAGES_DEBUG"):
            traceback.print_exc()
        err(f"internal error: {type(exc).__name__}: {one_line(str(exc).splitlines()[0][:300]) if str(exc) else ''} "
            f"(a bug; rerun with TORCHIMAGES_DEBUG=1 for the traceback and report it)")
        return 3
