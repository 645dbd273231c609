"""make sqsh's pure parts: the enroot files from an image's config (as enroot's docker::configure writes them), the
mksquashfs argv, the stream filter, the sidecar and where it is recorded (push record, attestation subject), and the
pyxis script that mounts the file once its sha256 matches. The real squashfs, mounted and run: test_sqsh_host.py
(mksquashfs, shellcheck) and integration/test_sqsh.py (squashfuse + runc)."""
from __future__ import annotations

import io
import itertools
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from scripts.errors import UserError
from scripts.fleet.slurm import NEEDS, Job, slurm_script
from scripts.publish.attest import sqsh_subject
from scripts.publish.sqsh import (
    RC_LOCAL,
    ChunkReader,
    attach_sqsh,
    created_epoch,
    enroot_files,
    environment_text,
    filter_stream,
    fstab_text,
    mksquashfs_argv,
    mksquashfs_version,
    rc_text,
    read_sidecar,
    record_in_push,
    recorded_sha256s,
    sidecar,
    squash_env,
)
from scripts.settings import Settings

pytestmark = pytest.mark.unit
SHA = "ab" * 32
IMAGE_ID = "sha256:" + "cd" * 32


def test_environment_is_the_images_env_one_line_each_as_enroot_writes_it():
    env = ["PATH=/opt/venv/bin:/usr/bin", "EMPTY=", "WITH_EQ=a=b c", "HOME_DIR=${HOME}/x", "noequals", "1BAD=x"]
    assert environment_text(env) == "PATH=/opt/venv/bin:/usr/bin\nEMPTY=\nWITH_EQ=a=b c\nHOME_DIR=${HOME}/x\n"
    assert environment_text(None) == ""
    with pytest.raises(UserError, match="line break") as info:
        environment_text(["X=a\nY=b"])
    assert "\n" not in str(info.value)


def test_rc_runs_the_entrypoint_with_the_arguments_else_the_command_in_the_workdir():
    text = rc_text({"Entrypoint": ["/usr/bin/tini", "--"], "Cmd": ["bash", "-c", "echo 'hi there'"],
                    "WorkingDir": "/work dir", "Labels": {"b": "two\nlines", "a": "one"}}, "dockerd://x:t")
    lines = text.splitlines()
    assert lines[:3] == ["# enroot-provenance: dockerd://x:t", "# a one", "# b two lines"]
    assert "mkdir -p '/work dir' 2> /dev/null" in lines and "cd '/work dir' && unset OLDPWD || exit 1" in lines
    assert '    exec /usr/bin/tini -- "$@"' in lines
    assert "    exec /usr/bin/tini -- bash -c 'echo '\"'\"'hi there'\"'\"''" in lines
    assert "    . /etc/rc.local" in lines and text.endswith("fi\n")
    # neither entrypoint nor command: /bin/sh, in /
    bare = rc_text({}, "dockerd://y")
    assert '    exec "$@"' in bare.splitlines() and "    exec /bin/sh" in bare.splitlines() and "cd / &&" in bare


def test_fstab_binds_each_volume_and_refuses_one_it_cannot_write():
    assert fstab_text({"Volumes": {"/data": {}, "/a": {}}}) == (
        "${ENROOT_ROOTFS}/a /a none x-create=dir,bind,rw,nosuid,nodev\n"
        "${ENROOT_ROOTFS}/data /data none x-create=dir,bind,rw,nosuid,nodev\n")
    assert fstab_text({}) == ""
    with pytest.raises(UserError, match="VOLUME"):
        fstab_text({"Volumes": {"/a b": {}}})


def test_enroot_files_are_the_four_enroot_reads():
    files = enroot_files({"Env": ["A=1"], "Cmd": ["/bin/bash"]}, "dockerd://torchimages:t")
    assert sorted(files) == ["etc/environment", "etc/fstab", "etc/rc", "etc/rc.local"]
    assert files["etc/environment"] == b"A=1\n" and files["etc/rc.local"] == RC_LOCAL.encode()


