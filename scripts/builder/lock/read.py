"""Reading and checking a lock: its pins as pip reads them, its input digest, and every way it can differ from
what the target's spec asks for (each a `LockIssue`; callers decide by kind, never by the wording)."""
from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ...errors import UserError
from ...plan.platforms import NATIVE_NAME, is_lock_name, lock_name, machine_of
from ...plan.platforms import UV_PLATFORMS as UV_PLATFORMS
from ...plan.spec import ImageSpec, Target
from ..wheels import exact_pin

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


def input_digest(target: Target) -> str:
    """sha256 over the package inputs of one platform of a spec only (requirements, Python, platform, torch index):
    a change elsewhere in the spec (ENV, labels, base image, a new image beside it) never stales the lock."""
    spec = target.spec
    data = {"requirements": requirements(spec), "python": spec.python, "platform": uv_platform(target.platform),
            "torch_index_url": spec.torch_index_url or ""}
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def canonical(name: str) -> str:
    return str(canonicalize_name(name))



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


def marker_environment(target: Target) -> dict[str, str]:
    """The PEP 508 environment of the image's Python on its platform: what pip evaluates a lock's markers against."""
    full = target.spec.python + ".0"
    return {"python_version": target.spec.python, "python_full_version": full, "implementation_version": full,
            "platform_machine": machine_of(target.platform), "sys_platform": "linux", "platform_system": "Linux",
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


def _marker_problem(entry: LockLine, req: Requirement, target: Target) -> LockProblem | None:
    """A marker pip cannot evaluate, or one that makes pip skip the pin on this image."""
    if req.marker is None:
        return None
    name = canonical(req.name)
    try:
        applies = req.marker.evaluate(marker_environment(target))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return _content_problem(LockIssue.MALFORMED, entry.line, f"{name}: marker {str(req.marker)!r} cannot be evaluated")
    if applies:
        return None
    spec, platform = target.spec, target.platform
    asked = " (the spec asks for it)" if name in _required(spec) else ""
    return _content_problem(LockIssue.MARKER_EXCLUDES, entry.line, f"{name}'s marker {str(req.marker)[:80]!r} is false "
                                                                   f"for Python {spec.python} on {platform}: pip would "
                                                                   f"skip it{asked}")


def _read_pins(target: Target, text: str) -> dict[str, tuple[LockLine, Version]] | LockProblem:
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
        problem = _hash_problem(entry, name) or _marker_problem(entry, req, target)
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


def lock_content_problem(target: Target, text: str) -> LockProblem | None:
    """The first way the pins of a lock differ from what the spec asks for, or None.

    Every line is an exact `name==version` with sha256 hashes; no name twice; no marker that makes pip skip a pin on
    this image; each package of the spec (torch, torchvision, packages, access packages) pinned at the spec's version;
    every other pin needed by a locked package (uv's `# via` annotation): nothing extra at the top level."""
    pins = _read_pins(target, text)
    if isinstance(pins, LockProblem):
        return pins
    required = _required(target.spec)
    return _spec_pin_problem(required, pins) or _extra_pin_problem(required, pins)


def lock_problem(target: Target, images: Path) -> LockProblem | None:
    """Why the lock of one platform of an image cannot be used as it is, or None when it is current and its pins
    are the ones the spec asks for."""
    path = target.lock_path(images)
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
    if header_digest(text) != input_digest(target):
        return LockProblem(LockIssue.STALE, "stale (matrix inputs changed since `make lock`)")
    if UNRESOLVED_LINE in text:
        return LockProblem(LockIssue.UNRESOLVED, "unresolved: " + text.split(UNRESOLVED_LINE, 1)[1].splitlines()[0])
    return lock_content_problem(target, text)



def stray_locks(spec: ImageSpec, images: Path) -> list[Path]:
    """Lock files under images/<tag>/ for a platform the image no longer has."""
    wanted = {lock_name(p) for p in spec.platforms}
    folder = images / spec.tag
    return sorted(p for p in folder.glob("*.lock") if is_lock_name(p.name) and p.name not in wanted and p.is_file()) \
        if folder.is_dir() else []


def check_locks(specs: list[ImageSpec], images: Path, warn: Callable[[str], None]) -> list[str]:
    """`check-render` lines for locks that are missing, stale or left from a dropped platform; an unresolved stub is
    only warned about."""
    problems = []
    for spec in specs:
        for target in spec.every_target:
            problem = lock_problem(target, images)
            if problem is None:
                continue
            if problem.kind is LockIssue.UNRESOLVED:
                warn(f"warning: {target.lock_label} is {problem.detail[:160]}")
                continue
            problems.append(f"{spec.tag}/{target.lock_name} ({problem}; run `make lock IMAGE={spec.tag}`)")
        problems += [f"{spec.tag}/{p.name} (no platform of the image uses it; run `make lock IMAGE={spec.tag}`)"
                     for p in stray_locks(spec, images)]
    return problems



def require_current_lock(target: Target, images: Path) -> None:
    """A UserError naming the problem when one platform's lock cannot be built from (missing, stale, unresolved...)."""
    uv_platform(target.platform)       # a platform no lock exists for (a hand-edited spec.json) is that, not "missing"
    problem = lock_problem(target, images)
    if problem:
        tag = target.spec.tag
        raise UserError(f"{tag}: {target.lock_label} is {problem}: run `make lock IMAGE={tag}` "
                        f"(on a host that reaches the index) and commit it")


