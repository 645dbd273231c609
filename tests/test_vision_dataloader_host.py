"""On this host, for real: a torchvision that does not match torch, diagnosed by name in a fresh venv; and
`verify bench --dataloader` printing its recommendation and writing JSON and an SVG."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_clean_failure, run_cli

pytestmark = pytest.mark.unit

CACHE = Path(os.environ.get("TORCHIMAGES_TEST_CACHE", Path.home() / ".cache" / "torchimages-tests"))
# torch 2.13.0 (CPU build, /opt/wheels) beside PyPI's torchvision 0.29.1, which is built for torch 2.14:
# importing it raises "operator torchvision::nms does not exist".
MISMATCH = {"torch": "2.13.0+cpu", "torchvision": "0.29.1"}


def _pip(python: Path, *args: str) -> None:
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *args], capture_output=True, text=True,
                          timeout=1800, check=False)
    assert proc.returncode == 0, f"pip install {' '.join(args)} failed:\n{proc.stderr[-3000:]}"


def mismatched_venv() -> Path:
    """A fresh venv (not --system-site-packages: torch must be the one installed here), ~1 GB, built once and
    kept under TORCHIMAGES_TEST_CACHE (default ~/.cache/torchimages-tests); built aside, then renamed."""
    name = f"vision-mismatch-py{sys.version_info.major}{sys.version_info.minor}-torch{MISMATCH['torch']}-tv{MISMATCH['torchvision']}"
    venv = CACHE / name
    if (venv / ".complete").exists():
        return venv
    CACHE.mkdir(parents=True, exist_ok=True)
    building = CACHE / f".{name}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, timeout=300)
    python = building / "bin" / "python"
    _pip(python, f"torch=={MISMATCH['torch']}", "numpy")
    _pip(python, "--no-deps", f"torchvision=={MISMATCH['torchvision']}")   # its metadata pins torch 2.14.1
    (building / ".complete").write_text("ok\n")
    shutil.rmtree(venv, ignore_errors=True)
    building.rename(venv)      # a venv's scripts name their interpreter by path: call bin/python, not bin/pip
    return venv


@pytest.mark.host
@pytest.mark.slow
@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the local torch wheels are cp311")
def test_a_torchvision_that_does_not_match_torch_is_diagnosed_by_name(tmp_path):
    venv = mismatched_venv()
    python = venv / "bin" / "python"
    versions = subprocess.run([str(python), "-c", ("from importlib.metadata import version as v; "
                               "print(v('torch'), v('torchvision'))")], capture_output=True, text=True, check=True)
    assert versions.stdout.split() == [MISMATCH["torch"], MISMATCH["torchvision"]]
    report = tmp_path / "report.json"
    proc = subprocess.run([str(python), "-m", "verify", "--checks", "vision", "--json", str(report)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}, capture_output=True,
                          text=True, timeout=600, check=False)
    assert_clean_failure(proc, "vision  FAIL", "operator torchvision::nms does not exist")
    check = json.loads(report.read_text())["checks"][0]
    assert (check["status"], check["code"], check["owner"]) == ("fail", "TORCHVISION_MISMATCH", "image")
    assert "torchvision 0.29.1 does not match torch 2.13.0+cpu" in check["summary"]
    assert "needs torchvision 0.28.0" in check["summary"]
    assert "pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu" in check["remedy"]


@pytest.mark.host
def test_bench_dataloader_prints_the_recommendation_and_writes_json_and_svg(tmp_path):
    out_json, out_svg = tmp_path / "dl.json", tmp_path / "dl.svg"
    proc = run_cli("bench", "--dataloader", "--samples", "48", "--batch-size", "8", "--image-size", "96",
                   "--crop", "64", "--max-workers", "2", "--json", str(out_json), "--plot", str(out_svg),
                   module="verify", timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "recommended: DataLoader(dataset, batch_size=8, num_workers=" in proc.stdout
    assert "/dev/shm needed: " in proc.stdout and "per sample: " in proc.stdout
    data = json.loads(out_json.read_text())
    rows = data["facts"]["measurements"]
    assert [r["num_workers"] for r in rows][:3] == [0, 1, 2] and all(r["ok"] for r in rows)
    assert all(r["samples_per_s"] > 0 and r["samples"] == 48 * 2 for r in rows)
    assert data["facts"]["batch_bytes"] == 8 * 3 * 64 * 64 * 4
    assert data["recommendation"]["setting"]["num_workers"] in (0, 1, 2)
    assert out_svg.read_text().startswith("<svg xmlns=\"http://www.w3.org/2000/svg\"") and out_svg.stat().st_size > 2000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dl.json", "dl.svg"]     # no temp files left


@pytest.mark.host
def test_bench_dataloader_bad_input_is_one_clean_line(tmp_path):
    proc = run_cli("bench", "--dataloader", "--crop", "300", "--json", str(tmp_path / "no" / "x.json"),
                   module="verify", timeout=120)
    assert_clean_failure(proc, "--crop must not exceed --image-size", "the folder of")
    assert proc.returncode == 2