@pytest.mark.parametrize(("created", "epoch"), [
    ("2026-11-28T05:01:02.123456789Z", 1795842062), ("2026-11-28T05:01:02Z", 1795842062),
    ("2026-11-28T06:01:02+01:00", 1795842062), ("", 0), (None, 0), ("yesterday", 0), ("1960-01-01T00:00:00Z", 0),
])
def test_the_one_time_is_the_images_creation_time(created, epoch):
    assert created_epoch(created) == epoch


def test_mksquashfs_reads_the_stream_and_fixes_every_time_owner_and_attribute():
    argv = mksquashfs_argv(Path("/o/.x.tmp"), "zstd", 1700000000)
    assert argv[:5] == ["mksquashfs", "-", "/o/.x.tmp", "-tar", "-noappend"]
    pairs = dict(itertools.pairwise(argv))
    assert pairs["-comp"] == "zstd" and pairs["-root-time"] == "1700000000"
    # the files keep their own times (clamped in the stream and by SOURCE_DATE_EPOCH, which mksquashfs refuses
    # beside -mkfs-time and -all-time): one time for all makes every .pyc stale
    assert "-all-time" not in argv and "-mkfs-time" not in argv
    assert squash_env(1700000000)["SOURCE_DATE_EPOCH"] == "1700000000"
    assert (pairs["-root-mode"], pairs["-root-uid"], pairs["-root-gid"]) == ("0755", "0", "0")
    assert {"-no-xattrs", "-exit-on-error", "-no-progress"} <= set(argv) and "-all-root" not in argv
    assert pairs["-Xcompression-level"] == "3"
    assert "-Xcompression-level" not in mksquashfs_argv(Path("/o/x"), "xz", 0)
    assert mksquashfs_version("mksquashfs version 4.5.1 (2022/03/17)\n") == (4, 5)
    assert mksquashfs_version("mksquashfs version 4.6.1-git") == (4, 6) and mksquashfs_version("") is None


