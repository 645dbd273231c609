"""matrix.yaml + compat.yaml → validated ImageSpecs. Every problem is collected, with its line and the valid choices.

One validator per axis (torch, cuda, flavor, distro, python, packages, access, platforms); `resolve` runs them and assembles the
spec only when none objected. Only `render` (and `list`, `check-render`) call `load_matrix`: every later stage
reads images/<tag>/spec.json through `render.load_rendered`.
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jsonschema

from .. import ROOT
from ..errors import MatrixError
from ..versions import version_key
from . import access as access_kinds
from .compat import Compat, CudaFacts, Distro, TorchBuild, TorchRelease, load_compat
from .platforms import DEFAULT_PLATFORMS, check_platforms
from .schema import branch_error, error_line, explain, fmt_path
from .spec import TAG_GRAMMAR, Flavor, ImageSpec, make_tag
from .yamlsafe import Located, load_located

SCHEMA_FILE = ROOT / "schemas" / "matrix.schema.json"
AXES = ("torch", "cuda", "flavor", "distro", "python")


@dataclass(frozen=True)
class Entry:
    """One image request after axes expansion, before validation."""

    where: tuple[Any, ...]        # path into the document, for the line number
    label: str                    # how messages name it: images[3] or images[0] (torch 2.15.0, ...)
    values: dict[str, Any]


def _choices(values: list[str]) -> str:
    return ", ".join(values) if values else "none"


def _schema_problems(doc: Located, name: str) -> list[str]:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
        best = branch_error(error)
        path, line = error_line(best, doc)
        problems.append(f"{name}:{line}: {fmt_path(path)}: {explain(best, doc, path)}")
    return problems


# ---- one validator per axis: (value, context) → (resolved value or None, problems) ----

def check_torch(version: str, compat: Compat) -> tuple[TorchRelease | None, list[str]]:
    release = compat.torch.get(version)
    if release is None:
        known = sorted(compat.torch, key=version_key, reverse=True)
        return None, [f"unknown torch version {version}; known: {_choices(known)} (add it to compat.yaml with `make compat`)"]
    return release, []


def check_cuda(cuda: str, release: TorchRelease, compat: Compat) -> tuple[tuple[str, TorchBuild] | None, list[str]]:
    resolved = release.pypi_default if cuda == "pypi" else cuda
    build = release.builds.get(resolved)
    if build is None:
        avail = [f"{c} (PyPI)" if c == release.pypi_default else c
                 for c in sorted(release.builds, key=lambda c: (c == "cpu", version_key(c)))]
        return None, [f"torch {release.version} has no CUDA {resolved} build; available: {_choices(avail)}"]
    if resolved != "cpu" and resolved not in compat.cuda:
        return None, [f"CUDA {resolved} is missing from the `cuda:` table of compat.yaml; add its toolkit and driver floor"]
    return (resolved, build), []


def check_flavor(flavor: str, cuda: str | None) -> list[str]:
    if cuda is not None and (cuda == "cpu") != (flavor == "cpu"):
        return [f"flavor {flavor} does not go with cuda {cuda}: use flavor cpu with cuda cpu, and runtime or devel "
                f"with a CUDA version"]
    return []


def check_distro(key: str, compat: Compat) -> tuple[Distro | None, list[str]]:
    distro = compat.distros.get(key)
    if distro is None:
        return None, [f"unknown distro {key}; known: {_choices(sorted(compat.distros))}"]
    return distro, []


def check_python(wanted: str, distro: Distro, release: TorchRelease | None, compat: Compat) -> tuple[str, list[str]]:
    python = distro.python if wanted == "distro" else wanted
    problems = []
    if python != distro.python:
        others = [f"{d.key} ({d.python})" for d in compat.distros.values() if d.python == python]
        problems.append(f"{distro.key} ships Python {distro.python}, not {python}; images use the distro's Python: "
                        f"choose a distro that ships {python}: {_choices(others)}, or python: distro")
    if release is not None and python not in release.python:
        fits = [f"{d.key} ({d.python})" for d in compat.distros.values() if d.python in release.python]
        problems.append(f"torch {release.version} has no wheel for Python {python} ({distro.key}'s Python); it supports "
                        f"{_choices(list(release.python))}: choose a distro among {_choices(fits)}")
    return python, problems


def check_devel(flavor: str, cuda_facts: CudaFacts | None, distro: Distro) -> list[str]:
    if flavor == "devel" and cuda_facts is not None and distro.key not in cuda_facts.devel_distros:
        tags = [cuda_facts.devel_image.format(distro=d) for d in cuda_facts.devel_distros]
        return [f"NVIDIA publishes no devel image for CUDA {cuda_facts.version} on {distro.key}; available: "
                f"{_choices(tags)} (or use flavor runtime on {distro.key})"]
    return []


def check_packages(packages: dict[str, str], python: str, compat: Compat) -> list[str]:
    problems = []
    for name, version in sorted(packages.items()):
        known = compat.packages.get(name, {})
        if version not in known:
            problems.append(f"{name} {version} is not in compat.yaml; known: "
                            f"{_choices(sorted(known, key=version_key, reverse=True))}")
        elif python not in known[version]:
            fits = [ver for ver, pys in known.items() if python in pys]
            problems.append(f"{name} {version} has no wheel for Python {python}; versions for {python}: {_choices(fits)} "
                            f"(set packages: {{{name}: \"...\"}} on this entry)")
    return problems


def check_access(access: tuple[str, ...], python: str, compat: Compat) -> list[str]:
    """Every package an access kind installs must be a known version in compat.yaml with a wheel for the image's Python."""
    problems = []
    for name, version in access_kinds.packages(access).items():
        known = compat.packages.get(name, {})
        if version not in known:
            problems.append(f"access needs {name} {version}, which is not in compat.yaml's packages; add it with the "
                            f"Pythons its wheels cover (known: {_choices(sorted(known, key=version_key, reverse=True))})")
        elif python not in known[version]:
            problems.append(f"access: {name} {version} does not support Python {python} (it covers "
                            f"{_choices(list(known[version]))}); choose a distro with one of those Pythons, or drop "
                            f"`jupyter` from access")
    return problems


