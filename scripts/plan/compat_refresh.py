"""`make compat`: refresh the PyPI-default facts in compat.yaml from package-index metadata.

For each torch release: `pip install --dry-run --no-deps --ignore-installed --report` (PEP 658 metadata, no
wheel download) gives Requires-Python and the pinned CUDA toolkit, cuDNN and NCCL of the PyPI build; the
simple index's file names give the CPython versions with Linux x86_64 wheels. Lines are rewritten in place,
so compat.yaml keeps its comments and hand-kept rows.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..fsutil import atomic_write

SIMPLE = "https://pypi.org/simple"
PLATFORM = "manylinux_2_28_x86_64"


@dataclass(frozen=True)
class PypiFacts:
    version: str
    python: tuple[str, ...]
    cuda: str            # X.Y of the PyPI build
    toolkit: str
    cudnn: str
    nccl: str


def _pin(requires: list[str], pattern: str) -> str | None:
    for req in requires:
        m = re.match(pattern + r"\s*==\s*([0-9][0-9.]*)", req.split(";")[0].strip())
        if m:
            return m.group(1)
    return None


def facts_from_report(report: dict[str, Any], wheel_pythons: tuple[str, ...]) -> PypiFacts:
    """Parse a pip --report for torch==X (one install item) into the facts compat.yaml keeps."""
    meta = report["install"][0]["metadata"]
    requires = meta.get("requires_dist", [])
    toolkit = _pin(requires, r"cuda-toolkit(?:\[[^\]]*\])?") or _pin(requires, r"nvidia-cuda-runtime-cu1[0-9]")
    cudnn = _pin(requires, r"nvidia-cudnn-cu1[0-9]")
    nccl = _pin(requires, r"nvidia-nccl-cu1[0-9]")
    if not (toolkit and cudnn and nccl):
        raise UserError(f"torch {meta['version']}: its PyPI metadata pins no CUDA toolkit/cuDNN/NCCL "
                        f"(found toolkit={toolkit}, cudnn={cudnn}, nccl={nccl}); is this a CPU-only wheel?")
    cuda = ".".join(toolkit.split(".")[:2])
    return PypiFacts(meta["version"], wheel_pythons, cuda, toolkit, cudnn, nccl)


def wheel_pythons(index_html: str, version: str) -> tuple[str, ...]:
    """CPython versions with a Linux x86_64 wheel of torch==version, from the simple index's file names."""
    found = set(re.findall(rf"torch-{re.escape(version)}(?:-\d+)?-cp3(\d+)-cp3\d+-[^\"'#<]*x86_64\.whl", index_html))
    return tuple(f"3.{minor}" for minor in sorted(found, key=int))


def query_report(version: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """pip's dry-run report for torch==version; the site pip config (a torch cap) is dropped, the CA kept."""
    env = {**environ, "PIP_CONFIG_FILE": "/dev/null"}
    env.pop("PIP_FIND_LINKS", None)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
               "--report", str(out), "--only-binary=:all:", "--python-version", "3.12", "--platform", PLATFORM,
               "--target", str(Path(tmp) / "t"), f"torch=={version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            raise UserError(f"pip could not read the metadata of torch=={version}: {proc.stderr.strip().splitlines()[-1:]}; "
                            f"check the network/proxy (PIP_CERT) and that the release exists")
        report: dict[str, Any] = json.loads(out.read_text())
        return report


def fetch_index() -> str:
    try:
        with urllib.request.urlopen(f"{SIMPLE}/torch/", timeout=60) as resp:
            body: bytes = resp.read()
            return body.decode()
    except OSError as exc:
        raise UserError(f"cannot read {SIMPLE}/torch/ ({exc}); check the network/proxy (SSL_CERT_FILE)") from None


def rewrite(text: str, facts: PypiFacts) -> str:
    """Update one release block of compat.yaml's text in place (python, pypi_default, the PyPI build line)."""
    block = re.search(rf'(?ms)^  "{re.escape(facts.version)}":\n(.*?)(?=^  "|^\S|\Z)', text)
    if not block:
        raise UserError(f"compat.yaml has no block for torch {facts.version}; add one (copy a neighbour) and rerun")
    body = block.group(1)
    pythons = ", ".join(f'"{p}"' for p in facts.python)
    body = re.sub(r'(?m)^    python: \[.*\]$', f"    python: [{pythons}]", body)
    body = re.sub(r'(?m)^    pypi_default: ".*"$', f'    pypi_default: "{facts.cuda}"', body)
    line = (f'      "{facts.cuda}": {{index: pypi, toolkit: "{facts.toolkit}", cudnn: "{facts.cudnn}", '
            f'nccl: "{facts.nccl}", source: pypi-metadata}}')
    if re.search(r"(?m)^      .*source: pypi-metadata\}$", body):
        body = re.sub(r"(?m)^      .*source: pypi-metadata\}$", line, body)
    else:
        body = body.replace("    builds:\n", f"    builds:\n{line}\n", 1)
    return text[:block.start(1)] + body + text[block.end(1):]


def refresh(environ: Mapping[str, str], path: Path) -> list[str]:
    """Refresh every release of compat.yaml; returns one line per release saying what changed."""
    text = path.read_text(encoding="utf-8")
    versions = re.findall(r'(?m)^  "(\d+\.\d+\.\d+)":\n    python:', text)
    index = fetch_index()
    changes = []
    for version in versions:
        facts = facts_from_report(query_report(version, environ), wheel_pythons(index, version))
        new = rewrite(text, facts)
        changes.append(f"torch {version}: CUDA {facts.cuda} ({facts.toolkit}), cuDNN {facts.cudnn}, NCCL {facts.nccl}, "
                       f"Python {', '.join(facts.python)}" + ("" if new == text else "  (updated)"))
        text = new
    atomic_write(path, text)
    return changes
