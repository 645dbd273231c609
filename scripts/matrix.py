"""matrix.yaml → validated ImageSpecs. Every problem is collected, with its line and the valid choices."""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from . import ROOT
from . import access as access_kinds
from .compat import Compat, load_compat, version_key
from .errors import MatrixError, UserError
from .spec import ImageSpec, make_tag
from .yamlsrc import Located, load_located

MATRIX_FILE = ROOT / "matrix.yaml"
SCHEMA_FILE = ROOT / "schemas" / "matrix.schema.json"
AXES = ("torch", "cuda", "flavor", "distro", "python")


@dataclass(frozen=True)
class Entry:
    """One image request after axes expansion, before validation."""

    where: tuple[Any, ...]        # path into the document, for the line number
    label: str                    # how messages name it: images[3] or images[0] (torch 2.15.0, ...)
    values: dict[str, Any]


def _fmt_path(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _schema_problems(doc: Located, name: str) -> list[str]:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
        best = _branch_error(error)
        path = tuple(best.absolute_path)
        line = doc.line(path)
        problems.append(f"{name}:{line}: {_fmt_path(path)}: {_explain(best)}")
    return problems


def _branch_error(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """oneOf (entry | axes group) hides the useful part: the error of the branch the item meant to be."""
    if error.validator != "oneOf" or not error.context:
        return error
    meant = 0 if isinstance(error.instance, dict) and "axes" in error.instance else 1   # index in images.items.oneOf
    branch = [e for e in error.context if e.relative_schema_path and e.relative_schema_path[0] == meant] or error.context
    return max(branch, key=lambda e: (len(e.absolute_path), e.validator != "required"))


def _explain(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        return f"unknown key {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}"
    wants_string = error.validator == "pattern" or (error.validator == "type" and error.validator_value == "string")
    if wants_string and isinstance(error.instance, (int, float)) and not isinstance(error.instance, bool):
        return f"{error.instance!r} is a number; versions are strings: write it quoted, \"{error.instance}\""
    if error.validator == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "required" and "torch" in error.validator_value:
        return f"{error.message}; an image entry needs torch, cuda, flavor and distro (or an `axes:` block)"
    if error.validator == "uniqueItems":
        return f"{error.instance!r} lists an item more than once; list each once"
    if error.validator == "oneOf":
        return "neither an image entry (torch, cuda, flavor, distro) nor an axes group (`axes:` with those four lists)"
    return error.message


def _expand(doc: Located, name: str) -> list[Entry]:
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
        }
        if "axes" not in item:
            entries.append(Entry(("images", i), f"images[{i}]", {**common, "default": item.get("default", False),
                                                                 **{k: item[k] for k in AXES if k in item}}))
            continue
        axes = {k: v for k, v in item["axes"].items()}
        names = list(axes)
        combos = [dict(zip(names, values)) for values in itertools.product(*(axes[n] for n in names))]
        excludes = item.get("exclude", []) or []
        for j, exclude in enumerate(excludes):
            if not any(all(c.get(k) == v for k, v in exclude.items()) for c in combos):
                line = doc.line(("images", i, "exclude", j))
                problems.append(f"{name}:{line}: images[{i}].exclude[{j}]: {exclude} matches no combination of the axes; remove it or fix its values")
        for combo in combos:
            if any(all(combo.get(k) == v for k, v in ex.items()) for ex in excludes):
                continue
            label = f"images[{i}] (" + ", ".join(f"{k} {combo[k]}" for k in names) + ")"
            entries.append(Entry(("images", i), label, {**common, "default": False, **combo}))
    if problems:
        raise MatrixError(problems)
    return entries


def _choices(values: list[str]) -> str:
    return ", ".join(values) if values else "none"


def _resolve(entry: Entry, compat: Compat, repository: str) -> tuple[ImageSpec | None, list[str]]:
    v = entry.values
    problems: list[str] = []
    release = compat.torch.get(v["torch"])
    if release is None:
        known = sorted(compat.torch, key=version_key, reverse=True)
        return None, [f"unknown torch version {v['torch']}; known: {_choices(known)} (add it to compat.yaml with `make compat`)"]
    cuda = release.pypi_default if v["cuda"] == "pypi" else v["cuda"]
    build = release.builds.get(cuda)
    if build is None:
        avail = [f"{c} (PyPI)" if c == release.pypi_default else c
                 for c in sorted(release.builds, key=lambda c: (c == "cpu", version_key(c)), reverse=False)]
        problems.append(f"torch {release.version} has no CUDA {cuda} build; available: {_choices(avail)}")
    flavor = v["flavor"]
    if (cuda == "cpu") != (flavor == "cpu"):
        problems.append(f"flavor {flavor} does not go with cuda {cuda}: use flavor cpu with cuda cpu, and runtime or devel with a CUDA version")
    distro = compat.distros.get(v["distro"])
    if distro is None:
        return None, problems + [f"unknown distro {v['distro']}; known: {_choices(sorted(compat.distros))}"]
    python = distro.python if v["python"] == "distro" else v["python"]
    if python != distro.python:
        others = [f"{d.key} ({d.python})" for d in compat.distros.values() if d.python == python]
        problems.append(f"{distro.key} ships Python {distro.python}, not {python}; images use the distro's Python: "
                        f"choose a distro that ships {python}: {_choices(others)}, or python: distro")
    if python not in release.python:
        fits = [f"{d.key} ({d.python})" for d in compat.distros.values() if d.python in release.python]
        problems.append(f"torch {release.version} has no wheel for Python {python} ({distro.key}'s Python); it supports "
                        f"{_choices(list(release.python))}: choose a distro among {_choices(fits)}")
    cuda_facts = compat.cuda.get(cuda) if cuda != "cpu" else None
    if build is not None and cuda != "cpu" and cuda_facts is None:
        problems.append(f"CUDA {cuda} is missing from the `cuda:` table of compat.yaml; add its toolkit and driver floor")
    if flavor == "devel" and cuda_facts is not None and distro.key not in cuda_facts.devel_distros:
        tags = [cuda_facts.devel_image.format(distro=d) for d in cuda_facts.devel_distros]
        problems.append(f"NVIDIA publishes no devel image for CUDA {cuda} on {distro.key}; available: {_choices(tags)} "
                        f"(or use flavor runtime on {distro.key})")
    packages = {}
    for name, version in sorted(v["packages"].items()):
        known = compat.packages.get(name, {})
        if version not in known:
            problems.append(f"{name} {version} is not in compat.yaml; known: {_choices(sorted(known, key=version_key, reverse=True))}")
        elif python not in known[version]:
            fits = [ver for ver, pys in known.items() if python in pys]
            problems.append(f"{name} {version} has no wheel for Python {python}; versions for {python}: {_choices(fits)} "
                            f"(set packages: {{{name}: \"...\"}} on this entry)")
        packages[name] = version
    problems += access_kinds.problems(v["access"], python, compat.packages)
    if problems or build is None:
        return None, problems
    devel = flavor == "devel" and cuda_facts is not None
    is_cuda = cuda != "cpu"
    spec = ImageSpec(
        tag=make_tag(release.version, cuda if is_cuda else None, build.cudnn, flavor, distro.key, v["access"]),
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
        python=python,
        base_image=cuda_facts.devel_image.format(distro=distro.key) if devel else distro.base_image,
        bootstrap_base=None if devel else f"torchimages-base/{distro.key}:latest",
        torchvision=release.torchvision if v["torchvision"] else None,
        packages=packages,
        access=v["access"],
        access_packages=access_kinds.packages(v["access"]),
    )
    return spec, []


def load_matrix(path: Path = MATRIX_FILE, compat: Compat | None = None) -> list[ImageSpec]:
    """Validate and expand `path`; raises MatrixError listing every problem found."""
    name = path.name
    doc = load_located(path)
    if not isinstance(doc.data, dict):
        raise MatrixError([f"{name}:1: expected a mapping with `repository:` and `images:`, found {type(doc.data).__name__}"])
    problems = _schema_problems(doc, name)
    if problems:
        raise MatrixError(problems)
    compat = compat or load_compat()
    entries = _expand(doc, name)
    specs: list[ImageSpec] = []
    seen: dict[str, str] = {}
    for entry in entries:
        spec, found = _resolve(entry, compat, doc.data["repository"])
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


def default_spec(specs: list[ImageSpec]) -> ImageSpec:
    return next(s for s in specs if s.default)


def select(specs: list[ImageSpec], image: str | None) -> list[ImageSpec]:
    """IMAGE=<tag>|all|'' (the default image) → the specs it names."""
    if not image:
        return [default_spec(specs)]
    if image == "all":
        return specs
    wanted = [t.strip() for t in image.split(",") if t.strip()]
    by_tag = {s.tag: s for s in specs}
    unknown = [t for t in wanted if t not in by_tag]
    if unknown:
        raise UserError(f"unknown image {', '.join(unknown)}; choose IMAGE=all or one of: {', '.join(by_tag)}")
    return [by_tag[t] for t in wanted]
