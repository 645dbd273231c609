"""make bench-start's squashfs and modern-containerd rows, their pure parts (issue 38, item 4): the Go release read
from a binary's build info, enroot's environment and runc config, the two new ratios. The mount, runc and the
private containerd 1.7 are run by `make bench-start` itself."""
from __future__ import annotations

import pytest

from scripts.builder.coldstart import TARGETS, Start
from scripts.builder.sqshstart import BUILDINFO_MAGIC, environment, go_version, modern_bin, runc_config
from scripts.builder.startbench import MODERN, _ratios, _row

pytestmark = pytest.mark.unit


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


def _buildinfo(version: str) -> bytes:
    """A Go >= 1.18 build-info header (pointer size 8, flag 2: the version inline), as the linker writes it."""
    return b"\x7fELF..." + BUILDINFO_MAGIC + bytes([8, 2]) + b"\0" * 16 + _uvarint(len(version)) + version.encode() + b"x"


def test_the_go_release_comes_from_the_build_info_not_from_any_string_before_it():
    data = b"built against go1.18 once " + _buildinfo("go1.24.4")
    assert go_version(data) == "go1.24.4"


def test_without_build_info_the_first_go_release_string_and_none_without_one():
    assert go_version(b"...runtime go1.19.8 ...") == "go1.19.8"
    assert go_version(b"no go here") is None
    assert go_version(BUILDINFO_MAGIC + bytes([8, 2]) + b"\0" * 16 + b"\xff") is None   # truncated varint


def test_enroot_reads_key_value_lines_only_and_strips_quotes():
    text = "# c\nPATH=/opt/venv/bin:/usr/bin\n\nLANG='C.UTF-8'\nENROOT_X=1\nnot a line\n 1BAD=x\n"
    assert environment(text) == ["PATH=/opt/venv/bin:/usr/bin", "LANG=C.UTF-8"]


def test_the_runc_config_is_enroot_s_read_only_root_user_1000_and_a_tmpfs_tmp(tmp_path):
    spec = {"process": {"args": ["sh"], "env": []}, "hostname": "runc", "mounts": [{"destination": "/proc"}]}
    config = runc_config(spec, tmp_path, ["A=1"], ["/bin/sh", "/etc/rc", "python"])
    assert config["root"] == {"path": str(tmp_path), "readonly": True}
    assert config["process"]["user"] == {"uid": 1000, "gid": 1000} and config["process"]["env"] == ["A=1", "HOME=/tmp"]
    assert config["process"]["args"][:2] == ["/bin/sh", "/etc/rc"] and "hostname" not in config
    assert [m["destination"] for m in config["mounts"]] == ["/proc", "/tmp"]


def test_no_modern_containerd_until_the_bootstrap_unpacked_one(tmp_path):
    assert modern_bin(tmp_path) is None
    bin_dir = tmp_path / "build" / "containerd-trixie" / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("containerd", "ctr", "containerd-shim-runc-v2"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    assert modern_bin(tmp_path) == bin_dir.resolve()


def test_the_squashfs_and_modern_ratios_where_their_rows_ran():
    def row(runtime: str, image: str, pull: float) -> dict[str, object]:
        return _row(runtime, image, Start(pull, 1.0, 1.0), [100])
    base = [row("docker", "plain (gzip)", 98.0), row("docker", "project (gzip)", 48.0),
            row("containerd", "plain (gzip)", 98.0), row("containerd", "project (zstd)", 58.0)]
    assert "sqsh" not in _ratios(base) and "modern_containerd_zstd" not in _ratios(base)
    more = [row("squashfs", "project (sqsh)", 8.0), row(MODERN, "plain (gzip)", 48.0), row(MODERN, "project (zstd)", 13.0)]
    ratios = _ratios(base + more)
    assert ratios["sqsh"] == pytest.approx(0.1)                     # against containerd's plain pull + import
    assert ratios["modern_containerd_zstd"] == pytest.approx(0.3)   # both images through the modern containerd
    assert TARGETS["sqsh"] == 0.2 and TARGETS["modern_containerd_zstd"] == 0.5
