"""Lock files: every image has a current hashed lock; staleness, staging and the template's install step."""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from scripts.builder.lock import (
    DIGEST_LINE,
    UV_VERSION,
    LockIssue,
    _link_folder,
    check_locks,
    fetch_platform_wheels,
    input_digest,
    lock_problem,
    parse_lock,
    refresh,
    requirements,
    stage_for_build,
    stage_locked_wheels,
    unresolved_stub,
    wheel_fits,
)
from scripts.errors import UserError
from scripts.plan.platforms import NATIVE_NAME
from scripts.plan.spec import ImageSpec, Target
from scripts.render import LOCK_NAME, TEMPLATES, drift, render_dockerfile, rendered_files, write_images

pytestmark = pytest.mark.unit


@pytest.fixture
def CPU(test_specs: list[ImageSpec]) -> ImageSpec:
    return next(s for s in test_specs if s.default)


def _write_lock(images: Path, spec: ImageSpec, digest: str | None = None) -> Path:
    """A current lock (header digest + a hashed torch pin), as `make lock` writes one."""
    path = images / spec.tag / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    pins = "".join(f"{req} \\\n    --hash=sha256:{'e' * 64}\n" for req in requirements(spec))
    path.write_text(f"# test lock\n{DIGEST_LINE}{digest or input_digest(Target(spec, NATIVE_NAME))}\n{pins}")
    return path


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


