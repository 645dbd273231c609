"""`make push` of a two-platform spec against a real registry (Debian's docker-registry on loopback): one tag, an
OCI image index over an amd64 and an arm64 image, each platform manifest pullable by digest.

The two images are tiny (FROM the local debian12 bases, one LABEL and one file: nothing runs, so no emulation is
needed) and live under a repository only this test uses."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess

import pytest
import requests

from scripts.builder.engine import image_exists
from scripts.plan.platforms import base_tag
from scripts.plan.spec import ImageSpec
from scripts.render import load_rendered
from tests.helpers import ROOT, assert_clean_failure, run_cli

pytestmark = pytest.mark.docker

REPOSITORY = "torchimages-push-index-test"
TAG = "0.0.0-push-index-debian12"
PLATFORMS = ["linux/amd64", "linux/arm64"]
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
ACCEPT = ", ".join([OCI_INDEX, "application/vnd.oci.image.manifest.v1+json",
                    "application/vnd.docker.distribution.manifest.v2+json"])
DOCKER = "/usr/bin/docker"


@pytest.fixture(scope="module")
def spec() -> ImageSpec:
    default = next(s for s in load_rendered(ROOT / "images") if s.default)
    return dataclasses.replace(default, repository=REPOSITORY, tag=TAG, platforms=list(PLATFORMS), default=True)


@pytest.fixture(scope="module")
def images_dir(tmp_path_factory, spec) -> dict[str, str]:
    images = tmp_path_factory.mktemp("images") / "images"
    (images / TAG).mkdir(parents=True)
    (images / TAG / "spec.json").write_text(spec.to_json())
    loaded = load_rendered(images)[0]
    assert loaded.platforms == PLATFORMS and loaded.image == f"{REPOSITORY}:{TAG}"
    return {"IMAGES_DIR": str(images)}


def _build_tiny(tmp, base: str, platform: str, name: str) -> None:
    ctx = tmp / name.replace(":", "_")
    ctx.mkdir()
    (ctx / "arch.txt").write_text(platform + "\n")
    (ctx / "Dockerfile").write_text(f"FROM {base}\nLABEL io.torchimages.test=push-index\nCOPY arch.txt /arch.txt\n")
    proc = subprocess.run([DOCKER, "build", "--platform", platform, "-t", name, str(ctx)], capture_output=True,
                          text=True, env={**os.environ, "DOCKER_BUILDKIT": "1"}, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def tiny_images(docker_client, spec, tmp_path_factory):
    """The per-arch local names of the test spec: <repo>:<tag> (amd64) and <repo>:<tag>-arm64; removed after."""
    arm_base = base_tag("debian12", "linux/arm64")
    for base in (base_tag("debian12", "linux/amd64"), arm_base):
        if not image_exists(docker_client, base):
            if os.environ.get("ARM64") == "1" or base != arm_base:
                pytest.fail(f"{base} is absent: make base IMAGE=... PLATFORM={'linux/arm64' if base == arm_base else 'linux/amd64'}")
            pytest.skip(f"{base} is absent (make base PLATFORM=linux/arm64 IMAGE=<a multi-platform tag> creates it; "
                        f"CI has it when ARM64=1)")
    tmp = tmp_path_factory.mktemp("tiny")
    names = {"linux/amd64": spec.image, "linux/arm64": f"{spec.image}-arm64"}
    for platform, name in names.items():
        _build_tiny(tmp, base_tag("debian12", platform), platform, name)
        attrs = docker_client.images.get(name).attrs
        assert (attrs["Os"], attrs["Architecture"]) == ("linux", platform.split("/")[1])
    yield names
    _remove_test_images(docker_client)


def _remove_test_images(client) -> None:
    """Every image named in this test's repository, local or registry-prefixed (tags and pulled digests)."""
    for image in client.images.list():
        names = (image.attrs.get("RepoTags") or []) + (image.attrs.get("RepoDigests") or [])
        if any(n.startswith(f"{REPOSITORY}:") or f"/{REPOSITORY}:" in n or f"/{REPOSITORY}@" in n for n in names):
            client.images.remove(image.id, force=True)


def _get(registry: str, path: str) -> requests.Response:
    resp = requests.get(f"http://{registry}/v2/{REPOSITORY}/{path}", headers={"Accept": ACCEPT}, timeout=30)
    assert resp.ok, resp.text
    return resp


def test_one_platform_push_writes_only_its_per_arch_tag(  # CI's build row; runs first
        docker_client, registry, images_dir, tiny_images, tmp_path):
    env = {**images_dir, "REPORTS_DIR": str(tmp_path / "reports"), "BUILD_DIR": str(tmp_path / "build"),
           "PLATFORM": "linux/arm64"}
    push = run_cli("push", "--registry", registry, env=env, timeout=600)
    assert push.returncode == 0, push.stdout + push.stderr
    record = json.loads((tmp_path / "reports" / "push" / "pushed.json").read_text())[TAG]
    assert list(record["platforms"]) == ["linux/arm64"] and record["platforms"]["linux/arm64"]["tag"] == f"{TAG}-arm64"
    assert list(record["layers"]) == [f"{TAG}-arm64"]
    assert "(image index)" not in push.stdout


