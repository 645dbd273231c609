"""A CycloneDX 1.5 SBOM of an image, written from inside it at build time (stdlib only: it runs on the image's Python).

Components: every distribution in the venv (purl pkg:pypi, version, the sha256 hashes its lock allows) and every
installed dpkg package (purl pkg:deb, version, architecture). The image keeps it at SBOM_PATH; `make attest`
exports it beside the reports and attaches it to the pushed digest.

    python3 sbom.py --venv /opt/venv --lock requirements.lock --name repo:tag --out sbom.cdx.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import stat
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

SBOM_PATH = "/usr/share/torchimages/sbom.cdx.json"
LOCK_PATH = "/usr/share/torchimages/requirements.lock"
SPEC_VERSION = "1.5"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_hashes(text: str) -> dict[tuple[str, str], list[str]]:
    """(canonical name, version) -> the sha256 hashes the lock allows."""
    out: dict[tuple[str, str], list[str]] = {}
    key = None
    for raw in text.splitlines():
        line = raw.strip()
        match = _PIN.match(line)
        if match:
            key = (canonical(match.group(1)), match.group(2))
            out[key] = []
        if key is not None:
            out[key] += _HASH.findall(line)
    return out


# The venv's layers (templates/partials/builder.j2): the CUDA wheels under <venv>/cuda in four layers (the ones
# named here by their name's start, the toolkit's libraries in `cuda`), torch's, then the rest. The rule is
# scripts/plan/venvparts.py's, written again here since this runs alone on the image's Python; a unit test keeps
# the two alike over every lock.
CUDA_LAYERS = (("nvidia-cusparselt-", "cusparselt"), ("nvidia-nccl-", "nccl"), ("nvidia-cudnn-", "cudnn"))
TORCH_LAYER = frozenset({"torch", "torchvision", "triton"})


def _metas(venv: Path) -> list[Path]:
    return sorted([*venv.glob("lib/python*/site-packages/*.dist-info/METADATA"), *venv.glob("cuda/*.dist-info/METADATA")])


def layer_of(venv: Path, meta: Path, name: str) -> str:
    """Which venv layer a distribution lives in: cusparselt, cuda, nccl, cudnn, torch or rest."""
    if meta.parent.parent == venv / "cuda":
        return next((layer for start, layer in CUDA_LAYERS if canonical(name).startswith(start)), "cuda")
    return "torch" if canonical(name) in TORCH_LAYER else "rest"


def _regular_size(path: str) -> int:
    """A regular file's size; 0 for a symlink, a folder or a file RECORD lists that is not there."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def unpacked_bytes(meta: Path) -> int:
    """What a distribution takes on disk: the files its RECORD lists, and the bytecode compiled for them (<stem>.*.pyc
    in the __pycache__ beside each .py). Each __pycache__ is listed once, and each file costs one lstat: torch's
    RECORD alone names 15,000 files, and a glob per .py made the image's SBOM step take 4 s of every build."""
    root, total = str(meta.parent.parent), 0
    record = meta.with_name("RECORD")
    lines = record.read_text(encoding="utf-8", errors="replace").splitlines() if record.is_file() else []
    caches: dict[str, list[str]] = {}
    for line in lines:
        path = os.path.join(root, line.split(",", 1)[0])
        total += _regular_size(path)
        folder, name = os.path.split(path)
        stem, dot, suffix = name.rpartition(".")
        if not dot or suffix != "py":
            continue
        cache = os.path.join(folder, "__pycache__")
        if cache not in caches:
            try:
                caches[cache] = os.listdir(cache)
            except OSError:
                caches[cache] = []
        prefix = stem + "."
        total += sum(_regular_size(os.path.join(cache, pyc)) for pyc in caches[cache]
                     if pyc.startswith(prefix) and pyc.endswith(".pyc") and len(pyc) >= len(prefix) + 4)
    return total


def venv_costs(venv: Path) -> dict[str, tuple[str, int]]:
    """canonical name -> (its venv layer, its unpacked bytes): what each package costs a node."""
    costs = {}
    for meta in _metas(venv):
        fields = _name_version(meta)
        if fields:
            costs[canonical(fields[0])] = (layer_of(venv, meta, fields[0]), unpacked_bytes(meta))
    return costs


def _name_version(meta: Path) -> tuple[str, str] | None:
    fields: dict[str, str] = {}
    for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line:
            break
        key, _, value = line.partition(":")
        if key in ("Name", "Version") and key not in fields:
            fields[key] = value.strip()
    return (fields["Name"], fields["Version"]) if "Name" in fields and "Version" in fields else None


