"""Property tests: generated mutations of matrix.yaml and compat.yaml, and generated knobs. Every run of a
command exits 0 or 2 with no traceback, and images/ stays byte-identical when it fails.

Runs in-process through `scripts.cli.main` against copies in tmp_path. Default: a few hundred examples in all;
HYPOTHESIS_PROFILE=thorough runs thousands (`make test` keeps the default)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scripts.cli import main
from scripts.versions import version_key
from tests.helpers import TEST_COMPAT, TEST_MATRIX, examples

pytestmark = pytest.mark.unit

LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=8),
                   st.sampled_from(["2.10", "../x", "debain12", "cpu", "pypi", "{distro}", "13.2", "", "a b", "é"]))
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=6)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn, source: Path) -> str:
    data = yaml.safe_load(source.read_text())
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        path = draw(st.sampled_from(paths))
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.one_of(st.text(max_size=6), st.integers()))] = draw(VALUES)
        else:
            parent.append(draw(VALUES))
    return yaml.safe_dump(data, allow_unicode=True)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _run(args: list[str], env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args, env)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def workspace(tmp_path: Path, rendered: Path) -> dict[str, str]:
    return {"IMAGES_DIR": str(rendered), "BUILD_DIR": str(tmp_path / "build"), "REPORTS_DIR": str(tmp_path / "reports"),
            "MATRIX": str(tmp_path / "matrix.yaml"), "COMPAT": str(tmp_path / "compat.yaml"), "PATH": os.environ["PATH"],
            "DOCKER_HOST": "tcp://127.0.0.1:9"}


@pytest.mark.host   # the whole render CLI per example (2.5 s each): bounded in CI, 30x under make test-thorough
@settings(max_examples=examples(20))
@given(data=st.data())
def test_matrix_and_compat_mutations_exit_0_or_2_and_never_half_write(workspace, capsys, data):
    which = data.draw(st.sampled_from(["MATRIX", "COMPAT"]))
    Path(workspace["MATRIX"]).write_text(TEST_MATRIX.read_text())
    Path(workspace["COMPAT"]).write_text(TEST_COMPAT.read_text())
    Path(workspace[which]).write_text(data.draw(mutated(TEST_MATRIX if which == "MATRIX" else TEST_COMPAT)))
    images = Path(workspace["IMAGES_DIR"])
    before = _snapshot(images)
    command = data.draw(st.sampled_from([["render"], ["render", "--check"]]))
    code, output = _run(command, workspace, capsys)
    assert code in (0, 1, 2) if "--check" in command else code in (0, 2), output
    assert "Traceback" not in output and "internal error" not in output, output
    if code != 0:
        assert _snapshot(images) == before


KNOBS = ["IMAGE", "KEEP_GOING", "SHM_SIZE", "VERIFY_TIMEOUT", "VERIFY_ARGS", "REGISTRY", "NODES", "GPUS", "WHEELS",
         "CA_CERT", "BASE_IMAGE"]


@pytest.mark.host
@settings(max_examples=examples(30))
@given(command=st.sampled_from(["render", "ci-matrix", "bake", "k8s-verify", "slurm", "list", "verify", "build"]),
       knobs=st.dictionaries(st.sampled_from(KNOBS), st.one_of(st.text(max_size=10), st.sampled_from(
           ["", ",", "all", "0", "-1", "nan", "inf", "1e9", "'", "false", "2g", "/nonexistent"])), max_size=4))
def test_generated_knobs_exit_0_or_2(workspace, capsys, command, knobs):
    Path(workspace["MATRIX"]).write_text(TEST_MATRIX.read_text())
    Path(workspace["COMPAT"]).write_text(TEST_COMPAT.read_text())
    env = {**workspace, **{k: v.replace("\x00", "") for k, v in knobs.items()}}
    code, output = _run([command], env, capsys)
    assert code in (0, 2), output
    assert "Traceback" not in output and "internal error" not in output, output


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=5), st.sampled_from(["", "+cpu", "rc1"]))
def test_version_key_reads_back_the_numbers_of_any_dotted_version(numbers, suffix):
    assert version_key(".".join(map(str, numbers)) + suffix) == tuple(numbers)
