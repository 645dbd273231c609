"""Shared fixtures: the repository, a CLI runner, the small test matrix, and the Docker Engine.

Nothing is loaded at import time, and nothing is written into the checkout: every command a test runs gets
BUILD_DIR and REPORTS_DIR under its tmp_path (IMAGES_DIR too, where it renders)."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

# Every property test (tests/test_*properties.py) runs under one profile: HYPOTHESIS_PROFILE=thorough for thousands.
settings.register_profile("default", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TEST_MATRIX, TEST_COMPAT = DATA / "matrix.yaml", DATA / "compat.yaml"
TIERS = ("unit", "host", "docker", "slow")


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 1800,
            module: str = "scripts", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m <module> args` from the repository root, output captured as text."""
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, check=False)


def assert_clean_failure(proc: subprocess.CompletedProcess[str], *needles: str, code: int | None = None) -> None:
    """Non-zero exit (or `code`), no traceback, and every needle in the output."""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    if code is not None:
        assert proc.returncode == code, out
    assert "Traceback" not in out, out
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out}"


@pytest.fixture
def scratch_env(tmp_path: Path) -> dict[str, str]:
    """Variables that send every write of a CLI run into tmp_path."""
    return {"BUILD_DIR": str(tmp_path / "build"), "REPORTS_DIR": str(tmp_path / "reports")}


@pytest.fixture(scope="session")
def test_compat():
    from scripts.plan.compat import load_compat
    return load_compat(TEST_COMPAT)


@pytest.fixture(scope="session")
def test_specs(test_compat):
    from scripts.plan.matrix import load_matrix
    return load_matrix(TEST_MATRIX, test_compat)


@pytest.fixture
def rendered(tmp_path: Path, test_specs) -> Path:
    """images/ of the test matrix, rendered into tmp_path."""
    from scripts.render import rendered_files, write_images
    images = tmp_path / "images"
    write_images(rendered_files(test_specs), images, tmp_path / "build")
    return images


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


@pytest.fixture(scope="module")
def slurm_cluster():
    """A real Slurm with two nodes (n1, n2) on this host (tests/slurm.py), for one test module. Where it cannot be had
    (not root, no apt-get) the test skips with the reason; under REQUIRE_DOCKER=1 (CI, a root Debian machine) it fails."""
    from tests import slurm
    try:
        with slurm.cluster(nodes=2) as cluster:
            yield cluster
    except slurm.Unavailable as exc:
        if os.environ.get("REQUIRE_DOCKER") == "1":
            pytest.fail(f"REQUIRE_DOCKER=1 (CI) but no Slurm: {exc}")
        pytest.skip(str(exc))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test gets a tier: integration/ → docker; a module's own marks; else unit (host when it runs the CLI)."""
    for item in items:
        if any(item.get_closest_marker(t) for t in TIERS[:3]):
            continue
        if "integration" in item.nodeid:
            item.add_marker(pytest.mark.docker)
        elif "test_verify_host" in item.nodeid:
            item.add_marker(pytest.mark.host)
        else:
            item.add_marker(pytest.mark.unit)


def load_launcher(name: str) -> ModuleType:
    """An access launcher of rootfs/access (a Python script without .py) as a module, to call its parsers."""
    path = ROOT / "rootfs" / "access" / "usr" / "local" / "bin" / name
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
