"""`make compat`: refresh the PyPI-default facts in compat.yaml from package-index metadata.

For each torch release: `pip install --dry-run --no-deps --ignore-installed --report` (PEP 658 metadata, no
wheel download) gives Requires-Python and the pinned CUDA toolkit, cuDNN and NCCL of the PyPI build; the
simple index's file names give the CPython versions with Linux x86_64 wheels. compat.yaml is edited through
ruamel.yaml's round trip, so it keeps its comments, quoting, flow rows and hand-kept rows.
"""
from __future__ import annotations

import io
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

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..errors import UserError
from ..fsutil import atomic_write
from ..versions import version_key

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


def _pin(requires: list[str], name: str) -> str | None:
    """The version `requires` pins the distribution matching `name` (a regex over canonical names) at, if any."""
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        specs = list(req.specifier)
        if re.fullmatch(name, canonicalize_name(req.name)) and len(specs) == 1 and specs[0].operator == "==":
            return specs[0].version
    return None


def facts_from_report(report: dict[str, Any], wheel_pythons: tuple[str, ...]) -> PypiFacts:
    """Parse a pip --report for torch==X (one install item) into the facts compat.yaml keeps."""
    meta = report["install"][0]["metadata"]
    requires = meta.get("requires_dist", [])
    toolkit = _pin(requires, "cuda-toolkit") or _pin(requires, "nvidia-cuda-runtime-cu1[0-9]")
    cudnn = _pin(requires, r"nvidia-cudnn-cu1[0-9]")
    nccl = _pin(requires, r"nvidia-nccl-cu1[0-9]")
    if not (toolkit and cudnn and nccl):
        raise UserError(f"torch {meta['version']}: its PyPI metadata pins no CUDA toolkit/cuDNN/NCCL "
                        f"(found toolkit={toolkit}, cudnn={cudnn}, nccl={nccl}); is this a CPU-only wheel?")
    cuda = ".".join(str(n) for n in version_key(toolkit)[:2])
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


def _round_trip() -> YAML:
    """ruamel.yaml set to write compat.yaml back as it is written: quotes kept, no folding, null spelled out."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.representer.add_representer(type(None), _null)
    return yaml


def _null(representer: RoundTripRepresenter, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def _quoted(value: str) -> str:
    quoted: str = DoubleQuotedScalarString(value)
    return quoted


def _pypi_build(facts: PypiFacts) -> CommentedMap:
    row = CommentedMap([("index", "pypi"), ("toolkit", _quoted(facts.toolkit)), ("cudnn", _quoted(facts.cudnn)),
                        ("nccl", _quoted(facts.nccl)), ("source", "pypi-metadata")])
    row.fa.set_flow_style()
    return row


def _update_release(release: CommentedMap, facts: PypiFacts) -> None:
    """python, pypi_default and the PyPI build row (`source: pypi-metadata`, in its place; first when none)."""
    pythons = CommentedSeq(_quoted(p) for p in facts.python)
    pythons.fa.set_flow_style()
    release["python"] = pythons
    release["pypi_default"] = _quoted(facts.cuda)
    builds: CommentedMap = release["builds"]
    old = next((key for key, row in builds.items() if row.get("source") == "pypi-metadata"), None)
    position = list(builds).index(old) if old is not None else 0
    if old is not None:
        del builds[old]
    builds.insert(position, _quoted(facts.cuda), _pypi_build(facts))


def rewrite(text: str, facts: PypiFacts) -> str:
    """compat.yaml's text with one release's python, pypi_default and PyPI build updated; all else as it was."""
    yaml = _round_trip()
    data = yaml.load(text)
    release = data["torch"].get(facts.version)
    if release is None:
        raise UserError(f"compat.yaml has no block for torch {facts.version}; add one (copy a neighbour) and rerun")
    _update_release(release, facts)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def refresh(environ: Mapping[str, str], path: Path) -> list[str]:
    """Refresh every release of compat.yaml; returns one line per release saying what changed."""
    text = path.read_text(encoding="utf-8")
    versions = [str(v) for v, release in _round_trip().load(text)["torch"].items() if "python" in release]
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
