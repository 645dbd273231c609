"""`make lock`: images/<tag>/requirements.lock (linux/amd64) and requirements.<arch>.lock (each other platform of
the image), the complete hashed set an image installs, per Python and platform.

Resolved with `uv pip compile --generate-hashes` for the image's Python on <machine> manylinux_2_28, from PyPI plus the
local wheel folders (a torch build that exists only in a wheel folder, e.g. 2.13.0+cpu, is locked with the hash of
that file). The header records a digest of the spec's requirement inputs; `make check-render` compares it, so a
matrix change without `make lock` fails there. The build installs the lock with `--require-hashes`.
"""
from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .. import ROOT
from ..errors import UserError
from ..fsutil import atomic_write
from ..plan.platforms import NATIVE_NAME, is_lock_name, lock_name, machine_of
from ..plan.spec import ImageSpec, Target
from .wheels import exact_pin, fits_python

# uv's --python-platform per image platform; manylinux_2_28 is what torch's wheels need on both
UV_PLATFORMS = {"linux/amd64": "x86_64-manylinux_2_28", "linux/arm64": "aarch64-manylinux_2_28"}
PLATFORM = UV_PLATFORMS[NATIVE_NAME]
DEFAULT_FOLDERS = ("/opt/wheels", "/opt/pypi-more/files")
DIGEST_LINE = "# input-digest: "
UNRESOLVED_LINE = "# UNRESOLVED: "
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
MAX_LOCK_BYTES = 16 << 20      # the largest lock here is ~100 KiB
LOCK_MODE = 0o644              # readable by everyone: the image copies the lock for its non-root user


def requirements(spec: ImageSpec) -> list[str]:
    """The top-level requirements of one image (what the matrix asks for), sorted after torch."""
    reqs = [spec.torch_requirement]
    if spec.torchvision:
        reqs.append(f"torchvision=={spec.torchvision}")
    reqs += [f"{name}=={version}" for name, version in sorted(spec.packages.items())]
    reqs += [f"{name}=={version}" for name, version in sorted(spec.access_packages.items())]   # e.g. jupyterlab
    return reqs


def uv_platform(platform: str) -> str:
    """uv's --python-platform for an image platform; a UserError for one no lock can be made for."""
    try:
        return UV_PLATFORMS[platform]
    except KeyError:
        raise UserError(f"cannot lock for {platform}: locks exist for {', '.join(UV_PLATFORMS)}; list only those under "
                        f"the image's `platforms:` in matrix.yaml, then `make render`") from None


def input_digest(spec: ImageSpec, platform: str = NATIVE_NAME) -> str:
    """sha256 over the package inputs of one platform of a spec only (requirements, Python, platform, torch index):
    a change elsewhere in the spec (ENV, labels, base image, a new image beside it) never stales the lock."""
    data = {"requirements": requirements(spec), "python": spec.python, "platform": uv_platform(platform),
            "torch_index_url": spec.torch_index_url or ""}
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def lock_path(spec: ImageSpec, images: Path, platform: str = NATIVE_NAME) -> Path:
    """images/<tag>/requirements.lock for linux/amd64, images/<tag>/requirements.<arch>.lock for another platform."""
    return Target(spec, platform).lock_path(images)


def lock_label(spec: ImageSpec, platform: str) -> str:
    """images/<tag>/<lock file>, as messages name it."""
    return Target(spec, platform).lock_label


def canonical(name: str) -> str:
    return str(canonicalize_name(name))


class IndexUnreachable(UserError):
    """The torch index of a spec cannot be reached from here and no wheel folder replaces it."""


@dataclass(frozen=True)
class Pin:
    name: str        # canonical
    version: str
    hashes: tuple[str, ...]


def parse_lock(text: str) -> list[Pin]:
    """The exact pins of a lock (name==version and its sha256 hashes), read as pip reads its lines."""
    pins: list[Pin] = []
    for entry in lock_lines(text):
        try:
            req = Requirement(entry.text)
        except InvalidRequirement:
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator in ("==", "==="):
            hashes = tuple(m.group(1) for m in map(SHA256.match, entry.hashes) if m)
            pins.append(Pin(canonical(req.name), specs[0].version, hashes))
    return pins


def header_digest(text: str) -> str | None:
    """The input digest a lock was resolved for (its header line), None when it has none."""
    for line in text.splitlines():
        if line.startswith(DIGEST_LINE):
            return line[len(DIGEST_LINE):].strip()
        if line and not line.startswith("#"):
            break
    return None


