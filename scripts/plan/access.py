"""Access flavors (`access: [jupyter, ssh]` in matrix.yaml): what each adds to an image, its tag suffix, its pins.

The in-image side (launchers, healthcheck, sshd config written at start) lives in rootfs/; the Dockerfile text in
templates/partials/access.j2. This module only decides, from the matrix, what an image gets.
"""
from __future__ import annotations

from collections.abc import Iterable

# In tag order: an image with both is <tag>-jupyter-ssh, whatever order the matrix lists them in.
KINDS = ("jupyter", "ssh")
NAMES = {"jupyter": "JupyterLab", "ssh": "an SSH server"}

# Python packages each access kind installs into the image's venv (pip resolves their dependencies). Every
# version must be in compat.yaml's `packages:` with the Pythons its wheels cover (matrix.check_access).
PACKAGES: dict[str, dict[str, str]] = {
    "jupyter": {"jupyterlab": "4.6.6"},   # requires Python >= 3.10 (PyPI metadata); py3-none-any wheel
    "ssh": {},
}

# Ports inside the container; the launchers take JUPYTER_PORT / SSH_PORT to change them at run time.
PORTS = {"jupyter": 8888, "ssh": 2222}


def normalize(values: Iterable[str] | None) -> tuple[str, ...]:
    """The access kinds in canonical (tag) order; the schema has already rejected unknown kinds and repeats."""
    wanted = set(values or ())
    return tuple(kind for kind in KINDS if kind in wanted)


def tag_suffix(access: Iterable[str]) -> str:
    """'' for none, '-jupyter', '-ssh', '-jupyter-ssh'."""
    return "".join(f"-{kind}" for kind in normalize(access))


def packages(access: Iterable[str]) -> dict[str, str]:
    """name → version of what the access kinds install, sorted by name."""
    pins: dict[str, str] = {}
    for kind in normalize(access):
        pins.update(PACKAGES[kind])
    return dict(sorted(pins.items()))


def labels(access: Iterable[str]) -> dict[str, str]:
    """OCI labels naming the access kinds and their ports."""
    kinds = normalize(access)
    if not kinds:
        return {}
    return {"io.torchimages.access": ",".join(kinds),
            **{f"io.torchimages.{kind}.port": str(PORTS[kind]) for kind in kinds}}
