"""Known upstream facts (compat.yaml) as typed values: what torch builds exist and what they bundle."""
from __future__ import annotations

import json
from collections.abc import Iterator
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


Problem = tuple[tuple[Any, ...], str]      # (path into the document, what is wrong there)


def _unknown_distro(raw: dict[str, Any], distro: str, path: tuple[Any, ...]) -> list[Problem]:
    return [] if distro in raw["distros"] else [(path, f"unknown distro {distro}; known: {', '.join(raw['distros'])}")]


def _unknown_index(raw: dict[str, Any], index: str, path: tuple[Any, ...]) -> list[Problem]:
    return [] if index in raw["indexes"] else [(path, f"unknown index {index!r}; known: {', '.join(raw['indexes'])}")]


def _cuda_refs(raw: dict[str, Any]) -> Iterator[Problem]:
    for cuda, facts in raw["cuda"].items():
        for i, distro in enumerate(facts["devel_distros"]):
            yield from _unknown_distro(raw, distro, ("cuda", cuda, "devel_distros", i))


def _build_refs(raw: dict[str, Any], version: str, cuda: str, build: dict[str, Any]) -> Iterator[Problem]:
    where = ("torch", version, "builds", cuda)
    yield from _unknown_index(raw, build["index"], where + ("index",))
    if cuda == "cpu":
        return
    missing = [k for k in ("toolkit", "cudnn", "nccl") if not build.get(k)]
    if missing:
        yield where, f"a CUDA build needs {', '.join(missing)} (the versions its wheels bundle)"
    if cuda not in raw["cuda"]:
        yield where, f"CUDA {cuda} is missing from the `cuda:` table; add its toolkit and driver floor"


def _torch_refs(raw: dict[str, Any]) -> Iterator[Problem]:
    for version, rel in raw["torch"].items():
        if rel["pypi_default"] not in rel["builds"]:
            yield ("torch", version, "pypi_default"), (f"{rel['pypi_default']} is not among its builds: "
                                                       f"{', '.join(rel['builds'])}")
        for cuda, build in rel["builds"].items():
            yield from _build_refs(raw, version, cuda, build)


def _platform_refs(raw: dict[str, Any]) -> Iterator[Problem]:
    for name, facts in (raw.get("platforms") or {}).items():
        for i, distro in enumerate(facts.get("distros", [])):
            yield from _unknown_distro(raw, distro, ("platforms", name, "distros", i))
        for distro in facts.get("mirrors", {}):
            yield from _unknown_distro(raw, distro, ("platforms", name, "mirrors", distro))
        for version, builds in (facts.get("torch") or {}).items():
            for cuda, build in builds.items():
                yield from _unknown_index(raw, build["index"], ("platforms", name, "torch", version, cuda, "index"))
    if raw.get("platforms") and "linux/amd64" not in raw["platforms"]:
        yield ("platforms",), ("linux/amd64 is missing: every image defaults to it; add "
                               "`linux/amd64: {arch: amd64, machine: x86_64, wheel_platform: manylinux_2_28_x86_64}`")


def _semantic_problems(doc: Located, name: str) -> list[str]:
    """What a schema cannot say: references between the tables."""
    found = [*_cuda_refs(doc.data), *_torch_refs(doc.data), *_platform_refs(doc.data)]
    return [f"{name}:{doc.line(path)}: {fmt_path(path)}: {message}" for path, message in found]


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
