"""Issue 36, a seventy-third hunt through the public interfaces (`python -m verify.prolog`'s main, make fleet-report's
reader), on classes 5, 6 and 9 in new shapes.

Found:
- Class 6, facts that cannot be true (high: a node passed, and counted healthy by the fleet report, on a report no
  verify writes). Round 50's rule bounded rates (RATE_MOST) and the gpu check's device counts; any other count was
  believed whatever it said. A preflight whose nccl check passes with `world_size` -8 ranks or 8.5 ranks, or whose
  data says `world_size` "8" (a string) or `nodes` "2" or 2.0 (read as no count: a group's run passed as this node's,
  and a collective's failure listed a drain of the node that wrote it), or an all-reduce over NCCL on one node claiming 16 ranks where its own gpu check counted 8 GPUs (NCCL runs one rank per
  GPU: "Duplicate GPU detected"; verify's own nccl judge refuses such facts as MEASUREMENT_INVALID), passed the
  prolog (exit 0) and the fleet report ("fleet: PASSING"). Practice: NCCL's one rank per device, verify's report
  schema (a count is a whole number, 0 or more). Fix: verify/prolog/ranks.py (count_problem, ranks_problem) on the
  prolog's side and scripts/fleet/ranks.py on the host side, one rule: REPORT_INVALID / invalid, never a pass and never
  a drain. A collective's pass across more nodes than it had ranks (verify's grouplayout: every node runs at least
  one) is refused by the same rule.

- Class 5, a hung checker is evidence after a few runs (high: a stuck GPU kept in service for good). As a job's first
  step the preflight sees the job's GPUs alone (Slurm's device cgroup). On a node shared by jobs, a GPU that stalls
  every preflight of the jobs given it (GPUs 0-3) and another job's passes on GPUs 4-7 between them: each pass ended
  the streak, "1 of 3 runs in a row hung" for ever, the stuck GPU in service on every job given it. Repro: step runs
  SLURM_JOB_GPUS=0-3 hanging and 4-7 passing, alternately: never PREFLIGHT_HUNG. Practice: NVSentinel's checker rule
  (the checker's stalls are counted; a healthy sample of other GPUs says nothing of the one that stalls it). Fix
  (verify/prolog/gpuset.py, config.seen_gpus): each history event of a step keeps the GPU indices its preflight saw
  (`job_gpus`, from SLURM_STEP_GPUS else SLURM_JOB_GPUS); a run that did not see every GPU this run saw neither counts nor ends the
  streak (history.streak); a run under Prolog= sees every GPU and keeps no set. A pass that saw them still ends it, a
  drain, a resume and a reboot still do.

- Class 5 again, a mix of causes (high: a stuck GPU kept in service for good). A run whose preflight's check timed out
  (CHECK_TIMEOUT: the checker stalled) and whose confirmation then crashed (SIGSEGV, a GPU in a bad state faulting
  the rerun), exited without a report, or wrote one no verify writes, was PREFLIGHT_NO_REPORT / REPORT_INVALID: the
  streak ended at each such run, "not assessed" for ever, while a confirmation that ran out of time (weaker, if
  anything) counted. Repro: three runs, each a gpu CHECK_TIMEOUT report then a confirmation killed by SIGSEGV: never
  PREFLIGHT_HUNG. Practice: NVSentinel's checker rule (the stall stands, unconfirmed and unrefuted: a run towards
  --hang-runs, as a confirmation that skipped the check already was). Fix (verify/prolog/verdict.confirmation): such
  a run is PREFLIGHT_TIMEOUT; a signal (PREFLIGHT_INTERRUPTED) stays our own trouble, neither counting nor ending it.

- Class 6 across reports (medium: evidence counted twice, a node counted healthy on another's report). NVML's GPU
  UUID is the board's own; make fleet-report counted n1 and n2 both passing where both reports listed the same eight
  GPU UUIDs (a report copied or renamed to the node that wrote none, a hostname edited, or evidence from before an RMA
  swap left in a reused folder): "fleet: PASSING: 2 node(s)". Repro: one verify report saved as n1.json and as n2.json
  with the hostname edited. Practice: a GPU is on one node (NVML's UUID, as the gpu check's own duplicate rule within
  one report). Fix (scripts/fleet/boards.py): both reports are invalid (which one is not its node's, no file tells),
  the fleet does not pass; a node's several reports (a rerun, the collective's) are one node's.

- Class 9, evidence from a clock never set (medium: an impossible time believed). make report and make gate believed a
  pass signed in 1970 (or whose report was created in 2000): `verified: yes` without MAX_AGE, where make fleet-report
  refuses such a report ("before any verify report: that node's clock was never set"). Repro: a lone attestation
  signed 1970-01-01T00:00:05Z. Fix: scripts/publish/report.never_set, EARLIEST_CREATED one constant for both
  (scripts/durations.py): not believed, the newest trusted attestation decides NO.

Low, fixed: a gpu warning counting nvml_devices 0 beside 8 devices listed passed the prolog, refused by the host
side (verify/prolog/verdict._devices_problem compares any count now). A gpu device's `row_remap` of 0 was read as
none by the prolog and refused by the host side (one answer: refused, verify/prolog/hidden.py). MAX_AGE of 400 nines
(scripts/durations.parse_duration) read as a float's infinity, every stale report believed; now "not a duration", as
`1e999` was.

Low, left: `--flap-window` and `--lookback` refusals say "seconds" for what are days and hours (CONFIG_ERROR as
before, only the word is wrong).

Looked at and held (no defect): the hang streak behind the breaker (drain-refused neither ends nor resets it: 4, 5,
6 runs, drained once the breaker allows) and make undrain of a PREFLIGHT_HUNG drain (3 passes in a row); a first
run's own crash between hangs ends the streak (another cause: hunt71's rule); --budget/--grace/--lookback/
--flap-window/--min-confirm/--confirm-factor at 1e999, inf, nan, -1, 0, '7d', '30s' (CONFIG_ERROR, exit 0);
TORCHIMAGES_HANG_RUNS, _RETURN_PASSES, _CLOCK_SKEW, _BREAKER at '3.0', '0x3', '+3', a fullwidth 3, '3e0', '1_0',
'inf', '-0', '7 d', '1e999' (said, default held); MAX_AGE '7 d', '-1h', '1e999', '0', 'inf', 'P7D'; report
`created` naive, +00:00, +14:00, -12:00, fractional, lower-case, a space, a number, 2027-02-29, :60, 9999, 0001;
a decide()/report_problem() fuzz of every field of a real report (pass, GPU_LOST, NCCL_WRONG_RESULT, a warning)
with 16 hostile values: one answer after the fixes above.

Each test names the practice it follows.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _report, _verify_writes, install_fake, refused_as_a_first_step
from tests.prolog_fakes import _nccl as nccl_check
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli, history
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- class 6: counts no verify writes, and an all-reduce with more ranks than its node's GPUs

def _written() -> dict[str, Any]:
    """A preflight report as verify writes one on an 8-GPU H100 node: its gpu and nccl checks judged by verify's own
    judges from recorded facts (tests/verify_handmade.py)."""
    g = gpu.judge(cast(Any, gpu_facts()), Options()).to_dict()
    n = nccl.judge(cast(Any, nccl_facts()), Options()).to_dict()
    assert (g["status"], n["status"], n["data"]["nodes"], n["data"]["world_size"]) == ("pass", "pass", 1, 8)
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": "n1", "scheduler": {"kind": "slurm", "node": "n1"}}, "options": {},
            "checks": [g, SHM, n]}


# verify --preflight's third check, a pass (a whole preflight holds each: tests/test_cluster_hunt76.py)
SHM: dict[str, Any] = {"name": "shm", "status": "pass", "summary": "/dev/shm ok", "details": [], "metrics": {},
                       "remedy": None, "code": None, "owner": None, "duration_s": 0.0, "output": None, "data": {}}


def _nccl(d: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in d["checks"] if c["name"] == "nccl")


def _gpus(d: dict[str, Any], n: int) -> None:
    g = next(c for c in d["checks"] if c["name"] == "gpu")
    g["metrics"]["nvml_devices"]["value"] = g["metrics"]["torch_devices"]["value"] = n
    g["data"]["devices"] = g["data"]["devices"][:n]


def _ranks(n: float) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        _nccl(d)["metrics"]["world_size"]["value"] = n
        _nccl(d)["data"]["world_size"] = n
    return change


IMPOSSIBLE = {
    "16 ranks over NCCL on an 8-GPU node": _ranks(16),
    "8 ranks over NCCL where the gpu check counted 2": lambda d: _gpus(d, 2),
    "-8 ranks": lambda d: _nccl(d)["metrics"]["world_size"].update(value=-8),
    "8.5 ranks": _ranks(8.5),
    "a world size written as a string": lambda d: _nccl(d)["data"].update(world_size="8"),
    "nodes written as a string": lambda d: _nccl(d)["data"].update(nodes="2"),
    "nodes written as a float": lambda d: _nccl(d)["data"].update(nodes=2.0),
    "-3 wrong elements": lambda d: _nccl(d)["metrics"]["wrong"].update(value=-3),
    "3 ranks across 4 nodes": lambda d: (_ranks(3)(d), _nccl(d)["data"].update(nodes=4)),
    # (low) both readers one answer: a row_remap of 0 was read as none by the prolog, refused by the host side
    "a row_remap written as 0": lambda d: next(c for c in d["checks"] if c["name"] == "gpu")["data"]["devices"][0]
    .update(row_remap=0),
    # (medium, hunt95) a pass over gloo: verify passes an all-reduce only over NCCL (over gloo it skips, no GPU, or
    # fails, --expect-gpus): NCCL on the node's GPUs was never exercised
    "a pass over gloo on a GPU node": lambda d: (_nccl(d)["data"].update(backend="gloo"), _ranks(16)(d)),
    "a pass over gloo with no nodes said": lambda d: (_nccl(d)["data"].update(backend="gloo"),
                                                      _nccl(d)["data"].pop("nodes", None)),
    # (low) a warning counting 0 NVML devices beside 8 listed: the prolog compared only counts of 1 or more
    "a warning on 0 devices with 8 listed": lambda d: next(c for c in d["checks"] if c["name"] == "gpu").update(
        status="warn", code="THROTTLED", owner="host", metrics={"nvml_devices": {"value": 0.0, "unit": "count"}}),
}


@pytest.mark.parametrize("change", list(IMPOSSIBLE))
def test_nccl_one_rank_per_gpu_a_report_no_verify_writes_passes_neither_the_prolog_nor_the_fleet(
        tmp_path, fake, monkeypatch, capsys, change):
    """NCCL runs one rank per GPU, and verify writes a count as a whole number, 0 or more: a pass that says otherwise
    is no report of verify's. It passed the prolog (exit 0) and the fleet report; now REPORT_INVALID (exit 3 as a
    first step, the node neither passed nor drained) and invalid in make fleet-report, by one rule on both sides."""
    report = _written()
    IMPOSSIBLE[change](report)
    assert decide(report).code == "REPORT_INVALID" and report_problem(report)
    folder = refused_as_a_first_step(tmp_path, monkeypatch, capsys, fake, report)
    found = fleet(folder)
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


@pytest.mark.parametrize("change", [None, "float counts", "no nodes said"])
def test_what_verify_writes_still_passes_both(tmp_path, fake, monkeypatch, change):
    """The rule refuses no report verify writes: its own, counts as floats (result.Metric holds floats; a
    world size of 8.0 ranks), a nccl check of an older verify that records no `nodes`. (A pass over gloo is none:
    verify/checks/nccl/verdict.py skips or fails an all-reduce not over NCCL, IMPOSSIBLE above.)"""
    report = _written()
    if change == "float counts":
        _nccl(report)["metrics"]["world_size"]["value"] = 8.0
    elif change == "no nodes said":
        del _nccl(report)["data"]["nodes"]
        _ranks(16)(report)
    assert decide(report).kind == "pass" and report_problem(report) is None
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    assert fleet(folder).ok
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0


def test_the_two_rules_are_one_text():
    """The prolog's rule and the host side's (which never imports verify) are one text below their docstrings."""
    root = Path(__file__).resolve().parents[1]
    body = [p.read_text().split('"""', 2)[2] for p in (root / "verify/prolog/ranks.py", root / "scripts/fleet/ranks.py")]
    assert body[0] == body[1]