class LockIssue(enum.Enum):
    """What is wrong with a lock; callers decide by kind, never by the wording."""

    MISSING = "missing"
    NOT_A_FILE = "not a file"
    NOT_UTF8 = "not UTF-8"
    UNREADABLE = "unreadable"
    STALE = "stale"
    UNRESOLVED = "unresolved"
    MALFORMED = "malformed"            # a line that is no requirement, an option make lock never writes
    NOT_EXACT = "not an exact pin"     # >=, a wildcard, a URL: pip could install something else
    NO_HASH = "no hash"                # a pin without a sha256 (the build installs with --require-hashes)
    DUPLICATE = "duplicate pin"
    MISSING_PIN = "missing pin"        # a package the spec asks for is not pinned
    WRONG_PIN = "wrong pin"            # ... or pinned at another version than the spec's
    EXTRA_PIN = "extra pin"            # a top-level pin the spec does not ask for and no locked package needs
    MARKER_EXCLUDES = "marker excludes"  # an environment marker makes pip skip the pin on this image


# Kinds `make lock` rewrites from scratch: the file's pins are not trusted as uv's preferences.
CONTENT_ISSUES = frozenset({LockIssue.MALFORMED, LockIssue.NOT_EXACT, LockIssue.NO_HASH, LockIssue.DUPLICATE,
                            LockIssue.MISSING_PIN, LockIssue.WRONG_PIN, LockIssue.EXTRA_PIN, LockIssue.MARKER_EXCLUDES})


@dataclass(frozen=True)
class LockProblem:
    kind: LockIssue
    detail: str          # what a person reads: the kind, and for a content problem the line and the pin

    def __str__(self) -> str:
        return self.detail


@dataclass(frozen=True)
class LockLine:
    """One requirement of a lock as pip reads it: the logical line (continuations joined) and its `# via` names."""

    line: int
    text: str
    hashes: tuple[str, ...]
    options: tuple[str, ...]          # any other option on the line (make lock writes none)
    via: tuple[str, ...]


SHA256 = re.compile(r"^--hash=sha256:([0-9a-f]{64})$")


def _strip_comment(line: str) -> str:
    """pip's rule: a `#` at the start of a line or after whitespace starts a comment."""
    match = re.search(r"(^|\s)#", line)
    return line[:match.start()] if match else line


def lock_lines(text: str) -> list[LockLine]:
    """The requirement lines of a lock, as pip reads them, each with its `# via` annotation (uv's)."""
    entries: list[dict[str, object]] = []
    pending: list[str] = []
    start = 0
    in_via = False
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending and stripped.startswith("#"):
            comment = stripped.lstrip("#").strip()
            if entries and comment.startswith("via"):
                names = comment[3:].split()
                entries[-1]["via"] = [*entries[-1]["via"], *names]   # type: ignore[misc]
                in_via = not names
            elif entries and in_via and comment and raw.lstrip().startswith("#   "):
                entries[-1]["via"] = [*entries[-1]["via"], *comment.split()]   # type: ignore[misc]
            else:
                in_via = False
            continue
        in_via = False
        body = _strip_comment(raw)
        if not pending:
            start = number
        continued = body.rstrip().endswith("\\")
        pending.append(body.rstrip()[:-1] if continued else body)
        if continued:
            continue
        logical, pending = " ".join(pending).strip(), []
        if logical:
            entries.append({"line": start, "text": logical, "via": []})
    if pending and " ".join(pending).strip():
        entries.append({"line": start, "text": " ".join(pending).strip(), "via": []})
    result = []
    for entry in entries:
        words = str(entry["text"]).split()
        first_option = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
        requirement, options = " ".join(words[:first_option]), words[first_option:]
        hashes = tuple(w for w in options if w.startswith("--hash="))
        result.append(LockLine(int(entry["line"]), requirement, hashes,    # type: ignore[call-overload]
                               tuple(w for w in options if not w.startswith("--hash=")),
                               tuple(str(v) for v in entry["via"])))    # type: ignore[attr-defined]
    return result


def marker_environment(spec: ImageSpec, platform: str) -> dict[str, str]:
    """The PEP 508 environment of the image's Python on `platform`: what pip evaluates a lock's markers against."""
    full = spec.python + ".0"
    return {"python_version": spec.python, "python_full_version": full, "implementation_version": full,
            "platform_machine": machine_of(platform), "sys_platform": "linux", "platform_system": "Linux",
            "os_name": "posix", "platform_python_implementation": "CPython", "implementation_name": "cpython",
            "platform_release": "", "platform_version": "", "extra": ""}


