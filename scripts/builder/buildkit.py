"""`make build`: images/<tag>/Dockerfile → an image in the local engine, through BuildKit.

Context is the repository root (.dockerignore lets in verify/ and build/wheels/ only). The proxy CA goes in
as a secret, a local wheel folder as a bind mount, the base as a build argument when the registry's is absent.
"""
from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ROOT
from ..errors import UserError
from ..plan.platforms import NATIVE_NAME, arch_of
from ..plan.spec import ImageSpec
from .base_platform import emulation_problem, platform_argv, platform_image, resolve_platform_base
from .engine import BuildClient, image_exists, registry_reachable
from .lock import fetch_platform_wheels, stage_for_build
from .wheels import stage_wheels

TAIL = 25
Echo = Callable[[str], None]


@dataclass
class BuildOutcome:
    tag: str
    ok: bool
    seconds: float
    size: int | None = None
    image_id: str | None = None
    log: Path | None = None
    error: str | None = None


def resolve_base(client: Any, spec: ImageSpec, override: str | None = None) -> tuple[str, str]:
    """(base image to build from, why); a UserError naming `make base` when there is none."""
    if override:
        if not image_exists(client, override) and not registry_reachable(client, override):
            raise UserError(f"BASE_IMAGE={override} is neither in the engine nor pullable")
        return override, "BASE_IMAGE override"
    if image_exists(client, spec.base_image):
        return spec.base_image, "present in the engine"
    if spec.bootstrap_base and image_exists(client, spec.bootstrap_base):
        return spec.bootstrap_base, "bootstrapped locally by make base"
    if registry_reachable(client, spec.base_image):
        return spec.base_image, "pulled from the registry"
    if spec.bootstrap_base:
        raise UserError(f"{spec.tag}: base image {spec.base_image} is not in the engine and the registry cannot be "
                        f"reached; bootstrap it from the {spec.distro_name} mirror with `make base` "
                        f"(creates {spec.bootstrap_base})")
    raise UserError(f"{spec.tag}: base image {spec.base_image} is not in the engine and the registry cannot be "
                    f"reached; NVIDIA's devel images cannot be bootstrapped: `docker load` a saved copy of it "
                    f"(docker save {spec.base_image} on a connected host)")


def _git_revision(root: Path) -> str:
    try:
        proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=False)
    except OSError:
        return "unknown"
    return proc.stdout.strip() or "unknown"


def build_definition(spec: ImageSpec, registry: str = "") -> dict[str, Any]:
    """The one build definition of an image: `make build` turns it into CLI arguments, `make bake` into a bake
    target (which CI builds through), so the two cannot drift."""
    prefix = f"{registry}/" if registry else ""
    return {
        "context": ".",
        "dockerfile": f"images/{spec.tag}/Dockerfile",
        "args": dict(spec.build_args),
        "tags": [f"{prefix}{spec.image}"],
        "labels": {"org.opencontainers.image.version": spec.tag},
        "platforms": list(spec.platforms),
    }


