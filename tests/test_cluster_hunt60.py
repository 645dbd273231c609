"""Issue 36, round 60 of its hunt through the public interfaces: class 3 (return to service must prove the repair)
on what rounds 48-59 left: an intermittent fault returned on one passing preflight, the "last in service" marker moved
by a pass on a node Slurm still held drained, a manual `scontrol resume` the flap rule never saw, and a fleet report
that passed while a node's history stood drained. Each test names the practice it follows (Slurm's prolog semantics,
NVSentinel's return-to-service rules, NVIDIA's Xid catalog)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.cli import main as fleet_main
from tests.prolog_fakes import (
    PROLOG_ENV,
    STEP_ENV,
    _gpu,
    _nccl,
    _report,
    _undrain,
    _verify_runs,
    history_events,
    install_fake,
)
from tests.verify_handmade import make_report
from verify.prolog import cli, history, revalidate, slurm
from verify.prolog.config import Config

pytestmark = pytest.mark.unit

UNDRAIN_ENV = {"SLURMD_NODENAME": "n1"}
PASSING = json.dumps(_report(_gpu(), _nccl())).encode()
SDC = json.dumps(_report(_gpu(), {"name": "sdc", "status": "fail", "code": "SDC_MISMATCH", "owner": "host", "summary": "bits differ",
                                  "metrics": {}})).encode()


@pytest.fixture(autouse=True)
def _stamped_now() -> None:
    """Each report stamped when its test runs: made at import, it was stale evidence (REPORT_INVALID) by the time the
    whole suite reached it, as round 54's was (ci23, ci24)."""
    global PASSING, SDC
    PASSING = json.dumps(_report(_gpu(), _nccl())).encode()
    SDC = json.dumps(_report(_gpu(), {"name": "sdc", "status": "fail", "code": "SDC_MISMATCH", "owner": "host",
                                      "summary": "bits differ", "metrics": {}})).encode()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _drained(tmp_path: Path, fake: Any, code: str, check: str, **facts: Any) -> str:
    """n1 drained by torchimages for `code` an hour ago: Slurm's reason and the history's record of it."""
    t0 = time.time() - 3600
    fake.info = {"Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", t0))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", code, "x", now=t0, extra={"gpus": 8, "check": check, **facts})
    return state


# ---- class 3: an intermittent fault is returned only after passes in a row (NVSentinel: the check stays healthy)

@pytest.mark.parametrize("code,check", [("SDC_MISMATCH", "gpu"), ("NCCL_WRONG_RESULT", "nccl"),
                                        ("KERNEL_FAILED", "gpu"), ("NVLINK_ERRORS", "gpu")])
def test_nvsentinel_return_to_service_an_intermittent_fault_needs_passes_in_a_row(tmp_path, fake, monkeypatch, code,
                                                                                   check):
    """NVSentinel returns a node once its health check stays healthy, not on one healthy sample. A drain for a fault
    that comes and goes (bits that differ on repeat, a wrong all-reduce, NVLink errors) was resumed on ONE passing
    preflight: one draw of an intermittent fault proves no repair. Now make undrain runs it 3 times (the default)."""
    state = _drained(tmp_path, fake, code, check)
    runs = _verify_runs(monkeypatch, [PASSING])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")
    assert len(runs) == 3
    assert history.read(state, "n1").events[-1]["detail"].endswith("(3 passes in a row)")


def test_nvsentinel_return_to_service_an_intermittent_fault_back_on_a_later_run_keeps_the_node_drained(
        tmp_path, fake, monkeypatch, capsys):
    """The SDC passes once, then shows again: the node stays drained (exit 1), the refusal says so."""
    state = _drained(tmp_path, fake, "SDC_MISMATCH", "gpu")
    runs = _verify_runs(monkeypatch, [PASSING, SDC])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 1
    assert fake.nodes["n1"][0] == "drained" and len(runs) == 2
    assert "after 1 passing run(s) of the 3 in a row" in history.read(state, "n1").events[-1]["detail"]
    assert "preflight 1 of 3 passes" in capsys.readouterr().err


