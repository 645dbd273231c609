"""The release path against a real registry: Debian's docker-registry (CNCF distribution 2.8) on loopback.

Push the default image, delete it locally, pull it back by digest, verify it, attach the verify report and the SBOM
to the digest (referrers tag schema: distribution 2.8 has no referrers API), and read them back with `report`.
Also: a dependency missing from the lock fails the build with a clear message.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from scripts.builder.base import resolve_base
from scripts.builder.buildkit import BuildOutcome, BuildRequest, build_one
from scripts.builder.engine import find_build_client, image_exists
from scripts.builder.lock import lock_folders, parse_lock, stage_for_build, stage_locked_wheels
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import ImageSpec, Target
from scripts.render import LOCK_NAME, load_rendered
from scripts.run_verify import verify_image
from scripts.settings import CA_VARIABLES, local_folders
from tests.helpers import ROOT, assert_clean_failure, free_port, run_cli

pytestmark = pytest.mark.docker

# one repository per test process, so two checkouts running this module at once never push, pull or delete each
# other's tags; the module removes its images when it ends
REPOSITORY = f"torchimages-release-test-{os.getpid()}"
IMAGES = ROOT / "images"


@pytest.fixture(scope="module", autouse=True)
def _remove_this_runs_images(docker_client):
    yield
    for image in docker_client.images.list():
        for tag in image.tags:
            if REPOSITORY in tag:
                try:
                    docker_client.images.remove(tag, force=True)
                except Exception:  # noqa: BLE001 - cleanup only; a tag gone already is fine
                    pass


def _release_spec() -> ImageSpec:
    """The shipped default image under the test repository, read from images/."""
    return dataclasses.replace(next(s for s in load_rendered(IMAGES) if s.default), repository=REPOSITORY)


class _Spec:
    """_release_spec(), read when first used (never at import)."""

    def __getattr__(self, name: str):
        return getattr(_release_spec(), name)


SPEC: ImageSpec = _Spec()  # type: ignore[assignment]


def _ca() -> str | None:
    return next((os.environ[v] for v in CA_VARIABLES if Path(os.environ.get(v) or "/nonexistent").is_file()), None)


def _build(client, spec: ImageSpec, folders: list[Path], tmp: Path, extra: tuple[str, ...] = ()) -> BuildOutcome:
    """`make build`'s code path for one spec; logs and the uv download under tmp."""
    request = BuildRequest(images_dir=IMAGES, logs=tmp / "logs", wheels_stage=ROOT / "build" / "wheels", root=ROOT,
                           ca=_ca(), folders=tuple(folders), base_override=None, network=None, env=dict(os.environ),
                           extra_build_args=extra, uv_cache=tmp / "uv")
    return build_one(client, find_build_client(), spec.targets(None)[0], request, echo=lambda *a, **k: None)


@pytest.fixture(scope="module")
def images_dir(tmp_path_factory) -> Path:
    """images/ with only the default image, under a test-only repository, so pushes and pulls never touch the
    shared torchimages:* tags (the CLI reads spec.json through IMAGES_DIR)."""
    images = tmp_path_factory.mktemp("images") / "images"
    (images / SPEC.tag).mkdir(parents=True)
    for name in ("Dockerfile", LOCK_NAME):
        shutil.copy2(IMAGES / SPEC.tag / name, images / SPEC.tag / name)
    (images / SPEC.tag / "spec.json").write_text(next(s for s in load_rendered(IMAGES) if s.default)
                                                 .to_json().replace('"repository": "torchimages"',
                                                                    f'"repository": "{REPOSITORY}"'))
    assert load_rendered(images)[0].repository == REPOSITORY
    return images


@pytest.fixture(scope="module")
def release_image(docker_client, tmp_path_factory) -> str:
    """The default image under the test repository, built by this checkout (BuildKit's cache makes it cheap)."""
    # always built: an image left by an older checkout carries an older verify package
    outcome = _build(docker_client, SPEC, list(local_folders(os.environ.get("PIP_FIND_LINKS", ""))),
                     tmp_path_factory.mktemp("build"))
    assert outcome.ok, outcome.error
    return SPEC.image


