"""`make verify IMAGE=<any local image not in the matrix>`: this checkout's verify/ mounted read-only into
images built from plain Dockerfiles, run with the image's own Python (real Docker Engine).

The test images derive from the matrix's CPU image (built by `make base build` when missing) and carry a
repository name of their own, so no other image on the engine is touched.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from scripts.errors import UserError
from tests.helpers import ROOT, run_cli, status_of

pytestmark = pytest.mark.docker

REPO = "verify-truth-test/any-image"
SCHEMA = json.loads((ROOT / "verify" / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def cpu_image(docker_client, tmp_path_factory) -> str:
    from scripts.builder.engine import image_exists
    from scripts.render import load_rendered
    spec = next(s for s in load_rendered(ROOT / "images") if s.default)
    if not image_exists(docker_client, spec.image):
        scratch = tmp_path_factory.mktemp("any-image-build")
        for command in ("base", "build"):
            proc = run_cli(command, env={"BUILD_DIR": str(scratch)}, timeout=1800)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return str(spec.image)


def _build(client, tmp_path: Path, tag: str, dockerfile: str, files: dict[str, str] | None = None) -> str:
    context = tmp_path / tag.replace(":", "_")
    context.mkdir()
    (context / "Dockerfile").write_text(dockerfile)
    for name, text in (files or {}).items():
        (context / name).write_text(text)
    ref = f"{REPO}:{tag}"
    client.images.build(path=str(context), tag=ref, rm=True, forcerm=True, network_mode="none")
    return ref


@pytest.fixture(scope="module")
def images(docker_client, cpu_image, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("any-image")
    built = {
        # A team's own image: python + torch, no h5py, and no verify of its own (it must come from the mount).
        "no-h5py": _build(docker_client, tmp, "no-h5py", f"FROM {cpu_image}\nUSER root\n"
                          "RUN pip uninstall -y h5py && rm -rf /opt/verify /usr/local/bin/verify\n"
                          "ENV PYTHONPATH= VERIFY_IN_IMAGE=\nUSER 1000:1000\n"),
        "no-torch": _build(docker_client, tmp, "no-torch", f"FROM {cpu_image}\nUSER root\n"
                           "RUN pip uninstall -y torch && rm -rf /opt/verify\nUSER 1000:1000\n"),
        "no-python": _build(docker_client, tmp, "no-python", "FROM scratch\nCOPY hello.txt /hello.txt\n",
                            {"hello.txt": "no python here\n"}),
    }
    yield built
    for ref in built.values():
        docker_client.images.remove(ref, force=True)


def test_an_image_without_h5py_gets_a_full_report_with_hdf5_skipped(docker_client, images, tmp_path):
    from scripts.run_verify import verify_foreign_image
    lines: list[str] = []
    outcome = verify_foreign_image(docker_client, images["no-h5py"], shm_size="2g", timeout=900,
                                   extra_args=["--shm-min", "256m"], reports=tmp_path,
                                   echo=lambda text="", end="\n": lines.append(text + end))
    report = json.loads((tmp_path / "verify-truth-test_any-image_no-h5py.json").read_text())
    jsonschema.validate(report, SCHEMA)
    checks = {c["name"]: c for c in report["checks"]}
    assert outcome.exit_code == 0 and outcome.mismatches is None, "".join(lines)[-3000:]
    assert (checks["hdf5"]["status"], checks["hdf5"]["code"], checks["hdf5"]["owner"]) == ("skip", "PACKAGE_MISSING", "image")
    assert "pip install h5py" in checks["hdf5"]["remedy"]
    assert {n: status_of(checks[n]) for n in ("gpu", "nccl", "shm", "arrow")} == {
        "gpu": "skip", "nccl": "skip", "shm": "pass", "arrow": "pass"}
    assert report["environment"]["h5py"] is None and report["environment"]["torch"].startswith("2.")
    text = "".join(lines)
    assert "not in the matrix" in text and "no spec comparison" in text
    assert (tmp_path / "verify-truth-test_any-image_no-h5py.xml").exists()


def test_an_image_without_torch_or_python_gets_one_clear_message(docker_client, images, tmp_path):
    from scripts.run_verify import verify_foreign_image
    with pytest.raises(UserError, match="torch does not import"):
        verify_foreign_image(docker_client, images["no-torch"], shm_size="2g", timeout=300, extra_args=[],
                             reports=tmp_path, echo=lambda *a, **k: None)
    with pytest.raises(UserError, match="has no Python to run verify with"):
        verify_foreign_image(docker_client, images["no-python"], shm_size="2g", timeout=300, extra_args=[],
                             reports=tmp_path, echo=lambda *a, **k: None)
    assert not list(tmp_path.iterdir())
    for ref in (images["no-torch"], images["no-python"]):
        assert docker_client.containers.list(all=True, filters={"label": f"io.torchimages.verify={ref}"}) == []


def test_make_verify_with_an_unknown_name_still_says_unknown_image(docker_client):
    proc = run_cli("verify", env={"IMAGE": "no-such-image-anywhere:1"}, timeout=120)
    assert proc.returncode != 0 and "unknown image no-such-image-anywhere:1" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["2.13.0-cpu-debian12 2.13.0-cpu-debian12-jupyter-ssh", "Torchimages:Bad"])
def test_make_verify_of_a_name_the_engine_refuses_is_one_line_exit_2(docker_client, name):
    """A space-separated list or an upper-case repository: the engine's 400 "invalid reference format" becomes the
    unknown-image line with the engine's reason (it was an `internal error:`, exit 3)."""
    proc = run_cli("verify", env={"IMAGE": name}, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and f"unknown image {name}" in out and "is not an image name either" in out, out
    assert "invalid reference format" in out and "internal error" not in out and "Traceback" not in out


def test_make_verify_takes_any_local_image_by_reference(images, tmp_path):
    """The CLI path users type: `make verify IMAGE=<reference>` with reports in REPORTS_DIR."""
    proc = run_cli("verify", env={"IMAGE": images["no-h5py"], "REPORTS_DIR": str(tmp_path), "BUILD_DIR": str(tmp_path),
                                  "VERIFY_ARGS": "--checks shm,hdf5 --shm-min 256m"}, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in out, out[-3000:]
    report = json.loads((tmp_path / "verify-truth-test_any-image_no-h5py.json").read_text())
    assert {c["name"]: (c["status"], c["code"]) for c in report["checks"]} == {
        "shm": ("pass", None), "hdf5": ("skip", "PACKAGE_MISSING")}
