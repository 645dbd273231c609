"""Against a real Docker Engine: bootstrap a base, build the default (CPU) image, verify it in containers.

CI (.ci/run) starts the engine and sets REQUIRE_DOCKER=1; elsewhere these skip without an engine.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import tarfile
import uuid
from pathlib import Path

import jsonschema
import pytest

from scripts.render import load_rendered
from tests.helpers import ROOT, assert_clean_failure, assert_rdma_userspace, dropped_when_built_here, status_of
from tests.helpers import run_cli as _run_cli

pytestmark = pytest.mark.docker

OUT: dict[str, Path] = {}


class _Spec:
    """The shipped default image's spec, read from images/ when first used (never at import)."""

    def __getattr__(self, name: str):
        spec = next(s for s in load_rendered(ROOT / "images") if s.default)
        return getattr(spec, name)


SPEC = _Spec()


@pytest.fixture(scope="session", autouse=True)
def _scratch(tmp_path_factory):
    """Reports and build logs of these runs go to a temporary folder, not the checkout."""
    base = tmp_path_factory.mktemp("integration")
    OUT.update(build=base / "build", reports=base / "reports")


def run_cli(*args: str, env: dict[str, str] | None = None, **kwargs):
    return _run_cli(*args, env={"BUILD_DIR": str(OUT["build"]), "REPORTS_DIR": str(OUT["reports"]), **(env or {})},
                    **kwargs)


CANARY = f"torchimages-secret-canary-{uuid.uuid4()}"


