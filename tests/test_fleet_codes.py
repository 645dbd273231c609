"""Issue 36, classes 1 (a report no verify wrote never drains) and 9 (time), on the fleet report's side.

`make fleet-report` believes no report that no verify wrote (a code outside verify/codes.py) and no `created` that is
no time or lies in the future beyond CLOCK_SKEW: each is listed invalid, not assessed, in one line, and never a
drain line. Pure logic on files under tmp_path (the command itself through `scripts.cli.main`).
"""
from __future__ import annotations

import json
import time
from typing import Any

import pytest

from scripts.cli import main
from scripts.fleet.fleet import fleet, fleet_json, format_fleet
from scripts.fleet.plausible import VERIFY_CODES
from tests.verify_handmade import make_report

pytestmark = pytest.mark.unit


def _node(host: str, **created: str) -> dict[str, Any]:
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = created.get("created", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return doc


def _failing(doc: dict[str, Any], code: Any, owner: str = "host") -> dict[str, Any]:
    doc["status"] = "fail"
    doc["checks"][0].update(status="fail", code=code, owner=owner, summary="the GPU fell off the bus", remedy="drain")
    return doc


def test_the_fleet_knows_exactly_the_codes_verify_writes():
    """The host side never imports verify (tests/test_layout.py): its copy of the catalog is kept equal here."""
    from verify.codes import CODES
    assert set(CODES) == VERIFY_CODES


@pytest.mark.parametrize("code", ["BANANA", "gpu_lost", 79, "", None])
def test_a_host_fault_under_a_code_no_verify_writes_is_not_assessed_and_drains_nothing(code, tmp_path):
    """Slurm's prolog semantics, held by the fleet report as by the prolog (verify/prolog/verdict.py): a report no
    verify wrote (a code outside verify/codes.py, a failure without a code) is not assessed, never a drain line."""
    (tmp_path / "n1.json").write_text(json.dumps(_failing(_node("n1"), code)))
    (tmp_path / "n2.json").write_text(json.dumps(_node("n2")))
    report = fleet(tmp_path)
    why = dict(report.invalid)
    assert set(why) == {"n1.json"} and not report.drains and not report.ok
    said = {"BANANA": "carries code 'BANANA', which is no code of verify's"}
    assert said.get(code, "") in why["n1.json"] and "\n" not in why["n1.json"]      # the others: the schema's words
    assert "drain (" not in format_fleet(report) and fleet_json(report)["drain"] == []


def test_a_host_fault_under_verify_s_code_is_still_a_drain(tmp_path):
    (tmp_path / "n1.json").write_text(json.dumps(_failing(_node("n1"), "GPU_LOST")))
    assert fleet(tmp_path).drains == {"n1": ["torchimages:GPU_LOST the GPU fell off the bus"]}


@pytest.mark.parametrize("created", ["2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "2026-13-01T00:00:00Z",
                                     "0000-01-01T00:00:00Z"])
def test_a_created_no_clock_writes_is_not_assessed(created, tmp_path):
    """RFC 3339 dates are calendar dates: the schema's pattern lets 2026-02-30 through, and the fleet report then
    skipped every time check on it. Not evidence of when it ran: not assessed, said in one line."""
    (tmp_path / "n1.json").write_text(json.dumps(_node("n1", created=created)))
    report = fleet(tmp_path)
    why = dict(report.invalid).get("n1.json", "")
    assert "no time a clock writes" in why and "not assessed" in why and "\n" not in why
    assert not report.nodes and not report.ok


def test_a_created_beyond_the_clock_skew_knob_is_not_assessed_through_the_command(tmp_path, capsys):
    """Evidence from the future is refused beyond CLOCK_SKEW, the one tolerance knob make report and make gate apply
    to signed times (default 5m): 10 minutes ahead passes with CLOCK_SKEW=1h, not with the default."""
    ahead = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 600))
    (tmp_path / "n1.json").write_text(json.dumps(_node("n1", created=ahead)))
    assert main(["fleet-report"], {"DIR": str(tmp_path)}) == 1
    out = capsys.readouterr().out
    assert "n1.json: created 10m in the future" in out or "n1.json: created 9m" in out, out
    assert "CLOCK_SKEW=5m" in out and "not assessed" in out
    assert main(["fleet-report"], {"DIR": str(tmp_path), "CLOCK_SKEW": "1h"}) == 0, capsys.readouterr().out
