"""scripts/plan/venvparts.py: which locked package goes to which install step (layer), issue 38 item 5. Every
package of every lock lands in exactly one part, cuDNN and NCCL in layers of their own, and the rendered Dockerfiles
run the very conditions tested here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.plan import venvparts
from scripts.plan.venvparts import part_of

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = re.compile(r"^[^\s#]")       # the template's awk looks at these lines only


def _packages(lock: Path) -> list[str]:
    return [line for line in lock.read_text().splitlines() if PACKAGE.match(line)]


@pytest.mark.parametrize("line, part", [
    ("nvidia-cusparselt-cu13==0.8.1 \\", "cusparselt"),
    ("nvidia-cusparselt-cu12==0.7.1 \\", "cusparselt"),
    ("nvidia-cublas==13.1.1.3 \\", "cuda"),
    ("nvidia-cublas-cu12==12.8.4.1 \\", "cuda"),
    ("nvidia-cuda-runtime==13.0.96 \\", "cuda"),
    ("nvidia-nvshmem-cu13==3.4.5 \\", "cuda"),
    ("cuda-toolkit==13.0.3.0 \\", "cuda"),
    ("nvidia-nccl-cu13==2.30.7 \\", "nccl"),
    ("nvidia-cudnn-cu13==9.24.0.43 \\", "cudnn"),
    ("nvidia-cudnn-cu12==9.10.2.21 \\", "cudnn"),
    ("torch==2.14.1 \\", "torch"),
    ("torchvision==0.29.1 \\", "torch"),
    ("triton==3.8.0 \\", "torch"),
    ("torchdata==0.11.0 \\", "rest"),
    ("nvidia-ml-py==13.615.71 \\", "rest"),     # NVML's bindings: not a CUDA library
    ("cuda-bindings==13.5.0 \\", "rest"),
    ("numpy==2.4.6 \\", "rest"),
])
def test_each_package_goes_to_its_part(line, part):
    assert part_of(line) == [part]


def test_a_cpu_image_has_no_cuda_parts_and_its_rest_keeps_nvml():
    assert part_of("nvidia-ml-py==13.615.71 \\", cuda=False) == ["rest"]
    assert part_of("torch==2.13.0+cpu \\", cuda=False) == ["torch"]


def test_the_parts_sit_in_order_of_how_often_they_change_lowest_first():
    names = [p.name for p in venvparts.PARTS]
    assert names == ["cusparselt", "cuda", "nccl", "cudnn", "torch"]
    assert [name for name, _ in venvparts.cuda_parts()] == names[:4]


def _locks() -> list[Path]:
    return sorted(ROOT.glob("images/*/requirements*.lock"))


def test_every_package_of_every_lock_lands_in_exactly_one_part():
    locks = _locks()
    assert locks
    for lock in locks:
        cuda = "cuda" in lock.parent.name
        for line in _packages(lock):
            assert len(part_of(line, cuda=cuda)) == 1, (lock, line, part_of(line, cuda=cuda))


def test_a_cudnn_and_nccl_bump_moves_only_their_parts_and_torch():
    """2.13.0 -> 2.14.1 (both CUDA 13.0): the parts whose packages differ are cudnn, nccl and torch, not cuda."""
    def by_part(tag: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for line in _packages(ROOT / "images" / tag / "requirements.lock"):
            out.setdefault(part_of(line)[0], set()).add(line.split()[0])
        return out
    old = by_part("2.13.0-cuda13.0-cudnn9-runtime-debian12")
    new = by_part("2.14.1-cuda13.0-cudnn9-runtime-debian12")
    changed = {part for part in old.keys() | new.keys() if old.get(part) != new.get(part)}
    assert changed == {"nccl", "cudnn", "torch"}
    assert len(new["cuda"]) > 10 and new["cusparselt"] == old["cusparselt"]


def test_the_rendered_dockerfile_runs_these_conditions_in_this_order():
    text = (ROOT / "images" / "2.14.1-cuda13.0-cudnn9-runtime-debian12" / "Dockerfile").read_text()
    places = []
    for name, cond in [*venvparts.cuda_parts(), *venvparts.conditions().items()]:
        needle = f"keep = ({cond}) }} keep' \"$lock\" >/tmp/uv/{name}.txt"
        assert text.count(needle) == 1, name
        places.append(text.index(needle))
    assert places == sorted(places)
    for name, _ in venvparts.cuda_parts():
        assert f"--target /opt/venv/cuda -r /tmp/uv/{name}.txt" in text


def test_the_sbom_names_the_same_layer_for_every_package_of_every_lock(tmp_path):
    """sbom.py runs alone in the image (stdlib only), so it holds the CUDA split again: it must agree."""
    from scripts.publish.sbom import layer_of
    venv = tmp_path / "venv"
    for lock in _locks():
        cuda = "cuda" in lock.parent.name
        for line in _packages(lock):
            [part] = part_of(line, cuda=cuda)
            name = line.split("==")[0]
            home = venv / "cuda" if part in {p for p, _ in venvparts.cuda_parts()} else venv / "lib" / "site-packages"
            assert layer_of(venv, home / f"{name}.dist-info" / "METADATA", name) == part, (lock, line)
