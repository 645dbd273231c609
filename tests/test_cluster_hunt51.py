"""Issue 36, round 51 of the hunt on the cluster side, through the public interfaces (`python -m verify.prolog`'s
main, `make fleet-report`'s command), each case named by the practice it follows.
"""
from __future__ import annotations

import json

import pytest

from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli

pytestmark = pytest.mark.unit


# ---- class 6: a measurement that went wrong never hides a proven fault

@pytest.mark.parametrize("unjudged", ["MEASUREMENT_INVALID", "FACTS_INVALID"])
def test_a_measurement_gone_wrong_on_one_check_hides_no_fault_of_another(tmp_path, monkeypatch, capsys, unjudged):
    """NVSentinel's rule for health checks: each check's verdict stands on its own evidence. The gpu check's figures
    contradicting each other (MEASUREMENT_INVALID: verify's own trouble, the host's by its catalog, ranked above
    most codes) left the whole run not assessed, and an all-reduce that returned wrong elements on the same node
    (NCCL_WRONG_RESULT, the host's) kept the node in service under Prolog=. The tool's trouble is not assessed only
    where it is all there is."""
    fake = install_fake(monkeypatch)
    gpu = _gpu("fail", code=unjudged, owner="host" if unjudged == "MEASUREMENT_INVALID" else "job")
    nccl = {"name": "nccl", "status": "fail", "code": "NCCL_WRONG_RESULT", "owner": "host", "metrics": {},
            "summary": "3 wrong elements after the all-reduce"}
    _verify_writes(monkeypatch, json.dumps(_report(gpu, nccl)).encode())
    status = cli.main(_args(tmp_path), PROLOG_ENV)
    err = capsys.readouterr().err
    assert status == 1 and fake.nodes["n1"][0] == "drained", err
    assert history_events(tmp_path)[-1] == ("drain", "NCCL_WRONG_RESULT")
    # alone, it is the tool's trouble: not assessed, never a drain
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, json.dumps(_report(gpu)).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"


def test_a_fault_proven_before_verify_was_interrupted_still_drains(tmp_path, monkeypatch, capsys):
    """A preflight cut by a signal (SIGTERM to verify) after its gpu check found the GPU lost (NVIDIA's Xid catalog:
    79, drain and reset) was not assessed as a whole: the proven fault was dropped and the node kept its jobs. A
    check that ended is evidence whatever came after it; the cut check itself, and a run with nothing proven, stay
    not assessed (Slurm's prolog semantics: the tool's trouble never drains)."""
    fake = install_fake(monkeypatch)
    cut = {"name": "nccl", "status": "fail", "code": "INTERRUPTED", "owner": "job", "metrics": {},
           "summary": "interrupted by SIGTERM"}
    report = {**_report(_gpu("fail", code="GPU_LOST", owner="host"), cut), "interrupted": "SIGTERM"}
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained", capsys.readouterr().err
    fake = install_fake(monkeypatch)
    report = {**_report(_gpu(), cut), "interrupted": "SIGTERM"}
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0 and fake.nodes["n1"][0] == "idle"
    assert "PREFLIGHT_INTERRUPTED" in capsys.readouterr().err