def build_argv(cli: BuildClient, spec: ImageSpec, dockerfile: Path, base: str, torch_index: str,
               ca: str | None, network: str | None, root: Path = ROOT, platform: str | None = None,
               offline: bool = False) -> list[str]:
    """The CLI form of `build_definition`. `platform`: one of the image's (its local tag gets -<arch> unless
    linux/amd64) or a comma list (a buildx multi-platform build into an OCI archive); None: the engine's own.
    `offline`: the staged folder holds every locked wheel, so uv asks no index at all (OFFLINE=1)."""
    definition = build_definition(spec)
    args = {**definition["args"], "BASE_IMAGE": base, "TORCH_INDEX_URL": torch_index}
    if offline:
        args["OFFLINE"] = "1"
    labels = {**definition["labels"],
              "org.opencontainers.image.created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "org.opencontainers.image.revision": _git_revision(root)}
    argv = [*platform_argv(cli.argv, spec, platform, root / "build"), "--progress", "plain", "-f", str(dockerfile)]
    for key, value in args.items():
        argv += ["--build-arg", f"{key}={value}"]
    for key, value in labels.items():
        argv += ["--label", f"{key}={value}"]
    if ca:
        argv += ["--secret", f"id=ca,src={ca}"]
    if network:
        argv += ["--network", network]
    return argv + [str(root)]


def _network(client: Any, override: str | None) -> str | None:
    """`host` when the engine has no bridge network (dockerd --bridge=none): builds still reach PyPI."""
    if override:
        return override
    return None if client.networks.list(names=["bridge"]) else "host"


@dataclass(frozen=True)
class BuildRequest:
    """What every build of one `make build` shares (from Settings)."""

    images_dir: Path
    logs: Path
    wheels_stage: Path
    root: Path
    ca: str | None
    folders: tuple[Path, ...]
    base_override: str | None
    network: str | None
    env: Mapping[str, str]
    platform: str | None = None     # Settings.platform after build_platform: one platform, a comma list, or None
    extra_build_args: tuple[str, ...] = ()     # EXTRA_BUILD_ARGS: KEY=VALUE each
    uv_cache: Path | None = None               # where a uv wheel is downloaded when no wheel folder has one


def build_one(client: Any, cli: BuildClient, spec: ImageSpec, req: BuildRequest,
              echo: Echo = print) -> BuildOutcome:
    from docker.errors import DockerException
    start = time.monotonic()
    dockerfile = req.images_dir / spec.tag / "Dockerfile"
    if not dockerfile.exists():
        return BuildOutcome(spec.tag, False, 0.0, error=f"{dockerfile} missing: run `make render`")
    platform = req.platform
    foreign = platform is not None and platform != NATIVE_NAME and "," not in platform
    try:
        if foreign:
            assert platform is not None
            problem = emulation_problem(platform)
            if problem:
                raise UserError(f"cannot build for {platform} here: {problem}")
            base, why = resolve_platform_base(client, spec, platform, req.base_override)
        else:
            base, why = resolve_base(client, spec, req.base_override)
        network = _network(client, req.network)
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    except DockerException as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=f"the Docker Engine failed: {str(exc).splitlines()[0][:300]}")
    req.logs.mkdir(parents=True, exist_ok=True)
    log_path = req.logs / (f"{spec.tag}-{arch_of(platform)}.log" if foreign and platform else f"{spec.tag}.log")
    staged = stage_wheels(spec, list(req.folders), req.wheels_stage, platform if foreign else None)
    targets = platform.split(",") if platform else [spec.platforms[0]]
    uv_cache = req.uv_cache or req.root / "build" / "cache" / "uv"
    offline = True
    try:        # each platform's lock decides what is installed: its local wheels and uv's wheel join the stage
        for target in targets:
            folders = list(req.folders)
            if foreign:     # downloads under the emulator are slow: fetch that platform's locked wheels natively
                echo(f"==> {spec.tag}: fetching the locked {target} wheels natively (hashes checked) ...")
                folders.append(fetch_platform_wheels(spec, req.images_dir, target, uv_cache.parent,
                                                     env={**req.env, **cli.env}))
            locked, lock_complete = stage_for_build(spec, req.images_dir, folders, req.wheels_stage, uv_cache, target,
                                                    warn=echo)
            staged = sorted(set(staged) | set(locked))
            offline = offline and lock_complete
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    local_torch = any(name.startswith("torch-") for name in staged)
    torch_index = "" if local_torch else (spec.torch_index_url or "")
    shown = ", ".join(staged) if len(staged) <= 6 else f"{len(staged)} wheels ({', '.join(staged[:3])}, ...)"
    echo(f"==> {spec.tag}{' for ' + platform if platform else ''}: base {base} ({why}); CA secret: {req.ca or 'none'}; "
         f"local wheels: {shown or 'none'}{' (offline: every locked wheel is local)' if offline else ''}")
    argv = build_argv(cli, spec, dockerfile, base, torch_index, req.ca, network, req.root, platform, offline)
    argv[-1:-1] = [word for kv in req.extra_build_args for word in ("--build-arg", kv)]
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(argv) + "\n")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**req.env, **cli.env}, cwd=req.root)
        tail: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            tail = (tail + [line.rstrip()])[-TAIL:]
            if re.match(r"#\d+ (\[|DONE|CACHED|ERROR)", line) or "ERROR" in line:
                echo(f"   {line.rstrip()}")
        rc = proc.wait()
    seconds = time.monotonic() - start
    if rc != 0:
        return BuildOutcome(spec.tag, False, seconds, log=log_path, error="\n".join(tail))
    if platform and "," in platform:     # a multi-platform build writes an OCI layout, not an engine image
        return BuildOutcome(spec.tag, True, seconds, log=log_path)
    local = platform_image(spec, platform)
    try:
        image = client.images.get(local)
    except DockerException as exc:
        return BuildOutcome(spec.tag, False, seconds, log=log_path,
                            error=f"built, but the engine could not inspect {local}: {str(exc).splitlines()[0][:300]}")
    return BuildOutcome(spec.tag, True, seconds, size=image.attrs.get("Size"),
                        image_id=image.short_id.removeprefix("sha256:"), log=log_path)


def build_all(client: Any, cli: BuildClient, specs: list[ImageSpec], req: BuildRequest, *, keep_going: bool,
              echo: Echo = print, on_failure: Callable[[BuildOutcome, bool], None] | None = None) -> list[BuildOutcome]:
    """Build each spec in turn; after a failure stop unless keep_going. `on_failure(outcome, stopping)` reports it."""
    outcomes = []
    for spec in specs:
        outcome = build_one(client, cli, spec, req, echo=echo)
        outcomes.append(outcome)
        if not outcome.ok:
            stopping = not keep_going and spec is not specs[-1]
            if on_failure:
                on_failure(outcome, stopping)
            if stopping:
                break
    return outcomes