def _tar(entries: list[tuple[str, bytes | None, dict]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, extra in entries:
            info = tarfile.TarInfo(name)
            for key, value in extra.items():
                setattr(info, key, value)
            if data is None and info.type == tarfile.REGTYPE:
                info.type = tarfile.DIRTYPE
            info.size = len(data or b"") if info.type == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if data is not None and info.type == tarfile.REGTYPE else None)
    return buf.getvalue()


def test_the_stream_drops_what_enroot_drops_replaces_its_files_and_keeps_owners():
    src = _tar([(".dockerenv", b"", {}), ("dev", None, {}), ("dev/console", b"", {}), ("etc", None, {}),
                ("etc/environment", b"OLD=1\n", {}), ("home/u/f", b"mine", {"uid": 1000, "gid": 1000, "mode": 0o600}),
                ("usr/bin/su", b"x", {"mode": 0o4755}), ("etc/env2", b"", {"type": tarfile.LNKTYPE, "linkname": "etc/environment"}),
                ("bin/sh", b"", {"type": tarfile.SYMTYPE, "linkname": "dash"}),
                ("cap", b"c", {"pax_headers": {"SCHILY.xattr.security.capability": "x"}})])
    chunks = [src[i:i + 700] for i in range(0, len(src), 700)]       # the engine sends it in pieces
    out = io.BytesIO()
    written = filter_stream(ChunkReader(chunks), out, {"etc/environment": b"A=1\n", "etc/new/rc": b"exec x\n"}, 42)
    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as tar:
        members = {m.name: m for m in tar.getmembers()}
        env = tar.extractfile("etc/environment")
        assert env is not None and env.read() == b"A=1\n"
    assert written == len(members)
    assert ".dockerenv" not in members and "dev/console" not in members and "dev" in members
    assert "etc/env2" not in members                                   # a hard link to a replaced file goes too
    assert (members["home/u/f"].uid, members["home/u/f"].mode) == (1000, 0o600)
    assert members["usr/bin/su"].mode == 0o4755 and members["bin/sh"].linkname == "dash"
    assert not any(k.startswith("SCHILY.xattr.") for k in members["cap"].pax_headers)
    assert members["etc/new"].isdir() and (members["etc/new/rc"].uid, members["etc/new/rc"].mtime) == (0, 42)
    assert list(members).count("etc/environment") == 1


def test_a_stream_that_is_not_a_tar_is_an_error():
    with pytest.raises(tarfile.TarError):
        filter_stream(ChunkReader([b"not a tar" * 200]), io.BytesIO(), {}, 0)


def test_the_sidecar_round_trips_and_a_bad_one_is_one_line(tmp_path):
    record = sidecar("t", "t-arm64", "torchimages:t-arm64", IMAGE_ID, "linux/arm64", SHA, 123, "zstd", 7)
    assert record["file"] == "t-arm64.sqsh" and record["tag"] == "t" and record["sha256"] == SHA
    path = tmp_path / "t-arm64.sqsh.json"
    path.write_text(json.dumps(record))
    assert read_sidecar(path) == record
    path.write_text(json.dumps({**record, "sha256": "xyz"}))
    with pytest.raises(UserError, match="not a make sqsh sidecar"):
        read_sidecar(path)
    with pytest.raises(UserError, match="not found: make sqsh writes it"):
        read_sidecar(tmp_path / "absent.json")


def test_the_squashfs_is_recorded_only_beside_the_image_it_was_made_from(tmp_path):
    found = sidecar("t", "t", "torchimages:t", IMAGE_ID, "linux/amd64", SHA, 9, "zstd", 0)
    single: dict[str, Any] = {"reference": "r/x@sha256:" + "0" * 64, "image_id": IMAGE_ID}
    assert attach_sqsh(single, found) and single["sqsh"] == {"file": "t.sqsh", "sha256": SHA, "size": 9,
                                                               "compression": "zstd"}
    multi: dict[str, Any] = {"image_id": "", "platforms": {"linux/amd64": {"image_id": "sha256:" + "e" * 64},
                                           "linux/arm64": {"image_id": IMAGE_ID}}}
    assert attach_sqsh(multi, found) and "sqsh" in multi["platforms"]["linux/arm64"]
    assert "sqsh" not in multi and "sqsh" not in multi["platforms"]["linux/amd64"]
    other = {"image_id": "sha256:" + "f" * 64}
    assert not attach_sqsh(other, found) and "sqsh" not in other
    pushed = tmp_path / "pushed.json"
    assert not record_in_push(pushed, "t", found)
    pushed.write_text(json.dumps({"t": {"image_id": IMAGE_ID, "reference": "r/x@sha256:" + "0" * 64}}))
    assert record_in_push(pushed, "t", found) and json.loads(pushed.read_text())["t"]["sqsh"]["sha256"] == SHA
    assert not record_in_push(pushed, "other-tag", found)
    assert recorded_sha256s(json.loads(pushed.read_text())["t"]) == [SHA] and recorded_sha256s(multi) == [SHA]
    assert recorded_sha256s(None) == [] and recorded_sha256s({"image_id": "x"}) == []


def test_the_attestation_names_the_squashfs_as_a_second_subject():
    assert sqsh_subject({"reference": "r"}) == ()
    assert sqsh_subject({"sqsh": {"file": "t.sqsh", "sha256": SHA}}) == (("t.sqsh", f"sha256:{SHA}"),)
    with pytest.raises(UserError, match="malformed"):
        sqsh_subject({"sqsh": {"file": "t.sqsh", "sha256": "nope"}})


def test_sqsh_knobs_are_checked():
    assert Settings.load({}, {}, ("SQSH_COMP",)).sqsh_comp == "zstd"
    assert Settings.load({"SQSH_COMP": " XZ "}, {}, ("SQSH_COMP",)).sqsh_comp == "xz"
    with pytest.raises(UserError, match="not a squashfs compression"):
        Settings.load({"SQSH_COMP": "brotli"}, {}, ("SQSH_COMP",))
    assert Settings.load({"SQSH": "/shared/t.sqsh"}, {}, ("SQSH",)).sqsh == "/shared/t.sqsh"
    for bad in ("t.sqsh", "/shared/t.img", "/shared/a b.sqsh", "/shared/$(x).sqsh", "/shared/'.sqsh"):
        with pytest.raises(UserError, match=r"absolute path to a \.sqsh"):
            Settings.load({"SQSH": bad}, {}, ("SQSH",))


def sqsh_job(spec, nodes: int = 2, gpus: int = 8) -> Job:
    return Job(spec, "/shared/img/t.sqsh", nodes, gpus, "pyxis", sqsh="/shared/img/t.sqsh", sqsh_sha256=SHA)


def test_the_pyxis_script_mounts_the_file_once_its_sha256_is_the_recorded_one(test_specs):
    spec = test_specs[0]
    text = slurm_script(sqsh_job(spec))
    lines = text.splitlines()
    assert "export TORCHIMAGES_IMAGE=${TORCHIMAGES_IMAGE:-/shared/img/t.sqsh}" in lines
    assert f"export TORCHIMAGES_SQSH_SHA256={SHA}" in lines
    assert f"# This cluster needs: {NEEDS['pyxis-sqsh']}" in text and "No REGISTRY" not in text
    step = next(line for line in lines if line.startswith("srun") and "--container-image=" in line)
    check = next(i for i, line in enumerate(lines) if line.startswith('[ "$sqsh_sum" = "$TORCHIMAGES_SQSH_SHA256" ]'))
    assert check < lines.index(step) and 'srun --ntasks-per-node=1 --kill-on-bad-exit=1 --export=ALL ' \
        '--container-image="$TORCHIMAGES_IMAGE"' in step
    assert "REFUSED: $TORCHIMAGES_IMAGE has sha256 $sqsh_sum, not $TORCHIMAGES_SQSH_SHA256" in lines[check]
    assert "verify --checks" in text and '--container-mounts="$TORCHIMAGES_REPORTS:/reports"' in text
    # without SQSH the registry reference, and no check
    plain = slurm_script(Job(spec, "ghcr.io/acme/x:t", 2, 8, "pyxis"))
    assert "sha256sum" not in plain and "TORCHIMAGES_IMAGE:-'ghcr.io#acme/x:t'" in plain


def test_each_signed_statement_names_the_image_and_its_squashfs(tmp_path, monkeypatch):
    """attest_one with the squashfs subject; the registry is replaced by a recorder of what would be attached."""
    from scripts.publish import attest, signing
    private, public, _ = signing.keygen(tmp_path / "keys")
    sent: list[bytes] = []

    def attach(reg: object, repo: str, digest: str, payload: bytes, *args: object, **kw: object) -> tuple[str, bool]:
        sent.append(payload)
        return "sha256:" + "1" * 64, True
    monkeypatch.setattr(attest, "attach", attach)
    image = "sha256:" + "2" * 64
    attest.attest_one(f"127.0.0.1:5000/x@{image}", b'{"checks": []}', b'{"bomFormat": "CycloneDX"}', signing.load_signer(private),
                      also=(("t.sqsh", f"sha256:{SHA}"),))
    trust = signing.load_trust([public])
    assert len(sent) == 2                       # verify report and SBOM (no provenance inputs given)
    for envelope in sent:
        doc = signing.open_envelope(envelope, trust).statement
        assert doc["subject"] == [{"name": "127.0.0.1:5000/x", "digest": {"sha256": "2" * 64}},
                                  {"name": "t.sqsh", "digest": {"sha256": SHA}}]
        assert signing.subject_digests(doc) == [image, f"sha256:{SHA}"]


def test_times_later_than_the_image_are_clamped_and_its_own_kept():
    """What the engine wrote creating the container (/etc/hosts, now) takes the image's time; a .py and its .pyc keep
    theirs, so the bytecode's recorded source time still matches (Python then never recompiles from source)."""
    src = _tar([("etc", None, {"mtime": 1800000000}), ("etc/hosts", b"", {"mtime": 1800000000}),
                ("opt/m.py", b"x = 1\n", {"mtime": 1767225600}),
                ("opt/n.py", b"y = 2\n", {"mtime": 1767225600, "pax_headers": {"mtime": "1767225600.25"}})])
    out = io.BytesIO()
    filter_stream(ChunkReader([src]), out, {}, 1795940138)
    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as tar:
        times = {m.name: m.mtime for m in tar.getmembers()}
    assert times == {"etc": 1795940138, "etc/hosts": 1795940138, "opt/m.py": 1767225600, "opt/n.py": 1767225600}
