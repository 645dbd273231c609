"""Known upstream facts (compat.yaml) as typed values: what torch builds exist and what they bundle."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from . import ROOT
from .errors import UserError

COMPAT_FILE = ROOT / "compat.yaml"


@dataclass(frozen=True)
class TorchBuild:
    """One build of a torch release: `cuda` is 'X.Y' or 'cpu'."""

    cuda: str
    index: str            # key into Compat.indexes
    toolkit: str | None
    cudnn: str | None
    nccl: str | None
    local: str            # local version suffix in the requirement ('+cpu'), '' for PyPI builds
    source: str


@dataclass(frozen=True)
class TorchRelease:
    version: str
    python: tuple[str, ...]
    pypi_default: str
    torchvision: str | None
    builds: dict[str, TorchBuild]


@dataclass(frozen=True)
class Distro:
    key: str
    name: str
    base_image: str
    python: str
    codename: str
    mirror: str


@dataclass(frozen=True)
class CudaFacts:
    version: str
    toolkit: str
    driver_min: str
    devel_image: str
    devel_distros: tuple[str, ...]


@dataclass(frozen=True)
class Compat:
    indexes: dict[str, str]
    cuda: dict[str, CudaFacts]
    distros: dict[str, Distro]
    torch: dict[str, TorchRelease]
    packages: dict[str, dict[str, tuple[str, ...]]]


def version_key(version: str) -> tuple[int, ...]:
    """Sort key for dotted versions ('13.2' < '13.10')."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def parse_compat(raw: dict) -> Compat:
    torch = {}
    for version, rel in raw["torch"].items():
        builds = {
            cuda: TorchBuild(
                cuda=cuda,
                index=b["index"],
                toolkit=b.get("toolkit"),
                cudnn=b.get("cudnn"),
                nccl=b.get("nccl"),
                local=b.get("local", ""),
                source=b.get("source", "hand"),
            )
            for cuda, b in rel["builds"].items()
        }
        torch[version] = TorchRelease(version, tuple(rel["python"]), rel["pypi_default"], rel.get("torchvision"), builds)
    return Compat(
        indexes=dict(raw["indexes"]),
        cuda={v: CudaFacts(v, c["toolkit"], c["driver_min"], c["devel_image"], tuple(c["devel_distros"]))
              for v, c in raw["cuda"].items()},
        distros={k: Distro(k, d["name"], d["base_image"], d["python"], d["codename"], d["mirror"])
                 for k, d in raw["distros"].items()},
        torch=torch,
        packages={name: {v: tuple(py) for v, py in versions.items()} for name, versions in raw["packages"].items()},
    )


def load_compat(path: Path = COMPAT_FILE) -> Compat:
    """Read compat.yaml; a broken file is a UserError (it is hand-kept in part)."""
    try:
        return parse_compat(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{path.name}: cannot read the upstream facts ({exc!r}); restore it with `git checkout {path.name}`") from None