def _required(spec: ImageSpec) -> dict[str, str]:
    """canonical name → the exact version the spec asks for."""
    return dict(exact_pin(r) for r in requirements(spec))


def _content_problem(kind: LockIssue, where: int | None, what: str) -> LockProblem:
    return LockProblem(kind, f"not what the spec asks for: {kind.value}" + (f", line {where}" if where else "") +
                       f": {what}")


def _exact_requirement(entry: LockLine) -> tuple[Requirement, Version] | LockProblem:
    """The line's requirement and its exact version, or the problem that makes it none."""
    shown = " ".join(entry.text.split())[:120]
    if entry.options:
        return _content_problem(LockIssue.MALFORMED, entry.line, f"option {entry.options[0][:60]!r} (make lock writes none)")
    if not entry.text:
        return _content_problem(LockIssue.MALFORMED, entry.line, "--hash with no requirement before it")
    try:
        req = Requirement(entry.text)
    except InvalidRequirement:
        return _content_problem(LockIssue.MALFORMED, entry.line, f"{shown!r} is not a requirement")
    specs = list(req.specifier)
    if req.url or len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
        return _content_problem(LockIssue.NOT_EXACT, entry.line, f"{shown!r} is not an exact name==version pin")
    try:
        return req, Version(specs[0].version)
    except InvalidVersion:
        return _content_problem(LockIssue.MALFORMED, entry.line, f"{shown!r}: {specs[0].version!r} is not a version")


def _hash_problem(entry: LockLine, name: str) -> LockProblem | None:
    if not entry.hashes:
        shown = " ".join(entry.text.split())[:120]
        return _content_problem(LockIssue.NO_HASH, entry.line, f"{shown} has no --hash (the build installs with "
                                                               f"--require-hashes)")
    bad = next((h for h in entry.hashes if not SHA256.match(h)), None)
    return _content_problem(LockIssue.NO_HASH, entry.line, f"{name}: {bad[:40]!r} is not a sha256 hash") if bad else None


def _marker_problem(entry: LockLine, req: Requirement, spec: ImageSpec, platform: str) -> LockProblem | None:
    """A marker pip cannot evaluate, or one that makes pip skip the pin on this image."""
    if req.marker is None:
        return None
    name = canonical(req.name)
    try:
        applies = req.marker.evaluate(marker_environment(spec, platform))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return _content_problem(LockIssue.MALFORMED, entry.line, f"{name}: marker {str(req.marker)!r} cannot be evaluated")
    if applies:
        return None
    asked = " (the spec asks for it)" if name in _required(spec) else ""
    return _content_problem(LockIssue.MARKER_EXCLUDES, entry.line, f"{name}'s marker {str(req.marker)[:80]!r} is false "
                                                                   f"for Python {spec.python} on {platform}: pip would "
                                                                   f"skip it{asked}")


def _read_pins(spec: ImageSpec, text: str, platform: str) -> dict[str, tuple[LockLine, Version]] | LockProblem:
    """canonical name → (its line, its version) for every line of the lock, or the first line's problem."""
    pins: dict[str, tuple[LockLine, Version]] = {}
    for entry in lock_lines(text):
        parsed = _exact_requirement(entry)
        if isinstance(parsed, LockProblem):
            return parsed
        req, version = parsed
        name = canonical(req.name)
        if name in pins:
            return _content_problem(LockIssue.DUPLICATE, entry.line, f"{name} is pinned twice (lines "
                                                                     f"{pins[name][0].line} and {entry.line}); pip "
                                                                     f"refuses a double requirement")
        problem = _hash_problem(entry, name) or _marker_problem(entry, req, spec, platform)
        if problem:
            return problem
        pins[name] = (entry, version)
    return pins


def _spec_pin_problem(required: dict[str, str], pins: dict[str, tuple[LockLine, Version]]) -> LockProblem | None:
    """A package the spec asks for that is not pinned, or pinned at another version (the local part included)."""
    for name, wanted in required.items():
        if name not in pins:
            return _content_problem(LockIssue.MISSING_PIN, None, f"{name}=={wanted} (the spec asks for it) is not pinned")
        entry, version = pins[name]
        if version != Version(wanted) or (version.local or "") != (Version(wanted).local or ""):
            return _content_problem(LockIssue.WRONG_PIN, entry.line, f"{name} is pinned {version}; the spec asks for "
                                                                     f"{name}=={wanted}")
    return None


