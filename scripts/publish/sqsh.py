"""`make sqsh IMAGE=<tag>`: the image's root filesystem as one squashfs, for Slurm nodes running enroot/pyxis.

A node that mounts a squashfs from shared storage starts without importing the image (enroot's import of a registry
image pulls, unpacks and squashes it on every node, minutes per node). The file is made the way enroot's own
`enroot import dockerd://<image>` makes it (src/docker.sh: `docker export` of a created container, `.dockerenv` and
`dev/*` left out, /etc/environment, /etc/rc, /etc/rc.local and /etc/fstab from the image's config), with two
differences: the owners stay as in the image (enroot squashes with -all-root; a mount without user remapping, as
squashfuse + runc, then still sees the image's users), and it is reproducible: every time later than the image's
creation (what the engine wrote creating the container: /etc/hosts, its folders) clamped to it, as SOURCE_DATE_EPOCH
clamps, the image's own times kept (one time for every file would make every timestamp-checked .pyc stale: Python
then compiled ~2,000 modules from source on each `import torch`, 4.1 s instead of 2.3 s), the superblock and root at
that time, no extended attributes, the stream in the engine's (lexical) walk order,
which mksquashfs (>= 4.5, `-tar`: no unpacking, no root needed) writes in the order it reads. Two runs of the same
image give the same bytes, so the sha256 beside the image's digest (the sidecar, `make push`'s record, the signed
attestation's subject) names exactly the file a node mounts.

Output: <build>/sqsh/<name>.sqsh (temp file, then rename) and <name>.sqsh.json (sidecar(): sha256, image id,
compression, size).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ..errors import UserError
from ..fsutil import atomic_write

MKSQUASHFS = "mksquashfs"
MIN_VERSION = (4, 5)            # -tar: read the image's tar stream from stdin
DEFAULT_COMP = "zstd"
# zstd at level 3, not mksquashfs's 15: reading (a node's cold start) is as fast at any level, and writing is ~10x
# faster (level 15 took over 10 min for the 1.3 GB CPU image on 2 busy cores) for a file ~10% larger
LEVELS = {"zstd": ["-Xcompression-level", "3"]}
ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# enroot's import leaves these out of the rootfs (the engine's marker; /dev is the runtime's)
DROPPED = (".dockerenv",)
DROPPED_UNDER = ("dev/",)
XATTR_PAX = "SCHILY.xattr."
TIMES_PAX = ("mtime", "atime", "ctime")      # sub-second times: the header's whole seconds stand
STREAM_BUFFER = 1 << 20
ENROOT_FILES = ("etc/environment", "etc/rc", "etc/rc.local", "etc/fstab")
RC_LOCAL = ("# This file is sourced by /etc/rc when the container starts.\n"
            "# It can be used to manipulate the entrypoint or the command of the container.\n")

Echo = Callable[[str], None]


# ---- the enroot files, from the image's config (pure) ----

def environment_text(env: Sequence[str] | None) -> str:
    """/etc/environment as enroot writes it (`.config.Env[]`, one KEY=VALUE a line; enroot substitutes ${VAR} from
    the host and drops ill-formed lines when it starts the container). A value holding a newline cannot be written."""
    lines = []
    for item in env or []:
        key, sep, value = item.partition("=")
        if "\n" in item or "\r" in item:
            raise UserError(f"the image's ENV {key[:40]!r} holds a line break, which /etc/environment cannot carry: "
                            f"rebuild without it")
        if sep and ENV_KEY.fullmatch(key):
            lines.append(f"{key}={value}")
    return "".join(f"{line}\n" for line in lines)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def rc_text(config: Mapping[str, Any], uri: str) -> str:
    """/etc/rc as enroot's docker::configure writes it: the provenance, the labels as comments, then the working
    directory, /etc/rc.local, and the entrypoint with the arguments given (else with the image's command; neither:
    /bin/sh). enroot runs it as `sh /etc/rc [command...]`."""
    entrypoint = [str(a) for a in config.get("Entrypoint") or []]
    cmd = [str(a) for a in config.get("Cmd") or []]
    if not entrypoint and not cmd:
        cmd = ["/bin/sh"]
    workdir = str(config.get("WorkingDir") or "") or "/"
    labels = config.get("Labels") or {}
    head = [f"# enroot-provenance: {_one_line(uri)}"]
    head += [f"# {_one_line(k)} {_one_line(v)}" for k, v in sorted(labels.items())]
    with_args = " ".join([*map(shlex.quote, entrypoint), '"$@"'])
    without = " ".join(map(shlex.quote, [*entrypoint, *cmd]))
    body = [
        f"mkdir -p {shlex.quote(workdir)} 2> /dev/null",
        f"cd {shlex.quote(workdir)} && unset OLDPWD || exit 1",
        "",
        "if [ -s /etc/rc.local ]; then",
        "    . /etc/rc.local",
        "fi",
        "",
        "if [ $# -gt 0 ]; then",
        f"    exec {with_args}",
        "else",
        f"    exec {without}",
        "fi",
    ]
    return "\n".join(head + [""] + body) + "\n"


def fstab_text(config: Mapping[str, Any]) -> str:
    """/etc/fstab as enroot writes it: each VOLUME a bind mount of a folder in the rootfs."""
    lines = []
    for volume in sorted(config.get("Volumes") or {}):
        if not volume.startswith("/") or any(c.isspace() for c in volume):
            raise UserError(f"the image's VOLUME {volume[:60]!r} cannot be an enroot mount (an absolute path without "
                            f"spaces)")
        lines.append(f"${{ENROOT_ROOTFS}}{volume} {volume} none x-create=dir,bind,rw,nosuid,nodev\n")
    return "".join(lines)


def enroot_files(config: Mapping[str, Any], uri: str) -> dict[str, bytes]:
    """The files enroot reads, by their path in the rootfs (no leading '/')."""
    texts = {"etc/environment": environment_text(config.get("Env")), "etc/rc": rc_text(config, uri),
             "etc/rc.local": RC_LOCAL, "etc/fstab": fstab_text(config)}
    return {path: text.encode("utf-8") for path, text in texts.items()}


def created_epoch(created: str | None) -> int:
    """The image's creation time (the engine's RFC 3339, nanoseconds) as whole seconds; 0 when absent or unreadable
    (any fixed time keeps the file reproducible)."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)", (created or "").strip())
    if not match:
        return 0
    stamp = datetime.fromisoformat(match.group(1) + ("+00:00" if match.group(2) == "Z" else match.group(2)))
    return max(0, int(stamp.timestamp()))