def test_the_return_passes_knob_is_ours_and_a_bad_one_is_one_line(tmp_path, fake, monkeypatch, capsys):
    """TORCHIMAGES_RETURN_PASSES=1 (or --return-passes) returns on one pass; a bad value refuses make undrain in one
    line (exit 2), and under Prolog= it is said and the gate runs as before (a setting of ours never the node's)."""
    state = _drained(tmp_path, fake, "SDC_MISMATCH", "gpu")
    runs = _verify_runs(monkeypatch, [PASSING])
    for bad in ("0", "21", "x", "²", "", "3.5", "nan"):
        assert cli.main(_undrain(state, "--return-passes", bad), UNDRAIN_ENV) == 2
        assert "is not a count of passing preflights" in capsys.readouterr().err and not runs
    assert cli.main(["--state-dir", state, "--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_RETURN_PASSES": "zero"}) == 0
    err = capsys.readouterr().err
    assert "only make undrain reads it" in err and len(runs) == 1 and "Traceback" not in err
    runs.clear()
    assert cli.main(_undrain(state), {**UNDRAIN_ENV, "TORCHIMAGES_RETURN_PASSES": "1"}) == 0 and len(runs) == 1


def test_a_drain_for_a_lasting_fault_still_returns_on_one_pass(tmp_path, fake, monkeypatch):
    """An NCCL failure of the host (NCCL_FAILED) is no fault that comes and goes: one passing preflight proves it."""
    state = _drained(tmp_path, fake, "NCCL_FAILED", "nccl")
    runs = _verify_runs(monkeypatch, [PASSING])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and len(runs) == 1


def test_nvidia_xid_catalog_a_kernel_log_xid_drain_is_intermittent():
    """An Xid only the kernel log showed (Xid 48's double-bit error filed as XID_HISTORY) is one event: the preflight
    does not reproduce it, so its return needs the passes in a row too."""
    cfg = Config(30, "prolog", "n1", None, 0.1, "/tmp/x", None, False, 4, 60, 86400, True, 7 * 86400, None, "python3")
    cfg.kernel_log_cause = "XID_HISTORY"
    assert revalidate.passes_needed(cfg) == 3
    cfg.kernel_log_cause, cfg.drained_codes = None, frozenset({"GPU_LOST"})
    assert revalidate.passes_needed(cfg) == 1


# ---- class 3: the "last in service" marker is a resume, or a pass while Slurm had the node in service

def _flagged(tmp_path: Path, fake: Any) -> str:
    """n1 drained again after a resume: the gate flagged it for hardware inspection at its drain."""
    state = _drained(tmp_path, fake, "NCCL_FAILED", "nccl")
    history.record(state, "n1", "inspect", "NCCL_FAILED", "drained again 2.0 h after it was resumed")
    return state


def test_slurm_a_jobs_step_passing_on_a_drained_node_returns_nothing_to_service(tmp_path, fake, monkeypatch, capsys):
    """Slurm lets a job that began before a drain run on: its first step's prolog may pass on the drained node. That
    pass moved the "last in service" marker, so make undrain no longer saw the inspection flag (NVSentinel: a flapping
    node is quarantined for a person) and resumed the node. The pass now records Slurm's state (in_service false)."""
    state = _flagged(tmp_path, fake)
    _verify_runs(monkeypatch, [PASSING])
    assert cli.main(["--state-dir", state, "--no-kernel-log"], STEP_ENV) == 0
    last = history.read(state, "n1").events[-1]
    assert last["event"] == "pass" and last["in_service"] is False
    capsys.readouterr()
    assert cli.main(_undrain(state, "--return-passes", "1"), UNDRAIN_ENV) == 5
    assert "flagged for hardware inspection" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"