def _extra_pin_problem(required: dict[str, str], pins: dict[str, tuple[LockLine, Version]]) -> LockProblem | None:
    """A pin that hangs off none of the spec's packages through uv's `# via` annotations."""
    needed = set(required)
    grown = True
    while grown:
        more = {n for n, (e, _) in pins.items() if n not in needed and any(canonical(v) in needed for v in e.via
                                                                           if not v.startswith("-"))}
        grown = bool(more)
        needed |= more
    extra = next(((n, e) for n, (e, _) in pins.items() if n not in needed), None)
    if extra is None:
        return None
    name, entry = extra
    return _content_problem(LockIssue.EXTRA_PIN, entry.line, f"{name} is pinned, but the spec does not ask for it and "
                                                             f"no locked package needs it (no `# via` of one)")


def lock_content_problem(spec: ImageSpec, text: str, platform: str = NATIVE_NAME) -> LockProblem | None:
    """The first way the pins of a lock differ from what the spec asks for, or None.

    Every line is an exact `name==version` with sha256 hashes; no name twice; no marker that makes pip skip a pin on
    this image; each package of the spec (torch, torchvision, packages, access packages) pinned at the spec's version;
    every other pin needed by a locked package (uv's `# via` annotation): nothing extra at the top level."""
    pins = _read_pins(spec, text, platform)
    if isinstance(pins, LockProblem):
        return pins
    required = _required(spec)
    return _spec_pin_problem(required, pins) or _extra_pin_problem(required, pins)


def lock_problem(spec: ImageSpec, images: Path, platform: str = NATIVE_NAME) -> LockProblem | None:
    """Why the lock of one platform of an image cannot be used as it is, or None when it is current and its pins
    are the ones the spec asks for."""
    path = lock_path(spec, images, platform)
    if not path.exists():
        return LockProblem(LockIssue.MISSING, "missing")
    if not path.is_file():
        return LockProblem(LockIssue.NOT_A_FILE, "not a file (a folder or other non-file stands there: remove it)")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_LOCK_BYTES + 1)
        if len(raw) > MAX_LOCK_BYTES:
            return LockProblem(LockIssue.MALFORMED, f"malformed: over {MAX_LOCK_BYTES >> 20} MiB, no lock is "
                                                    f"(`make lock` rewrites it)")
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return LockProblem(LockIssue.NOT_UTF8, "not UTF-8 text (damaged: `make lock` rewrites it)")
    except OSError as exc:
        return LockProblem(LockIssue.UNREADABLE, f"unreadable ({exc.strerror}; check its permissions)")
    if header_digest(text) != input_digest(spec, platform):
        return LockProblem(LockIssue.STALE, "stale (matrix inputs changed since `make lock`)")
    if UNRESOLVED_LINE in text:
        return LockProblem(LockIssue.UNRESOLVED, "unresolved: " + text.split(UNRESOLVED_LINE, 1)[1].splitlines()[0])
    return lock_content_problem(spec, text, platform)


def lock_folders(wheels: tuple[Path, ...]) -> list[Path]:
    """Wheel folders used for locking: WHEELS (or PIP_FIND_LINKS's local folders) like the build, else the
    host's default ones where they exist."""
    if wheels:
        return list(wheels)
    return [Path(p) for p in DEFAULT_FOLDERS if os.path.isdir(p)]


def _wheel_name_version(filename: str) -> tuple[str, str] | None:
    """(canonical name, version as written) of a wheel file name; None for a name that is not a wheel's."""
    try:
        name, _, _, _ = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return str(name), filename.split("-")[1]


def wheel_fits(filename: str, python: str, machine: str = "x86_64") -> bool:
    """A wheel this image's Python on `machine` Linux can install: cpXY, abi3 or pure; manylinux <machine> or any."""
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return False
    plat_ok = any(t.platform == "any" or (t.platform.endswith(machine) and "linux" in t.platform) for t in tags)
    return plat_ok and fits_python(tags, python)


def _torch_is_local(spec: ImageSpec, folders: list[Path], machine: str) -> bool:
    return any(_wheel_name_version(w.name) == exact_pin(spec.torch_requirement) and wheel_fits(w.name, spec.python, machine)
               for folder in folders for w in folder.glob("torch-*.whl"))