def mksquashfs_argv(dest: Path, comp: str, epoch: int, binary: str = MKSQUASHFS) -> list[str]:
    """mksquashfs reading the tar stream on stdin into `dest`, reproducibly: the files' times as the stream gives them
    (filter_stream clamps them to `epoch`; so does mksquashfs under SOURCE_DATE_EPOCH, squash_env(), which also
    stamps the superblock and what it makes itself: without it, one inode took the moment of the run), the root
    folder's `epoch`, root's and 0755 (the stream has no entry for it), no xattrs, no progress bar; any error ends it."""
    return [binary, "-", str(dest), "-tar", "-noappend", "-comp", comp, *LEVELS.get(comp, []),
            "-root-time", str(epoch),
            "-root-mode", "0755", "-root-uid", "0", "-root-gid", "0",
            "-no-xattrs", "-no-progress", "-exit-on-error"]


def squash_env(epoch: int) -> dict[str, str]:
    """mksquashfs's environment: SOURCE_DATE_EPOCH (squashfs-tools >= 4.5) is the superblock's time and clamps every
    later one (it refuses -mkfs-time and -all-time beside it)."""
    return {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}


def mksquashfs_version(text: str) -> tuple[int, int] | None:
    match = re.search(r"mksquashfs version (\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def sidecar(tag: str, name: str, image: str, image_id: str, platform: str, sha: str, size: int, comp: str,
            epoch: int) -> dict[str, Any]:
    """What <name>.sqsh.json records: the file's sha256 and size beside the image it was made from (`tag` the
    matrix's; `name` the tag, or <tag>-<arch> for one platform of a multi-platform image)."""
    return {"file": f"{name}.sqsh", "tag": tag, "image": image, "image_id": image_id, "platform": platform,
            "sha256": sha, "size": size, "compression": comp, "mtime": epoch}