def test_one_tag_two_platforms_is_an_oci_index_and_each_platform_pulls_by_digest(docker_client, registry, images_dir,
                                                                                  tiny_images, tmp_path):
    env = {**images_dir, "REPORTS_DIR": str(tmp_path / "reports"), "BUILD_DIR": str(tmp_path / "build")}

    # before amd64 is pushed (the test above pushed arm64 alone), index-only mode refuses, naming what it lacks
    early = run_cli("push", "--registry", registry, "--index-only", env=env, timeout=300)
    assert_clean_failure(early, f"{TAG}-amd64", "PLATFORM=linux/amd64")

    push = run_cli("push", "--registry", registry, env=env, timeout=600)
    assert push.returncode == 0, push.stdout + push.stderr
    assert "(image index)" in push.stdout and "missing" not in push.stdout

    resp = _get(registry, f"manifests/{TAG}")
    assert resp.headers["Content-Type"].split(";")[0] == OCI_INDEX
    index = json.loads(resp.content)
    assert index["mediaType"] == OCI_INDEX and index["schemaVersion"] == 2
    by_arch = {m["platform"]["architecture"]: m for m in index["manifests"]}
    assert set(by_arch) == {"amd64", "arm64"} and all(m["platform"]["os"] == "linux" for m in index["manifests"])

    record = json.loads((tmp_path / "reports" / "push" / "pushed.json").read_text())[TAG]
    assert record["media_type"] == OCI_INDEX and record["reference"] == f"{registry}/{REPOSITORY}@{record['digest']}"
    assert record["digest"] in push.stdout
    for platform, arch in (("linux/amd64", "amd64"), ("linux/arm64", "arm64")):
        entry, desc = record["platforms"][platform], by_arch[arch]
        assert entry["digest"] == desc["digest"] and entry["digest"] in push.stdout
        manifest = _get(registry, f"manifests/{desc['digest']}")
        assert len(manifest.content) == desc["size"]
        assert manifest.headers["Content-Type"].split(";")[0] == desc["mediaType"]
        assert entry["image_id"] == docker_client.images.get(tiny_images[platform]).id
        # the per-arch tag the index-only mode assembles from points at the same manifest
        assert _get(registry, f"manifests/{TAG}-{arch}").headers["Docker-Content-Digest"] == desc["digest"]

    # what each platform costs a node: the registry's compressed blobs, in the manifest's order, with the engine's
    # unpacked sizes beside them; the amd64 and arm64 images share no layer (each arch has its own base)
    assert "what each pushed image costs a node" in push.stdout
    for arch in ("amd64", "arm64"):
        manifest = json.loads(_get(registry, f"manifests/{by_arch[arch]['digest']}").content)
        costs = record["layers"][f"{TAG}-{arch}"]
        assert [(x["digest"], x["compressed"]) for x in costs] == [(x["digest"], x["size"]) for x in manifest["layers"]]
        assert all(isinstance(x["unpacked"], int) and x["unpacked"] >= 0 for x in costs)
    assert not {x["digest"] for x in record["layers"][f"{TAG}-amd64"]} & {x["digest"] for x in record["layers"][f"{TAG}-arm64"]}

    # index-only mode rebuilds the same index from the per-arch tags alone (no engine images used)
    again = run_cli("push", "--registry", registry, "--index-only",
                    env={**env, "REPORTS_DIR": str(tmp_path / "merge")}, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    merged = json.loads((tmp_path / "merge" / "push" / "pushed.json").read_text())[TAG]
    assert merged["digest"] == record["digest"]
    assert {p: e["image_id"] for p, e in merged["platforms"].items()} == \
        {p: e["image_id"] for p, e in record["platforms"].items()}

    # each platform manifest pulls by digest, with the local images gone first
    for platform, arch in (("linux/amd64", "amd64"), ("linux/arm64", "arm64")):
        image_id = record["platforms"][platform]["image_id"]
        _remove_test_images(docker_client)
        assert not image_exists(docker_client, image_id)
        ref = record["platforms"][platform]["reference"]
        pull = subprocess.run([DOCKER, "pull", ref], capture_output=True, text=True, timeout=300, check=False)
        assert pull.returncode == 0, pull.stdout + pull.stderr
        pulled = docker_client.images.get(ref)
        assert pulled.id == image_id and pulled.attrs["Architecture"] == arch


def test_push_of_a_platform_the_spec_lacks_is_one_clear_line(registry, images_dir, tmp_path):
    env = {**images_dir, "REPORTS_DIR": str(tmp_path), "PLATFORM": "linux/riscv64"}
    assert_clean_failure(run_cli("push", "--registry", registry, env=env, timeout=120), "not built for linux/riscv64")