def _link_folder(spec: ImageSpec, folders: list[Path], into: Path, machine: str) -> str:
    """One find-links folder of symlinks to the local wheels this image may use.

    A local-version build (torch 2.13.0+cpu) satisfies `torch==2.13.0` under PEP 440, so such wheels are left out
    unless the image's requirement names that exact local version."""
    wanted = _required(spec)
    for folder in folders:
        for wheel in folder.glob("*.whl"):
            parsed = _wheel_name_version(wheel.name)
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


def compile_lock(spec: ImageSpec, folders: list[Path], previous: str | None = None, *,
                 env: Mapping[str, str], uv: str | None = None, platform: str = NATIVE_NAME) -> str:
    """The lock text for one platform of an image (header + uv's hashed output); a UserError when it cannot be
    resolved here.

    `previous` (the lock being refreshed) gives uv its pins as preferences, so unchanged inputs keep their pins."""
    reqs = requirements(spec)
    target, machine = uv_platform(platform), machine_of(platform)
    argv = [_uv(uv), "pip", "compile", "-", "--python-version", spec.python, "--python-platform", target,
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
        raise UserError(f"{spec.tag}: uv could not resolve {', '.join(reqs)} for Python {spec.python} on {target}: "
                        f"{detail}; fix the pins in matrix.yaml or the index/wheel folders")
    header = [
        f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.",
        f"{DIGEST_LINE}{input_digest(spec, platform)}",
        f"# python: {spec.python}  platform: {target}  resolver: uv pip compile --generate-hashes",
        "# requirements: " + " ".join(reqs),
        "# sources: " + ", ".join(s if not s.startswith("find-links") else "find-links <wheel folder>" for s in sources),
    ]
    text = "\n".join(header) + "\n" + body
    pins = parse_lock(text)
    missing = [p.name for p in pins if not p.hashes]
    if missing:
        raise UserError(f"{spec.tag}: uv produced pins without hashes ({', '.join(missing)}); not writing the lock")
    wrong = lock_content_problem(spec, text, platform)
    if wrong:
        raise UserError(f"{spec.tag}: uv's lock for {platform} does not match the spec ({wrong}); not writing it; "
                        f"check the pins in matrix.yaml and the wheel folders")
    return text


def unresolved_stub(spec: ImageSpec, why: str, platform: str = NATIVE_NAME) -> str:
    """A lock that records why it could not be resolved here: current for check-render, refused by the build."""
    return (f"# GENERATED by `make lock` for {spec.image} - DO NOT EDIT; run `make lock IMAGE={spec.tag}` to refresh.\n"
            f"{DIGEST_LINE}{input_digest(spec, platform)}\n"
            f"{UNRESOLVED_LINE}{' '.join(why.split())}\n")


def refresh(specs: list[ImageSpec], images: Path, folders: list[Path], *, env: Mapping[str, str],
            uv: str | None = None, force: bool = False, echo: Callable[[str], None] = print) -> list[str]:
    """Write the lock of every platform of every spec whose lock is missing or stale (all with force); returns the
    failures. A lock left from a platform the image no longer has is removed."""
    failures = []
    for spec, platform in [(one, platform) for one in specs for platform in one.platforms]:
        label = lock_label(spec, platform)
        problem = lock_problem(spec, images, platform)
        if problem is None and not force:
            echo(f"  {label}: current")
            continue
        path = lock_path(spec, images, platform)
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
            text = compile_lock(spec, folders, previous, env=env, uv=uv, platform=platform)
        except IndexUnreachable as exc:
            failures.append(str(exc))
            if problem is not None and problem.kind in (LockIssue.MISSING, LockIssue.STALE):
                atomic_write(path, unresolved_stub(spec, str(exc), platform), mode=LOCK_MODE)
            echo(f"  {label}: UNRESOLVED (index unreachable; stub written, builds refuse it)")
            continue
        except UserError as exc:
            failures.append(str(exc))
            echo(f"  {label}: FAILED")
            continue
        atomic_write(path, text, mode=LOCK_MODE)
        echo(f"  {label}: {len(parse_lock(text))} pins ({problem or 'refreshed'})")
    for spec in specs:
        for stray in stray_locks(spec, images):
            try:
                stray.unlink()
            except OSError as exc:
                failures.append(f"cannot remove {stray} ({exc.strerror}); remove it by hand")
                continue
            echo(f"  images/{spec.tag}/{stray.name}: removed (not a platform of {spec.tag} any more)")
    return failures


def stray_locks(spec: ImageSpec, images: Path) -> list[Path]:
    """Lock files under images/<tag>/ for a platform the image no longer has."""
    wanted = {lock_name(p) for p in spec.platforms}
    folder = images / spec.tag
    return sorted(p for p in folder.glob("*.lock") if is_lock_name(p.name) and p.name not in wanted and p.is_file()) \
        if folder.is_dir() else []


def stage_locked_wheels(spec: ImageSpec, lock_text: str, folders: list[Path], target: Path,
                        machine: str = "x86_64", warn: Callable[[str], None] | None = None,
                        label: str = "the lock") -> tuple[list[str], bool]:
    """Hardlink into `target` the local wheels whose name, version and sha256 match the lock.

    A local wheel of a locked name and version whose sha256 the lock does not list is not staged, and `warn` says so
    (one line per wheel, unless another wheel covered that pin): the build then downloads the locked file.
    Returns (staged file names, whether every pin is covered: then the build can run offline)."""
    pins = {p.name: p for p in parse_lock(lock_text)}
    covered: set[str] = set()
    mismatched: list[tuple[str, Path, str]] = []
    staged = []
    target.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            parsed = _wheel_name_version(wheel.name)
            if parsed is None:
                continue
            name, version = parsed
            pin = pins.get(name)
            if not pin or pin.version != version or not wheel_fits(wheel.name, spec.python, machine) \
                    or name in covered:
                continue
            digest = sha256_file(wheel)
            if digest not in pin.hashes:
                mismatched.append((name, wheel, digest))
                continue
            dest = target / wheel.name
            if not dest.exists():
                try:
                    os.link(wheel, dest)
                except OSError:
                    shutil.copy2(wheel, dest)
            covered.add(name)
            staged.append(wheel.name)
    for name, wheel, digest in mismatched:
        if warn is not None and name not in covered:
            warn(f"warning: {wheel}: its sha256 {digest[:16]}... is not one of the hashes {label} pins for "
                 f"{name}=={pins[name].version}; not staged (the build fetches the locked file from the index, or "
                 f"fails offline); if this wheel is the one to build with, run `make lock IMAGE={spec.tag}`")
    return staged, covered == set(pins)


_HASH_CACHE: dict[tuple[str, int, float], str] = {}


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file (cached by path, size and mtime: the wheel folders hold GBs)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime)
    if key not in _HASH_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        _HASH_CACHE[key] = digest.hexdigest()
    return _HASH_CACHE[key]


