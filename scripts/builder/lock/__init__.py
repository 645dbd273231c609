"""`make lock`: images/<tag>/requirements.lock (linux/amd64) and requirements.<arch>.lock (each other platform of
the image), the complete hashed set an image installs, per Python and platform.

Resolved with `uv pip compile --generate-hashes` for the image's Python on <machine> manylinux_2_28, from PyPI plus the
local wheel folders (a torch build that exists only in a wheel folder, e.g. 2.13.0+cpu, is locked with the hash of
that file). The header records a digest of the spec's requirement inputs; `make check-render` compares it, so a
matrix change without `make lock` fails there. The build installs the lock with `--require-hashes`.

One module per job, each taking a `Target` (an image on one platform): `read` reads and checks a lock file,
`resolve` compiles one with uv, `stage` puts its locked wheels where the build mounts them.
"""
from __future__ import annotations

from ..wheels import wheel_fits
from .read import (
    CONTENT_ISSUES,
    DIGEST_LINE,
    LOCK_MODE,
    MAX_LOCK_BYTES,
    PLATFORM,
    UNRESOLVED_LINE,
    UV_PLATFORMS,
    LockIssue,
    LockLine,
    LockProblem,
    Pin,
    canonical,
    check_locks,
    header_digest,
    input_digest,
    lock_content_problem,
    lock_lines,
    lock_problem,
    marker_environment,
    parse_lock,
    require_current_lock,
    requirements,
    stray_locks,
    uv_platform,
)
from .resolve import (
    CA_BUNDLE,
    DEFAULT_FOLDERS,
    IndexUnreachable,
    _link_folder,
    compile_lock,
    lock_folders,
    refresh,
    unresolved_stub,
)
from .stage import (
    UV_VERSION,
    fetch_platform_wheels,
    find_uv_wheel,
    sha256_file,
    stage_for_build,
    stage_locked_wheels,
    stage_uv_wheel,
)

__all__ = [
    "CA_BUNDLE", "CONTENT_ISSUES", "DEFAULT_FOLDERS", "DIGEST_LINE", "LOCK_MODE", "MAX_LOCK_BYTES", "PLATFORM",
    "UNRESOLVED_LINE", "UV_PLATFORMS", "UV_VERSION", "IndexUnreachable", "LockIssue", "LockLine", "LockProblem", "Pin",
    "_link_folder", "canonical", "check_locks", "compile_lock", "fetch_platform_wheels", "find_uv_wheel",
    "header_digest", "input_digest", "lock_content_problem", "lock_folders", "lock_lines", "lock_problem",
    "marker_environment", "parse_lock", "refresh", "require_current_lock", "requirements", "sha256_file",
    "stage_for_build", "stage_locked_wheels", "stage_uv_wheel", "stray_locks", "unresolved_stub", "uv_platform", "wheel_fits",
]