@pytest.fixture(scope="session")
def ca_with_canary(tmp_path_factory) -> Path:
    """The real CA bundle plus a unique line: if it ever lands in a layer, the scan below finds it."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    real = Path("/etc/ssl/certs/ca-certificates.crt")
    path.write_text(f"# {CANARY}\n" + (real.read_text() if real.exists() else ""))
    return path


@pytest.fixture(scope="session")
def default_image(docker_client, ca_with_canary) -> str:
    base = run_cli("base", timeout=900)
    assert base.returncode == 0, base.stdout + base.stderr
    build = run_cli("build", env={"CA_CERT": str(ca_with_canary)}, timeout=1800)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    assert SPEC.tag in build.stdout and " ok " in build.stdout
    assert f"CA secret: {ca_with_canary}" in build.stdout
    return SPEC.image


def _report(tag: str) -> dict:
    return json.loads((OUT["reports"] / f"{tag}.json").read_text())


def test_make_verify_is_green_with_gpu_checks_skipped(default_image):
    proc = run_cli("verify", timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = _report(SPEC.tag)
    jsonschema.validate(report, json.loads((ROOT / "verify" / "report.schema.json").read_text()))
    status = {c["name"]: c for c in report["checks"]}
    assert {n: status_of(c) for n, c in status.items()} == {"gpu": "skip", "nccl": "skip", "shm": "pass", "hdf5": "pass",
                                                          "arrow": "pass", "vision": "skip", "dataloader": "pass",
                                                          "fabric": "skip", "train": "pass"}
    assert status["fabric"]["code"] == "FABRIC_NONE"            # no RDMA adapter on the CI machine
    assert status["vision"]["code"] == "PACKAGE_MISSING" and "torchvision is not installed" in status["vision"]["summary"]
    assert status["gpu"]["code"] == "GPU_NOT_VISIBLE" and status["gpu"]["owner"] in ("image", "job")   # CPU build, or no GPUs given
    assert status["nccl"]["code"] == "NCCL_NOT_EXERCISED" and "verified over gloo" in status["nccl"]["summary"]
    assert report["environment"]["container"] == "docker" and report["environment"]["torch"].startswith(SPEC.torch)
    assert (OUT["reports"] / f"{SPEC.tag}.xml").exists()
    assert "match its spec" in proc.stdout


def test_make_verify_with_64m_shm_fails_the_shm_check_with_its_remedy(default_image):
    # the shm check alone: the other checks' verdicts at 64m are the green run's above (a full run here took 67 s)
    proc = run_cli("verify", env={"SHM_SIZE": "64m", "VERIFY_ARGS": "--checks shm"}, timeout=900)
    assert proc.returncode == 1
    assert [c["name"] for c in _report(SPEC.tag)["checks"]] == ["shm"]
    shm = next(c for c in _report(SPEC.tag)["checks"] if c["name"] == "shm")
    assert (shm["status"], shm["code"]) == ("fail", "SHM_TOO_SMALL") and "64 MiB" in shm["summary"]
    assert "--shm-size" in shm["remedy"] and "--ipc=host" in shm["remedy"]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_docker_run_verify_works_alone_and_says_how_to_get_json(default_image, docker_client):
    out = docker_client.containers.run(default_image, ["verify", "--checks", "arrow"], remove=True,
                                       network_mode="none").decode()
    assert "arrow   PASS" in out
    assert 'docker run --rm --shm-size=2g --user "$(id -u):$(id -g)" -v "$PWD:/out" IMAGE verify --json /out/report.json' in out
    assert docker_client.images.get(default_image).attrs["Config"]["Cmd"] == ["/bin/bash"]


def test_no_secret_in_any_layer_and_the_default_user_is_not_root(default_image, docker_client):
    image = docker_client.images.get(default_image)
    assert image.attrs["Config"]["User"] not in ("", "0", "root", "0:0")
    saved = io.BytesIO(b"".join(image.save(named=True)))
    scanned = 0
    with tarfile.open(fileobj=saved) as outer:
        for member in outer.getmembers():
            if not member.name.endswith("layer.tar"):
                continue
            with tarfile.open(fileobj=outer.extractfile(member)) as layer:
                for entry in layer.getmembers():
                    assert not entry.name.startswith("run/secrets/"), entry.name
                    if entry.isfile() and entry.size < 64 << 20:
                        assert CANARY.encode() not in layer.extractfile(entry).read(), f"{entry.name} in {member.name}"  # type: ignore[union-attr]
                        scanned += 1
    assert scanned > 1000
    labels = image.labels
    assert labels["io.torchimages.torch"] == SPEC.torch and labels["org.opencontainers.image.version"] == SPEC.tag


def test_a_broken_dockerfile_gives_a_clean_failure_report(default_image, tmp_path):
    broken = tmp_path / "images" / SPEC.tag
    shutil.copytree(ROOT / "images" / SPEC.tag, broken)
    text, injected = re.subn(r"^(FROM \S+ AS image\n)", r"\1RUN echo 'deliberately broken step' && exit 3\n",
                             (broken / "Dockerfile").read_text(), count=1, flags=re.M)
    assert injected == 1, "the image stage's FROM line moved: the broken step would not be injected"
    (broken / "Dockerfile").write_text(text)
    proc = run_cli("--images-dir", str(tmp_path / "images"), "build", timeout=900)
    assert_clean_failure(proc, "FAILED", "deliberately broken step", "build(s) failed", f"logs/{SPEC.tag}.log")
    assert "exit code: 3" in (OUT["build"] / "logs" / f"{SPEC.tag}.log").read_text()


def test_verify_of_an_image_not_built_yet(docker_client):
    tag = "2.15.0-cuda13.2-cudnn9-devel-ubuntu24.04"
    if any(tag in t for i in docker_client.images.list() for t in i.tags):
        pytest.skip("that image exists here")
    assert_clean_failure(run_cli("verify", "--image", tag), "is not built yet", f"make build IMAGE={tag}")


def test_a_missing_base_stops_the_build_before_it_starts_and_names_make_base(docker_client):
    spec = next(s for s in load_rendered(ROOT / "images") if s.distro == "ubuntu22.04")
    from scripts.builder.engine import image_exists, registry_reachable
    if image_exists(docker_client, spec.base_image) or registry_reachable(docker_client, spec.base_image):
        pytest.skip("the registry is reachable here, so the base would be pulled")
    proc = run_cli("build", "--image", spec.tag, timeout=300)
    assert_clean_failure(proc, "cannot be reached", "make base", str(spec.bootstrap_base))


def test_a_container_that_does_not_finish_is_killed_at_the_timeout_and_removed(default_image, docker_client):
    proc = run_cli("verify", env={"VERIFY_TIMEOUT": "4"}, timeout=300)
    assert_clean_failure(proc, "did not finish within 4 s; container killed", "TIMEOUT")
    # this image's verify containers only: the other pytest-xdist worker may be verifying another image right now
    assert docker_client.containers.list(all=True, filters={"label": f"io.torchimages.verify={SPEC.tag}"}) == []


@pytest.mark.skipif(os.environ.get("TEST_CUDA_IMAGE") != "1",
                    reason="downloads ~3 GB of CUDA wheels from PyPI; CI sets TEST_CUDA_IMAGE=1")
def test_the_pypi_cuda_image_builds_and_reports_the_versions_of_its_spec(default_image, docker_client):
    spec = next(s for s in load_rendered(ROOT / "images") if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")
    with dropped_when_built_here(docker_client, spec.image):   # ~6 GB image + its uv cache mount
        build = run_cli("build", "--image", spec.tag, timeout=2400)
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
        # the checks this image's test judges (the whole set runs on the default image above)
        proc = run_cli("verify", "--image", spec.tag, env={"VERIFY_ARGS": "--checks gpu,nccl,shm,hdf5,arrow,fabric"},
                       timeout=900)
        assert proc.returncode == 0, proc.stdout[-4000:]
        assert f"{spec.tag}: torch, Python, CUDA, cuDNN and NCCL inside the image match its spec" in proc.stdout
        env = _report(spec.tag)["environment"]
        assert (env["cuda"], env["cudnn_package"], env["nccl"]) == (spec.cuda, spec.cudnn, spec.nccl)
        status = {c["name"]: status_of(c) for c in _report(spec.tag)["checks"]}
        assert status["gpu"] == status["nccl"] == "skip"
        assert status["shm"] == status["hdf5"] == status["arrow"] == "pass", status
        assert_rdma_userspace(docker_client, spec.image)         # issue 25: NCCL can reach IB, RoCE and EFA
        fabric = next(c for c in _report(spec.tag)["checks"] if c["name"] == "fabric")
        assert (fabric["status"], fabric["code"]) == ("skip", "FABRIC_NONE"), fabric   # no adapter here: not assessed


def test_bench_dataloader_with_64m_shm_warns_and_writes_json_and_svg(default_image, docker_client, tmp_path):
    """Docker's default 64 MB /dev/shm cannot hold 2 workers x prefetch 2 x an 18 MiB batch: the advisor says so."""
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)          # the image runs as a non-root user
    log = docker_client.containers.run(
        default_image, ["verify", "bench", "--dataloader", "--json", "/out/dl.json", "--plot", "/out/dl.svg"],
        remove=True, network_mode="none", shm_size="64m", volumes={str(out): {"bind": "/out", "mode": "rw"}}).decode()
    assert "recommended: DataLoader(dataset, batch_size=32" in log, log
    assert "/dev/shm needed: " in log and "WARNING: /dev/shm" in log and "--shm-size" in log, log
    assert "FALLBACK" in log          # this image has no torchvision: the per-sample work says what replaced it
    data = json.loads((out / "dl.json").read_text())
    assert data["facts"]["shm"]["size"] == 64 << 20
    advice = data["recommendation"]
    # which of the three shm findings fires depends on the (noisy) fastest setting; the JSON must carry one
    assert (advice["shm_ok"] is False or advice.get("shm_caps_in_flight_batches") is not None
            or any(not r["ok"] and r["shm_error"] for r in data["facts"]["measurements"])), advice
    assert (out / "dl.svg").read_text().startswith("<svg xmlns=\"http://www.w3.org/2000/svg\"")