def _statement(registry: str, reference: str) -> dict:
    """The in-toto Statement inside the DSSE envelope of the artifact at `reference` (read, not verified)."""
    import base64
    manifest = requests.get(f"http://{registry}/v2/{REPOSITORY}/manifests/{reference}", timeout=10,
                            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).json()
    envelope = requests.get(f"http://{registry}/v2/{REPOSITORY}/blobs/{manifest['layers'][0]['digest']}",
                            timeout=10).json()
    assert envelope["signatures"] and envelope["payloadType"] == "application/vnd.in-toto+json"
    return json.loads(base64.b64decode(envelope["payload"]))


def test_push_delete_pull_by_digest_verify_attest_report(docker_client, registry, images_dir, release_image, tmp_path):
    reports = tmp_path / "reports"
    # the signing key pair: make keygen's, in a configuration folder of this test only (never the repository)
    env = {"IMAGES_DIR": str(images_dir), "REPORTS_DIR": str(reports), "BUILD_DIR": str(tmp_path / "build"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    keygen = run_cli("keygen", env=env, timeout=120)
    assert keygen.returncode == 0, keygen.stdout + keygen.stderr
    public = tmp_path / "config" / "torchimages" / "signing-key.pub"
    env["TRUST"] = str(public)
    push = run_cli("push", "--image", SPEC.tag, "--registry", registry, env=env, timeout=900)
    assert push.returncode == 0, push.stdout + push.stderr
    ref = f"{registry}/{REPOSITORY}@"
    line = next(text for text in push.stdout.splitlines() if ref in text)
    reference = line.split("-> ")[1].strip()
    digest = reference.split("@")[1]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    pushed = json.loads((reports / "push" / "pushed.json").read_text())[SPEC.tag]
    assert pushed["reference"] == reference

    # delete every local reference to the image, then pull it back by digest only
    image = docker_client.images.get(SPEC.image)
    for name in image.tags:             # the test repository's and the registry's names (both only this test's)
        docker_client.images.remove(name, force=True)
    if image_exists(docker_client, image.id):   # still held by its repo digest
        docker_client.images.remove(image.id, force=True)
    assert not image_exists(docker_client, image.id)
    pulled = docker_client.images.pull(reference)
    assert pulled.id == image.id
    pulled.tag(REPOSITORY, SPEC.tag)

    outcome = verify_image(docker_client, SPEC.targets(None)[0], shm_size="1g", timeout=600, extra_args=["--checks", "shm"],
                           reports=reports, echo=lambda *a, **k: None)
    assert outcome.exit_code == 0, outcome
    assert (reports / f"{SPEC.tag}.json").exists()

    # before attest: nothing attached, the report says so and exits 1
    bare = run_cli("report", reference, env=env, timeout=120)
    assert bare.returncode == 1 and "verified: NO" in bare.stdout and "Traceback" not in bare.stderr

    attest = run_cli("attest", "--image", SPEC.tag, env=env, timeout=300)
    assert attest.returncode == 0, attest.stdout + attest.stderr
    assert "verify attached" in attest.stdout and "sbom attached" in attest.stdout
    assert "provenance attached" in attest.stdout and "signed by key" in attest.stdout
    tag_base = digest.replace(":", "-")
    assert f"{tag_base}.verify" in attest.stdout        # distribution 2.8: the referrers tag schema
    tags = requests.get(f"http://{registry}/v2/{REPOSITORY}/tags/list", timeout=10).json()["tags"]
    assert {tag_base, f"{tag_base}.verify", f"{tag_base}.sbom", f"{tag_base}.provenance"} <= set(tags)
    index = requests.get(f"http://{registry}/v2/{REPOSITORY}/manifests/{tag_base}", timeout=10,
                         headers={"Accept": "application/vnd.oci.image.index.v1+json"}).json()
    art = index["manifests"][0]
    manifest = requests.get(f"http://{registry}/v2/{REPOSITORY}/manifests/{art['digest']}", timeout=10,
                            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).json()
    assert manifest["subject"]["digest"] == digest and manifest["artifactType"]
    # each artifact is a DSSE envelope of an in-toto Statement about this digest
    assert manifest["layers"][0]["mediaType"] == "application/vnd.dsse.envelope.v1+json"
    statement = _statement(registry, art["digest"])
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0]["digest"] == {"sha256": digest.split(":")[1]}
    provenance = _statement(registry, f"{tag_base}.provenance")
    assert provenance["predicateType"] == "https://slsa.dev/provenance/v1"
    deps = {d.get("name") or d.get("uri"): d for d in provenance["predicate"]["buildDefinition"]["resolvedDependencies"]}
    assert f"images/{SPEC.tag}/spec.json" in deps and f"images/{SPEC.tag}/requirements.lock" in deps
    assert "templates/Dockerfile.j2" in deps and any(k.startswith("git+") for k in deps)
    assert provenance["predicate"]["buildDefinition"]["internalParameters"]["uv"]

    # the SBOM exported beside the reports: CycloneDX, venv packages with the lock's hashes, distro packages
    sbom = json.loads((reports / f"{SPEC.tag}.sbom.cdx.json").read_text())
    validation = pytest.importorskip("cyclonedx.validation.json")
    from cyclonedx.schema import SchemaVersion
    assert validation.JsonStrictValidator(SchemaVersion.V1_5).validate_str(json.dumps(sbom)) is None
    torch = next(c for c in sbom["components"] if c["name"] == "torch")
    lock_torch = next(p for p in parse_lock((IMAGES / SPEC.tag / LOCK_NAME).read_text()) if p.name == "torch")
    assert {h["content"] for h in torch["hashes"]} == set(lock_torch.hashes)
    assert any(c["purl"].startswith("pkg:deb/debian/libc6@") for c in sbom["components"])

    report = run_cli("report", reference, env=env, timeout=120)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "verified: yes (verdict PASS" in report.stdout and "signer:   signing-key.pub (key " in report.stdout
    assert re.search(r"PASS\s+shm", report.stdout)
    assert "sbom:     CycloneDX 1.5" in report.stdout and "host:     node " in report.stdout
    assert "build:    SLSA v1 provenance, commit " in report.stdout
    # another key: not verified, exit 1
    other = tmp_path / "other"
    assert run_cli("keygen", "--key-dir", str(other), env=env, timeout=120).returncode == 0
    foreign = run_cli("report", reference, "--trust", str(other / "signing-key.pub"), env=env, timeout=120)
    assert foreign.returncode == 1 and "verified: NO" in foreign.stdout and "not in TRUST" in foreign.stdout
    docker_client.images.remove(reference)      # the by-digest name of the pull; the test repository's tag stays


def test_push_to_a_registry_that_is_not_there_is_one_clear_line(docker_client, images_dir, release_image, tmp_path):
    registry = f"127.0.0.1:{free_port()}"
    proc = run_cli("push", "--image", SPEC.tag, "--registry", registry, timeout=300,
                   env={"IMAGES_DIR": str(images_dir), "REPORTS_DIR": str(tmp_path), "BUILD_DIR": str(tmp_path)})
    assert_clean_failure(proc, "push of", "failed")
    if image_exists(docker_client, f"{registry}/{REPOSITORY}:{SPEC.tag}"):
        docker_client.images.remove(f"{registry}/{REPOSITORY}:{SPEC.tag}")


def test_report_of_a_bad_reference_is_one_clear_line():
    assert_clean_failure(run_cli("report", "torchimages:latest"), "not a digest reference")


def test_push_without_a_registry_is_one_clear_line(images_dir, tmp_path):
    proc = run_cli("push", env={"IMAGES_DIR": str(images_dir), "REPORTS_DIR": str(tmp_path), "REGISTRY": ""})
    assert_clean_failure(proc, "make push REGISTRY=host:port", code=2)


def test_a_dependency_missing_from_the_lock_fails_the_build_clearly(docker_client, tmp_path):
    """A lock that is current (header digest) but lacks mpmath, sympy's dependency: pip check refuses, the build says why."""
    ctx = tmp_path / "ctx"
    (ctx / "images" / SPEC.tag).mkdir(parents=True)
    (ctx / "build" / "wheels").mkdir(parents=True)
    shutil.copy2(IMAGES / SPEC.tag / "Dockerfile", ctx / "images" / SPEC.tag / "Dockerfile")
    shutil.copytree(IMAGES.parent / "rootfs", ctx / "rootfs")          # the builder stage COPYs rootfs/builder/
    text = (IMAGES / SPEC.tag / LOCK_NAME).read_text()
    (ctx / "images" / SPEC.tag / LOCK_NAME).write_text(re.sub(r"(?ms)^mpmath==.*?(?=^[a-z])", "", text))
    assert "mpmath==" not in (ctx / "images" / SPEC.tag / LOCK_NAME).read_text()
    staged, _ = stage_for_build(Target(SPEC, NATIVE_NAME), IMAGES, lock_folders(()), ctx / "build" / "wheels", tmp_path / "uv")   # + uv
    base, _ = resolve_base(docker_client, SPEC)
    cli = find_build_client()
    ca = _ca()
    argv = [*cli.argv, "--progress", "plain", "--target", "builder", "-f", str(ctx / "images" / SPEC.tag / "Dockerfile"),
            "--build-arg", f"BASE_IMAGE={base}", "--network", "host",
            "--build-arg", "TORCH_INDEX_URL=" + ("" if any(n.startswith("torch-") for n in staged) else SPEC.torch_index_url or ""),
            *(["--secret", f"id=ca,src={ca}"] if ca else []), str(ctx)]
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **cli.env}, timeout=1200, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    # the venv installs in parts with --no-deps (layers made for pulling); pip check after the last names what is missing
    assert f"error: images/{SPEC.tag}/requirements.lock misses a dependency" in out and "requires mpmath" in out, out[-3000:]


