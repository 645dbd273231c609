"""The Docker Engine: connect through the SDK with one clear message per failure, and find a BuildKit client.

The SDK cannot drive BuildKit (docker/docker-py#2230), so builds go through a docker CLI that can:
buildx when present, else a classic client (< 23) with DOCKER_BUILDKIT=1.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from .errors import UserError

MIN_BUILDKIT_API = (1, 39)     # engine 18.09: the first with BuildKit
CLI_CANDIDATES = ("docker", "/usr/bin/docker", "/usr/local/bin/docker")


def _where() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: int = 30):
    """A pinged docker.DockerClient, or a UserError naming the cause and the fix."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        text = str(exc)
        if "Permission denied" in text or "PermissionError" in text:
            raise UserError(f"permission denied on the Docker socket ({_where()}): add yourself to the docker group "
                            f"(`sudo usermod -aG docker $USER`, then log in again) or run as root") from None
        raise UserError(f"no Docker Engine reachable at {_where()}: start it (`sudo systemctl start docker`; on a "
                        f"bare CI machine `.ci/run` starts dockerd) or point DOCKER_HOST at a running engine") from None
    version = client.version().get("ApiVersion", "0.0")
    if tuple(int(x) for x in version.split(".")[:2]) < MIN_BUILDKIT_API:
        raise UserError(f"the Docker Engine at {_where()} speaks API {version}, older than BuildKit (engine 18.09, "
                        f"API 1.39): upgrade Docker Engine") from None
    return client


@dataclass(frozen=True)
class BuildClient:
    """How to run a BuildKit build: argv prefix and extra environment."""

    argv: tuple[str, ...]
    env: dict[str, str]
    kind: str            # "buildx" or "classic+buildkit"

    def describe(self) -> str:
        return f"{' '.join(self.argv)} ({self.kind})"


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def find_build_client() -> BuildClient:
    """The first docker CLI that can build with BuildKit (DOCKER_CLI overrides the search)."""
    seen, tried = set(), []
    candidates = [os.environ["DOCKER_CLI"]] if os.environ.get("DOCKER_CLI") else list(CLI_CANDIDATES)
    for name in candidates:
        path = shutil.which(name)
        if not path or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        if _run([path, "buildx", "version"]).returncode == 0:
            return BuildClient((path, "buildx", "build", "--load"), {}, "buildx")
        version = _run([path, "version", "--format", "{{.Client.Version}}"]).stdout.strip()
        major = int(version.split(".")[0]) if version[:1].isdigit() else 0
        tried.append(f"{path} {version or '?'}")
        if 18 <= major < 23:       # from 23 on the classic client refuses BuildKit without the buildx plugin
            return BuildClient((path, "build"), {"DOCKER_BUILDKIT": "1"}, "classic+buildkit")
    raise UserError("no BuildKit-capable docker client found (tried: " + (", ".join(tried) or "none on PATH") +
                    "): install the buildx plugin (Debian/Ubuntu: `apt-get install docker-buildx`, or "
                    "docker-buildx-plugin from Docker's repository), or set DOCKER_CLI to a client that has it")


def image_exists(client, ref: str) -> bool:
    from docker.errors import ImageNotFound
    try:
        client.images.get(ref)
        return True
    except ImageNotFound:
        return False


def registry_reachable(client, ref: str) -> bool:
    """Whether the engine can resolve `ref` in its registry (a manifest lookup, nothing pulled)."""
    try:
        client.images.get_registry_data(ref)
        return True
    except Exception:  # noqa: BLE001 - API errors, requests' timeouts, connection errors: unreachable all the same
        return False