CUDA_VISION_TAG = "2.14.1-cuda13.0-cudnn9-runtime-debian12"


@pytest.mark.skipif(os.environ.get("TEST_CUDA_IMAGE") != "1",
                    reason="downloads ~3 GB of CUDA wheels from PyPI; CI sets TEST_CUDA_IMAGE=1")
def test_the_cuda_image_with_torchvision_builds_and_its_vision_check_passes(default_image, docker_client):
    """torch 2.14.1 + torchvision 0.29.1 (PyPI's CUDA 13.0 builds): torchvision exercised on every CI run."""
    spec = next(s for s in load_rendered(ROOT / "images") if s.tag == CUDA_VISION_TAG)
    with dropped_when_built_here(docker_client, spec.image):   # ~6 GB image + its uv cache mount
        assert spec.torchvision == "0.29.1"
        build = run_cli("build", "--image", spec.tag, timeout=2400)
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
        proc = run_cli("verify", "--image", spec.tag, env={"VERIFY_ARGS": "--checks vision,dataloader,fabric"},
                       timeout=900)
        assert proc.returncode == 0, proc.stdout[-4000:]
        report = _report(spec.tag)
        assert report["environment"]["torchvision"] == "0.29.1"
        checks = {c["name"]: c for c in report["checks"]}
        vision = checks["vision"]
        assert vision["status"] == "pass", vision
        assert "torchvision 0.29.1 (CUDA 13.0) with torch 2.14.1" in vision["summary"]
        assert "no GPU visible: CPU side only" in vision["summary"]
        assert vision["metrics"]["augment_cpu_images_per_s"]["value"] > 0
        assert checks["dataloader"]["status"] == "pass" and checks["dataloader"]["data"]["backend"] == "torchvision"
        assert_rdma_userspace(docker_client, spec.image)
        assert (checks["fabric"]["status"], checks["fabric"]["code"]) == ("skip", "FABRIC_NONE"), checks["fabric"]