# ---- class 5: a hang streak on a shared node, between other jobs' runs on other GPUs

def _ok4() -> bytes:
    """A passing report of 4 GPUs, stamped when its test runs (made at import, it was stale by the time the suite
    reached it: ci40)."""
    return json.dumps(_report(_gpu(devices=4), nccl_check())).encode()


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hang: bool, env: dict[str, str]) -> int:
    _verify_writes(monkeypatch, None if hang else _ok4(), rc=None if hang else 0)
    return cli.main(_args(tmp_path, "--budget", "30"), env)


def _step(gpus: str) -> dict[str, str]:
    return {**STEP_ENV, "SLURM_STEP_GPUS": gpus, "SLURM_GPUS_ON_NODE": "4"}


def test_nvsentinel_checker_rule_another_job_s_pass_on_other_gpus_never_ends_a_hang_streak(tmp_path, fake,
                                                                                         monkeypatch, capsys):
    """A GPU stalling every preflight of the jobs given it, on a node shared with a job whose GPUs pass: the third
    hang drains (PREFLIGHT_HUNG, behind the breaker), the passes between them on GPUs 4-7 notwithstanding."""
    for n, (gpus, hang) in enumerate([("0-3", True), ("4-7", False), ("0-3", True), ("4-7", False), ("0,1,2,3", True)]):
        status = _run(tmp_path, monkeypatch, hang, _step(gpus))
        assert status == (1 if n == 4 else 3 if hang else 0), (n, capsys.readouterr())
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    kept = [e.get("job_gpus") for e in history.read(str(tmp_path / "state"), "n1").events][:2]
    assert kept == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize(("between", "env"), [
    ("a pass that saw the same GPUs", _step("0-3")),
    ("a pass that saw them among others", _step("0-7")),
    ("a pass under Prolog=, which sees every GPU", {**PROLOG_ENV, "SLURM_JOB_GPUS": "4-7"}),
    ("a pass of a step that says no GPUs", STEP_ENV),
])
def test_nvsentinel_checker_rule_a_pass_that_saw_the_stalled_gpus_still_ends_the_streak(tmp_path, fake, monkeypatch,
                                                                                       between, env):
    """A run that saw every GPU the hangs saw is evidence of them: its pass ends the streak as before."""
    for hang, run_env in [(True, _step("0-3")), (True, _step("0-3")), (False, env), (True, _step("0-3"))]:
        _run(tmp_path, monkeypatch, hang, run_env)
    assert fake.nodes["n1"] == ("idle", "none")
    assert history.read(str(tmp_path / "state"), "n1").events[-1]["code"] == "PREFLIGHT_TIMEOUT"


