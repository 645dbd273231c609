"""Engine failures are one clear line and a non-zero exit, with or without an engine on this machine."""
from __future__ import annotations

import pytest

from scripts.builder.buildkit import BuildOutcome, BuildRequest, build_all
from scripts.builder.wheels import stage_wheels
from scripts.settings import Settings
from tests.helpers import assert_clean_failure, run_cli

NOWHERE = {"DOCKER_HOST": "tcp://127.0.0.1:9"}


@pytest.mark.parametrize("command", ["build", "verify", "base"])
@pytest.mark.host
def test_no_engine_is_one_clear_message(command, rendered, scratch_env):
    proc = run_cli(command, env={**NOWHERE, **scratch_env, "IMAGES_DIR": str(rendered)}, timeout=120)
    assert_clean_failure(proc, "no Docker Engine reachable at tcp://127.0.0.1:9")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.unit
def test_keep_going_builds_the_rest_after_a_failure(monkeypatch, tmp_path, test_specs):
    specs = [s.targets(None)[0] for s in test_specs[:3]]

    def fake_build_one(client, cli, build, req, echo=print):
        return BuildOutcome(build.spec.tag, build is not specs[0], 1.0, error="boom")

    monkeypatch.setattr("scripts.builder.buildkit.build_one", fake_build_one)
    req = BuildRequest(tmp_path, tmp_path / "logs", tmp_path / "wheels", tmp_path, None, (), None, None, {})
    reported = []
    assert [o.ok for o in build_all(None, None, specs, req, keep_going=False,  # type: ignore[arg-type]  # build_one is faked
                                    on_failure=lambda o, stop: reported.append(stop))] == [False]
    assert reported == [True]
    assert len(build_all(None, None, specs, req, keep_going=True)) == 3  # type: ignore[arg-type]


@pytest.mark.unit
def test_ca_and_wheel_folder_detection(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    env = {"SSL_CERT_FILE": str(ca), "PIP_FIND_LINKS": f"{tmp_path} https://example.org/wheels /does/not/exist"}
    settings = Settings.load(env, {}, ("CA_CERT", "WHEELS"))
    assert settings.ca_cert == str(ca) and settings.wheels == (tmp_path,)


@pytest.mark.unit
def test_only_the_pinned_wheels_for_the_images_python_are_staged(tmp_path, test_specs):
    spec = next(s for s in test_specs if s.default)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "torch-2.13.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl", "torchdata-0.11.0-py3-none-any.whl"):
        (src / name).write_text("")
    (src / "not-a-wheel.whl").write_text("")
    staged = stage_wheels(spec, [src], tmp_path / "out")
    assert staged == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "torchdata-0.11.0-py3-none-any.whl"]


