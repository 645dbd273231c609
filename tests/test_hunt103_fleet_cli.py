"""Issue 36 class 8 through the public CLI (tests/test_hunt103_inputs.py finding 3): `make fleet-report` lists a
report whose schema_version is a list, in one line, and reports the others: no internal error, fleet.json written."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.verify_handmade import make_report

pytestmark = pytest.mark.host


def _node(host: str) -> dict[str, Any]:
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


def test_the_cli_lists_it_in_one_line_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "n1.json").write_text(json.dumps(_node("n1")))
    odd = _node("n2")
    odd["schema_version"] = ["2"]
    (tmp_path / "n2.json").write_text(json.dumps(odd))
    proc = run_cli("fleet-report", "--dir", str(tmp_path), timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "internal error" not in proc.stdout + proc.stderr
    assert "n2.json: schema_version ['2'] is none this checkout reads" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "fleet.json").is_file() and os.path.getsize(tmp_path / "fleet.json") > 0