def read_sidecar(path: Path) -> dict[str, Any]:
    """A sidecar read back and checked: a sha256 in hex, the image id; one line naming the file otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} not found: make sqsh writes it beside the .sqsh; copy both together") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is unreadable ({exc}); make sqsh again") from None
    if not isinstance(data, dict) or not SHA256_HEX.fullmatch(str(data.get("sha256"))) \
            or not isinstance(data.get("image_id"), str):
        raise UserError(f"{path} is not a make sqsh sidecar (no sha256 or image id); make sqsh again")
    return data


def attach_sqsh(entry: dict[str, Any], found: Mapping[str, Any]) -> bool:
    """Record the squashfs in a push record's entry, beside the digest of the image it was made from (the entry
    itself, or one of its platforms, whose image id is the sidecar's); False when no image there is that one."""
    record = {k: found[k] for k in ("file", "sha256", "size", "compression")}
    places = [entry, *(entry.get("platforms") or {}).values()]
    hit = False
    for place in places:
        if isinstance(place, dict) and place.get("image_id") == found["image_id"]:
            place["sqsh"] = record
            hit = True
    return hit


def recorded_sha256s(entry: Any) -> list[str]:
    """The squashfs sha256s a push record's entry holds (itself and its platforms')."""
    if not isinstance(entry, dict):
        return []
    places = [entry, *(p for p in (entry.get("platforms") or {}).values() if isinstance(p, dict))]
    return [str(p["sqsh"]["sha256"]) for p in places if isinstance(p.get("sqsh"), dict) and "sha256" in p["sqsh"]]


