"""`make clean` keeps the push record (issue 37): scripts/clean.sh run for real on a scratch REPORTS_DIR."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.host


def test_make_clean_keeps_pushed_json_and_removes_the_rest(tmp_path):
    build, reports = tmp_path / "build", tmp_path / "reports"
    (build / "logs").mkdir(parents=True)
    (build / "logs" / "t.log").write_text("log")
    (reports / "push").mkdir(parents=True)
    (reports / "push" / "pushed.json").write_text('{"t": {}}')
    (reports / "push" / "other.json").write_text("{}")
    (reports / "t.json").write_text("{}")
    (reports / "t.previous.xml").write_text("<x/>")
    proc = subprocess.run(["sh", str(ROOT / "scripts" / "clean.sh")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "BUILD_DIR": str(build), "REPORTS_DIR": str(reports)}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert not build.exists()
    assert sorted(str(p.relative_to(reports)) for p in reports.rglob("*")) == ["push", "push/pushed.json"]
    assert (reports / "push" / "pushed.json").read_text() == '{"t": {}}'
    assert "kept" in proc.stdout and "pushed.json" in proc.stdout
    # without a push record the folder goes whole, as before
    (reports / "push" / "pushed.json").unlink()
    proc = subprocess.run(["sh", str(ROOT / "scripts" / "clean.sh")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "BUILD_DIR": str(build), "REPORTS_DIR": str(reports)}, check=False)
    assert proc.returncode == 0 and not reports.exists(), proc.stderr