def check_locks(specs: list[ImageSpec], images: Path, warn: Callable[[str], None]) -> list[str]:
    """`check-render` lines for locks that are missing, stale or left from a dropped platform; an unresolved stub is
    only warned about."""
    problems = []
    for spec in specs:
        for platform in spec.platforms:
            problem = lock_problem(spec, images, platform)
            if problem is None:
                continue
            if problem.kind is LockIssue.UNRESOLVED:
                warn(f"warning: {lock_label(spec, platform)} is {problem.detail[:160]}")
                continue
            problems.append(f"{spec.tag}/{lock_name(platform)} ({problem}; run `make lock IMAGE={spec.tag}`)")
        problems += [f"{spec.tag}/{p.name} (no platform of the image uses it; run `make lock IMAGE={spec.tag}`)"
                     for p in stray_locks(spec, images)]
    return problems


UV_VERSION = "0.13.9"      # must equal the uv wheel templates/partials/builder.j2 installs (a test checks)


def require_current_lock(spec: ImageSpec, images: Path, platform: str) -> None:
    """A UserError naming the problem when one platform's lock cannot be built from (missing, stale, unresolved...)."""
    uv_platform(platform)       # a platform no lock exists for (a hand-edited spec.json) is that, not "missing"
    problem = lock_problem(spec, images, platform)
    if problem:
        raise UserError(f"{spec.tag}: {lock_label(spec, platform)} is {problem}: run `make lock IMAGE={spec.tag}` "
                        f"(on a host that reaches the index) and commit it")


