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
