"""Issue 36, class 5 (a fourth hunt): one stall is no evidence, whatever the confirmation's report says.

NVSentinel's checker rule: a health check that stalls once is re-run before it is believed; only a confirmed stall
(or a streak of them, --hang-runs) is the node's. A confirmation whose report holds no result for the check it was
asked to run again (a report no verify writes: verify writes one result for every check it is asked to run) kept the
first run's timeout, unconfirmed, and the prolog drained the node on it: under Slurm's Prolog= one busy run took a
node out. Now such a confirmation is REPORT_INVALID, and no unconfirmed host timeout reaches a drain (it is not
assessed, PREFLIGHT_TIMEOUT, a run towards --hang-runs). On `cli.main` with Slurm's commands and verify replaced
in-process (tests/prolog_fakes.py, argv recorded)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, FakeSlurm, _args, _gpu, _report, install_fake
from verify.prolog import cli, history
from verify.prolog.verdict import EXIT_NOT_ASSESSED, EXIT_PASS, FAULT, Verdict, confirmation

pytestmark = pytest.mark.unit

TIMEOUT = {"name": "nccl", "status": "fail", "code": "CHECK_TIMEOUT", "owner": "host", "summary": "ran past 15 s"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _runs(monkeypatch: pytest.MonkeyPatch, *reports: dict[str, Any]) -> list[list[str]]:
    """verify replaced: each run writes the next report; the commands it was given are kept."""
    bodies, seen = [json.dumps(r).encode() for r in reports], []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        seen.append(cmd)
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies.pop(0))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return seen


@pytest.mark.parametrize("rerun", [
    lambda: _report({"name": "shm", "status": "pass", "summary": "ok"}, whole=False),  # another check than the one asked
    lambda: _report(_gpu("pass", 8), whole=False),
])                                    # made when the test runs: a report made at import is stale by then (ci40)
@pytest.mark.parametrize("env, status", [(PROLOG_ENV, EXIT_PASS), (STEP_ENV, EXIT_NOT_ASSESSED)])
def test_nvsentinel_checker_rule_a_confirmation_without_the_check_confirms_nothing(tmp_path, fake, monkeypatch, rerun,
                                                                                   env, status):
    seen = _runs(monkeypatch, _report(_gpu("pass", 8), TIMEOUT), rerun())
    assert cli.main(_args(tmp_path, "--budget", "30"), env) == status
    assert seen[1][seen[1].index("--checks") + 1] == "nccl"              # it was asked to run nccl again
    assert "update nodename=n1 state=drain" not in fake.verbs()
    events = [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), "n1").events]
    assert events == [("not-assessed", "REPORT_INVALID")]


def test_nvsentinel_checker_rule_a_confirmed_timeout_still_drains(tmp_path, fake, monkeypatch):
    """The rule's other half: the check timed out again alone, with more time: the node's (drained, exit 1)."""
    _runs(monkeypatch, _report(_gpu("pass", 8), TIMEOUT), _report(TIMEOUT))
    assert cli.main(_args(tmp_path, "--budget", "30"), PROLOG_ENV) == 1
    assert "update nodename=n1 state=drain" in fake.verbs()


def test_the_confirmation_names_the_check_its_report_left_out():
    first = _report(_gpu("pass", 8), TIMEOUT)
    v = confirmation(first, Verdict(FAULT, "CHECK_TIMEOUT", "host", "t", "nccl", confirmed=False),
                     _report(_gpu("pass", 8), whole=False), 120.0)
    assert v.kind == "not-assessed" and v.code == "REPORT_INVALID" and "nccl" in v.summary and not v.drains


def test_nvsentinel_checker_rule_a_check_skipped_alone_neither_confirms_nor_refutes(tmp_path, fake, monkeypatch):
    """A timed-out check the confirmation skipped did not end: no pass (which ended the --hang-runs streak), no
    drain: not assessed, PREFLIGHT_TIMEOUT, a run towards the streak."""
    skipped = {"name": "nccl", "status": "skip", "code": "NCCL_NOT_EXERCISED", "summary": "not run"}
    _runs(monkeypatch, _report(_gpu("pass", 8), TIMEOUT), _report(skipped, _gpu("pass", 8)))
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == EXIT_NOT_ASSESSED
    assert "update nodename=n1 state=drain" not in fake.verbs()
    events = [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), "n1").events]
    assert events == [("not-assessed", "PREFLIGHT_TIMEOUT")]


def test_a_busy_host_s_pass_names_only_the_checks_that_timed_out(tmp_path, fake, monkeypatch, capsys):
    _runs(monkeypatch, _report(_gpu("pass", 8), TIMEOUT), _report(_gpu("pass", 8), dict(TIMEOUT, status="pass",
                                                                                        code=None, owner=None)))
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == EXIT_PASS
    out = capsys.readouterr().out
    assert "; nccl timed out once, then ended alone" in out, out


def test_nvsentinel_return_to_service_a_hung_gpu_node_is_proven_against_its_gpus(tmp_path, fake, monkeypatch):
    """A GPU stuck: the preflight hangs on three runs in a row and the node is drained PREFLIGHT_HUNG, with no report
    to count its GPUs and no Gres in Slurm (GPUs used without Gres). The driver's device files (/dev/nvidiaN, made at
    its load, read without NVML, which a stuck GPU hangs) are its count at the drain: `make undrain` after a reboot
    that left NVML seeing no GPU at all keeps it drained, and resumes it once every GPU is back."""
    from verify.prolog import drain, kernlog
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-caps"):
        (dev / name).write_text("")
    monkeypatch.setattr(drain, "DEV", str(dev))
    boot = kernlog.host_clock(kernlog.PROC).boot_id or None
    for age in (600.0, 300.0):
        history.record(str(tmp_path / "state"), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past",
                       now=time.time() - age, extra={"boot_id": boot})
    monkeypatch.setattr(cli, "_run_verify", lambda cmd, limit: (None, ""))     # it hangs: no report
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1
    drained = history.last_drain(history.read(str(tmp_path / "state"), "n1").events)
    assert drained is not None and drained["code"] == "PREFLIGHT_HUNG" and drained["gpus"] == 2
    fake.info = {"NodeHostName": "n1"}                           # no Gres
    args = [*_args(tmp_path), "--revalidate", "--node", "n1"]
    no_gpu = _report({"name": "gpu", "status": "skip", "code": "GPU_NOT_VISIBLE", "owner": "host", "summary": "none"},
                     {"name": "shm", "status": "pass", "summary": "ok"})
    _runs(monkeypatch, no_gpu)
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_NOT_ASSESSED and fake.nodes["n1"][0] == "drained"
    # a hung preflight comes and goes: --return-passes (3) passing runs in a row return it (tests/test_cluster_hunt62.py)
    seen = _runs(monkeypatch, *[_report(_gpu("pass", 2))] * 3)
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_PASS and fake.nodes["n1"][0] == "idle" and len(seen) == 3
