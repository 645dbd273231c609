"""make sqsh of the CPU image, mounted with squashfuse and run with runc the way enroot runs it: the root filesystem is
the mount, read-only; the environment is the image's /etc/environment; the command goes through /etc/rc
(`sh /etc/rc verify ...`, as enroot-switchroot starts it); user 1000, a writable tmpfs /tmp and a 2 GiB /dev/shm.
verify passes there as in `make verify` (gpu, nccl, vision and fabric skip on this CPU machine). That two runs give the
same bytes is proven with the real mksquashfs on a small image stream (tests/test_sqsh_host.py): a second 1.3 GB
squashfs here would double this test's time for the same property.

TORCHIMAGES_SQSH_TEST_IMAGE names another local image tag of the matrix (e.g. the CUDA runtime image, by hand).
Needs root, /dev/fuse, squashfs-tools, squashfuse, fuse3 and runc (scripts/bootstrap.sh test-tools)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from scripts.builder.engine import image_exists
from scripts.builder.sqshstart import environment  # /etc/environment as enroot reads it
from scripts.publish.sqsh import file_sha256
from tests import slurm
from tests.helpers import run_cli, status_of

# slow: verify in the mount takes minutes (every first read goes through squashfuse), as make verify's tests do
pytestmark = [pytest.mark.docker, pytest.mark.slow]
TAG = os.environ.get("TORCHIMAGES_SQSH_TEST_IMAGE") or slurm.CPU_IMAGE_TAG
EXPECTED = {"gpu": "skip", "nccl": "skip", "shm": "pass", "hdf5": "pass", "arrow": "pass", "vision": "skip",
            "dataloader": "pass", "fabric": "skip", "train": "pass"}


def _tools() -> None:
    missing = [t for t in ("mksquashfs", "squashfuse", "runc") if shutil.which(t) is None]
    if not (shutil.which("fusermount3") or shutil.which("fusermount")):
        missing.append("fusermount3")
    if missing or os.geteuid() != 0 or not Path("/dev/fuse").exists():
        pytest.skip(f"needs root, /dev/fuse and {', '.join(missing) or 'the tools'} (scripts/bootstrap.sh test-tools)")


@pytest.fixture(scope="module")
def image(docker_client) -> str:
    _tools()
    wanted = f"torchimages:{TAG}"
    if not image_exists(docker_client, wanted):
        for command in ("base", "build"):
            proc = run_cli(command, env={"IMAGE": TAG}, timeout=1800)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return wanted


def runc_config(spec: dict, rootfs: Path, env: list[str], reports: Path, args: list[str]) -> dict:
    """`runc spec`'s config as enroot would start the image: the read-only mount as root, user 1000, the image's
    environment, a writable /tmp, a 2 GiB /dev/shm, the reports folder under /tmp."""
    spec["root"] = {"path": str(rootfs), "readonly": True}
    spec["process"].update(terminal=False, args=args, env=[*env, "HOME=/tmp"], cwd="/tmp",
                           user={"uid": 1000, "gid": 1000})
    spec.pop("hostname", None)
    mounts = [m for m in spec["mounts"] if m["destination"] != "/dev/shm"]
    mounts += [{"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
                "options": ["nosuid", "nodev", "mode=1777", "size=2g"]},
               {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
               {"destination": "/tmp/reports", "type": "bind", "source": str(reports), "options": ["rbind", "rw"]}]
    spec["mounts"] = mounts
    return spec


def _make(env: dict[str, str], image: str, docker_client) -> tuple[Path, dict]:
    """make sqsh: the file and its sidecar (the image's id, the file's sha256 and size)."""
    sqsh = Path(env["BUILD_DIR"]) / "sqsh" / f"{TAG}.sqsh"
    made = run_cli("sqsh", env=env, timeout=900)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    side = json.loads(sqsh.with_name(sqsh.name + ".json").read_text())
    assert side["sha256"] == file_sha256(sqsh) and side["size"] == sqsh.stat().st_size
    assert side["image_id"] == docker_client.images.get(image).id and side["compression"] == "zstd"
    assert f"sha256 {side['sha256']}" in made.stdout
    return sqsh, side


def _run_verify(mount: Path, bundle: Path, reports: Path, state: Path, container: str) -> None:
    rc = (mount / "etc" / "rc").read_text()
    assert rc.startswith(f"# enroot-provenance: dockerd://torchimages:{TAG}") and 'exec "$@"' in rc
    subprocess.run(["runc", "spec", "--bundle", str(bundle)], check=True, timeout=30)
    spec = json.loads((bundle / "config.json").read_text())
    args = ["/bin/sh", "/etc/rc", "verify", "--json", "/tmp/reports/sqsh.json"]
    config = runc_config(spec, mount, environment((mount / "etc" / "environment").read_text()), reports, args)
    (bundle / "config.json").write_text(json.dumps(config))
    proc = subprocess.run(["runc", "--root", str(state), "run", "--bundle", str(bundle), container],
                          capture_output=True, text=True, timeout=900, check=False)
    said = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert (reports / "sqsh.json").is_file(), said
    report = json.loads((reports / "sqsh.json").read_text())
    statuses = {c["name"]: status_of(c) for c in report["checks"]}
    if TAG == slurm.CPU_IMAGE_TAG:
        assert statuses == EXPECTED, said
    else:       # another image (by hand): none fails; which skip depends on the image and the machine
        assert "fail" not in statuses.values() and statuses.get("train") == "pass", said
    assert proc.returncode == 0, said
    assert report["environment"]["torch"], said


def test_verify_passes_in_the_squashfs_under_runc_as_enroot_runs_it(image, docker_client, tmp_path):
    env = {"IMAGE": TAG, "BUILD_DIR": str(tmp_path / "build"), "REPORTS_DIR": str(tmp_path / "reports")}
    mount, bundle, reports, state = (tmp_path / n for n in ("mnt", "bundle", "out", "runc"))
    container = f"torchimages-sqsh-{uuid.uuid4().hex[:12]}"
    fusermount = shutil.which("fusermount3") or "fusermount"
    mounted = False
    try:
        sqsh, _ = _make(env, image, docker_client)
        for folder in (mount, bundle, reports, state):
            folder.mkdir()
        reports.chmod(0o1777)          # user 1000 writes its report there
        subprocess.run(["squashfuse", "-o", "allow_other", str(sqsh), str(mount)], check=True, timeout=60)
        mounted = True
        with pytest.raises(OSError):                       # the image as mounted cannot be changed
            (mount / "tmp" / ".probe").write_text("")
        _run_verify(mount, bundle, reports, state, container)
    finally:
        subprocess.run(["runc", "--root", str(state), "delete", "--force", container], capture_output=True,
                       check=False, timeout=60)
        if mounted:
            subprocess.run([fusermount, "-u", str(mount)], capture_output=True, check=False, timeout=60)
        for build in ("build", "build2"):
            shutil.rmtree(tmp_path / build / "sqsh", ignore_errors=True)