def test_nvsentinel_checker_rule_under_prolog_a_step_s_pass_on_some_gpus_never_ends_it(tmp_path, fake, monkeypatch):
    """Prolog= runs see every GPU of the host: a job's first step that passed on 4 of them between two of their hangs
    says nothing of the other 4; the third hang drains."""
    for hang, env in [(True, PROLOG_ENV), (False, _step("4-7")), (True, PROLOG_ENV), (True, PROLOG_ENV)]:
        _run(tmp_path, monkeypatch, hang, env)
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")


@pytest.mark.parametrize("kept", [[4, 5], "4-7", [True], [-1], [], None, [4.0]])
def test_the_gpus_a_run_saw_are_read_as_the_prolog_writes_them(kept):
    """A garbled `job_gpus` (a string, a bool, a negative, none) is every GPU: such a pass ends the streak."""
    from verify.prolog import gpuset
    event = {"event": "pass", "job_gpus": kept}
    assert gpuset.covers(event, frozenset({0, 1})) is (kept != [4, 5])
    assert gpuset.covers(event, None) is (kept != [4, 5])


def test_nvsentinel_checker_rule_a_pass_on_the_gpus_of_earlier_hangs_still_ends_those(tmp_path, fake, monkeypatch):
    """Two hangs on GPUs 0-3, then a pass on 0-3 (they finished), then a hang on 4-7: the pass ended the first two,
    which are not in a row with the third (1 of 3, not PREFLIGHT_HUNG)."""
    for hang, gpus in [(True, "0-3"), (True, "0-3"), (False, "0-3"), (True, "4-7")]:
        _run(tmp_path, monkeypatch, hang, _step(gpus))
    assert fake.nodes["n1"] == ("idle", "none")
    assert "1 of 3 runs in a row hung" in history.read(str(tmp_path / "state"), "n1").events[-1]["detail"]


