"""`make setup` is quiet about the host's pip configuration (issue 37): a local index lacking a project, or a
find-links folder that is not there, made pip print about 110 "Location ... is ignored" lines; pip's errors and exit
status pass unchanged (scripts/pipnoise.py, scripts/bootstrap.sh pip_quiet)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scripts.pipnoise import quiet
from tests.helpers import ROOT

PAGE = "WARNING: Location 'file:///opt/pypi-more/simple/prometheus-client/' is ignored: it is neither a file nor a directory.\n"
GONE = "WARNING: Location '/nope/wheels' is ignored: it is either a non-existing path or lacks a specific scheme.\n"


@pytest.mark.unit
def test_a_local_index_lacking_a_project_is_dropped_and_a_missing_folder_said_once():
    folders = {"/opt/pypi-more/simple"}
    lines = [PAGE, PAGE.replace("prometheus-client", "jinja2"), GONE, GONE,
             "WARNING: Location 'file:///gone/simple/jinja2/' is ignored: it is neither a file nor a directory.\n",
             "WARNING: Location 'file:///gone/simple/pyyaml/' is ignored: it is neither a file nor a directory.\n",
             "WARNING: Location 'https://example.org/simple/x/' is ignored: it is neither a file nor a directory.\n",
             "WARNING: Retrying (Retry(total=4)) after connection broken\n",
             "ERROR: No matching distribution found for nosuchpkg\n"]
    out = list(quiet(lines, is_dir=folders.__contains__))
    assert out[0].startswith("note: pip skips /nope/wheels: no such folder")
    assert out[1].startswith("note: pip skips /gone/simple: no such folder")
    assert out[2:] == lines[6:]                  # remote locations, other warnings and errors unchanged


@pytest.mark.host
def test_pip_quiet_keeps_pips_error_and_status_and_drops_the_noise(tmp_path):
    """Real pip against two empty local indexes: each project page is missing; the error and exit 1 remain."""
    for name in ("a", "b"):
        (tmp_path / name / "simple").mkdir(parents=True)
    function = subprocess.run(["sed", "-n", "/^pip_quiet()/,/^}/p", str(ROOT / "scripts" / "bootstrap.sh")],
                              capture_output=True, text=True, check=True).stdout
    script = f"set -euo pipefail\n{function}\npip_quiet \"$@\"\n"
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PYTHON": sys.executable, "PIP_FIND_LINKS": "",
           "PIP_EXTRA_INDEX_URL": f"file://{tmp_path}/b/simple"}
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp_path / "d"),
           "--index-url", f"file://{tmp_path}/a/simple", "nosuchpkg-zzq"]
    raw = subprocess.run(pip, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert raw.returncode == 1 and "is ignored: it is neither a file nor a directory" in raw.stderr
    proc = subprocess.run(["bash", "-c", script, "pip_quiet", *pip], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 1
    assert "ERROR: No matching distribution found for nosuchpkg-zzq" in proc.stderr
    assert "is ignored" not in proc.stderr and "note:" not in proc.stderr