def stage_for_build(spec: ImageSpec, images: Path, folders: list[Path], target: Path,
                    uv_cache: Path, platform: str = NATIVE_NAME,
                    warn: Callable[[str], None] | None = None) -> tuple[list[str], bool]:
    """`make build`'s hook for one platform: refuse a missing/stale/unresolved lock; stage its locked wheels and
    uv's wheel for that machine.

    Returns (staged wheel names, offline): offline when the folders hold every locked wheel."""
    if platform not in spec.platforms:
        raise UserError(f"{spec.tag} is not built for {platform} (its platforms: {', '.join(spec.platforms)})")
    require_current_lock(spec, images, platform)
    machine = machine_of(platform)
    staged, covered = stage_locked_wheels(spec, lock_path(spec, images, platform).read_text(encoding="utf-8"),
                                          folders, target, machine, warn=warn, label=lock_label(spec, platform))
    uv_wheel = find_uv_wheel(folders, uv_cache, machine)
    dest = target / uv_wheel.name
    if not dest.exists():
        shutil.copy2(uv_wheel, dest)
    staged.append(uv_wheel.name)
    return staged, covered


def fetch_platform_wheels(spec: ImageSpec, images: Path, platform: str, cache: Path, *,
                          env: Mapping[str, str]) -> Path:
    """Download the wheels of one platform's lock natively, every hash checked, into cache/wheels-<arch>, and return
    that folder. An emulated build then installs offline from it instead of downloading GBs under the emulator.
    Files already there are kept (pip reuses a file whose hash matches)."""
    require_current_lock(spec, images, platform)    # never GBs of downloads for a lock the build then refuses
    machine = machine_of(platform)
    target = cache / f"wheels-{machine}"
    # pip does not widen --platform to older manylinux tags as an installer on that machine would: list them
    platforms = [w for v in range(17, 29) for w in ("--platform", f"manylinux_2_{v}_{machine}")]
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes",
            *platforms, "--platform", f"manylinux2014_{machine}", "--implementation", "cp", "--python-version", spec.python,
            "--progress-bar", "off", "--quiet", "-r", str(lock_path(spec, images, platform)), "-d", str(target)]
    if spec.torch_index_url:
        argv += ["--extra-index-url", spec.torch_index_url]
    child = dict(env)
    if os.path.isfile(CA_BUNDLE) and not child.get("PIP_CERT"):
        child["PIP_CERT"] = CA_BUNDLE
    try:
        target.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(argv, capture_output=True, text=True, env=child, timeout=1800, check=False)
    except OSError as exc:
        raise UserError(f"cannot fetch the {platform} wheels into {target} ({exc.strerror}); check free space and "
                        f"permissions of BUILD_DIR") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"fetching the {platform} wheels of {spec.tag} took over 30 min; check the network, or put "
                        f"them into WHEELS=<folder>") from None
    if proc.returncode != 0:
        detail = " ".join((proc.stderr or proc.stdout).split())[-500:]
        raise UserError(f"cannot fetch the {platform} wheels of {lock_label(spec, platform)}: {detail}; check the "
                        f"network, or put the wheels into WHEELS=<folder>")
    return target


def find_uv_wheel(folders: list[Path], uv_cache: Path, machine: str = "x86_64") -> Path:
    """The uv wheel for `machine` the Dockerfile installs uv from: a wheel folder's, else one downloaded once into
    uv_cache (BUILD_DIR/cache/uv)."""
    def ours(wheel: Path) -> bool:
        return "manylinux" in wheel.name and wheel.name.endswith(f"_{machine}.whl")

    for folder in [*folders, uv_cache]:
        for wheel in sorted(folder.glob(f"uv-{UV_VERSION}-*.whl")):
            if ours(wheel):
                return wheel
    try:
        uv_cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {uv_cache} ({exc.strerror}); point BUILD_DIR at a writable folder") from None
    proc = subprocess.run([sys.executable, "-m", "pip", "download", f"uv=={UV_VERSION}", "--no-deps", "--only-binary",
                           ":all:", "--platform", f"manylinux_2_17_{machine}", "-d", str(uv_cache)],
                          capture_output=True, text=True, timeout=300, check=False)
    found = [w for w in sorted(uv_cache.glob(f"uv-{UV_VERSION}-*.whl")) if ours(w)]
    if proc.returncode != 0 or not found:
        raise UserError(f"no uv {UV_VERSION} wheel for {machine}: none in the wheel folders and `pip download uv=={UV_VERSION}` "
                        f"failed ({' '.join(proc.stderr.split()[-12:])}); put the uv wheel into WHEELS=<folder>")
    return found[0]
