"""Issue 36, an eightieth hunt through the public interfaces (`python -m verify.prolog`'s main under Prolog= and as
`make undrain NODE=...` runs it, the state folder's history), classes 3, 5, 9 and 10.

Found:
- Class 3, return to service must prove the repair (high: a broken node returned unproven). A check that times out,
  then times out again in its confirmation run alone with more time, is a confirmed hang of the host's: the prolog
  drains under CHECK_TIMEOUT (or NCCL_TIMEOUT for the all-reduce), the same stuck GPU stalling its checker that
  PREFLIGHT_HUNG drains for across runs. `make undrain` returned a PREFLIGHT_HUNG drain only after --return-passes
  passing preflights in a row (a degrading GPU stalls its checker on most runs, not all: one run that finished is
  one draw), but a CHECK_TIMEOUT or NCCL_TIMEOUT drain on the first pass. Repro: a Prolog= run whose gpu check
  times out twice drains n1 for CHECK_TIMEOUT; `make undrain NODE=n1` whose first preflight passes: RESUMED, though
  the next one stalls again. Practice: NVSentinel's return to service (a node is returned once its check stays
  healthy, not on one healthy sample). Fix (verify/prolog/revalidate.INTERMITTENT_CODES): the confirmed timeouts
  (verdict.TIMEOUT_CODES) need --return-passes passes in a row as PREFLIGHT_HUNG does; docs/prolog.md says so.
- Class 3 / class 5, the stall itself counted as its repair (high: a broken node returned unproven). At the gate a
  check that times out and then ends alone with more time is "a busy host, not a broken one": a pass. `make undrain`
  took the same pass as proof for a node drained for that very stall: PREFLIGHT_HUNG, CHECK_TIMEOUT or NCCL_TIMEOUT
  came back on three preflights whose gpu check stalled past its budget each time. Repro: n1 drained for
  PREFLIGHT_HUNG; `make undrain NODE=n1` whose every preflight's gpu check times out and then passes alone: RESUMED.
  Practice: NVSentinel's checker rule and return to service (the check that failed must stay healthy; a checker
  that stalled again is the fault seen again, not gone). Fix (verdict.Verdict.stalled, set by confirmation's pass;
  revalidate._proven): for a stall drain such a pass is PREFLIGHT_TIMEOUT, not assessed (exit 3, still drained);
  the gate's rule is unchanged.
- Class 3, the same rule for a hardware slowdown (medium: a node returned on one sample). A drain for THROTTLED
  (HW slowdown, HW thermal slowdown or power brake confirmed under load, or HBM past its limit: a failing fan, a
  PSU, the room) returned on one passing preflight, which may be one cool moment. Repro: n1 drained for THROTTLED,
  `make undrain NODE=n1` whose first preflight passes and second fails THROTTLED: RESUMED after the first. Practice:
  NVSentinel's return to service (healthy over time, not one sample), as for NVLINK_ERRORS. Fix:
  revalidate.INTERMITTENT_CODES holds THROTTLED; docs/prolog.md.
- Class 5, a run that hangs then passes (high: a stuck GPU kept in service for good). A run whose gpu check timed
  out and then ended alone in its confirmation is a pass at the gate ("a busy host, not a broken one"), and a pass
  ended the --hang-runs streak: runs alternating between verify hanging whole (PREFLIGHT_TIMEOUT) and such a stalled
  pass were "1 of 3 runs in a row hung" for ever, though every run stalled its checker past the budget. Repro: five
  Prolog= runs hang, stall-then-end, hang, stall-then-end, hang: never PREFLIGHT_HUNG. Practice: NVSentinel's
  checker rule (stalls are counted; a stall that ended late is no healthy sample). Fix (drain.act records such a
  pass `stalled`; history.streak): it neither counts nor ends the streak, as our own trouble does not; a plain pass
  still ends it, and the stalled run is still a pass (the node stays in service, exit 0).

Looked at and held (no defect), through the same interfaces: every host-owned code of verify/codes.py, PREFLIGHT_HUNG
and the kernel-log codes drained and `make undrain` run in the same boot with a passing preflight: the codes NVIDIA's
catalog repairs by a reset or a reboot (repair.REBOOT_CODES) stay drained, the memory-error ones too, a kernel-log
drain refuses --no-kernel-log; each TORCHIMAGES_* knob of the prolog given `5 m`, `0x10`, `1e3`, `-5`, `nan`,
`300ms`, `5mins`, `1y`, a tab or a relative path: said in one line, the default holds, the node gated (exit 0 on a
pass, the history written); Slurm's Gres forms (typed, several types, sockets, MIG, shard and mps beside it).

Low, left: TORCHIMAGES_CLOCK_SKEW=0 is taken by the prolog (verify/shared/clockskew.py: 0 to a year) and refused by
make isolate and make fleet-report (scripts/durations.parse_duration: above 0); TORCHIMAGES_CLOCK_SKEW=300000 (meant
as milliseconds?) is 83 hours, within the year both allow, said nowhere.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verify.prolog import cli, revalidate
from verify.prolog.verdict import TIMEOUT_CODES

from .prolog_fakes import PROLOG_ENV, _args, _gpu, _nccl, _report, _shm, _undrain, drained, history_events, install_fake

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _passing() -> bytes:
    return json.dumps(_report(_gpu())).encode()


def _stalled(check: str) -> bytes:
    """A preflight whose `check` timed out (owned by the host, as verify writes a check's timeout)."""
    if check == "gpu":
        return json.dumps(_report(_gpu("fail", code="CHECK_TIMEOUT", owner="host", summary="gpu timed out"), _shm(),
                                  _nccl())).encode()
    nccl = {**_nccl(), "status": "fail", "code": "NCCL_TIMEOUT", "owner": "host", "summary": "all-reduce timed out"}
    return json.dumps(_report(_gpu(), nccl)).encode()


def _verify(monkeypatch: pytest.MonkeyPatch, plan: list[str], check: str = "gpu") -> list[list[str]]:
    """verify replaced: each whole preflight writes the next of `plan` ("pass" or "stall"); a confirmation run
    (--checks) of a stalled check stalls again. The commands run are returned."""
    runs: list[list[str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        runs.append(cmd)
        out = Path(cmd[cmd.index("--json") + 1])
        if "--checks" in cmd:
            stalled = json.loads(_stalled(check))
            stalled["checks"] = [c for c in stalled["checks"] if c["name"] == check]
            out.write_bytes(json.dumps(stalled).encode())
            return 1, ""
        whole = [c for c in runs if "--checks" not in c]
        body = plan[min(len(whole), len(plan)) - 1]
        out.write_bytes(_passing() if body == "pass" else _stalled(check))
        return (0 if body == "pass" else 1), ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return runs


@pytest.mark.parametrize(("check", "code"), [("gpu", "CHECK_TIMEOUT"), ("nccl", "NCCL_TIMEOUT")])
def test_nvsentinel_return_to_service_a_confirmed_stall_needs_passes_in_a_row(tmp_path, fake, monkeypatch, capsys,
                                                                             check, code):
    """The prolog drains n1 for a check that timed out twice (its confirmation too); make undrain's first preflight
    passes and its second stalls again: n1 stays drained (it was resumed on the first pass)."""
    fake.info = {"Gres": "gpu:8"}
    _verify(monkeypatch, ["stall"], check)
    status = cli.main(_args(tmp_path, "--budget", "30"), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"})
    out = capsys.readouterr()
    assert fake.nodes["n1"][0] == "drained" and fake.nodes["n1"][1].startswith(f"torchimages:{code} #"), out
    runs = _verify(monkeypatch, ["pass", "stall"], check)
    status = cli.main(_undrain(str(tmp_path / "state"), "--budget", "30"), {})
    out = capsys.readouterr()
    assert fake.nodes["n1"][0] == "drained", out
    assert status != 0 and "RESUMED" not in out.out + out.err
    assert "preflight 1 of 3 passes" in out.out + out.err
    assert len([c for c in runs if "--checks" not in c]) == 2
    assert ("resume", None) not in history_events(tmp_path)


@pytest.mark.parametrize("code", sorted(TIMEOUT_CODES))
def test_nvsentinel_return_to_service_a_confirmed_stall_returns_after_passes_in_a_row(tmp_path, fake, monkeypatch,
                                                                                      capsys, code):
    """The same drain returns once --return-passes preflights in a row pass (default 3), as PREFLIGHT_HUNG's."""
    state = drained(tmp_path, fake, code, "gpu" if code == "CHECK_TIMEOUT" else "nccl")
    runs = _verify(monkeypatch, ["pass"])
    status = cli.main(_undrain(state), {})
    out = capsys.readouterr().out
    assert status == 0 and fake.nodes["n1"][0] == "idle" and "3 passes in a row" in out, out
    assert len(runs) == 3


def test_every_confirmed_timeout_is_a_fault_that_comes_and_goes():
    """One rule for the stall drained across runs (PREFLIGHT_HUNG) and within one (the confirmed timeouts)."""
    assert TIMEOUT_CODES | {"PREFLIGHT_HUNG"} <= revalidate.INTERMITTENT_CODES


def _stall_then_end(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """verify replaced: every whole preflight's gpu check times out; its confirmation (--checks gpu) ends and passes."""
    runs: list[list[str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        runs.append(cmd)
        out = Path(cmd[cmd.index("--json") + 1])
        out.write_bytes(json.dumps(_report(_gpu(), whole=False)).encode() if "--checks" in cmd else _stalled("gpu"))
        return (0 if "--checks" in cmd else 1), ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return runs


@pytest.mark.parametrize("code", ["PREFLIGHT_HUNG", "CHECK_TIMEOUT", "NCCL_TIMEOUT"])
def test_nvsentinel_return_to_service_a_stall_again_is_no_proof_the_stall_is_gone(tmp_path, fake, monkeypatch, capsys,
                                                                                  code):
    """Drained for a checker that stalls: make undrain's preflights whose gpu check times out, then ends alone with
    more time (at the gate: a busy host, a pass) do not return it; it was resumed on three such passes."""
    state = drained(tmp_path, fake, code, "preflight" if code == "PREFLIGHT_HUNG" else "gpu")
    runs = _stall_then_end(monkeypatch)
    status = cli.main(_undrain(state, "--budget", "30"), {})
    out = capsys.readouterr()
    assert status == 3 and fake.nodes["n1"][0] == "drained", out
    assert "stalled again" in out.out + out.err and "RESUMED" not in out.out + out.err
    assert len(runs) == 2 and ("resume", None) not in history_events(tmp_path)


def test_at_the_gate_a_stall_that_ends_alone_is_still_a_busy_host(tmp_path, fake, monkeypatch, capsys):
    """The rule is return to service's: under Prolog= the same run passes, as before (a busy host, not a broken one)."""
    _stall_then_end(monkeypatch)
    status = cli.main(_args(tmp_path, "--budget", "30"), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"})
    out = capsys.readouterr().out
    assert status == 0 and "a busy host, not a broken one" in out and fake.nodes["n1"][0] == "idle", out


def test_nvsentinel_return_to_service_a_hardware_slowdown_needs_passes_in_a_row(tmp_path, fake, monkeypatch, capsys):
    """Drained for THROTTLED: a first passing preflight, then a throttled one: n1 stays drained."""
    state = drained(tmp_path, fake, "THROTTLED", "gpu")
    hot = _gpu("fail", code="THROTTLED", owner="host", summary="GPU 3: clocks throttled by HwSlowdown in 3 of 3 reads")
    bodies = [_passing(), json.dumps(_report(hot, _shm(), _nccl())).encode()]
    runs: list[float] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        runs.append(limit)
        Path(cmd[cmd.index("--json") + 1]).write_bytes(bodies[min(len(runs), 2) - 1])
        return (0 if len(runs) == 1 else 1), ""
    monkeypatch.setattr(cli, "_run_verify", run)
    status = cli.main(_undrain(state), {})
    out = capsys.readouterr()
    assert fake.nodes["n1"][0] == "drained" and "RESUMED" not in out.out + out.err, out
    assert status == 1 and len(runs) == 2 and "after 1 passing run(s) of the 3 in a row" in out.out + out.err
    assert "THROTTLED" in revalidate.INTERMITTENT_CODES


def test_nvsentinel_checker_rule_a_stall_that_ended_alone_between_hangs_never_resets_the_count(tmp_path, fake,
                                                                                              monkeypatch, capsys):
    """Runs under Prolog=: verify hangs whole, then a run whose gpu check stalls and ends alone (a pass: a busy
    host), then a hang, such a pass, a hang: the fifth run drains PREFLIGHT_HUNG, 3 hangs in a row. The stalled
    pass ended the streak at every second run, so a GPU stalling every preflight stayed in service for good."""
    plan = ["hang", "stall", "hang", "stall", "hang"]
    whole: list[str] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        out = Path(cmd[cmd.index("--json") + 1])
        if "--checks" in cmd:
            out.write_bytes(json.dumps(_report(_gpu(), whole=False)).encode())
            return 0, ""
        whole.append(plan[len(whole)])
        if whole[-1] == "hang":
            return None, ""
        out.write_bytes(_stalled("gpu"))
        return 1, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    env = {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}
    for _ in range(4):
        cli.main(_args(tmp_path, "--budget", "30"), env)
        assert fake.nodes["n1"][0] == "idle", capsys.readouterr()
    assert [e for e, _ in history_events(tmp_path)] == ["not-assessed", "pass"] * 2
    cli.main(_args(tmp_path, "--budget", "30"), env)
    out = capsys.readouterr().out
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #"), out
    assert "hung past its budget on 3 runs in a row" in out


def test_a_plain_pass_still_ends_the_hang_streak(tmp_path, fake, monkeypatch, capsys):
    """A pass that never stalled ends the streak as before: hang, pass, hang, pass, hang is 1 of 3."""
    plan = ["hang", "pass", "hang", "pass", "hang"]
    whole: list[str] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        whole.append(plan[len(whole)])
        if whole[-1] == "hang":
            return None, ""
        Path(cmd[cmd.index("--json") + 1]).write_bytes(_passing())
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    for _ in range(5):
        cli.main(_args(tmp_path, "--budget", "30"), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"})
    out = capsys.readouterr().out
    assert fake.nodes["n1"][0] == "idle" and "1 of 3 runs in a row hung" in out, out