def venv_packages(venv: Path) -> list[tuple[str, str]]:
    """(name, version) of every distribution installed in the venv (its CUDA wheels' folder included), from the
    dist-info METADATA files."""
    return [found for found in map(_name_version, _metas(venv)) if found]


def dpkg_packages(status: Path) -> list[dict[str, str]]:
    """Installed packages of a dpkg status file (Package, Version, Architecture)."""
    if not status.exists():
        return []
    packages = []
    for stanza in status.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line[:1] in (" ", "\t") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        if fields.get("Package") and fields.get("Status", "").endswith(" installed"):
            packages.append(fields)
    return sorted(packages, key=lambda f: f["Package"])


def distro_id(os_release: Path = Path("/etc/os-release")) -> str:
    if os_release.exists():
        for line in os_release.read_text(encoding="utf-8").splitlines():
            if line.startswith("ID="):
                return line[3:].strip().strip('"')
    return "debian"


def _cost_properties(costs: dict[str, tuple[str, int]]) -> list[dict[str, str]]:
    """The image's price per venv layer, unpacked (the compressed sizes exist only once the layers are pushed:
    `make bench-start` prints them per layer)."""
    layers: dict[str, int] = {}
    for layer, size in costs.values():
        layers[layer] = layers.get(layer, 0) + size
    return [{"name": f"torchimages:layer:{layer}:unpacked-bytes", "value": str(size)}
            for layer, size in sorted(layers.items())]


def build_sbom(name: str, venv_pkgs: list[tuple[str, str]], hashes: dict[tuple[str, str], list[str]],
               debs: list[dict[str, str]], distro: str, timestamp: str,
               costs: dict[str, tuple[str, int]] | None = None) -> dict[str, Any]:
    """The CycloneDX document; `costs` (venv_costs) adds each package's venv layer and unpacked bytes, and each
    layer's total on the image component."""
    costs = costs or {}
    components = []
    for pkg, version in sorted(venv_pkgs, key=lambda p: canonical(p[0])):
        purl = f"pkg:pypi/{canonical(pkg)}@{quote(version, safe='')}"
        comp: dict[str, Any] = {"type": "library", "bom-ref": purl, "name": pkg, "version": version, "purl": purl}
        allowed = hashes.get((canonical(pkg), version), [])
        if allowed:
            comp["hashes"] = [{"alg": "SHA-256", "content": h} for h in allowed]
            comp["properties"] = [{"name": "torchimages:hashes", "value": "the sha256 of every file the lock allows"}]
        else:
            comp["properties"] = [{"name": "torchimages:locked", "value": "false"}]
        if canonical(pkg) in costs:
            layer, size = costs[canonical(pkg)]
            comp["properties"] += [{"name": "torchimages:layer", "value": layer},
                                   {"name": "torchimages:unpacked-bytes", "value": str(size)}]
        components.append(comp)
    for deb in debs:
        arch = deb.get("Architecture", "all")
        purl = f"pkg:deb/{distro}/{deb['Package']}@{quote(deb.get('Version', ''), safe='')}?arch={arch}"
        components.append({"type": "library", "bom-ref": purl, "name": deb["Package"],
                           "version": deb.get("Version", ""), "purl": purl})
    body = json.dumps(components, sort_keys=True)
    serial = uuid.uuid5(uuid.NAMESPACE_URL, name + body)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{serial}",
        "version": 1,
        "metadata": {
            "timestamp": timestamp,
            "tools": {"components": [{"type": "application", "name": "torchimages-sbom", "version": "1"}]},
            "component": {"type": "container", "bom-ref": name, "name": name,
                          **({"properties": _cost_properties(costs)} if costs else {})},
        },
        "components": components,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", default="/opt/venv")
    parser.add_argument("--lock", default=LOCK_PATH)
    parser.add_argument("--dpkg-status", default="/var/lib/dpkg/status")
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", default=SBOM_PATH)
    parser.add_argument("--epoch", type=int, default=None, help="timestamp (seconds), e.g. $SOURCE_DATE_EPOCH")
    args = parser.parse_args(argv)
    lock = Path(args.lock)
    if not lock.is_file():
        print(f"error: lock {lock} not found; pass --lock", file=sys.stderr)
        return 2
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(args.epoch))
    sbom = build_sbom(args.name, venv_packages(Path(args.venv)), lock_hashes(lock.read_text(encoding="utf-8")),
                      dpkg_packages(Path(args.dpkg_status)), distro_id(), stamp, venv_costs(Path(args.venv)))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(sbom, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()[:12]
    print(f"sbom: {len(sbom['components'])} components -> {out} (sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
