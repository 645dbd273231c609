"""Against the real engine: the arm64 base that `make base PLATFORM=linux/arm64` creates runs under emulation
and says arm64, and the shipped multi-platform image builds for arm64 and verifies there. Bootstrapping and
building take minutes under qemu, so they run only when ARM64=1 or the base/image exists."""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator

import pytest

from scripts.builder.emulation import emulation_problem
from scripts.builder.engine import image_exists
from scripts.plan.platforms import base_tag, host_platform
from tests.helpers import ROOT, assert_rdma_userspace, dropped_when_built_here, run_cli

pytestmark = pytest.mark.docker

IMAGES = ROOT / "images"

BASE = base_tag("debian12", "linux/arm64")
MULTI = "2.13.0-cuda13.0-cudnn9-runtime-debian12"


@pytest.fixture(scope="module")
def arm64_base(docker_client, tmp_path_factory) -> str:
    from docker.errors import ImageNotFound
    scratch = tmp_path_factory.mktemp("arm64")
    scratch_env = {"BUILD_DIR": str(scratch / "build"), "REPORTS_DIR": str(scratch / "reports")}
    problem = emulation_problem("linux/arm64")
    if problem:
        pytest.skip(f"arm64 binaries cannot run here: {problem}")
    try:
        docker_client.images.get(BASE)
    except ImageNotFound:
        if os.environ.get("ARM64") != "1":
            pytest.skip(f"{BASE} absent; ARM64=1 bootstraps it (several minutes under emulation)")
        proc = run_cli("base", env={**scratch_env, "PLATFORM": "linux/arm64", "IMAGE": MULTI}, timeout=1800)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return BASE


def test_arm64_base_config_and_machine(docker_client, arm64_base):
    image = docker_client.images.get(arm64_base)
    assert image.attrs["Architecture"] == "arm64" and image.attrs["Os"] == "linux"
    out = docker_client.containers.run(arm64_base, ["uname", "-m"], remove=True, network_mode="none",
                                       platform="linux/arm64")
    assert out.decode().strip() == "aarch64"


def test_make_base_finds_the_arm64_base_present(docker_client, arm64_base, tmp_path):
    """`make base PLATFORM=linux/arm64` through the CLI: the shipped multi-platform image's arm64 base is there
    and says arm64, so nothing is bootstrapped (and the amd64 one is left alone)."""
    proc = run_cli("base", env={"PLATFORM": "linux/arm64", "IMAGE": MULTI, "BUILD_DIR": str(tmp_path / "b"),
                                "REPORTS_DIR": str(tmp_path / "r")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert BASE in proc.stdout and "present" in proc.stdout and ":latest " not in proc.stdout
    wrong = run_cli("base", env={"PLATFORM": "linux/arm64", "IMAGE": "2.13.0-cpu-debian12"})
    assert wrong.returncode == 2 and "no selected image is built for linux/arm64" in wrong.stderr


def test_emulation_is_detected_inside_without_help_from_the_host(docker_client, arm64_base, tmp_path, monkeypatch):
    """verify/environment.py's cpuinfo evidence alone (no TORCHIMAGES_HOST_ARCH) tells qemu from a Grace node:
    the base has no Python, so its /proc/cpuinfo is judged on the host by the same function."""
    if host_platform() == "linux/arm64":
        pytest.skip("native arm64 host: nothing is emulated")
    from verify import environment
    cpuinfo = docker_client.containers.run(arm64_base, ["cat", "/proc/cpuinfo"], remove=True, network_mode="none",
                                           platform="linux/arm64").decode()
    (tmp_path / "cpuinfo").write_text(cpuinfo)
    monkeypatch.delenv("TORCHIMAGES_HOST_ARCH", raising=False)
    monkeypatch.setattr("verify.environment.platform.machine", lambda: "aarch64")
    assert environment.emulation(str(tmp_path / "cpuinfo"))["emulated"] is True


@pytest.fixture(scope="module")
def arm64_image(docker_client, arm64_base, tmp_path_factory) -> Iterator[str]:
    """The shipped multi-platform image built for linux/arm64 under emulation by `make build PLATFORM=linux/arm64`
    (its aarch64 wheels fetched natively first, ~3 GB), or the one already built here."""
    image = f"torchimages:{MULTI}-arm64"
    # built here (CI): the 5.4 GB image, its uv cache mount and the 2.8 GB of fetched wheels go when the module ends
    with dropped_when_built_here(docker_client, image, ROOT / "build" / "cache" / "wheels-aarch64"):
        if not image_exists(docker_client, image):
            if os.environ.get("ARM64") != "1":
                pytest.skip(f"{image} absent; ARM64=1 builds it (minutes under emulation, ~3 GB of aarch64 wheels)")
            scratch = tmp_path_factory.mktemp("arm64-build")
            proc = run_cli("build", env={"PLATFORM": "linux/arm64", "IMAGE": MULTI, "REPORTS_DIR": str(scratch)},
                           timeout=3000)
            assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
            # the image holds what the fetched wheels gave it: their 2.8 GB go now, not after the emulated verify
            shutil.rmtree(ROOT / "build" / "cache" / "wheels-aarch64", ignore_errors=True)
        yield image


def test_arm64_image_is_arm64_and_verifies_under_emulation(docker_client, arm64_image, tmp_path):
    """`make verify PLATFORM=linux/arm64`: shm, hdf5 and arrow pass (torch, h5py, pyarrow and DataLoader workers run on
    aarch64), fabric skips (no adapter), and the report says emulated. The gpu check is left out here: its skip without
    GPUs is the amd64 images' (tests/integration/test_images.py), and under qemu it cost two minutes of CPU."""
    image = docker_client.images.get(arm64_image)
    assert image.attrs["Architecture"] == "arm64"
    out = docker_client.containers.run(arm64_image, ["uname", "-m"], remove=True, network_mode="none",
                                       platform="linux/arm64")
    assert out.decode().strip() == "aarch64"
    proc = run_cli("verify", env={"PLATFORM": "linux/arm64", "IMAGE": MULTI, "REPORTS_DIR": str(tmp_path),
                                  "VERIFY_ARGS": "--checks shm,hdf5,arrow,fabric"}, timeout=1500)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    report = json.loads((tmp_path / f"{MULTI}-arm64.json").read_text())
    assert {c["name"]: c["status"] for c in report["checks"]} == {"shm": "pass", "hdf5": "pass", "arrow": "pass",
                                                                   "fabric": "skip"}
    env = report["environment"]
    assert env["machine"] == "aarch64" and env["emulated"] is True, env
    assert "EMULATED" in proc.stdout and "throughput is reported, not judged" in proc.stdout
    lock = (IMAGES / MULTI / "requirements.arm64.lock").read_text()
    inside = docker_client.containers.run(arm64_image, ["cat", "/usr/share/torchimages/requirements.lock"],
                                          remove=True, network_mode="none", platform="linux/arm64").decode()
    assert inside == lock                                   # the image carries its own platform's lock
    found = assert_rdma_userspace(docker_client, arm64_image, "linux/arm64")   # issue 25, under qemu
    assert found["mlx5"][0].startswith("/usr/lib/aarch64-linux-gnu/libibverbs/"), found
