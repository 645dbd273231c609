"""`make build`: images/<tag>/Dockerfile → an image in the local engine, through BuildKit.

Context is the repository root (.dockerignore lets in verify/ and build/wheels/ only). The proxy CA goes in
as a secret, a local wheel folder as a bind mount, the base as a build argument when the registry's is absent.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import ROOT
from .engine import BuildClient, image_exists, registry_reachable
from .errors import UserError
from .spec import ImageSpec

BUILD_DIR = ROOT / "build"
WHEELS_DIR = BUILD_DIR / "wheels"
LOGS_DIR = BUILD_DIR / "logs"
CA_ENV = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE")
TAIL = 25


@dataclass
class BuildOutcome:
    tag: str
    ok: bool
    seconds: float
    size: int | None = None
    image_id: str | None = None
    log: Path | None = None
    error: str | None = None


def find_ca(explicit: str | None = None) -> str | None:
    """The proxy CA to pass as a secret: an explicit file, else the first of SSL_CERT_FILE, PIP_CERT, REQUESTS_CA_BUNDLE."""
    if explicit:
        if not os.path.isfile(explicit):
            raise UserError(f"CA_CERT={explicit} is not a file; point it at the proxy's CA bundle (PEM)")
        return explicit
    return next((os.environ[v] for v in CA_ENV if os.path.isfile(os.environ.get(v, ""))), None)


def wheel_folders(explicit: str | None = None) -> list[Path]:
    """Local wheel folders: WHEELS, else the local directories among PIP_FIND_LINKS."""
    raw = explicit if explicit is not None else os.environ.get("WHEELS") or os.environ.get("PIP_FIND_LINKS", "")
    folders = []
    for item in raw.split():
        item = item.removeprefix("file://")
        if "://" not in item and os.path.isdir(item):
            folders.append(Path(item))
    return folders


def _wheel_dist(name: str) -> tuple[str, str]:
    parts = name.split("-")
    return parts[0].lower().replace("_", "-"), parts[1]


def _fits_python(wheel_name: str, python: str) -> bool:
    """A CPython wheel for this Python, or a pure-Python one."""
    return f"cp{python.replace('.', '')}" in wheel_name or "py3-none" in wheel_name


def stage_wheels(spec: ImageSpec, folders: list[Path], target: Path = WHEELS_DIR) -> list[str]:
    """Put the wheels the image pins (from the local folders) into build/wheels; hardlinks where possible."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    torch_version = spec.torch_requirement.split("==")[1]
    pins = {"torch": torch_version, **spec.packages}
    if spec.torchvision:
        pins["torchvision"] = spec.torchvision
    staged = []
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            dist, version = _wheel_dist(wheel.name)
            if pins.get(dist) != version or not _fits_python(wheel.name, spec.python):
                continue
            dest = target / wheel.name
            try:
                os.link(wheel, dest)
            except OSError:
                shutil.copy2(wheel, dest)
            staged.append(wheel.name)
    return staged


def resolve_base(client, spec: ImageSpec, override: str | None = None) -> tuple[str, str]:
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


def _git_revision() -> str:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "unknown"


def build_argv(cli: BuildClient, spec: ImageSpec, dockerfile: Path, base: str, torch_index: str,
               ca: str | None, network: str | None) -> list[str]:
    argv = [*cli.argv, "--progress", "plain", "-f", str(dockerfile), "-t", spec.image,
            "--build-arg", f"BASE_IMAGE={base}", "--build-arg", f"TORCH_INDEX_URL={torch_index}",
            "--label", f"org.opencontainers.image.created={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
            "--label", f"org.opencontainers.image.revision={_git_revision()}"]
    if ca:
        argv += ["--secret", f"id=ca,src={ca}"]
    if network:
        argv += ["--network", network]
    return argv + [str(ROOT)]


def _network(client) -> str | None:
    """`host` when the engine has no bridge network (dockerd --bridge=none): builds still reach PyPI."""
    if os.environ.get("BUILD_NETWORK"):
        return os.environ["BUILD_NETWORK"]
    return None if client.networks.list(names=["bridge"]) else "host"


def build_one(client, cli: BuildClient, spec: ImageSpec, images_dir: Path, *, ca: str | None,
              folders: list[Path], base_override: str | None, echo=print) -> BuildOutcome:
    LOGS_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOGS_DIR / f"{spec.tag}.log"
    start = time.monotonic()
    dockerfile = images_dir / spec.tag / "Dockerfile"
    if not dockerfile.exists():
        return BuildOutcome(spec.tag, False, 0.0, error=f"{dockerfile} missing: run `make render`")
    try:
        base, why = resolve_base(client, spec, base_override)
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    staged = stage_wheels(spec, folders)
    # release path: the lock decides what is installed
    from .lock import stage_for_build
    try:
        locked, offline = stage_for_build(spec, images_dir, folders, WHEELS_DIR)
    except UserError as exc:
        return BuildOutcome(spec.tag, False, 0.0, error=str(exc))
    staged = sorted(set(staged) | set(locked))
    local_torch = any(name.startswith("torch-") for name in staged)
    torch_index = "" if local_torch else (spec.torch_index_url or "")
    echo(f"==> {spec.tag}: base {base} ({why}); CA secret: {ca or 'none'}; local wheels: {', '.join(staged) or 'none'}")
    argv = build_argv(cli, spec, dockerfile, base, torch_index, ca, _network(client))
    argv[-1:-1] = ["--build-arg", "OFFLINE=1"] if offline else []
    argv[-1:-1] = [a for kv in os.environ.get("EXTRA_BUILD_ARGS", "").split() for a in ("--build-arg", kv)]
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(argv) + "\n")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, **cli.env}, cwd=ROOT)
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
    image = client.images.get(spec.image)
    return BuildOutcome(spec.tag, True, seconds, size=image.attrs.get("Size"), image_id=image.short_id.removeprefix("sha256:"), log=log_path)


def format_table(outcomes: list[BuildOutcome]) -> str:
    rows = [f"{'TAG':<46} {'RESULT':<7} {'TIME':>7} {'SIZE':>9}  IMAGE ID"]
    for o in outcomes:
        size = f"{o.size / 1e9:.2f} GB" if o.size else "-"
        seconds = f"{o.seconds:.1f}s" if o.seconds < 10 else f"{o.seconds:.0f}s"
        rows.append(f"{o.tag:<46} {'ok' if o.ok else 'FAILED':<7} {seconds:>7} {size:>9}  {o.image_id or '-'}")
    return "\n".join(rows)


def build_all(client, cli: BuildClient, specs: list[ImageSpec], images_dir: Path, *, keep_going: bool,
              ca: str | None, folders: list[Path], base_override: str | None) -> list[BuildOutcome]:
    outcomes = []
    for spec in specs:
        outcome = build_one(client, cli, spec, images_dir, ca=ca, folders=folders, base_override=base_override)
        outcomes.append(outcome)
        if not outcome.ok:
            print(f"\n{spec.tag}: build FAILED" + (f"; last lines of {outcome.log}:" if outcome.log else ":"), file=sys.stderr)
            print("\n".join("   " + l for l in (outcome.error or "").splitlines()), file=sys.stderr)
            if not keep_going and spec is not specs[-1]:
                print("stopping (KEEP_GOING=1 builds the rest after a failure)", file=sys.stderr)
                break
    return outcomes