def check_net_plugin(net_plugin: str | None, cuda: str | None) -> list[str]:
    """A site's NCCL net plugin belongs in a CUDA image: a CPU image has no NCCL to load it."""
    if net_plugin and not cuda:
        return [f"net_plugin {net_plugin} is for CUDA images (NCCL loads it); a CPU image has no NCCL: remove it"]
    return []


def check_tag(tag: str) -> list[str]:
    if not re.match(TAG_GRAMMAR, tag):
        return [f"the tag {tag!r} is not a valid Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}); "
                f"fix the distro or version keys in compat.yaml"]
    return []


@dataclass(frozen=True)
class Axes:
    """What one entry's axes resolved to once every validator agreed."""

    release: TorchRelease
    cuda: str                      # X.Y or "cpu"
    build: TorchBuild
    cuda_facts: CudaFacts | None   # None for a CPU build
    distro: Distro
    python: str


def check_axes(v: dict[str, Any], compat: Compat) -> tuple[Axes | None, list[str]]:
    """Run every axis validator; the resolved axes only when none objected."""
    release, problems = check_torch(v["torch"], compat)
    cuda_build: tuple[str, TorchBuild] | None = None
    if release is not None:
        cuda_build, found = check_cuda(v["cuda"], release, compat)
        problems += found
    cuda = cuda_build[0] if cuda_build else (None if v["cuda"] == "pypi" else v["cuda"])
    problems += check_flavor(v["flavor"], cuda)
    distro, found = check_distro(v["distro"], compat)
    problems += found
    if distro is None or release is None or cuda_build is None:
        return None, problems
    python, found = check_python(v["python"], distro, release, compat)
    problems += found
    cuda, build = cuda_build
    cuda_facts = compat.cuda.get(cuda) if cuda != "cpu" else None
    problems += check_devel(v["flavor"], cuda_facts, distro)
    problems += check_packages(v["packages"], python, compat)
    problems += check_access(v["access"], python, compat)
    problems += check_net_plugin(v.get("net_plugin"), None if cuda == "cpu" else cuda)
    problems += check_platforms(compat.platforms, list(v.get("platforms", DEFAULT_PLATFORMS)), torch=release.version, cuda=cuda,
                                index=build.index, flavor=v["flavor"], distro=distro.key)
    return (None if problems else Axes(release, cuda, build, cuda_facts, distro, python)), problems


def resolve(entry: Entry, compat: Compat, repository: str) -> tuple[ImageSpec | None, list[str]]:
    """Run every axis validator; a spec only when none objected."""
    v = entry.values
    axes, problems = check_axes(v, compat)
    if axes is None:
        return None, problems
    release, cuda, build, cuda_facts, distro = axes.release, axes.cuda, axes.build, axes.cuda_facts, axes.distro
    flavor = cast(Flavor, v["flavor"])
    devel = flavor == "devel" and cuda_facts is not None
    is_cuda = cuda != "cpu"
    tag = make_tag(release.version, cuda if is_cuda else None, build.cudnn, flavor, distro.key, v["access"])
    problems = check_tag(tag)
    if problems:
        return None, problems
    spec = ImageSpec(
        tag=tag,
        repository=repository,
        default=bool(v.get("default")),
        flavor=flavor,
        torch=release.version,
        torch_requirement=f"torch=={release.version}{build.local}",
        torch_index_url=None if build.index == "pypi" else compat.indexes[build.index],
        cuda=cuda if is_cuda else None,
        cuda_toolkit=build.toolkit,
        cudnn=build.cudnn,
        nccl=build.nccl,
        driver_min=cuda_facts.driver_min if cuda_facts else None,
        distro=distro.key,
        distro_name=distro.name,
        codename=distro.codename,
        mirror=distro.mirror,
        python=axes.python,
        base_image=cuda_facts.devel_image.format(distro=distro.key) if devel and cuda_facts else distro.base_image,
        bootstrap_base=None if devel else f"torchimages-base/{distro.key}:latest",
        torchvision=release.torchvision if v["torchvision"] else None,
        packages=dict(sorted(v["packages"].items())),
        access=v["access"],
        access_packages=access_kinds.packages(v["access"]),
        platforms=list(v.get("platforms", DEFAULT_PLATFORMS)),
        platform_mirrors={p: compat.platforms[p].mirrors[distro.key] for p in v.get("platforms", DEFAULT_PLATFORMS)
                          if distro.key in compat.platforms[p].mirrors},
        net_plugin=v.get("net_plugin"),
    )
    return spec, []


