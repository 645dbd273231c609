"""`make build`: images/<tag>/Dockerfile → an image in the local engine, through BuildKit.

Context is the repository root (.dockerignore lets in verify/ and build/wheels/ only). The proxy CA goes in
as a secret, a local wheel folder as a bind mount, the base as a build argument when the registry's is absent.
"""
from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ROOT
from ..errors import UserError
from ..plan.platforms import host_platform, machine_of
from ..plan.spec import Build, ImageSpec, Release, Target
from .base import base_for, resolve_base
from .emulation import EMULATED_LIMIT_S, overrun
from .engine import BuildClient
from .lock import UV_VERSION as UV_VERSION  # part of the build definition: the uv a build installs (provenance)
from .lock import fetch_platform_wheels, stage_for_build, stage_uv_wheel
from .netplugin import stage_net_plugin
from .progress import StepLines, torch_source_problem
from .wheels import stage_turn, stage_wheels

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


def platform_argv(cli_argv: tuple[str, ...], build: Build, build_dir: Path) -> list[str]:
    """The client argv up to the build options: `-t` the target's local tag and `--platform` when PLATFORM named
    it. A Release (PLATFORM=all) with a buildx builder: one multi-platform build into an OCI image index at
    <build_dir>/oci/<tag>.tar (`--load` cannot hold a manifest list in a classic engine store)."""
    spec = build.spec
    if isinstance(build, Release):
        platforms = ",".join(build.platforms)       # Docker's own list syntax, made here only
        if "buildx" not in cli_argv:
            raise UserError(f"a multi-platform build of {spec.tag} ({platforms}) needs a buildx builder "
                            f"(`docker buildx create --use`); the classic client builds one PLATFORM at a time")
        argv = [a for a in cli_argv if a != "--load"]
        return [*argv, "--platform", platforms, "-t", spec.image,
                "--output", f"type=oci,dest={build_dir / 'oci' / (spec.tag + '.tar')}"]
    return [*cli_argv, "-t", build.local_tag] + (["--platform", build.platform] if build.explicit else [])


