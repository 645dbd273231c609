"""Compiling a lock: `uv pip compile --generate-hashes` for one target from PyPI, the torch index and the local
wheel folders; `make lock` (refresh) writes every missing or stale one."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from ... import ROOT
from ...errors import UserError
from ...fsutil import atomic_write
from ...plan.platforms import machine_of
from ...plan.spec import ImageSpec, Target
from ..wheels import exact_pin, wheel_fits, wheel_name_version
from .read import (
    CONTENT_ISSUES,
    DIGEST_LINE,
    LOCK_MODE,
    UNRESOLVED_LINE,
    LockIssue,
    LockProblem,
    _required,
    input_digest,
    lock_content_problem,
    lock_problem,
    parse_lock,
    requirements,
    stray_locks,
    uv_platform,
)

DEFAULT_FOLDERS = ("/opt/wheels", "/opt/pypi-more/files")
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


class IndexUnreachable(UserError):
    """The torch index of a spec cannot be reached from here and no wheel folder replaces it."""



def lock_folders(wheels: tuple[Path, ...]) -> list[Path]:
    """Wheel folders used for locking: WHEELS (or PIP_FIND_LINKS's local folders) like the build, else the
    host's default ones where they exist."""
    if wheels:
        return list(wheels)
    return [Path(p) for p in DEFAULT_FOLDERS if os.path.isdir(p)]



def _torch_is_local(spec: ImageSpec, folders: list[Path], machine: str) -> bool:
    return any(wheel_name_version(w.name) == exact_pin(spec.torch_requirement) and wheel_fits(w.name, spec.python, machine)
               for folder in folders for w in folder.glob("torch-*.whl"))


def _link_folder(spec: ImageSpec, folders: list[Path], into: Path, machine: str) -> str:
    """One find-links folder of symlinks to the local wheels this image may use.

    A local-version build (torch 2.13.0+cpu) satisfies `torch==2.13.0` under PEP 440, so such wheels are left out
    unless the image's requirement names that exact local version."""
    wanted = _required(spec)
    for folder in folders:
        for wheel in folder.glob("*.whl"):
            parsed = wheel_name_version(wheel.name)
            if parsed is None:
                continue
            name, version = parsed
            if "+" in version and wanted.get(name) != version:
                continue
            if wheel_fits(wheel.name, spec.python, machine) and not (into / wheel.name).exists():
                (into / wheel.name).symlink_to(wheel.resolve())
    return str(into)


def _uv(explicit: str | None) -> str:
    for candidate in (explicit or "", shutil.which("uv") or "", str(Path(sys.executable).parent / "uv")):
        if candidate and os.path.isfile(candidate):
            return candidate
    raise UserError("uv not found: install it (`pip install uv`) or set UV=/path/to/uv")


def _index_reachable(url: str) -> bool:
    import urllib.request
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/torch/", timeout=10):
            return True
    except Exception:  # noqa: BLE001 - any failure means: cannot lock from it here
        return False


def compile_lock(target: Target, folders: list[Path], previous: str | None = None, *,
                 env: Mapping[str, str], uv: str | None = None) -> str:
    """The lock text for one platform of an image (header + uv's hashed output); a UserError when it cannot be
    resolved here.

    `previous` (the lock being refreshed) gives uv its pins as preferences, so unchanged inputs keep their pins."""
    spec, platform, machine = target.spec, target.platform, machine_of(target.platform)
    reqs, python_platform = requirements(spec), uv_platform(platform)
    argv = [_uv(uv), "pip", "compile", "-", "--python-version", spec.python, "--python-platform", python_platform,
            "--generate-hashes", "--no-header", "--index-strategy", "unsafe-best-match", "--quiet"]
    links = tempfile.TemporaryDirectory(prefix="torchimages-lock-")
    argv += ["--find-links", _link_folder(spec, folders, Path(links.name), machine)]
    sources = ["PyPI"] + [f"find-links {f}" for f in folders]
    local_build = "+" in spec.torch_requirement and _torch_is_local(spec, folders, machine)
    if spec.torch_index_url and not local_build:
        if not _index_reachable(spec.torch_index_url):
            raise IndexUnreachable(f"{spec.tag}: {spec.torch_requirement} comes from {spec.torch_index_url}, which is not "
                            f"reachable, and no wheel folder holds it; run `make lock IMAGE={spec.tag}` where that "
                            f"index is reachable, or put the torch wheel into WHEELS=<folder>")
        argv += ["--extra-index-url", spec.torch_index_url]
        sources.append(spec.torch_index_url)
    child = dict(env)
    if os.path.isfile(CA_BUNDLE) and not child.get("SSL_CERT_FILE"):
        child["SSL_CERT_FILE"] = CA_BUNDLE
    with links:
        out = Path(links.name) / "out.txt"
        if previous:
            out.write_text(previous, encoding="utf-8")
        proc = subprocess.run([*argv, "--output-file", str(out)], input="\n".join(reqs) + "\n", capture_output=True,
                              text=True, env=child, cwd=ROOT, timeout=600, check=False)
        body = out.read_text(encoding="utf-8") if proc.returncode == 0 else ""
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[:600]
        raise UserError(f"{spec.tag}: uv could not resolve {', '.join(reqs)} for Python {spec.python} on {python_platform}: "
                        f"{detail}; fix the pins in matrix.yaml or the index/wheel folders")
    header = [
        f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.",
        f"{DIGEST_LINE}{input_digest(target)}",
        f"# python: {spec.python}  platform: {python_platform}  resolver: uv pip compile --generate-hashes",
        "# requirements: " + " ".join(reqs),
        "# sources: " + ", ".join(s if not s.startswith("find-links") else "find-links <wheel folder>" for s in sources),
    ]
    text = "\n".join(header) + "\n" + body
    pins = parse_lock(text)
    missing = [p.name for p in pins if not p.hashes]
    if missing:
        raise UserError(f"{spec.tag}: uv produced pins without hashes ({', '.join(missing)}); not writing the lock")
    wrong = lock_content_problem(target, text)
    if wrong:
        raise UserError(f"{spec.tag}: uv's lock for {platform} does not match the spec ({wrong}); not writing it; "
                        f"check the pins in matrix.yaml and the wheel folders")
    return text


def unresolved_stub(target: Target, why: str) -> str:
    """A lock that records why it could not be resolved here: current for check-render, refused by the build."""
    spec = target.spec
    return (f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.\n"
            f"{DIGEST_LINE}{input_digest(target)}\n"
            f"{UNRESOLVED_LINE}{' '.join(why.split())}\n")


def refreshed_line(pins: int, problem: LockProblem | None) -> str:
    """What a lock just written is: current now; the reason it was rewritten is said as the past it is, never
    with the word the check uses for a lock that still needs work."""
    was = {LockIssue.MISSING: "it was missing", LockIssue.STALE: "matrix.yaml or the wheel folders had changed"}
    reason = "forced" if problem is None else was.get(problem.kind, f"the old one was {problem.kind.value}")
    return f"{pins} pins, written and current ({reason})"


def refresh(specs: list[ImageSpec], images: Path, folders: list[Path], *, env: Mapping[str, str],
            uv: str | None = None, force: bool = False, echo: Callable[[str], None] = print) -> list[str]:
    """Write the lock of every platform of every spec whose lock is missing or stale (all with force); returns the
    failures. A lock left from a platform the image no longer has is removed."""
    failures = []
    for target in [target for spec in specs for target in spec.every_target]:
        label = target.lock_label
        problem = lock_problem(target, images)
        if problem is None and not force:
            echo(f"  {label}: current")
            continue
        path = target.lock_path(images)
        if path.exists() and not path.is_file():      # nothing to rewrite in place: a person must remove it
            failures.append(f"{label} is {problem}")
            echo(f"  {label}: FAILED ({problem})")
            continue
        try:        # a damaged or hand-edited lock gives uv no preferences; it is rewritten
            trusted = path.exists() and not force and (problem is None or problem.kind not in CONTENT_ISSUES)
            previous = path.read_text(encoding="utf-8") if trusted else None
        except (OSError, UnicodeDecodeError):
            previous = None
        try:
            text = compile_lock(target, folders, previous, env=env, uv=uv)
        except IndexUnreachable as exc:
            failures.append(str(exc))
            if problem is not None and problem.kind in (LockIssue.MISSING, LockIssue.STALE):
                atomic_write(path, unresolved_stub(target, str(exc)), mode=LOCK_MODE)
            echo(f"  {label}: UNRESOLVED (index unreachable; stub written, builds refuse it)")
            continue
        except UserError as exc:
            failures.append(str(exc))
            echo(f"  {label}: FAILED")
            continue
        atomic_write(path, text, mode=LOCK_MODE)
        echo(f"  {label}: {refreshed_line(len(parse_lock(text)), problem)}")
    for spec in specs:
        for stray in stray_locks(spec, images):
            try:
                stray.unlink()
            except OSError as exc:
                failures.append(f"cannot remove {stray} ({exc.strerror}); remove it by hand")
                continue
            echo(f"  images/{spec.tag}/{stray.name}: removed (not a platform of {spec.tag} any more)")
    return failures