def test_a_package_change_makes_the_lock_stale_and_check_render_says_so(tmp_path, CPU):
    _write_lock(tmp_path, CPU)
    assert check_locks([CPU], tmp_path, print) == []
    changed = dataclasses.replace(CPU, packages={**CPU.packages, "numpy": "2.4.5"})
    assert input_digest(Target(changed, NATIVE_NAME)) != input_digest(Target(CPU, NATIVE_NAME))
    assert getattr(lock_problem(Target(changed, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.STALE
    problems = check_locks([changed], tmp_path, print)
    assert problems and "stale" in problems[0] and "make lock IMAGE=" in problems[0]
    (tmp_path / CPU.tag / LOCK_NAME).unlink()
    assert getattr(lock_problem(Target(CPU, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.MISSING
    assert "missing" in check_locks([CPU], tmp_path, print)[0]


def test_only_package_inputs_decide_staleness(CPU):
    """ENV, labels, the base image or the driver floor change the Dockerfile, never what pip resolves."""
    other = dataclasses.replace(CPU, base_image="elsewhere:1", driver_min="999.0", default=False,
                                repository="another", tag="another-tag", cudnn="9.99", nccl="2.99")
    assert other.env != CPU.env or other.labels != CPU.labels
    assert input_digest(Target(other, NATIVE_NAME)) == input_digest(Target(CPU, NATIVE_NAME))
    for changed in (dataclasses.replace(CPU, python="3.12"), dataclasses.replace(CPU, torchvision="0.1.0"),
                    dataclasses.replace(CPU, torch_index_url="https://example.invalid/whl")):
        assert input_digest(Target(changed, NATIVE_NAME)) != input_digest(Target(CPU, NATIVE_NAME))


@pytest.mark.host
def test_render_keeps_locks_and_drift_ignores_them(tmp_path, CPU):
    images = tmp_path / "images"
    files = rendered_files([CPU])
    write_images(files, images, tmp_path / "build")
    (images / CPU.tag / LOCK_NAME).write_text("kept\n")
    write_images(files, images, tmp_path / "build")
    assert (images / CPU.tag / LOCK_NAME).read_text() == "kept\n"
    assert drift(files, images) == []
    (images / "gone-tag").mkdir()                      # a lock of a tag the matrix no longer has is drift
    (images / "gone-tag" / LOCK_NAME).write_text("old\n")
    assert drift(files, images) == [f"gone-tag/{LOCK_NAME}"]


def test_unresolved_stub_is_current_for_check_render_but_refused_by_the_build(tmp_path, CPU):
    (tmp_path / CPU.tag).mkdir()
    (tmp_path / CPU.tag / LOCK_NAME).write_text(unresolved_stub(Target(CPU, NATIVE_NAME), "index unreachable"))
    problem = lock_problem(Target(CPU, NATIVE_NAME), tmp_path)
    assert problem is not None and problem.kind is LockIssue.UNRESOLVED
    warnings: list[str] = []
    assert check_locks([CPU], tmp_path, warnings.append) == [] and "unresolved" in warnings[0]
    with pytest.raises(UserError, match="make lock IMAGE="):
        stage_for_build(Target(CPU, NATIVE_NAME), tmp_path, [], tmp_path / "wheels", tmp_path / "uv")


def test_staging_takes_only_wheels_whose_hash_the_lock_allows(tmp_path, CPU):
    src = tmp_path / "src"
    src.mkdir()
    good = src / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"
    good.write_bytes(b"good wheel")
    bad = src / "h5py-3.16.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    bad.write_bytes(b"tampered")
    lock = (f"numpy==2.4.6 \\\n    --hash=sha256:{hashlib.sha256(b'good wheel').hexdigest()}\n"
            f"h5py==3.16.0 \\\n    --hash=sha256:{'0' * 64}\n")
    staged, covered = stage_locked_wheels(Target(CPU, NATIVE_NAME), lock, [src], tmp_path / "out")
    assert staged == [good.name] and not covered
    assert not (tmp_path / "out" / bad.name).exists()


def test_a_local_version_wheel_is_hidden_from_images_that_do_not_ask_for_it(tmp_path, CPU):
    src = tmp_path / "src"
    src.mkdir()
    (src / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"x")
    cuda = dataclasses.replace(CPU, torch_requirement="torch==2.13.0", torch_index_url=None, cuda="13.0")
    (tmp_path / "a").mkdir()
    _link_folder(cuda, [src], tmp_path / "a", "x86_64")
    assert list((tmp_path / "a").iterdir()) == []
    (tmp_path / "b").mkdir()
    _link_folder(CPU, [src], tmp_path / "b", "x86_64")
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]


@pytest.mark.parametrize(("name", "python", "fits"), [
    ("numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", "3.11", True),
    ("numpy-2.4.6-cp312-cp312-manylinux_2_28_x86_64.whl", "3.11", False),
    ("bcrypt-5.0.0-cp39-abi3-manylinux_2_34_x86_64.whl", "3.12", True),
    ("six-1.0-py2.py3-none-any.whl", "3.10", True),
    ("numpy-2.4.6-cp311-cp311-macosx_11_0_arm64.whl", "3.11", False),
    ("numpy-2.4.6-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl", "3.11", False),
])
def test_wheel_fits(name, python, fits):
    assert wheel_fits(name, python) is fits


@pytest.mark.parametrize(("name", "machine", "fits"), [
    ("numpy-2.4.6-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl", "aarch64", True),
    ("numpy-2.4.6-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl", "x86_64", False),
    ("torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl", "aarch64", False),
    ("filelock-4.2.11-py3-none-any.whl", "aarch64", True),
    ("numpy-2.4.6-cp311-cp311-macosx_11_0_arm64.whl", "aarch64", False),
])
def test_wheel_fits_the_platforms_machine(name, machine, fits):
    assert wheel_fits(name, "3.11", machine) is fits


def test_each_platform_has_its_own_lock_digest_and_file(tmp_path, CPU):
    multi = dataclasses.replace(CPU, platforms=["linux/amd64", "linux/arm64"])
    assert input_digest(Target(multi, "linux/arm64")) != input_digest(Target(multi, NATIVE_NAME)) == input_digest(Target(CPU, NATIVE_NAME))
    assert Target(multi, "linux/arm64").lock_path(tmp_path).name == "requirements.arm64.lock"
    assert [line.split(" (")[0] for line in check_locks([multi], tmp_path, print)] == [
        f"{CPU.tag}/requirements.lock", f"{CPU.tag}/requirements.arm64.lock"]
    _write_lock(tmp_path, CPU)                          # amd64's lock, current
    (tmp_path / CPU.tag / "requirements.arm64.lock").write_text("left from when the image had linux/arm64\n")
    assert check_locks([CPU], tmp_path, print) == [
        f"{CPU.tag}/requirements.arm64.lock (no platform of the image uses it; run `make lock IMAGE={CPU.tag}`)"]


def test_template_installs_the_lock_with_uv_hashes_required_and_bytecode(CPU):
    text = (TEMPLATES / "partials" / "builder.j2").read_text()
    assert f"/wheels/uv-{UV_VERSION}-*manylinux*_" in text
    assert "--require-hashes" in text and "/tmp/locks/" in text
    dockerfile = render_dockerfile(CPU)
    # the verify package stays the last layer, so a verify-only change rebuilds in well under a second
    assert dockerfile.rstrip().splitlines()[-1] == "COPY verify /opt/verify/verify"


def test_a_damaged_lock_is_a_named_problem_never_a_crash(tmp_path, CPU):
    """A hand-edited lock (binary garbage, a folder in its place, cut short) is one problem line for check-render
    and the build; `make lock` reports a folder in its place as a failure and leaves it."""
    path = _write_lock(tmp_path, CPU)
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert getattr(lock_problem(Target(CPU, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.NOT_UTF8
    path.write_text(f"{DIGEST_LINE}{input_digest(Target(CPU, NATIVE_NAME))}\nnumpy==2.4.6 \\\n")        # cut short before its hashes
    assert getattr(lock_problem(Target(CPU, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.NO_HASH
    with pytest.raises(UserError, match=r"requirements\.lock is not what the spec asks for: no hash, line 2"):
        stage_for_build(Target(CPU, NATIVE_NAME), tmp_path, [], tmp_path / "stage", tmp_path / "uv")
    path.unlink()
    path.mkdir()
    assert getattr(lock_problem(Target(CPU, NATIVE_NAME), tmp_path), "kind", None) is LockIssue.NOT_A_FILE
    assert any("not a file" in line for line in check_locks([CPU], tmp_path, print))
    failures = refresh([CPU], tmp_path, [], env={}, echo=print)
    assert len(failures) == 1 and "not a file" in failures[0] and path.is_dir()


def test_a_platform_no_lock_exists_for_is_said_so_not_missing(tmp_path, CPU):
    spec = dataclasses.replace(CPU, platforms=["linux/amd64", "linux/s390x"])
    with pytest.raises(UserError, match="cannot lock for linux/s390x: locks exist for linux/amd64, linux/arm64"):
        stage_for_build(Target(spec, "linux/s390x"), tmp_path, [], tmp_path / "stage", tmp_path / "uv")


def test_the_native_prefetch_refuses_a_lock_the_build_would_refuse(tmp_path, CPU):
    """An emulated build fetches its platform's locked wheels before staging: a missing or unresolved lock is the
    same one line as the build's, before pip downloads anything."""
    multi = dataclasses.replace(CPU, platforms=["linux/amd64", "linux/arm64"])
    with pytest.raises(UserError, match=r"requirements\.arm64\.lock is missing: run `make lock"):
        fetch_platform_wheels(Target(multi, "linux/arm64"), tmp_path, tmp_path / "cache", env={})
    (tmp_path / CPU.tag).mkdir()
    (tmp_path / CPU.tag / "requirements.arm64.lock").write_text(unresolved_stub(Target(multi, "linux/arm64"), "index down"))
    with pytest.raises(UserError, match=r"requirements\.arm64\.lock is unresolved: index down"):
        fetch_platform_wheels(Target(multi, "linux/arm64"), tmp_path, tmp_path / "cache", env={})
    assert not (tmp_path / "cache").exists()


def test_make_lock_removes_a_stray_lock_file_and_leaves_a_folder_of_that_name(tmp_path, CPU):
    """A folder named like a lock is no lock (git keeps none empty; check-render flags files inside it): `make lock`
    removed stray locks with unlink(), which crashed on it."""
    _write_lock(tmp_path, CPU)
    (tmp_path / CPU.tag / "requirements.riscv64.lock").write_text("left over\n")
    (tmp_path / CPU.tag / "requirements.arm64.lock").mkdir()
    assert refresh([CPU], tmp_path, [], env={}, echo=print) == []
    assert sorted(p.name for p in (tmp_path / CPU.tag).iterdir()) == ["requirements.arm64.lock", "requirements.lock"]
    assert check_locks([CPU], tmp_path, print) == []