# ---- class 9 (low, fixed): a duration knob that is a float's infinity

@pytest.mark.parametrize("text", ["9" * 400 + "w", "9" * 310])
def test_a_max_age_of_400_digits_is_no_duration_not_an_infinite_one(text):
    """MAX_AGE (make report, make gate, make fleet-report) is the oldest evidence believed: 400 nines read as a
    float's infinity believed every stale report (and `shown` of it overflowed). Now one line, as for `1e999`."""
    from scripts.durations import parse_duration
    from scripts.errors import UserError
    with pytest.raises(UserError, match="is not a duration") as said:
        parse_duration(text, "MAX_AGE")
    assert len(str(said.value)) < 200


# ---- class 6 across reports: one GPU in two nodes' reports

def test_one_gpu_on_one_node_a_report_copied_to_another_node_is_no_evidence_of_either(tmp_path):
    """A GPU's UUID is its board's: the same GPUs in n1's and n2's reports are one node's evidence counted twice (a copy
    made for a node whose verify hung, a hostname edited). Both are invalid and the fleet does not pass; n3's own
    report still counts, and n1's rerun beside its first report (the same GPUs, one node) is no copy."""
    folder = tmp_path / "reports"
    folder.mkdir()
    first = _written()
    (folder / "n1.json").write_text(json.dumps(first))
    (folder / "n1-rerun.json").write_text(json.dumps(first))
    copied = json.loads(json.dumps(first))
    copied["environment"].update(hostname="n2", scheduler={"kind": "slurm", "node": "n2"})
    (folder / "n2.json").write_text(json.dumps(copied))
    own = json.loads(json.dumps(first))
    own["environment"].update(hostname="n3", scheduler={"kind": "slurm", "node": "n3"})
    for d in next(c for c in own["checks"] if c["name"] == "gpu")["data"]["devices"]:
        d["uuid"] = d["uuid"].replace("handmade", "n3board")
    (folder / "n3.json").write_text(json.dumps(own))
    found = fleet(folder)
    why = dict(found.invalid)
    assert not found.ok and set(why) == {"n1.json", "n1-rerun.json", "n2.json"}, why
    assert "one board is on one node" in why["n2.json"] and "n1" in why["n2.json"]
    assert [n.node for n in found.nodes] == ["n3"]