def _fake_cli(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.mark.host
def test_buildx_is_preferred_when_the_client_has_it(tmp_path, monkeypatch):
    from scripts.builder.engine import find_build_client
    cli = _fake_cli(tmp_path, "docker", '[ "$1" = buildx ] && exit 0; exit 1\n')
    client = find_build_client(cli)
    assert client.kind == "buildx" and client.argv[1:] == ("buildx", "build", "--load")


@pytest.mark.host
def test_a_classic_client_before_23_builds_with_buildkit_enabled(tmp_path, monkeypatch):
    from scripts.builder.engine import find_build_client
    cli = _fake_cli(tmp_path, "docker", '[ "$1" = version ] && echo 20.10.24 && exit 0; exit 1\n')
    client = find_build_client(cli)
    assert client.kind == "classic+buildkit" and client.env == {"DOCKER_BUILDKIT": "1"}


@pytest.mark.host
def test_a_client_that_cannot_use_buildkit_is_named_with_what_to_install(tmp_path, monkeypatch):
    from scripts.builder.engine import find_build_client
    from scripts.errors import UserError
    cli = _fake_cli(tmp_path, "docker", '[ "$1" = version ] && echo 28.2.2 && exit 0; exit 1\n')
    with pytest.raises(UserError, match=r"no BuildKit-capable docker client found \(tried: .*docker 28.2.2\): install the buildx plugin"):
        find_build_client(cli)


@pytest.mark.unit
def test_versions_inside_the_image_are_compared_with_its_spec(test_specs):
    from scripts.run_verify import spec_mismatches
    spec = next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")
    env = {"torch": "2.15.0+cu132", "python": "3.11.2", "cuda": "13.2", "cudnn": "9.26.0", "nccl": "2.30.7",
           "cudnn_package": "9.26.0.51", "nccl_package": "2.30.7"}
    assert spec_mismatches(spec, env) == []
    assert spec_mismatches(spec, {**env, "cudnn": "9.20.0"}) == ["cudnn: spec 9.26.0, image 9.20.0"]
    cpu = next(s for s in test_specs if s.default)
    assert spec_mismatches(cpu, {"torch": "2.13.0+cpu", "python": "3.11.2"}) == []


@pytest.mark.unit
def test_a_refused_socket_is_told_by_its_permission_error_not_by_the_text(monkeypatch):
    """docker-py wraps requests' ConnectionError around urllib3's ProtocolError around the OSError: the kind is
    found by type down that chain, whatever the wrappers' wording."""
    import docker
    from docker.errors import DockerException
    from requests.exceptions import ConnectionError as RequestsConnectionError
    from urllib3.exceptions import ProtocolError

    from scripts.builder.engine import connect
    from scripts.errors import UserError

    def refused(**kwargs):
        inner = RequestsConnectionError(ProtocolError("aborted", PermissionError(13, "nope")))
        raise DockerException("the server API version could not be read") from inner

    monkeypatch.setattr(docker.DockerClient, "from_env", staticmethod(refused))
    with pytest.raises(UserError, match=r"permission denied on the Docker socket \(unix:///x.sock\)"):
        connect({"DOCKER_HOST": "unix:///x.sock"})


@pytest.mark.unit
def test_ssh_docker_host_without_paramiko_is_found_by_lookup(monkeypatch):
    import importlib.util

    from scripts.builder.engine import connect
    from scripts.errors import UserError
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "paramiko" else real(name, *a))
    with pytest.raises(UserError, match=r"DOCKER_HOST=ssh://u@h needs the ssh transport"):
        connect({"DOCKER_HOST": "ssh://u@h"})


@pytest.mark.unit
def test_verify_picks_the_foreign_image_mode_by_lookup(tmp_path, monkeypatch, rendered):
    """IMAGE that is no rendered tag is looked up in the engine; an invalid reference (HTTP 400) or no engine
    adds why to the matrix's own error; a list or a rendered tag never takes the foreign way."""
    from docker.errors import APIError

    from scripts.commands.verify import _outside_matrix
    from scripts.errors import UserError
    from scripts.run_verify import find_local_image
    tag = next(p.name for p in rendered.iterdir() if (p / "spec.json").is_file())
    for image, foreign in ((tag, None), ("python:3.12", "python:3.12"), (f"{tag},python:3.12", None), ("all", None),
                           ("", None), ("python:3.12,", None)):
        assert _outside_matrix(Settings(images=rendered, image=image)) == foreign, image

    class Images:
        def __init__(self, found: bool | None):
            self.found = found

        def get(self, ref):
            from docker.errors import ImageNotFound
            if self.found is None:
                response = type("R", (), {"status_code": 400, "reason": "Bad Request", "url": "u"})()
                raise APIError("invalid reference format", response=response, explanation="invalid reference format")
            if not self.found:
                raise ImageNotFound("absent")
            return object()

    class Client:
        def __init__(self, found):
            self.images = Images(found)

    assert find_local_image("python:3.12", lambda: Client(True)).client is not None
    absent = find_local_image("python:3.12", lambda: Client(False))
    assert absent.client is None and "`docker pull python:3.12` first" in absent.why_not
    typo = find_local_image("2.13.0-cpu-debain12", lambda: Client(False))
    assert typo.client is None and typo.why_not == ""
    bad = find_local_image("Bad Name", lambda: Client(None))
    assert bad.client is None and "is not an image name either: invalid reference format" in bad.why_not

    def no_engine():
        raise UserError("no Docker Engine reachable")
    assert "nor could a local image of that name be looked up" in find_local_image("x", no_engine).why_not
