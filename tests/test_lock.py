"""Lock files: every image has a current hashed lock; staleness, staging and the template's install step."""
from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest

from scripts.errors import UserError
from scripts.lock import (
    LOCK_NAME,
    UV_VERSION,
    _link_folder,
    check_locks,
    input_digest,
    lock_path,
    lock_problem,
    parse_lock,
    stage_for_build,
    stage_locked_wheels,
    unresolved_stub,
    wheel_fits,
)
from scripts.matrix import load_matrix
from scripts.render import IMAGES, TEMPLATES, drift, rendered_files, write_images

SPECS = {s.tag: s for s in load_matrix()}
CPU = next(s for s in SPECS.values() if s.default)
SAMPLE = """# header
# input-digest: sha256:abc
numpy==2.4.6 \\
    --hash=sha256:{a} \\
    --hash=sha256:{b}
    # via torch
Torch_Thing==1.0+cpu \\
    --hash=sha256:{c}
""".format(a="a" * 64, b="b" * 64, c="c" * 64)


def test_parse_lock_reads_pins_and_every_hash():
    pins = {p.name: p for p in parse_lock(SAMPLE)}
    assert pins["numpy"].version == "2.4.6" and pins["numpy"].hashes == ("a" * 64, "b" * 64)
    assert pins["torch-thing"].version == "1.0+cpu" and pins["torch-thing"].hashes == ("c" * 64,)


@pytest.mark.parametrize("tag", sorted(SPECS))
def test_every_image_has_a_current_lock_with_a_hash_for_every_pin(tag):
    spec = SPECS[tag]
    text = lock_path(spec, IMAGES).read_text()
    problem = lock_problem(spec, IMAGES)
    if problem and problem.startswith("unresolved"):
        # only an image whose torch index could not be reached where the lock was made (download.pytorch.org)
        assert spec.torch_index_url and "+" not in spec.torch_requirement, problem
        pytest.xfail(f"{tag}: {problem}")
    assert problem is None
    pins = {p.name: p for p in parse_lock(text)}
    assert all(p.hashes for p in pins.values())
    assert pins["torch"].version == spec.torch_requirement.split("==")[1]
    for name, version in spec.packages.items():
        assert pins[name].version == version
    # torch's own dependencies are pinned too
    assert {"sympy", "networkx", "filelock", "jinja2"} <= set(pins)
    if spec.cuda:
        assert "triton" in pins and any(n.startswith("nvidia-cu") for n in pins)


def test_cpu_lock_pins_the_local_wheel_by_its_own_hash():
    wheel = next(iter(sorted(Path("/opt/wheels").glob("torch-2.13.0+cpu-*.whl"))), None)
    if wheel is None:
        pytest.skip("no /opt/wheels torch 2.13.0+cpu on this host")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    torch = next(p for p in parse_lock(lock_path(CPU, IMAGES).read_text()) if p.name == "torch")
    assert torch.version == "2.13.0+cpu" and digest in torch.hashes


def test_a_matrix_change_makes_the_lock_stale_and_check_render_says_so(tmp_path):
    shutil.copytree(IMAGES / CPU.tag, tmp_path / CPU.tag)
    assert check_locks([CPU], tmp_path) == []
    changed = dataclasses.replace(CPU, packages={**CPU.packages, "numpy": "2.4.5"})
    assert input_digest(changed) != input_digest(CPU)
    problems = check_locks([changed], tmp_path)
    assert problems and "stale" in problems[0] and "make lock IMAGE=" in problems[0]
    (tmp_path / CPU.tag / LOCK_NAME).unlink()
    assert "missing" in check_locks([CPU], tmp_path)[0]


def test_render_keeps_locks_and_drift_ignores_them(tmp_path):
    files = rendered_files([CPU])
    write_images(files, tmp_path)
    (tmp_path / CPU.tag / LOCK_NAME).write_text("kept\n")
    write_images(files, tmp_path)
    assert (tmp_path / CPU.tag / LOCK_NAME).read_text() == "kept\n"
    assert drift(files, tmp_path) == []


def test_unresolved_stub_is_current_for_check_render_but_refused_by_the_build(tmp_path):
    (tmp_path / CPU.tag).mkdir()
    (tmp_path / CPU.tag / LOCK_NAME).write_text(unresolved_stub(CPU, "index unreachable"))
    assert lock_problem(CPU, tmp_path).startswith("unresolved")
    assert check_locks([CPU], tmp_path) == []
    with pytest.raises(UserError, match="make lock IMAGE="):
        stage_for_build(CPU, tmp_path, [], tmp_path / "wheels")


def test_staging_takes_only_wheels_whose_hash_the_lock_allows(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    good = src / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"
    good.write_bytes(b"good wheel")
    bad = src / "h5py-3.16.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    bad.write_bytes(b"tampered")
    lock = (f"numpy==2.4.6 \\\n    --hash=sha256:{hashlib.sha256(b'good wheel').hexdigest()}\n"
            f"h5py==3.16.0 \\\n    --hash=sha256:{'0' * 64}\n")
    staged, covered = stage_locked_wheels(CPU, lock, [src], tmp_path / "out")
    assert staged == [good.name] and not covered
    assert not (tmp_path / "out" / bad.name).exists()


def test_a_local_version_wheel_is_hidden_from_images_that_do_not_ask_for_it(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"x")
    cuda = next(s for s in SPECS.values() if s.torch == "2.13.0" and s.cuda and s.python == "3.11")
    (tmp_path / "a").mkdir()
    _link_folder(cuda, [src], tmp_path / "a")
    assert list((tmp_path / "a").iterdir()) == []
    (tmp_path / "b").mkdir()
    _link_folder(CPU, [src], tmp_path / "b")
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]


@pytest.mark.parametrize(("name", "python", "fits"), [
    ("numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", "3.11", True),
    ("numpy-2.4.6-cp312-cp312-manylinux_2_28_x86_64.whl", "3.11", False),
    ("bcrypt-5.0.0-cp39-abi3-manylinux_2_34_x86_64.whl", "3.12", True),
    ("six-1.0-py2.py3-none-any.whl", "3.10", True),
    ("numpy-2.4.6-cp311-cp311-macosx_11_0_arm64.whl", "3.11", False),
])
def test_wheel_fits(name, python, fits):
    assert wheel_fits(name, python) is fits


def test_template_installs_the_lock_with_uv_hashes_required_and_bytecode():
    text = (TEMPLATES / "partials" / "builder.j2").read_text()
    assert f"/wheels/uv-{UV_VERSION}-*.whl" in text
    assert "--require-hashes" in text and "UV_COMPILE_BYTECODE=1" in text and "requirements.lock" in text
    dockerfile = (IMAGES / CPU.tag / "Dockerfile").read_text()
    # the verify package stays the last layer, so a verify-only change rebuilds in well under a second
    assert dockerfile.rstrip().splitlines()[-1] == "COPY verify /opt/verify/verify"