def test_one_gpu_on_one_node_a_node_s_rerun_alone_is_no_copy(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    for name in ("n1.json", "n1-rerun.json"):
        (folder / name).write_text(json.dumps(_written()))
    found = fleet(folder)
    assert not found.invalid and [n.node for n in found.nodes] == ["n1", "n1"]


# ---- class 9: an attestation signed by a clock never set

@pytest.mark.parametrize(("signed", "created"), [("1970-01-01T00:00:05Z", None), ("2000-01-01T00:00:00Z", None),
                                                  ("2026-11-24T00:00:00Z", "1970-01-02T00:00:00Z")])
def test_an_attestation_signed_before_any_verify_is_not_believed(signed, created):
    """make report / make gate: a pass signed (or its report created) in 1970 or a BIOS's 2000, by a node whose clock
    was never set (no RTC, no NTP yet), was `verified: yes` without MAX_AGE, while the fleet report refuses such a
    report as no evidence of when it ran. The same rule now (scripts/durations.py EARLIEST_CREATED): not believed,
    the newest trusted attestation decides NO."""
    from scripts.publish.report import Attestation, Summary, _decide, order, refuse_future
    from scripts.publish.signing import Trusted

    class Key:
        keyid = "ab" * 32

    a = Attestation("sha256:" + "1" * 64, Trusted(Key(), "/keys/release.pub"), signed,
                    {"checks": [], "created": created or signed}, "pass", None, {"node": "n1"})
    s = Summary("r@sha256:" + "2" * 64, attestations=[a])
    order(s)
    refuse_future(s, 300.0)
    _decide(s, True)
    assert not s.verified and "clock was never set" in s.reason



# ---- class 5: a stall whose confirmation crashed is a stall

def _timed_out() -> bytes:
    """A report whose gpu check timed out, stamped when its test runs (ci40)."""
    return json.dumps(_report(_gpu("fail", code="CHECK_TIMEOUT", owner="host", summary="gpu timed out"))).encode()


@pytest.mark.parametrize(("rerun", "said"), [((-11, None), "killed by SIGSEGV"), ((0, None), "exited 0"),
                                             ((1, b"{}"), "no `created` time")])
def test_nvsentinel_checker_rule_a_stall_whose_confirmation_crashed_counts_towards_hang_runs(
        tmp_path, fake, monkeypatch, capsys, rerun, said):
    """Three runs whose gpu check stalled (CHECK_TIMEOUT) and whose confirmation crashed, wrote no report or a report
    no verify writes: the third drains as PREFLIGHT_HUNG (behind the breaker). It ended the streak at every run."""
    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        out = Path(cmd[cmd.index("--json") + 1])
        if "--checks" not in cmd:
            out.write_bytes(_timed_out())
            return 1, ""
        if rerun[1] is not None:
            out.write_bytes(rerun[1])
        return rerun[0], ""
    monkeypatch.setattr(cli, "_run_verify", run)
    for n in range(3):
        status = cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV)
        assert status == (1 if n == 2 else 3), capsys.readouterr()
    out = capsys.readouterr().out
    assert "PREFLIGHT_HUNG" in out and said in out and fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")


def test_a_stall_whose_confirmation_was_interrupted_is_still_our_own_trouble(tmp_path, fake, monkeypatch):
    """A signal during the confirmation (verify's INTERRUPTED report) is no verdict of the node's: neither a run
    towards --hang-runs nor an end of one (PREFLIGHT_INTERRUPTED, history.STREAK_NEUTRAL)."""
    cut = _report(_gpu("skip", code="INTERRUPTED", owner="job"))
    cut.update(status="fail", interrupted="SIGTERM")

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        out = Path(cmd[cmd.index("--json") + 1])
        out.write_bytes(_timed_out() if "--checks" not in cmd else json.dumps(cut).encode())
        return 1, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV)
    assert history.read(str(tmp_path / "state"), "n1").events[-1]["code"] == "PREFLIGHT_INTERRUPTED"