def record_in_push(pushed: Path, tag: str, found: Mapping[str, Any]) -> bool:
    """Add the squashfs to `make push`'s record where it holds the image it was made from; False where it does not
    (not pushed yet: make push records it then)."""
    from .pushed import read_record
    if not pushed.is_file():
        return False
    record = read_record(pushed)
    entry = record.get(tag)
    if not isinstance(entry, dict) or not attach_sqsh(entry, found):
        return False
    atomic_write(pushed, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return True


def sidecars_for(folder: Path, names: Iterable[str]) -> list[dict[str, Any]]:
    """The sidecars make sqsh left in `folder` for these file names (without .sqsh), those present."""
    return [read_sidecar(folder / f"{n}.sqsh.json") for n in names if (folder / f"{n}.sqsh.json").is_file()]


# ---- the stream: the engine's export, filtered, into mksquashfs ----

class ChunkReader:
    """A file object over an iterator of byte chunks (the engine's export), for tarfile's stream mode; each read
    copies only what it returns."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._chunk, self._pos = b"", 0

    def read(self, size: int = -1) -> bytes:
        parts = []
        while size != 0:
            if self._pos >= len(self._chunk):
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._chunk, self._pos = chunk, 0
                continue
            end = len(self._chunk) if size < 0 else min(len(self._chunk), self._pos + size)
            parts.append(self._chunk[self._pos:end])
            size = size if size < 0 else size - (end - self._pos)
            self._pos = end
        return b"".join(parts)


def _normal(name: str) -> str:
    return name.lstrip("/").removeprefix("./").rstrip("/")


def _dropped(name: str, replaced: Mapping[str, bytes]) -> bool:
    return name in DROPPED or name in replaced or any(name.startswith(p) for p in DROPPED_UNDER)


def filter_stream(source: Any, sink: IO[bytes], files: Mapping[str, bytes], epoch: int) -> int:
    """Copy the tar `source` to `sink` without enroot's dropped entries and the files it replaces, then append
    `files` (root's, 0644, time `epoch`; their folders too where the image lacks them). Extended attributes are
    left out; a time later than `epoch` is clamped to it (whole seconds). The number of entries written."""
    written, folders = 0, set()
    with tarfile.open(fileobj=source, mode="r|", bufsize=STREAM_BUFFER) as src, \
            tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT, bufsize=STREAM_BUFFER,
                         # file data in 1 MiB copies, not 16 KiB: TarFile's own argument, absent from typeshed
                         copybufsize=STREAM_BUFFER) as out:  # type: ignore[call-overload]
        for member in src:
            name = _normal(member.name)
            if not name or _dropped(name, files) or (member.islnk() and _dropped(_normal(member.linkname), files)):
                continue
            member.name = name
            member.pax_headers = {k: v for k, v in member.pax_headers.items()
                                  if not k.startswith(XATTR_PAX) and k not in TIMES_PAX}
            member.mtime = min(int(member.mtime), epoch)
            if member.isdir():
                folders.add(name)
            out.addfile(member, src.extractfile(member) if member.isreg() else None)
            written += 1
        for path, data in sorted(files.items()):
            parts = path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(parts[:depth])
                if folder not in folders:
                    info = tarfile.TarInfo(folder)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, epoch
                    out.addfile(info)
                    folders.add(folder)
                    written += 1
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, epoch
            out.addfile(info, io.BytesIO(data))
            written += 1
    return written


# ---- the command ----

def _check_tool(binary: str) -> None:
    if shutil.which(binary) is None:
        raise UserError(f"{binary} is not installed: apt-get install squashfs-tools (4.5 or newer), then make sqsh again")
    proc = subprocess.run([binary, "-version"], capture_output=True, text=True, check=False)
    version = mksquashfs_version(proc.stdout + proc.stderr)
    if version is None or version < MIN_VERSION:
        raise UserError(f"{binary} is {'.'.join(map(str, version)) if version else 'of unknown version'}: make sqsh "
                        f"needs squashfs-tools {'.'.join(map(str, MIN_VERSION))} or newer (its -tar reads the stream)")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _squash(chunks: Iterable[bytes], files: Mapping[str, bytes], argv: list[str], epoch: int) -> None:
    """Feed the filtered stream to mksquashfs; its own message, one line, when it fails."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=log, env=squash_env(epoch))
        assert proc.stdin is not None
        broke = None
        try:
            filter_stream(ChunkReader(chunks), proc.stdin, files, epoch)
        except (BrokenPipeError, tarfile.TarError) as exc:
            broke = exc
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
            status = proc.wait()
        log.seek(0)
        said = [line for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    if status != 0 or broke is not None:
        why = said[-1] if status != 0 and said else (f"the image's stream is not a tar ({broke})"
                                                     if isinstance(broke, tarfile.TarError) else f"exit {status}")
        raise UserError(f"mksquashfs failed: {why[:300]}")


def make_sqsh(client: Any, image: str, tag: str, name: str, out_dir: Path, comp: str = DEFAULT_COMP,
              binary: str = MKSQUASHFS, echo: Echo = print) -> tuple[Path, dict[str, Any]]:
    """out_dir/<name>.sqsh from the local `image` of the matrix's `tag` (see the module's docstring) and its
    sidecar; both returned."""
    from docker.errors import DockerException, ImageNotFound
    _check_tool(binary)
    try:
        found = client.images.get(image)
    except ImageNotFound:
        raise UserError(f"{image} is not in the local engine: make build IMAGE={tag} (or docker pull it) first") from None
    attrs = found.attrs
    config, epoch = attrs.get("Config") or {}, created_epoch(attrs.get("Created"))
    files = enroot_files(config, f"dockerd://{image}")
    platform = f"{attrs.get('Os') or 'linux'}/{attrs.get('Architecture') or 'unknown'}"
    dest = out_dir / f"{name}.sqsh"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=out_dir, prefix=f".{dest.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write into {out_dir} ({exc.strerror}); make it writable or set BUILD_DIR") from None
    tmp = Path(tmp_name)
    try:
        os.close(fd)
        container = client.containers.create(image, command=["true"])
        try:
            echo(f"squashing {image} ({platform}) into {dest} ({comp}; every time {epoch})")
            _squash(container.export(), files, mksquashfs_argv(tmp, comp, epoch, binary), epoch)
        finally:
            container.remove(force=True)
        tmp.chmod(0o644)
        record = sidecar(tag, name, image, found.id, platform, file_sha256(tmp), tmp.stat().st_size, comp, epoch)
        os.replace(tmp, dest)
    except DockerException as exc:
        raise UserError(f"exporting {image} failed: {exc}") from None
    except OSError as exc:
        raise UserError(f"cannot write {dest} ({exc.strerror}); the previous file is unchanged") from None
    finally:
        tmp.unlink(missing_ok=True)
    atomic_write(dest.with_name(dest.name + ".json"), json.dumps(record, indent=2, sort_keys=True) + "\n", 0o644)
    return dest, record
