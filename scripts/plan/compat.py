"""Known upstream facts (compat.yaml) as typed values: what torch builds exist and what they bundle."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from .. import ROOT
from ..errors import MatrixError
from .platforms import PlatformFacts, parse_platforms
from .schema import error_line, explain, fmt_path
from .yamlsafe import Located, load_located

SCHEMA_FILE = ROOT / "schemas" / "compat.schema.json"


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
    platforms: dict[str, PlatformFacts]     # linux/amd64 only when compat.yaml has no `platforms:` section


def parse_compat(raw: dict[str, Any]) -> Compat:
    """Typed facts from a document that already passed `compat_problems`."""
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
        platforms=parse_platforms(raw),
    )


def _schema_problems(doc: Located, name: str) -> list[str]:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    problems = []
    for error in sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc.data),
                        key=lambda e: list(map(str, e.absolute_path))):
        path, line = error_line(error, doc)
        problems.append(f"{name}:{line}: {fmt_path(path)}: {explain(error, doc, path)}")
    return problems


def _semantic_problems(doc: Located, name: str) -> list[str]:
    """What a schema cannot say: references between the tables."""
    raw = doc.data
    problems: list[str] = []

    def add(path: tuple[Any, ...], message: str) -> None:
        problems.append(f"{name}:{doc.line(path)}: {fmt_path(path)}: {message}")

    for cuda, facts in raw["cuda"].items():
        for i, distro in enumerate(facts["devel_distros"]):
            if distro not in raw["distros"]:
                add(("cuda", cuda, "devel_distros", i), f"unknown distro {distro}; known: {', '.join(raw['distros'])}")
    for version, rel in raw["torch"].items():
        if rel["pypi_default"] not in rel["builds"]:
            add(("torch", version, "pypi_default"), f"{rel['pypi_default']} is not among its builds: {', '.join(rel['builds'])}")
        for cuda, build in rel["builds"].items():
            where = ("torch", version, "builds", cuda)
            if build["index"] not in raw["indexes"]:
                add(where + ("index",), f"unknown index {build['index']!r}; known: {', '.join(raw['indexes'])}")
            if cuda != "cpu":
                missing = [k for k in ("toolkit", "cudnn", "nccl") if not build.get(k)]
                if missing:
                    add(where, f"a CUDA build needs {', '.join(missing)} (the versions its wheels bundle)")
                if cuda not in raw["cuda"]:
                    add(where, f"CUDA {cuda} is missing from the `cuda:` table; add its toolkit and driver floor")
    for name, facts in (raw.get("platforms") or {}).items():
        for i, distro in enumerate(facts.get("distros", [])):
            if distro not in raw["distros"]:
                add(("platforms", name, "distros", i), f"unknown distro {distro}; known: {', '.join(raw['distros'])}")
        for distro in facts.get("mirrors", {}):
            if distro not in raw["distros"]:
                add(("platforms", name, "mirrors", distro), f"unknown distro {distro}; known: {', '.join(raw['distros'])}")
        for version, builds in (facts.get("torch") or {}).items():
            for cuda, build in builds.items():
                if build["index"] not in raw["indexes"]:
                    add(("platforms", name, "torch", version, cuda, "index"),
                        f"unknown index {build['index']!r}; known: {', '.join(raw['indexes'])}")
    if raw.get("platforms") and "linux/amd64" not in raw["platforms"]:
        add(("platforms",), "linux/amd64 is missing: every image defaults to it; add "
                            "`linux/amd64: {arch: amd64, machine: x86_64, wheel_platform: manylinux_2_28_x86_64}`")
    return problems


def load_compat(path: Path) -> Compat:
    """Read and validate compat.yaml; every problem is reported with its line, and nothing is guessed."""
    name = path.name
    doc = load_located(path, name)
    if not isinstance(doc.data, dict):
        raise MatrixError([f"{name}:1: expected a mapping with indexes, cuda, distros, torch and packages"])
    problems = _schema_problems(doc, name)
    if not problems:
        problems = _semantic_problems(doc, name)
    if problems:
        raise MatrixError(problems + [f"(compat.yaml is hand-kept in part: fix it, or restore it with `git checkout {name}`)"])
    return parse_compat(doc.data)