def build_argv(cli: BuildClient, build: Build, dockerfile: Path, base: str, torch_index: str,
               ca: str | None, network: str | None, root: Path = ROOT, offline: bool = False,
               build_base: str | None = None) -> list[str]:
    """The CLI form of `build_definition` for one target (its local tag gets -<arch> when per-arch) or a Release
    (a buildx multi-platform build into an OCI archive). `offline`: the staged folder holds every locked wheel,
    so uv asks no index at all (OFFLINE=1). `build_base`: the base of this machine's own platform, where apt
    fetches the system's packages and a multi-platform image installs another platform's venv (BUILD_BASE_IMAGE;
    default: `base`)."""
    definition = build_definition(build.spec)
    args = {**definition["args"], "BASE_IMAGE": base, "TORCH_INDEX_URL": torch_index}
    args["BUILD_BASE_IMAGE"] = build_base or base
    if offline:
        args["OFFLINE"] = "1"
    labels = {**definition["labels"],
              "org.opencontainers.image.created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "org.opencontainers.image.revision": _git_revision(root)}
    argv = [*platform_argv(cli.argv, build, root / "build"), "--progress", "plain", "-f", str(dockerfile)]
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
    extra_build_args: tuple[str, ...] = ()     # EXTRA_BUILD_ARGS: KEY=VALUE each
    uv_cache: Path | None = None               # where a uv wheel is downloaded when no wheel folder has one
    timeout: float | None = None               # BUILD_TIMEOUT; None: EMULATED_LIMIT_S for emulated builds, else none

    def limit(self, emulated: bool) -> float | None:
        """Seconds one build may run: BUILD_TIMEOUT, else the emulation limit under qemu, else unbounded."""
        return self.timeout or (EMULATED_LIMIT_S if emulated else None)


def _targets(build: Build) -> tuple[Target, ...]:
    return build.targets if isinstance(build, Release) else (build,)


def _per_arch(build: Build) -> Target | None:
    """The target when it builds for a platform other than linux/amd64 (its own base, natively fetched wheels)."""
    return build if isinstance(build, Target) and build.per_arch else None


def _shown_platform(build: Build) -> str:
    if isinstance(build, Release):
        return " for " + ",".join(build.platforms)
    return f" for {build.platform}" if build.explicit else ""


def _stage_locked(cli: BuildClient, build: Build, req: BuildRequest, staged: list[str],
                  echo: Echo) -> tuple[list[str], bool]:
    """Each platform's lock decides what is installed: its local wheels and uv's wheel join the stage.
    (staged wheels, offline: every locked wheel is local)."""
    spec, foreign = build.spec, _per_arch(build)
    uv_cache = req.uv_cache or req.root / "build" / "cache" / "uv"
    offline = True
    for target in _targets(build):
        folders = list(req.folders)
        if foreign:     # downloads under the emulator are slow: fetch that platform's locked wheels natively
            echo(f"==> {spec.tag}: fetching the locked {target.platform} wheels natively (hashes checked) ...")
            folders.append(fetch_platform_wheels(target, req.images_dir, uv_cache.parent,
                                                 env={**req.env, **cli.env}))
        locked, lock_complete = stage_for_build(target, req.images_dir, folders, req.wheels_stage, uv_cache,
                                                warn=echo)
        if foreign:     # the venv is installed on this machine's platform (builder.j2's builder-native): its uv too
            locked.append(stage_uv_wheel(folders, uv_cache, machine_of(host_platform()), req.wheels_stage))
        staged = sorted(set(staged) | set(locked))
        offline = offline and lock_complete
    return staged, offline


def _run_logged(argv: list[str], log_path: Path, req: BuildRequest, cli: BuildClient, echo: Echo,
                limit: float | None = None) -> tuple[int | None, list[str]]:
    """Run the build, its whole output into `log_path`, BuildKit's step lines echoed; (exit status, last lines).
    Past `limit` seconds the client is killed (BuildKit cancels the build with its session): status None."""
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(argv) + "\n")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**req.env, **cli.env}, cwd=req.root)
        expired = threading.Event()

        def stop() -> None:
            expired.set()
            proc.kill()
        timer = threading.Timer(limit, stop) if limit else None
        if timer:
            timer.daemon = True
            timer.start()
        tail: list[str] = []
        steps = StepLines()
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                log.write(line)
                tail = (tail + [line.rstrip()])[-TAIL:]
                shown = steps.line(line)
                if shown is not None:
                    echo(f"   {shown}")
            status = proc.wait()
        finally:
            if timer:
                timer.cancel()
        return (None if expired.is_set() else status), tail


def _engine_problem(exc: Exception) -> str:
    return str(exc).splitlines()[0][:300]


def _built(client: Any, build: Build, seconds: float, log_path: Path) -> BuildOutcome:
    """The outcome of a build that exited 0: the engine image's size and id (a Release wrote an OCI layout)."""
    from docker.errors import DockerException
    tag = build.spec.tag
    if isinstance(build, Release):
        return BuildOutcome(tag, True, seconds, log=log_path)
    try:
        image = client.images.get(build.local_tag)
    except DockerException as exc:
        return BuildOutcome(tag, False, seconds, log=log_path,
                            error=f"built, but the engine could not inspect {build.local_tag}: {_engine_problem(exc)}")
    return BuildOutcome(tag, True, seconds, size=image.attrs.get("Size"),
                        image_id=image.short_id.removeprefix("sha256:"), log=log_path)


def build_one(client: Any, cli: BuildClient, build: Build, req: BuildRequest,
              echo: Echo = print) -> BuildOutcome:
    """Build one target (or one Release: every platform in one buildx run) into the local engine. Builds of one
    checkout take turns: each stages its wheels into the one folder its Dockerfile mounts (build/wheels), which
    another build would otherwise replace under it."""
    with stage_turn(req.wheels_stage, echo):
        return _build_one(client, cli, build, req, echo)


