"""Issue 36, the leftovers of two hunts (rounds 48 and 49), through the public interfaces: make isolate's answer
read by the fleet report, an explicit empty metrics folder, a Slurm node name past one DNS label, REQUIRE's node=
against a short or a fully qualified name.

The practice followed: Slurm's slurm.conf (a NodeName "may also be the fully qualified domain name", so longer than
one 63-character DNS label; a Prolog= that exits non-zero drains the node), and RFC 1035/4343 for what one host name
is (one spelling up to case and the root's trailing dot; a short name is not its FQDN: n7 may be n7 of any domain)."""
from __future__ import annotations

import json

import pytest

from scripts.fleet.fleet import read_reports
from tests.test_isolate_runner import NODES, _isolate


@pytest.mark.host
def test_make_isolate_s_answer_is_no_invalid_report_of_the_fleet(tmp_path):
    """`make fleet-report DIR=<isolate's reports>` listed isolate.json (make isolate's own answer) as an invalid
    verify report: a fleet that never passes on a file of ours. It is skipped as fleet.json is; a file of that name
    that is no answer of isolate's (a verify report, a forged kind) is still read and judged."""
    status, lines = _isolate(tmp_path, NODES[:3], {})
    assert status == 0 and (tmp_path / "isolate.json").is_file(), lines
    _, invalid = read_reports(tmp_path)
    assert "isolate.json" not in [name for name, _ in invalid], invalid
    forged = tmp_path / "deep" / "isolate.json"
    forged.parent.mkdir()
    forged.write_text(json.dumps({"kind": "torchimages-isolate", "checks": [], "schema_version": 2}))
    _, invalid = read_reports(tmp_path)
    assert "deep/isolate.json" in [name for name, _ in invalid], invalid
