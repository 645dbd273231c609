"""Shared fixtures (the small test matrix, scratch folders, the Docker Engine, a Slurm) and the pytest hooks; the
helpers that tests import live in tests/helpers.py.

Nothing is loaded at import time, and nothing is written into the checkout: every command a test runs gets
BUILD_DIR and REPORTS_DIR under its tmp_path (IMAGES_DIR too, where it renders)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import EXAMPLES_SCALE, TEST_COMPAT, TEST_MATRIX, dispatch_order, worker_group

# Every property test runs under one profile: "default" (CI and `make test`: bounded counts) or, one command away,
# HYPOTHESIS_PROFILE=thorough (`make test-thorough`: EXAMPLES_SCALE times as many). A test that asks for its own
# count writes it as tests.helpers.examples(n), which the profile scales.
settings.register_profile("default", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=60 * EXAMPLES_SCALE, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

TIERS = ("unit", "host", "docker", "slow")


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test has exactly one tier (unit, host or docker; slow comes on top): its own marker, else its module's
    `pytestmark` (a test that starts a program in a unit module says `@pytest.mark.host`). The tier is then put on
    the test alone, before `-m` selects (tryfirst), so `-m unit` never picks a test whose own tier is host."""
    wrong = []
    for item in items:
        own = {m.name for m in item.own_markers if m.name in TIERS[:3]}
        inherited = {m.name for node in item.listchain()[:-1] for m in node.own_markers if m.name in TIERS[:3]}
        tiers = sorted(own or inherited)
        if len(tiers) != 1:
            wrong.append(f"{item.nodeid}: {tiers or 'none'}")
        else:
            _TIER_OF[item.nodeid] = tiers[0]
    if wrong:
        raise pytest.UsageError("each test needs exactly one tier marker of " + ", ".join(TIERS[:3]) + ":\n  "
                                + "\n  ".join(wrong))
    parents = {id(node): node for item in items for node in item.listchain()[:-1]}
    for node in parents.values():
        node.own_markers[:] = [m for m in node.own_markers if m.name not in TIERS[:3]]
    for item in items:
        item.own_markers[:] = [m for m in item.own_markers if m.name not in TIERS[:3]]
        item.add_marker(_TIER_OF[item.nodeid])


# `make test` runs two pytest-xdist workers; tests/helpers.py's worker_group says which tests share a worker and
# why. xdist's own xdist_group marker rewrites node ids, which pytest 9.2 no longer reads: the groups are given to
# the scheduler as its scopes instead.
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class Lanes(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

        def _assign_work_unit(self, node) -> None:
            # the groups go out in dispatch_order (the long lanes start at once, on both workers); xdist's own order
            # is by number of tests, which puts modules of thousands of unit cases first
            if not getattr(self, "_dispatch_ordered", False):
                order = dispatch_order({scope: len(unit) for scope, unit in self.workqueue.items()})
                for scope in order:
                    self.workqueue.move_to_end(scope)
                self._dispatch_ordered = True
            super()._assign_work_unit(node)

    return Lanes(config, log)


class _UnitStartedAProcess(AssertionError):
    pass


@pytest.fixture(autouse=True)
def _unit_tier_starts_no_process(request, monkeypatch):
    """The unit tier is pure logic in this process: a unit test that starts a program (subprocess, fork, spawn,
    os.system) fails with the fix, so `-m unit` stays seconds and the tier says what it is."""
    if request.node.get_closest_marker("unit") is None:     # the tier alone is on the test (collection above)
        return

    def refuse(*args, **kwargs):
        raise _UnitStartedAProcess(f"{request.node.nodeid} is marked unit but starts a process: mark it host "
                                   "(pytestmark = pytest.mark.host), or test the pure logic without the program")

    import subprocess
    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)


# ---- where the time goes: every run prints its time by cause and by file (CI's log keeps it; docs/testing.md) ----
_SPENT: dict[str, float] = {}
_TIER_OF: dict[str, str] = {}


def _cause(nodeid: str, tier: str) -> str:
    """The cause a test's time is filed under: what it waits on, as docs/testing.md's table names it."""
    path = nodeid.split("::", 1)[0]
    if "arm64" in path:
        return "emulation (arm64 under qemu)"
    if tier == "docker":
        return "images and containers (engine)"
    if "slurm" in path:
        return "Slurm (a real cluster here)"
    if "properties" in path:
        return "property tests"
    return {"host": "programs run here (CLI, verify, preflight)", "unit": "unit (pure logic)"}.get(tier, tier)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Under pytest-xdist this runs in the controller, which collected nothing: the tier comes with the report.
    _SPENT[report.nodeid] = _SPENT.get(report.nodeid, 0.0) + report.duration
    tier = next((t for t in TIERS[:3] if t in report.keywords), None)
    if tier:
        _TIER_OF.setdefault(report.nodeid, tier)


def pytest_terminal_summary(terminalreporter) -> None:
    if not _SPENT:
        return
    by_cause: dict[str, float] = {}
    by_file: dict[str, float] = {}
    for nodeid, seconds in _SPENT.items():
        cause = _cause(nodeid, _TIER_OF.get(nodeid, "?"))
        by_cause[cause] = by_cause.get(cause, 0.0) + seconds
        path = nodeid.split("::", 1)[0]
        by_file[path] = by_file.get(path, 0.0) + seconds
    total = sum(_SPENT.values())
    write = terminalreporter.write_line
    terminalreporter.section("where the time goes (setup + call + teardown)")
    for cause, seconds in sorted(by_cause.items(), key=lambda kv: -kv[1]):
        write(f"{seconds:8.0f} s  {100 * seconds / total:4.0f} %  {cause}")
    workers = getattr(terminalreporter.config.option, "numprocesses", None) or 1
    lanes = f", summed over {workers} workers (the wall time is pytest's last line)" if workers > 1 else ""
    write(f"{total:8.0f} s        in all, {len(_SPENT)} tests{lanes}; the slowest files:")
    for path, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:20]:
        write(f"{seconds:8.0f} s  {path}")