# ---- expansion of axes groups ----

def _axis_value_problems(axes: dict[str, list[Any]], compat: Compat) -> list[tuple[str, int, str]]:
    """(axis, index, problem) for axis values no combination could use: reported before the excludes are judged."""
    found = []
    for i, value in enumerate(axes.get("torch", [])):
        found += [("torch", i, p) for p in check_torch(value, compat)[1]]
    for i, value in enumerate(axes.get("distro", [])):
        found += [("distro", i, p) for p in check_distro(value, compat)[1]]
    return found


def _expand(doc: Located, name: str, compat: Compat) -> tuple[list[Entry], list[str]]:
    data = doc.data
    defaults = data.get("defaults", {}) or {}
    entries: list[Entry] = []
    problems: list[str] = []
    for i, item in enumerate(data["images"]):
        common = {
            "python": defaults.get("python", "distro"),
            "torchvision": item.get("torchvision", defaults.get("torchvision", True)),
            "packages": {**defaults.get("packages", {}), **item.get("packages", {})},
            "access": access_kinds.normalize(item.get("access")),
            "net_plugin": item.get("net_plugin"),
            "platforms": list(item.get("platforms", defaults.get("platforms", DEFAULT_PLATFORMS))),
        }
        if "axes" not in item:
            entries.append(Entry(("images", i), f"images[{i}]", {**common, "default": item.get("default", False),
                                                                 **{k: item[k] for k in AXES if k in item}}))
            continue
        axes = dict(item["axes"])
        bad_values = _axis_value_problems(axes, compat)
        for axis, j, problem in bad_values:
            problems.append(f"{name}:{doc.line(('images', i, 'axes', axis, j))}: images[{i}].axes.{axis}[{j}]: {problem}")
        if bad_values:
            continue
        names = list(axes)
        combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*(axes[n] for n in names))]
        excludes = item.get("exclude", []) or []
        for j, exclude in enumerate(excludes):
            if not any(all(c.get(k) == v for k, v in exclude.items()) for c in combos):
                line = doc.line(("images", i, "exclude", j))
                problems.append(f"{name}:{line}: images[{i}].exclude[{j}]: {exclude} matches no combination of the "
                                f"axes; remove it or fix its values")
        for combo in combos:
            if any(all(combo.get(k) == v for k, v in ex.items()) for ex in excludes):
                continue
            label = f"images[{i}] (" + ", ".join(f"{k} {combo[k]}" for k in names) + ")"
            entries.append(Entry(("images", i), label, {**common, "default": False, **combo}))
    return entries, problems


def load_matrix(path: Path, compat: Compat | Path) -> list[ImageSpec]:
    """Validate and expand `path` against compat.yaml; raises MatrixError listing every problem found."""
    name = path.name
    doc = load_located(path, name)
    if not isinstance(doc.data, dict):
        raise MatrixError([f"{name}:1: expected a mapping with `repository:` and `images:`, "
                           f"found {type(doc.data).__name__}"])
    problems = _schema_problems(doc, name)
    if problems:
        raise MatrixError(problems)
    facts = compat if isinstance(compat, Compat) else load_compat(compat)
    entries, problems = _expand(doc, name, facts)
    specs: list[ImageSpec] = []
    seen: dict[str, str] = {}
    for entry in entries:
        spec, found = resolve(entry, facts, doc.data["repository"])
        line = doc.line(entry.where)
        problems += [f"{name}:{line}: {entry.label}: {p}" for p in found]
        if spec is None:
            continue
        if spec.tag in seen:
            problems.append(f"{name}:{line}: {entry.label}: duplicate tag {spec.tag}, already produced by {seen[spec.tag]}; "
                            f"remove one of them or exclude the combination")
            continue
        seen[spec.tag] = entry.label
        specs.append(spec)
    defaults = [s.tag for s in specs if s.default]
    if not problems and len(defaults) != 1:
        which = "no image is" if not defaults else f"{len(defaults)} images are ({', '.join(defaults)})"
        problems.append(f"{name}: {which} marked `default: true`; mark exactly one explicit entry as the default image")
    if problems:
        raise MatrixError(problems)
    return specs
