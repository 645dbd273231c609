"""What a first-time user reads from `verify --help`, `verify explain --help` and explain's report header: each
line they would copy or act on must work as written (a newcomer pass, 2026-11-30)."""
from __future__ import annotations

import pytest

from tests.helpers import ROOT
from verify import cli

pytestmark = pytest.mark.unit

RAW = str(ROOT / "tests" / "data" / "real-world" / "ulimit-memlock-64k-ibv-create-cq-fails" / "raw.txt")


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 0
    return " ".join(capsys.readouterr().out.split())    # argparse wraps: compare words, not lines


def test_the_docker_line_to_keep_the_report_passes_the_shm_check(capsys, monkeypatch):
    """Docker's default /dev/shm is 64 MiB: a `docker run` without --shm-size fails SHM_TOO_SMALL, and the image's
    uid 1000 may not write to $PWD. Both places that print the line give both flags."""
    text = _help(["--help"], capsys)
    monkeypatch.setenv("VERIFY_IN_IMAGE", "1")
    assert cli.main(["explain", RAW]) == 1
    hint = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("to keep the JSON report: "))
    for line in (text, hint):
        assert '--shm-size=2g --user "$(id -u):$(id -g)" -v "$PWD:/out"' in line, line


def test_explain_names_its_files_not_a_replay_host(capsys):
    """A newcomer read `REPLAY of facts recorded on explain at -`: explain has no host and no time, only files."""
    assert cli.main(["explain", RAW]) == 1
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith(f"EXPLAIN of {RAW} ") and "recorded on" not in header and " at -" not in header


def test_explain_help_says_what_each_argument_is(capsys):
    text = _help(["explain", "--help"], capsys)
    for arg, words in (("FILE", "a text file"), ("--json PATH", "write the JSON report"),
                       ("--junit PATH", "write a JUnit"), ("--expect-gpus N", "fail (instead of skip) when the text shows fewer than N")):
        assert f"{arg} {words}" in text, arg
    assert "docs/explain.md" in text


def test_explain_without_a_file_says_whose_usage_in_one_line(capsys):
    assert cli.main(["explain"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("verify: explain: ") and "verify explain FILE..." in err
