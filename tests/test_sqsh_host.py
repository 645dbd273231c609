"""make sqsh with the real mksquashfs on a small handmade image stream: two runs give the same bytes, the owners,
modes and links are the image's, the image's own times are kept and a later one is clamped to the one given
(a .pyc's recorded source time must still match), the enroot files are in; and the pyxis script with
SQSH= passes bash -n and shellcheck, and its sha256 check refuses a changed file in one line (bash, a real file).
The image's own squashfs, mounted with squashfuse and run with runc: integration/test_sqsh.py."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from scripts.errors import UserError
from scripts.fleet.slurm import Job, slurm_script, sqsh_check
from scripts.publish.sqsh import _squash, enroot_files, file_sha256, mksquashfs_argv
from scripts.settings import LAUNCHERS

pytestmark = pytest.mark.host
EPOCH = 1700000000


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/bootstrap.sh test-tools installs them)")


def _image_stream() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **extra: object) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.size, info.mtime = kind, len(data), 123456
            for key, value in extra.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        add(".dockerenv")
        for folder in ("bin", "etc", "dev", "home", "home/user", "usr", "usr/bin"):
            add(folder, tarfile.DIRTYPE, mode=0o755)
        add("home/user", tarfile.DIRTYPE, mode=0o700, uid=1000, gid=1000)
        add("home/user/.profile", data=b"x=1\n", mode=0o600, uid=1000, gid=1000)
        add("usr/bin/su", data=b"\x7fELF", mode=0o4755)
        add("usr/bin/su2", tarfile.LNKTYPE, linkname="usr/bin/su")
        add("bin/sh", tarfile.SYMTYPE, linkname="dash")
        add("etc/environment", data=b"")
        add("etc/hosts", data=b"", mtime=EPOCH + 86400)     # what the engine writes creating the container: later
        add("dev/null", tarfile.CHRTYPE, devmajor=1, devminor=3)
    return buf.getvalue()


def _squash_once(folder: Path) -> Path:
    dest = folder / "t.sqsh"
    stream = _image_stream()
    files = enroot_files({"Env": ["PATH=/usr/bin", "LANG=C.UTF-8"], "Cmd": ["/bin/bash"]}, "dockerd://t")
    _squash((stream[i:i + 4096] for i in range(0, len(stream), 4096)), files,
            mksquashfs_argv(dest, "zstd", EPOCH), EPOCH)
    return dest


def test_two_runs_give_the_same_bytes_with_the_images_owners_and_enroots_files(tmp_path):
    _need("mksquashfs", "unsquashfs")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _squash_once(tmp_path / "a"), _squash_once(tmp_path / "b")
    assert file_sha256(first) == file_sha256(second)
    listing = subprocess.run(["unsquashfs", "-lln", "-d", "", str(first)], capture_output=True, text=True,
                             check=True, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TZ": "UTC"}).stdout
    rows = {line.split()[-1] if "->" not in line else line.split()[-3]: line.split() for line in listing.splitlines()
            if line.startswith(("d", "-", "l", "c"))}
    assert rows["/home/user/.profile"][:2] == ["-rw-------", "1000/1000"]
    assert rows["/usr/bin/su"][:2] == ["-rwsr-xr-x", "0/0"]
    assert rows["/bin/sh"][0].startswith("l") and "/dev/null" not in rows and "/.dockerenv" not in rows
    assert {"/etc/environment", "/etc/rc", "/etc/rc.local", "/etc/fstab"} <= set(rows)
    # the image's own times kept (123456: 1970-01-02), a later one clamped to EPOCH, enroot's files at EPOCH
    assert " 1970-01-02 " in " ".join(rows["/home/user/.profile"]) and " 1970-01-02 " in " ".join(rows["/usr/bin/su"])
    assert all(" 2023-11-14 " in " ".join(rows[f]) for f in ("/etc/hosts", "/etc/rc", "/etc/environment"))
    out = tmp_path / "x"
    subprocess.run(["unsquashfs", "-d", str(out), str(first), "/etc/environment"], capture_output=True, check=True)
    assert (out / "etc" / "environment").read_text() == "PATH=/usr/bin\nLANG=C.UTF-8\n"


def test_a_failing_mksquashfs_is_one_line(tmp_path):
    _need("mksquashfs")
    argv = mksquashfs_argv(tmp_path / "t.sqsh", "nosuchcomp", EPOCH)
    with pytest.raises(UserError, match="mksquashfs failed") as info:
        _squash([_image_stream()], {}, argv, EPOCH)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("launcher", [*LAUNCHERS, "pyxis-sqsh"])
def test_the_slurm_scripts_pass_bash_n_and_shellcheck(test_specs, launcher):
    _need("shellcheck")
    spec = test_specs[0]
    job = (Job(spec, "/shared/t.sqsh", 2, 0, "pyxis", sqsh="/shared/t.sqsh", sqsh_sha256="ab" * 32)
           if launcher == "pyxis-sqsh" else Job(spec, "ghcr.io/acme/x:t", 2, 8, launcher, bundle="/shared/b"))
    text = slurm_script(job)
    for argv in (["bash", "-n"], ["shellcheck", "--shell=bash", "--severity=warning", "-"]):
        proc = subprocess.run(argv, input=text, text=True, capture_output=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_sha256_check_passes_the_recorded_file_and_refuses_another(tmp_path, test_specs):
    path = tmp_path / "t.sqsh"
    path.write_bytes(b"squashfs bytes")
    good = __import__("hashlib").sha256(b"squashfs bytes").hexdigest()

    def run(sha: str, image: Path) -> subprocess.CompletedProcess[str]:
        job = Job(test_specs[0], str(path), 1, 0, "pyxis", sqsh=str(path), sqsh_sha256=sha)
        return subprocess.run(["bash", "-c", "\n".join(sqsh_check(job))], text=True, capture_output=True, check=False,
                              env={"PATH": "/usr/bin:/bin", "TORCHIMAGES_IMAGE": str(image)})
    ok = run(good, path)
    assert ok.returncode == 0 and f"sha256 {good} as recorded" in ok.stdout
    bad = run("cd" * 32, path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "REFUSED" in bad.stderr and good in bad.stderr
    absent = run(good, tmp_path / "gone.sqsh")
    assert absent.returncode == 2 and "no readable squashfs at" in absent.stderr


def test_make_slurm_with_sqsh_takes_the_sidecars_sha256_and_refuses_what_does_not_match(tmp_path, rendered,
                                                                                       scratch_env):
    from tests.helpers import assert_clean_failure, run_cli
    tag, sha = "2.13.0-cpu-debian12", "ab" * 32
    sqsh = tmp_path / "shared" / f"{tag}.sqsh"
    sqsh.parent.mkdir()
    env = {**scratch_env, "IMAGES_DIR": str(rendered), "IMAGE": tag, "GPUS": "0", "SQSH": str(sqsh)}
    assert_clean_failure(run_cli("slurm", env=env), "not found: make sqsh writes it", code=2)
    side = {"file": sqsh.name, "tag": tag, "image_id": "sha256:" + "cd" * 32, "sha256": sha}
    Path(f"{sqsh}.json").write_text(json.dumps(side))
    proc = run_cli("slurm", env=env)
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / "build" / "slurm" / "verify-2-13-0-cpu-debian12-1n.sbatch"
    text = script.read_text()
    assert f"export TORCHIMAGES_SQSH_SHA256={sha}" in text and f"TORCHIMAGES_IMAGE:-{sqsh}}}" in text
    assert_clean_failure(run_cli("slurm", env={**env, "LAUNCHER": "docker"}), "SQSH is for LAUNCHER=pyxis", code=2)
    Path(f"{sqsh}.json").write_text(json.dumps({**side, "tag": "2.15.0-other"}))
    assert_clean_failure(run_cli("slurm", env=env), "was made from '2.15.0-other'", code=2)
    Path(f"{sqsh}.json").write_text(json.dumps(side))
    pushed = tmp_path / "reports" / "push" / "pushed.json"
    pushed.parent.mkdir(parents=True)
    pushed.write_text(json.dumps({tag: {"reference": "r/x@sha256:" + "0" * 64, "image_id": side["image_id"],
                                        "sqsh": {"file": sqsh.name, "sha256": "ef" * 32}}}))
    assert_clean_failure(run_cli("slurm", env=env), "but make push recorded (and make attest signs)", code=2)