def test_a_pass_whose_slurm_state_is_unread_returns_nothing_to_service(tmp_path, fake, monkeypatch):
    state = _flagged(tmp_path, fake)
    _verify_runs(monkeypatch, [PASSING])
    monkeypatch.setattr(slurm, "rows", lambda partition=None, node=None: (None, "sinfo: timed out"))
    assert cli.main(["--state-dir", state, "--no-kernel-log"], STEP_ENV) == 0
    last = history.read(state, "n1").events[-1]
    assert last["in_service"] is False and last["slurm_state"] == "unread" and not history.in_service(last)
    assert revalidate.flagged_since_service(history.read(state, "n1").events) is not None


def test_nvsentinel_a_manual_resume_is_recorded_so_the_flap_rule_sees_it(tmp_path, fake, monkeypatch):
    """NVSentinel counts a manual uncordon (its quarantinedNodeUncordonedManually annotation). `scontrol resume` by
    hand left no resume line, so a fault back a day later was no flap: no resume before it. The next passing prolog
    finds the node in service with no resume on record, and records the resume it was."""
    state = _drained(tmp_path, fake, "NCCL_FAILED", "nccl")
    fake.nodes["n1"] = ("idle", "none")               # an operator's scontrol update nodename=n1 state=resume
    _verify_runs(monkeypatch, [PASSING])
    assert cli.main(["--state-dir", state, "--no-kernel-log"], PROLOG_ENV) == 0
    assert history_events(tmp_path)[-2:] == [("resume", None), ("pass", None)]
    assert history.read(state, "n1").events[-2]["by_hand"] is True
    # once back in service, a pass reads no sinfo again
    fake.calls.clear()
    assert cli.main(["--state-dir", state, "--no-kernel-log"], PROLOG_ENV) == 0 and not fake.calls
    history.record(state, "n1", "drain", "NCCL_FAILED", "back")
    assert history.failed_again_after_resume(history.read(state, "n1").events) is not None


# ---- class 3 on the fleet side: a history that stands drained is no passing node

def _job(tmp_path: Path, hosts: tuple[str, ...] = ("n1", "n2")) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    for host in hosts:
        doc = make_report()
        doc["environment"]["hostname"] = host
        doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 600))
        (job / f"{host}.json").write_text(json.dumps(doc))
    return job


@pytest.mark.parametrize("after", [[], [("pass", {"in_service": False})], [("pass", {"in_service": "yes"})],
                                   [("pass", {"started": -7200})]])
def test_nvsentinel_fleet_report_never_passes_a_node_whose_history_stands_drained(tmp_path, capsys, after):
    """A node drained after its reports (or still drained while a job that began before the drain reported a pass)
    passed make fleet-report: a fault on record hidden behind a passing report. Now it fails the fleet and is named."""
    _job(tmp_path)
    state, now = str(tmp_path / "state"), time.time()
    history.record(state, "n1", "drain", "GPU_LOST", "lost", now=now - 60)
    for event, extra in after:
        extra = {k: (now + v if k == "started" else v) for k, v in extra.items()}
        history.record(state, "n1", event, None, "preflight passed", extra=extra)
    status = fleet_main(["fleet-report"], {"DIR": str(tmp_path / "job"), "STATE_DIR": state,
                                           "METRICS_DIR": str(tmp_path / "prom")})
    out = capsys.readouterr().out
    assert status == 1 and "1 node(s) drained in their history, not back in service since" in out, out
    assert "torchimages_node_drained{node=\"n1\",source=\"fleet\"} 1.0" in \
        (tmp_path / "prom" / "torchimages_fleet_n1.prom").read_text()
    assert "  n1: GPU_LOST on" in out
    assert {h["node"]: h["drained"] for h in json.loads((tmp_path / "job" / "fleet.json").read_text())["history"]
            }["n1"]["code"] == "GPU_LOST"


