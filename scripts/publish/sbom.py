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


def venv_packages(venv: Path) -> list[tuple[str, str]]:
    """(name, version) of every distribution installed in the venv, from the dist-info METADATA files."""
    found = []
    for meta in sorted(venv.glob("lib/python*/site-packages/*.dist-info/METADATA")):
        fields: dict[str, str] = {}
        for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line:
                break
            key, _, value = line.partition(":")
            if key in ("Name", "Version") and key not in fields:
                fields[key] = value.strip()
        if "Name" in fields and "Version" in fields:
            found.append((fields["Name"], fields["Version"]))
    return found


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


def build_sbom(name: str, venv_pkgs: list[tuple[str, str]], hashes: dict[tuple[str, str], list[str]],
               debs: list[dict[str, str]], distro: str, timestamp: str) -> dict[str, Any]:
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
            "component": {"type": "container", "bom-ref": name, "name": name},
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
                      dpkg_packages(Path(args.dpkg_status)), distro_id(), stamp)
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
