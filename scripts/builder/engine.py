"""The Docker Engine: connect through the SDK with one clear message per failure, and find a BuildKit client.

The SDK cannot drive BuildKit (docker/docker-py#2230), so builds go through a docker CLI that can:
buildx when present, else a classic client (< 23) with DOCKER_BUILDKIT=1.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UserError

MIN_BUILDKIT_API = (1, 39)     # engine 18.09: the first with BuildKit
CLI_CANDIDATES = ("docker", "/usr/bin/docker", "/usr/local/bin/docker")


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it wraps: docker-py wraps requests' errors, which wrap urllib3's, which wrap the OSError
    (their __cause__/__context__, or an exception among their args), innermost last."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if any(current is s for s in seen):
            continue
        seen.append(current)
        todo += [e for e in (current.__cause__, current.__context__, *current.args) if isinstance(e, BaseException)]
        todo += [e for e in (getattr(current, "reason", None),) if isinstance(e, BaseException)]
    return seen


def _cause(exc: BaseException) -> str:
    """The first line of the innermost useful message (docker-py wraps requests' errors two levels deep)."""
    text = str(exc).strip()
    for marker in ("Error while fetching server API version: ", "Connection aborted.', "):
        text = text.split(marker)[-1]
    text = text.strip("()'\" ").splitlines()[0] if text else type(exc).__name__
    return text[:300]


def ssh_without_paramiko(where: str) -> bool:
    """DOCKER_HOST is ssh:// and docker-py's ssh transport (paramiko) is not installed."""
    import importlib.util
    return where.startswith("ssh://") and importlib.util.find_spec("paramiko") is None


def connect(env: Mapping[str, str], timeout: int = 30) -> Any:
    """A pinged docker.DockerClient, or a UserError naming the cause and the fix."""
    import docker
    from docker.errors import DockerException

    where = env.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if ssh_without_paramiko(where):
        raise UserError(f"DOCKER_HOST={where} needs the ssh transport: `pip install paramiko` (or `make setup`), "
                        f"or use a unix:// or tcp:// DOCKER_HOST")
    try:
        client = docker.DockerClient.from_env(timeout=timeout, environment=dict(env))
        client.ping()
        version = str(client.version().get("ApiVersion") or "")
    except DockerException as exc:
        if any(isinstance(e, PermissionError) for e in _chain(exc)):
            raise UserError(f"permission denied on the Docker socket ({where}): add yourself to the docker group "
                            f"(`sudo usermod -aG docker $USER`, then log in again) or run as root") from None
        raise UserError(f"no Docker Engine reachable at {where} ({_cause(exc)}): start it (`sudo systemctl start "
                        f"docker`; on a bare machine `make build` / `.ci/run` start dockerd as root) or point "
                        f"DOCKER_HOST at a running engine") from None
    except (OSError, ValueError) as exc:    # a bad URL or missing TLS files, before any connection
        raise UserError(f"cannot connect to the Docker Engine at {where} ({_cause(exc)}): check DOCKER_HOST, "
                        f"DOCKER_TLS_VERIFY and DOCKER_CERT_PATH") from None
    parts = version.split(".")[:2]
    if len(parts) != 2 or not all(p.isdecimal() for p in parts):
        raise UserError(f"the Docker Engine at {where} reported API version {version!r}: not an engine this tool "
                        f"understands; check DOCKER_HOST points at a Docker Engine") from None
    if (int(parts[0]), int(parts[1])) < MIN_BUILDKIT_API:
        raise UserError(f"the Docker Engine at {where} speaks API {version}, older than BuildKit (engine 18.09, "
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


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 127, "", str(exc))


def find_build_client(docker_cli: str | None = None) -> BuildClient:
    """The first docker CLI that can build with BuildKit (DOCKER_CLI overrides the search)."""
    seen: set[str] = set()
    tried: list[str] = []
    candidates = [docker_cli] if docker_cli else list(CLI_CANDIDATES)
    for name in candidates:
        path = shutil.which(name)
        if not path or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        if _run([path, "buildx", "version"]).returncode == 0:
            return BuildClient((path, "buildx", "build", "--load"), {}, "buildx")
        version = _run([path, "version", "--format", "{{.Client.Version}}"]).stdout.strip()
        major = int(version.split(".")[0]) if version[:1].isdecimal() else 0
        tried.append(f"{path} {version or '?'}")
        if 18 <= major < 23:       # from 23 on the classic client refuses BuildKit without the buildx plugin
            return BuildClient((path, "build"), {"DOCKER_BUILDKIT": "1"}, "classic+buildkit")
    raise UserError("no BuildKit-capable docker client found (tried: " + (", ".join(tried) or "none on PATH") +
                    "): install the buildx plugin (Debian/Ubuntu: `apt-get install docker-buildx`, or "
                    "docker-buildx-plugin from Docker's repository), or set DOCKER_CLI to a client that has it")


def image_exists(client: Any, ref: str) -> bool:
    from docker.errors import ImageNotFound
    try:
        client.images.get(ref)
        return True
    except ImageNotFound:
        return False


def registry_reachable(client: Any, ref: str) -> bool:
    """Whether the engine can resolve `ref` in its registry (a manifest lookup, nothing pulled)."""
    try:
        client.images.get_registry_data(ref)
        return True
    except Exception:  # noqa: BLE001 - API errors, requests' timeouts, connection errors: unreachable all the same
        return False
