"""Stale or replayed evidence under Slurm's Prolog= (issue 36, class 9): every report verify writes says when it was
made (`created`, required by its schema). A report without it (a kept report stripped of its time, handed back by a
--python that probes nothing) is no evidence of this node now: not assessed (REPORT_INVALID, exit 0 under Prolog=),
never a pass, never a drain; nor a pass that resumes a drained node."""
from __future__ import annotations

import json

import pytest

from tests.prolog_fakes import PROLOG_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli, history, slurm
from verify.prolog.verdict import EXIT_NOT_ASSESSED, EXIT_PASS

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _timeless(*checks: dict) -> bytes:
    report = _report(*checks)
    del report["created"]
    return json.dumps(report).encode()


def test_a_report_without_its_time_is_no_pass_and_no_drain(tmp_path, fake, monkeypatch):
    _verify_writes(monkeypatch, _timeless(_gpu()))
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == EXIT_PASS
    failing = _gpu("fail", code="GPU_LOST", owner="host")
    _verify_writes(monkeypatch, _timeless(failing))
    assert cli.main(_args(tmp_path), PROLOG_ENV) == EXIT_PASS
    assert history_events(tmp_path) == [("not-assessed", "REPORT_INVALID")] * 2 and "state=drain" not in " ".join(fake.verbs())


def test_nvsentinel_return_to_service_never_stands_on_a_report_without_its_time(tmp_path, fake, monkeypatch):
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "CHECK_TIMEOUT", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "CHECK_TIMEOUT", "x", now=1000.0, extra={"check": "shm"})
    _verify_writes(monkeypatch, _timeless(_gpu()))
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == EXIT_NOT_ASSESSED
    assert fake.nodes["n1"][0] == "drained"
