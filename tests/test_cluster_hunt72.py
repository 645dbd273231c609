"""Issue 36, a seventy-second hunt through the public interfaces (`python -m verify.prolog`'s main under slurmd's
environment, slurm.conf as slurmd reads it), reading docs/prolog.md's promises sentence by sentence.

Found:
- Class 1, a setting slurmd keeps and we missed (high: a healthy node drained past the breaker; medium the other
  way: every run not assessed). docs/prolog.md promises "a run ends by cap + 3 s" and that under Prolog= the cap is
  fitted under the timeout slurm.conf gives, "read as Slurm reads it". Slurm 25.05 added `PrologTimeout` and
  `EpilogTimeout` (src/common/read_config.c: each, where set, is its script's timeout; PrologEpilogTimeout only
  their default; slurm.conf(5): "This value is not used for prologs if PrologTimeout is configured"). The prolog
  read only PrologEpilogTimeout: a 25.05 slurm.conf with `PrologTimeout=60` (no PrologEpilogTimeout) had slurmd kill
  the prolog at 60 s and drain the node ("Prolog error", no reason of ours, past the breaker) while the prolog ran to
  its own 90 s cap; one with `PrologEpilogTimeout=30` kept for slow epilogs beside `PrologTimeout=600` capped every
  prolog at 20 s, so no run was assessed. Repro: slurm.conf `PrologTimeout=60`, a Prolog= run: no "capped" line.
  Practice: Slurm's prolog semantics (slurmd's kill at the timeout drains). Fix (verify/prolog/slurmconf.setting): under
  Prolog= PrologTimeout decides where given, under Epilog= EpilogTimeout, else PrologEpilogTimeout, as slurmd
  decides; the note names the key that set the timeout. Docs: docs/prolog.md.
- Class 1 again (high, as above): slurm.conf's `Include` takes Slurm's include modifier `%c` (slurm.conf(5) "INCLUDE
  MODIFIERS": the ClusterName, lower case; parse_config.c). `Include /etc/slurm/%c/timeouts.conf` was read as a file
  literally named `%c`: "not read", the PrologEpilogTimeout=30 in it missed, the cap unfitted, slurmd's kill drained
  the node. Repro: slurm.conf `ClusterName=Prod` + `Include %c/t.conf`, prod/t.conf `PrologEpilogTimeout=30`: no
  "capped" line. Fix (slurmconf._walk): %c is the ClusterName read so far, lower case; an Include naming %c before
  any ClusterName (slurmd refuses it) is said, never read literally.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, slurmconf

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str,
          context: str = "prolog_slurmd") -> str:
    """A run slurmd started (Prolog= or Epilog=) with slurm.conf holding `text`, that passes; what it said."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    env = {**PROLOG_ENV, "SLURM_SCRIPT_CONTEXT": context, "SLURM_CONF": str(conf)}
    assert cli.main(_args(tmp_path), env) == 0
    return capsys.readouterr().err


def test_slurm_25_05_prolog_timeout_alone_fits_the_cap(tmp_path, fake, monkeypatch, capsys):
    """slurmd kills the Prolog= at PrologTimeout=60 and drains the node: the prolog's 90 s cap is fitted under it."""
    said = _said(tmp_path, monkeypatch, capsys, "ClusterName=c\nprologtimeout=60\n")
    assert "PrologTimeout=60 is under the prolog's cap of 90 s" in said and "capped at 50 s" in said, said
    assert "raise PrologTimeout to 100" in said, said


def test_prolog_timeout_decides_over_prolog_epilog_timeout(tmp_path, fake, monkeypatch, capsys):
    """PrologEpilogTimeout=30 kept for epilogs beside PrologTimeout=600: slurmd waits 600 s for the prolog, so its
    cap stays 90 s (it was 20 s: every run that needed more not assessed)."""
    said = _said(tmp_path, monkeypatch, capsys, "PrologEpilogTimeout=30\nPrologTimeout=600\n")
    assert "capped" not in said, said
    assert slurmconf.setting({"SLURM_CONF": str(tmp_path / "slurm.conf")})[:2] == (600.0, "PrologTimeout")


def test_epilog_reads_epilog_timeout(tmp_path, fake, monkeypatch, capsys):
    """Under Epilog= slurmd's timeout is EpilogTimeout, where given; PrologTimeout is the prolog's, not its."""
    said = _said(tmp_path, monkeypatch, capsys, "PrologTimeout=600\nEpilogTimeout=40\n", context="epilog_slurmd")
    assert "EpilogTimeout=40 is under the prolog's cap of 90 s" in said and "capped at 30 s" in said, said
    conf = {"SLURM_CONF": str(tmp_path / "slurm.conf")}
    assert slurmconf.setting({**conf, "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"})[:2] == (600.0, "PrologTimeout")


@pytest.mark.parametrize(("text", "want"), [
    ("PrologEpilogTimeout=45\n", (45.0, "PrologEpilogTimeout")),          # no key of 25.05: the common default
    ("PrologEpilogTimeout=45\nPrologTimeout=UNLIMITED\n", (None, "PrologTimeout")),   # slurmd waits forever
    ("PrologTimeout=0x1e PrologFlags=Alloc\nPrologTimeout=200\n", (30.0, "PrologTimeout")),   # two: the smaller
    ("EpilogTimeout=20\n", (None, "PrologEpilogTimeout")),               # the epilog's only: no prolog timeout
])
def test_which_key_slurmd_keeps_for_its_prolog(tmp_path, text, want):
    conf = tmp_path / "slurm.conf"
    conf.write_text(text)
    assert slurmconf.setting({"SLURM_CONF": str(conf), "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"})[:2] == want


def test_include_modifier_percent_c_is_the_cluster_name(tmp_path, fake, monkeypatch, capsys):
    """`Include %c/timeouts.conf` with ClusterName=Prod reads prod/timeouts.conf, as slurmd does."""
    (tmp_path / "prod").mkdir()
    (tmp_path / "prod" / "timeouts.conf").write_text("PrologEpilogTimeout=30\n")
    said = _said(tmp_path, monkeypatch, capsys, "ClusterName=Prod\nInclude %c/timeouts.conf\n")
    assert "PrologEpilogTimeout=30 is under the prolog's cap of 90 s" in said and "capped at 20 s" in said, said


def test_include_modifier_before_any_cluster_name_is_said(tmp_path):
    conf = tmp_path / "slurm.conf"
    (tmp_path / "%c").mkdir()
    (tmp_path / "%c" / "t.conf").write_text("PrologEpilogTimeout=30\n")     # never read literally
    conf.write_text("Include %c/t.conf\nClusterName=prod\n")
    timeout, note = slurmconf.prolog_timeout({"SLURM_CONF": str(conf)})
    assert timeout is None and note is not None and "%c before any ClusterName" in note, note
