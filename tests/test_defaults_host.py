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


def test_no_tracked_file_is_a_link_out_of_the_checkout_and_the_venv_is_never_tracked():
    # A helper's worktree link .venv -> /work/main/.venv was once committed: a fresh clone then held a link where
    # `make setup` creates the venv ("File exists"). A tracked link may only point inside the checkout.
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True, timeout=60,
                          check=True)
    links = [line.split("\t", 1)[1] for line in proc.stdout.splitlines() if line.startswith("120000 ")]
    outside = [p for p in links if not (ROOT / p).resolve().is_relative_to(ROOT.resolve())]
    assert not outside, outside
    tracked = {line.split("\t", 1)[1].split("/", 1)[0] for line in proc.stdout.splitlines()}
    assert ".venv" not in tracked