@pytest.mark.parametrize("back", [("resume", {}), ("pass", {}), ("pass", {"in_service": True})])
def test_fleet_report_passes_a_node_back_in_service(tmp_path, capsys, back):
    _job(tmp_path)
    state, now = str(tmp_path / "state"), time.time()
    history.record(state, "n1", "drain", "GPU_LOST", "lost", now=now - 86400 * 30)
    history.record(state, "n1", back[0], None, "back", now=now - 86400 * 29, extra=back[1])
    assert fleet_main(["fleet-report"], {"DIR": str(tmp_path / "job"), "STATE_DIR": state}) == 0, \
        capsys.readouterr().out


def test_slurm_a_pass_of_a_prolog_that_began_before_the_drain_is_no_return_to_service(tmp_path, fake, monkeypatch):
    """Two jobs' prologs on one node (Slurm runs one per job): one drains, the other began before that drain and
    writes its pass after the drain's line, having read the history before it. That pass is no return to service:
    the drain's repair and its inspection flag still stand (the fleet report's rule, history.in_service)."""
    state = _flagged(tmp_path, fake)
    drain = history.read(state, "n1").events[0]
    history.record(state, "n1", "pass", None, "beside", extra={"started": drain["epoch"] - 30})
    events = history.read(state, "n1").events
    assert history.stands_drained(events) and history.current_drains(events) == [drain]
    assert revalidate.flagged_since_service(events) is not None
    history.record(state, "n1", "resume", None, "revalidated")
    events = history.read(state, "n1").events
    assert not history.stands_drained(events) and history.current_drains(events) == []


def test_fleet_report_matches_a_reports_full_host_name_to_slurms_short_node_name(tmp_path, capsys):
    """verify names the host as gethostname does (n1.cluster.local), the prolog's history as Slurm names the node
    (n1): the drain is n1's all the same."""
    _job(tmp_path, ("n1.cluster.local", "n2.cluster.local"))
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "GPU_LOST", "lost", now=time.time() - 60)
    assert fleet_main(["fleet-report"], {"DIR": str(tmp_path / "job"), "STATE_DIR": state}) == 1
    assert "1 node(s) drained in their history" in capsys.readouterr().out


def test_nvsentinel_a_manual_resume_before_the_next_drain_is_seen_by_the_flap_rule(tmp_path, fake, monkeypatch,
                                                                                   capsys):
    """The same manual resume, and the fault back at the very next job (no pass between): the drain finds the node in
    service with a drain standing in its history, records the resume, and the flap rule flags it for inspection."""
    state = _drained(tmp_path, fake, "SDC_MISMATCH", "gpu")
    fake.nodes["n1"] = ("idle", "none")
    _verify_runs(monkeypatch, [SDC])
    assert cli.main(["--state-dir", state, "--no-kernel-log"], PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert [e for e, _ in history_events(tmp_path)][-4:] == ["resume", "fault", "drain", "inspect"]
    assert history.read(state, "n1").events[-4]["by_hand"] is True
    assert "INSPECT n1" in capsys.readouterr().err


def test_a_manual_resume_weeks_ago_is_no_flap_of_a_new_fault(tmp_path, fake, monkeypatch, capsys):
    """When the node was resumed by hand is unknown: the resume is stamped at the earliest it can have been (the last
    time its history saw it drained), so a fault 30 days after that drain is no flap (a false inspection flag would
    keep a healthy node out until a person looked), while its by-hand resume is on record."""
    state = _drained(tmp_path, fake, "SDC_MISMATCH", "gpu")
    old = time.time() - 30 * 86400
    text = Path(history.path(state, "n1")).read_text()
    entry = json.loads(text)
    entry.update(epoch=old, time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(old)))
    Path(history.path(state, "n1")).write_text(json.dumps(entry) + "\n")
    fake.nodes["n1"] = ("idle", "none")
    _verify_runs(monkeypatch, [SDC])
    assert cli.main(["--state-dir", state, "--no-kernel-log"], PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    events = history.read(state, "n1").events
    assert [e["event"] for e in events] == ["drain", "resume", "fault", "drain"]
    assert events[1]["by_hand"] is True and events[1]["epoch"] == pytest.approx(old, abs=1)
    assert "INSPECT" not in capsys.readouterr().err
