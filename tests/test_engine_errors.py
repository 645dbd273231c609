"""Engine failures are one clear line and a non-zero exit, with or without an engine on this machine."""
from __future__ import annotations

import pytest

from scripts.build import BuildOutcome, build_all, find_ca, stage_wheels, wheel_folders
from scripts.matrix import load_matrix
from tests.conftest import assert_clean_failure, run_cli

NOWHERE = {"DOCKER_HOST": "tcp://127.0.0.1:9"}


@pytest.mark.parametrize("command", ["build", "verify", "base"])
def test_no_engine_is_one_clear_message(command):
    proc = run_cli(command, env=NOWHERE, timeout=120)
    assert_clean_failure(proc, "no Docker Engine reachable at tcp://127.0.0.1:9")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_dockerfile_and_keep_going(monkeypatch, tmp_path):
    specs = load_matrix()[:3]
    calls = []

    def fake_build_one(client, cli, spec, images_dir, **kwargs):
        calls.append(spec.tag)
        return BuildOutcome(spec.tag, spec is not specs[0], 1.0, error="boom")

    monkeypatch.setattr("scripts.build.build_one", fake_build_one)
    assert [o.ok for o in build_all(None, None, specs, tmp_path, keep_going=False, ca=None, folders=[], base_override=None)] == [False]
    assert len(build_all(None, None, specs, tmp_path, keep_going=True, ca=None, folders=[], base_override=None)) == 3


def test_ca_and_wheel_folder_detection(monkeypatch, tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    assert find_ca() == str(ca)
    monkeypatch.setenv("PIP_FIND_LINKS", f"{tmp_path} https://example.org/wheels /does/not/exist")
    monkeypatch.delenv("WHEELS", raising=False)
    assert wheel_folders() == [tmp_path]


def test_only_the_pinned_wheels_for_the_images_python_are_staged(tmp_path):
    spec = next(s for s in load_matrix() if s.default)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl", "torchdata-0.11.0-py3-none-any.whl"):
        (src / name).write_text("")
    staged = stage_wheels(spec, [src], tmp_path / "out")
    assert staged == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "torchdata-0.11.0-py3-none-any.whl"]


def _fake_cli(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_buildx_is_preferred_when_the_client_has_it(tmp_path, monkeypatch):
    from scripts.engine import find_build_client
    monkeypatch.setenv("DOCKER_CLI", _fake_cli(tmp_path, "docker", '[ "$1" = buildx ] && exit 0; exit 1\n'))
    client = find_build_client()
    assert client.kind == "buildx" and client.argv[1:] == ("buildx", "build", "--load")


def test_a_classic_client_before_23_builds_with_buildkit_enabled(tmp_path, monkeypatch):
    from scripts.engine import find_build_client
    monkeypatch.setenv("DOCKER_CLI", _fake_cli(tmp_path, "docker", '[ "$1" = version ] && echo 20.10.24 && exit 0; exit 1\n'))
    client = find_build_client()
    assert client.kind == "classic+buildkit" and client.env == {"DOCKER_BUILDKIT": "1"}


def test_a_client_that_cannot_use_buildkit_is_named_with_what_to_install(tmp_path, monkeypatch):
    from scripts.engine import find_build_client
    from scripts.errors import UserError
    monkeypatch.setenv("DOCKER_CLI", _fake_cli(tmp_path, "docker", '[ "$1" = version ] && echo 28.2.2 && exit 0; exit 1\n'))
    with pytest.raises(UserError, match=r"no BuildKit-capable docker client found \(tried: .*docker 28.2.2\): install the buildx plugin"):
        find_build_client()


def test_versions_inside_the_image_are_compared_with_its_spec():
    from scripts.run_verify import spec_mismatches
    spec = next(s for s in load_matrix() if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")
    env = {"torch": "2.15.0+cu132", "python": "3.11.2", "cuda": "13.2", "cudnn": "9.26.0", "nccl": "2.30.7",
           "cudnn_package": "9.26.0.51", "nccl_package": "2.30.7"}
    assert spec_mismatches(spec, env) == []
    assert spec_mismatches(spec, {**env, "cudnn": "9.20.0"}) == ["cudnn: spec 9.26.0, image 9.20.0"]
    cpu = next(s for s in load_matrix() if s.default)
    assert spec_mismatches(cpu, {"torch": "2.13.0+cpu", "python": "3.11.2"}) == []