def _build_one(client: Any, cli: BuildClient, build: Build, req: BuildRequest, echo: Echo) -> BuildOutcome:
    from docker.errors import DockerException
    spec, foreign = build.spec, _per_arch(build)
    start = time.monotonic()
    dockerfile = req.images_dir / spec.tag / "Dockerfile"
    if not dockerfile.exists():
        return BuildOutcome(spec.tag, False, 0.0, error=f"{dockerfile} missing: run `make render`")
    try:
        base, why = base_for(client, build, req.base_override) if isinstance(build, Target) \
            else resolve_base(client, spec, req.base_override)
        # a foreign target's venv is installed on this machine's platform, FROM this machine's base of the distro
        build_base = resolve_base(client, spec)[0] if foreign else None
        network = _network(client, req.network)
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    except DockerException as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=f"the Docker Engine failed: {_engine_problem(exc)}")
    req.logs.mkdir(parents=True, exist_ok=True)
    log_path = req.logs / f"{foreign.report_name if foreign else spec.tag}.log"
    staged = stage_wheels(spec, list(req.folders), req.wheels_stage, foreign.platform if foreign else None)
    try:
        staged, offline = _stage_locked(cli, build, req, staged, echo)
        plugin = stage_net_plugin(spec, list(req.folders), req.wheels_stage)
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    local_torch = any(name.startswith("torch-") for name in staged)
    torch_index = "" if local_torch else (spec.torch_index_url or "")
    problem = torch_source_problem(spec.tag, spec.torch_requirement, torch_index, local_torch,
                                   [str(f) for f in req.folders])
    if problem:
        return BuildOutcome(spec.tag, False, 0.0, error=problem)
    shown = ", ".join(staged) if len(staged) <= 6 else f"{len(staged)} wheels ({', '.join(staged[:3])}, ...)"
    shown += f"; NCCL net plugin: {plugin}" if plugin else ""
    echo(f"==> {spec.tag}{_shown_platform(build)}: base {base} ({why}); CA secret: {req.ca or 'none'}; "
         f"local wheels: {shown or 'none'}{' (offline: every locked wheel is local)' if offline else ''}")
    argv = build_argv(cli, build, dockerfile, base, torch_index, req.ca, network, req.root, offline, build_base)
    argv[-1:-1] = [word for kv in req.extra_build_args for word in ("--build-arg", kv)]
    emulated = [t.platform for t in _targets(build) if t.platform != host_platform()]
    limit = req.limit(emulated=bool(emulated))
    rc, tail = _run_logged(argv, log_path, req, cli, echo, limit)
    seconds = time.monotonic() - start
    echo(f"   {spec.tag}: {'built' if rc == 0 else 'failed'} in {seconds:.0f} s; the whole build log: {log_path}")
    if rc is None and limit:
        return BuildOutcome(spec.tag, False, seconds, log=log_path,
                            error=overrun(f"building {spec.tag}", limit, ",".join(emulated) or None))
    if rc != 0:
        return BuildOutcome(spec.tag, False, seconds, log=log_path, error="\n".join(tail))
    return _built(client, build, seconds, log_path)


def build_all(client: Any, cli: BuildClient, builds: list[Build], req: BuildRequest, *, keep_going: bool,
              echo: Echo = print, on_failure: Callable[[BuildOutcome, bool], None] | None = None) -> list[BuildOutcome]:
    """Build each in turn; after a failure stop unless keep_going. `on_failure(outcome, stopping)` reports it."""
    outcomes = []
    for build in builds:
        outcome = build_one(client, cli, build, req, echo=echo)
        outcomes.append(outcome)
        if not outcome.ok:
            stopping = not keep_going and build is not builds[-1]
            if on_failure:
                on_failure(outcome, stopping)
            if stopping:
                break
    return outcomes
