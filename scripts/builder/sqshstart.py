"""`make bench-start`'s two rows for the runtimes users run beside Docker (issue 38, item 4):

- the squashfs (Slurm with pyxis/enroot, the file on a node's shared or local disk): from nothing to the first
  `import torch` is a squashfuse (squashfuse_ll) mount of the file, then the probe under runc the way enroot starts a container (the
  mount read-only as its root, the image's /etc/environment, `sh /etc/rc <command>`, user 1000, a tmpfs /tmp). The
  file is made first (`make sqsh`'s code, not timed: a release step, as the registry push is) and its pages are
  dropped from the page cache before the mount, so the read is cold as the registry pull's is.
- a modern containerd (Debian 13's 1.7.24, built with Go 1.24: SHA extensions for sha256, about 5x Go 1.19's rate
  here), unpacked privately by `scripts/bootstrap.sh modern-containerd`; the host's containerd stays as it is.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .coldstart import PROBE, Start, _probe, _run

MODERN_DIR = Path("build") / "containerd-trixie"     # where scripts/bootstrap.sh modern-containerd unpacks the .deb
BUILDINFO_MAGIC = b"\xff Go buildinf:"
GO_VERSION = re.compile(rb"go1\.\d+(?:\.\d+)?")


def modern_bin(root: Path) -> Path | None:
    """The folder holding the private modern containerd and its ctr and shim, None when it is not unpacked."""
    bin_dir = (root / MODERN_DIR / "usr" / "bin").resolve()
    ok = all(os.access(bin_dir / tool, os.X_OK) for tool in ("containerd", "ctr", "containerd-shim-runc-v2"))
    return bin_dir if ok else None


def _uvarint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(data):
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7
    raise ValueError("truncated varint")


def go_version(data: bytes) -> str | None:
    """The Go release that built a binary, from its build info (what `go version -m` reads: Go >= 1.18 writes the
    version inline after a 32-byte header, flag 2); else the first go1.N[.M] in the file; None when neither."""
    at = data.find(BUILDINFO_MAGIC)
    if at >= 0 and len(data) >= at + 32 and data[at + 15] & 2:
        with contextlib.suppress(ValueError):
            size, start = _uvarint(data, at + 32)
            text = data[start:start + size]
            if GO_VERSION.fullmatch(text):
                return text.decode()
    found = GO_VERSION.search(data)
    return found.group().decode() if found else None


def binary_go_version(path: Path) -> str | None:
    try:
        return go_version(path.read_bytes())
    except OSError:
        return None


def runtime_version(argv: list[str]) -> str:
    """`containerd --version`'s version field (1.7.24~ds1), or '?'."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
        parts = out.split()
        if len(parts) >= 3:
            return parts[2]
    return "?"


def environment(text: str) -> list[str]:
    """/etc/environment as enroot reads it: KEY=VALUE lines only, no ENROOT_ names, surrounding quotes gone."""
    env = []
    for line in text.splitlines():
        line = line.lstrip()
        key, sep, value = line.partition("=")
        if not sep or line.startswith("#") or not key.isidentifier() or key.startswith("ENROOT_"):
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env.append(f"{key}={value}")
    return env


def runc_config(spec: dict[str, Any], rootfs: Path, env: list[str], args: list[str]) -> dict[str, Any]:
    """`runc spec`'s config as enroot starts the image: the read-only mount as root, user 1000, the image's
    environment, a writable tmpfs /tmp."""
    spec["root"] = {"path": str(rootfs), "readonly": True}
    spec["process"].update(terminal=False, args=args, env=[*env, "HOME=/tmp"], cwd="/tmp",
                           user={"uid": 1000, "gid": 1000})
    spec.pop("hostname", None)
    spec["mounts"] = [*spec["mounts"], {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                                        "options": ["nosuid", "nodev", "mode=1777"]}]
    return spec


def drop_cache(path: Path) -> None:
    """Evict the file's pages from the page cache (its clean pages: it was just written and synced), so the mount
    reads from the disk as a node's first read does; the rest of the page cache is left alone."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def squashfuse() -> str:
    """squashfuse_ll (FUSE's low-level interface, as Apptainer mounts its images: ~10-20% faster to the first
    import torch here) where the package ships it, else squashfuse."""
    return "squashfuse_ll" if shutil.which("squashfuse_ll") else "squashfuse"


def sqsh_tools() -> str | None:
    """What the squashfs row lacks, or None when it can run (root, /dev/fuse, squashfuse, runc, fusermount)."""
    missing = [t for t in ("mksquashfs", squashfuse(), "runc") if shutil.which(t) is None]
    if not (shutil.which("fusermount3") or shutil.which("fusermount")):
        missing.append("fusermount3 (fuse3)")
    if missing:
        return f"needs {', '.join(missing)}: scripts/bootstrap.sh test-tools"
    if os.geteuid() != 0 or not Path("/dev/fuse").exists():
        return "needs root and /dev/fuse (squashfuse and runc as enroot runs them)"
    return None


@contextlib.contextmanager
def _mounted(sqsh: Path, mount: Path) -> Iterator[None]:
    mount.mkdir(parents=True)
    _run([squashfuse(), "-o", "allow_other", str(sqsh), str(mount)], f"{squashfuse()} {sqsh.name}", timeout=120)
    try:
        yield
    finally:
        fusermount = shutil.which("fusermount3") or "fusermount"
        subprocess.run([fusermount, "-u", str(mount)], capture_output=True, check=False, timeout=60)


def sqsh_start(sqsh: Path, workdir: Path) -> Start:
    """From nothing to the first import torch: mount (the row's 'pull'), then the probe under runc as enroot runs
    it; the mount and the container removed after."""
    drop_cache(sqsh)
    base = workdir / f"sqsh-{uuid.uuid4().hex[:8]}"
    mount, bundle, state = base / "mnt", base / "bundle", base / "runc"
    bundle.mkdir(parents=True)
    _run(["runc", "spec", "--bundle", str(bundle)], "runc spec", timeout=30)
    spec = json.loads((bundle / "config.json").read_text())
    name = f"bench-sqsh-{uuid.uuid4().hex[:12]}"
    t0 = time.monotonic()
    try:
        with _mounted(sqsh, mount):
            mounted = time.monotonic() - t0
            env = environment((mount / "etc" / "environment").read_text())
            config = runc_config(spec, mount, env, ["/bin/sh", "/etc/rc", "python", "-c", PROBE])
            (bundle / "config.json").write_text(json.dumps(config))
            t1 = time.monotonic()
            proc = _run(["runc", "--root", str(state), "run", "--bundle", str(bundle), name], f"runc run {sqsh.name}",
                        timeout=1800)
            wall = time.monotonic() - t1
    finally:
        subprocess.run(["runc", "--root", str(state), "delete", "--force", name], capture_output=True, check=False,
                       timeout=60)
        shutil.rmtree(base, ignore_errors=True)
    start = _probe(wall, proc.stdout, mounted, f"runc run {sqsh.name}")
    start.extra.update(sqsh_bytes=sqsh.stat().st_size, mount_s=round(mounted, 3), fuse=squashfuse())
    return start


def go_of(path: str | None) -> str:
    """'Go 1.24.4' of a binary on PATH or at a path, '?' when it cannot be read."""
    found = shutil.which(path) if path else None
    version = binary_go_version(Path(found)) if found else None
    return f"Go {version[2:]}" if version else "Go ?"