def test_offline_build_from_a_wheel_folder(docker_client, tmp_path):
    """Every locked wheel in one folder (hashes checked on the way in), then a build with no network at all."""
    wheels = tmp_path / "wheels"
    lock = IMAGES / SPEC.tag / LOCK_NAME
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-r", str(lock), "--only-binary",
         ":all:", "--platform", "manylinux_2_28_x86_64", "--python-version", SPEC.python, "--implementation", "cp",
         "--find-links", "/opt/wheels", "-d", str(wheels)], capture_output=True, text=True, timeout=1200, check=False)
    if download.returncode != 0:
        pytest.skip(f"cannot gather the locked wheels here: {download.stderr[-500:]}")
    staged, offline = stage_locked_wheels(Target(SPEC, NATIVE_NAME), lock.read_text(), [wheels], tmp_path / "check")
    assert offline, f"not every locked wheel was gathered: {staged}"
    spec = dataclasses.replace(_release_spec(), repository=REPOSITORY + "-offline")
    # "network off" for the Python install: every proxy variable points at a closed port (BuildKit keeps proxy
    # arguments out of the cache key, so the distro layer, which needs its mirror, still comes from the cache)
    dead = "http://127.0.0.1:9"
    extra = tuple(f"{k}={dead}" for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
                                           "all_proxy"))
    outcome = _build(docker_client, spec, [wheels], tmp_path, extra)
    log = outcome.log.read_text() if outcome.log else ""
    try:
        assert outcome.ok, outcome.error
        assert "OFFLINE=1" in log.splitlines()[0] and "Downloading" not in log
        out = docker_client.containers.run(spec.image, ["python", "-c", "import torch; print(torch.__version__)"],
                                           remove=True, network_mode="none")
        assert out.decode().strip() == SPEC.torch_requirement.split("==")[1]
    finally:
        if image_exists(docker_client, spec.image):
            docker_client.images.remove(spec.image, force=True)
