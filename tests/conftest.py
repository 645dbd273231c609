"""Shared fixtures: the repository, a CLI runner, and the Docker Engine for integration tests."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 1800,
            module: str = "scripts") -> subprocess.CompletedProcess:
    """`python -m <module> args` from the repository root, output captured as text."""
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, check=False)


def assert_clean_failure(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Non-zero exit, no traceback, and every needle in the output."""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out, out
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out}"


@pytest.fixture(scope="session")
def docker_client():
    """A pinged engine client; without one the test skips, or fails when REQUIRE_DOCKER=1 (CI)."""
    try:
        import docker
        client = docker.from_env(timeout=600)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(f"REQUIRE_DOCKER=1 but no Docker Engine is reachable: {exc}")
        pytest.skip(f"no Docker Engine reachable ({exc}); CI starts one (.ci/run)")


def pytest_collection_modifyitems(items):
    for item in items:
        if "integration" in item.nodeid:
            item.add_marker(pytest.mark.docker)
