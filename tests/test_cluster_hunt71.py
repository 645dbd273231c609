"""Issue 36, a seventy-first hunt through the public interfaces (`python -m verify.prolog`'s main, the state folder's
`settings` file, slurmd's environment, the history and node_exporter's file).

Found:
- Class 1, a setting of ours is never the node's fault, never a silent ungating (medium: a node run ungated, a broken
  node kept in service on every job). Two rules for one kind of slip: a misspelt TORCHIMAGES_* variable name in
  slurmd's environment was said and the node stayed gated on the defaults, but a misspelt name on a line of the state
  folder's `settings` file (a letter of TORCHIMAGES_BREAKER dropped), a line with no `=`, a knob given twice, a bad value there or in
  the environment (`TORCHIMAGES_BREAKER=0.5x`, `TORCHIMAGES_CLOCK_SKEW=2y`, `TORCHIMAGES_HANG_RUNS=1`, a relative
  TORCHIMAGES_METRICS_DIR), or a settings file too large or unreadable by the step's user, was CONFIG_ERROR: every
  node running the prolog exited 0 ungated, and a lost GPU stayed in service on every job until someone read the
  trace. Slurm's prolog semantics (a non-zero Prolog= exit drains) forbid the drain, not the gate. Fix: one rule
  (verify/prolog/settings.read, config._knob): the bad line or value is not applied, that knob's default holds, the
  node is gated; each is said in one line (stderr, syslog under Prolog=) and traced: every history event of the run
  carries `setting_problems` and `settings`, and node_exporter's file torchimages_prolog_setting_problems{node}.
  A relative TORCHIMAGES_STATE_DIR in slurmd's environment is a knob too: the default folder holds. Options on the
  command line (`--bugdet`, `--breaker ten`, `--state-dir state`) stay CONFIG_ERROR, said and traced as before.

- Class 5, a hung checker is evidence after a few runs (high: a GPU stalling every preflight kept in service). The
  streak of hangs (--hang-runs, NVSentinel's checker rule) ended at any other not-assessed run, our own trouble
  included: a user's scancel during the prolog (PROLOG_INTERRUPTED; a hung preflight delays the job's start 90 s,
  which is when users cancel), a crash of ours, a CONFIG_ERROR run, the backstop. history [hang, interrupted, hang,
  interrupted] + a hang now was "1 of 3", never PREFLIGHT_HUNG. Fix (verify/prolog/history.py STREAK_NEUTRAL): a run
  of our own trouble ran no checker to its end: it neither counts nor ends a streak; a run whose verify ended (a
  report refused or missing, a figure measured beside another prolog, a budget too small to confirm) still ends it.
  Whatever its stamp, too: our trace keeps no /proc/uptime, and after a clock stepped back it read as "the future",
  which ended the streak as evidence from the future does.

- Class 6 as both readers hold it (medium: a wrong code, a real report listed invalid). fix135 had verify give
  DRIVER_TOO_OLD to the image for CUDA error 222 (PTX newer than the driver's JIT); the prolog (verdict.CATALOG_OWNED)
  and the host side (plausible.CATALOG_OWNER) hold it to the host: that real report was REPORT_INVALID in the
  prolog and invalid in make fleet-report (tests/test_cluster_hunt55.py and tests/test_report_owners.py failed on
  main). Fix (the lead's, at the merge): one code, one owner. 222 is ARCH_NOT_IN_BUILD, the image's (no code of the
  build runs on this GPU), which both readers believe; DRIVER_TOO_OLD stays the host's in both tables.

- Issue 26's hunt rerun, "a tiny preflight budget blames the host" (medium: a wrong owner). `verify --preflight
  --budget 0.001` on this 2-core host gave the all-reduce's init_process_group 0.8 ms: nccl FAIL NCCL_FAILED /
  NCCL_TIMEOUT owned by the host for a setting, exit 1 (reproduced here at load 5). The check's limit had a floor in
  `import torch` times; its own timeout did not. Fix (verify/cli.py preflight_options): never below the default
  budget's share, bounded as before by the check's limit; the same run then passed (nccl 8.9 s).

- Class 9, the newest evidence wins (medium: evidence silently lost, a failing digest admitted). make report and
  make gate order trusted attestations by their signed time, written to the second; two of the same second (two
  nodes verifying one digest at once, a rerun) kept the registry's listing order, so a pass listed first decided
  `verified: yes` over a failure signed with it. Fix (scripts/publish/report.py order): of one moment's, the one that
  is no pass comes first (the graver stands, as the prolog's metricsorder keeps it).

- Class 7, make isolate names no node on our own trouble (medium: a healthy node named at fault). A pair's step that
  exited 0 (verify ran to its end on both nodes) with no report file where the runner reads (a reports folder not
  shared with the runner on the node of global rank 0) struck both nodes as a failed pair: one node whose mount of
  the folder was stale was named "failing" after two rounds. Now such a pair is not assessed (neither clears nor
  strikes; the answer is never clean): scripts/fleet/isolate_run.py MISSING. A non-zero step without a report, or a
  file there that is no report, still fails the pair.

Looked at and held (no defect): MAX_AGE and TORCHIMAGES_CLOCK_SKEW forms (7d, 0, -1, 1e9, '7 days', 5M, nan, 53w) in
the prolog and make fleet-report; reports from the future, 1970, an impossible date, no zone; make isolate's answer
for a flaky node, every pair failing, every pair ours, two nodes, a slow majority; make slurm / k8s-verify knobs with
spaces, quotes, `$()`, `;` (VERIFY_ARGS shell-quoted, IMAGE a tag of the matrix, RDMA_RESOURCE a resource name that
is no GPU or Kubernetes' own); SIGTERM to `verify --preflight` at 2, 6 and 12 s (exit 143, an INTERRUPTED report that
never reads pass, no process left).

Each test names the practice it follows (Slurm's prolog semantics; NVSentinel's breaker and checker rules).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history, statefile

pytestmark = pytest.mark.unit

# a knob misspelt, built here so that the project's own names hold none (tests/test_prolog_evidence.py)
BREAKR = "TORCHIMAGES_" + "BREAKR"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _lost() -> bytes:
    return json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host", summary="GPU 3 is lost"))).encode()


def _state(tmp_path: Path, body: bytes | None) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o755, exist_ok=True)
    state.chmod(0o755)
    if body is not None:
        (state / "settings").write_bytes(body)
        (state / "settings").chmod(0o644)
    return state


def _events(state: Path) -> list[dict[str, Any]]:
    return history.read(str(state), "n1").events


# one slip of each kind, in the settings file and in slurmd's environment: (file body, environment, what is said)
SLIPS = [
    (f"{BREAKR}=0.5\n".encode(), {}, "did you mean TORCHIMAGES_BREAKER"),
    (b"TORCHIMAGES_BREAKER 0.5\n", {}, "is no setting"),
    (b"TORCHIMAGES_BREAKER=0.5\nTORCHIMAGES_BREAKER=0.4\n", {}, "given twice"),
    (b"TORCHIMAGES_BREAKER=0.5x\n", {}, "is not a share"),
    (b"TORCHIMAGES_HANG_RUNS=1\n", {}, "2 or more"),
    (b"TORCHIMAGES_CLOCK_SKEW=7 days\n", {}, "not a duration"),
    (b"TORCHIMAGES_METRICS_DIR=prom\n", {}, "not an absolute path"),
    (b"# a comment\n" * 6000, {}, "more than any settings file"),
    (None, {BREAKR: "0.5"}, "did you mean TORCHIMAGES_BREAKER"),
    (None, {"TORCHIMAGES_BREAKER": "0.5x"}, "is not a share"),
    (None, {"TORCHIMAGES_BREAKER": "1e-400"}, "is not a share"),
    (None, {"TORCHIMAGES_CLOCK_SKEW": "nan"}, "not a duration"),
    (None, {"TORCHIMAGES_HANG_RUNS": "\u0663"}, "not a count"),
    (None, {"TORCHIMAGES_METRICS_DIR": "relative/prom"}, "not an absolute path"),
]


@pytest.mark.parametrize(("body", "env", "said"), SLIPS)
def test_slurm_prolog_semantics_a_bad_knob_keeps_the_node_gated_on_defaults_said_and_traced(tmp_path, fake,
                                                                                           monkeypatch, capsys,
                                                                                           body, env, said):
    """Slurm's prolog semantics: a non-zero Prolog= exit drains, so a setting of ours never exits non-zero; but a
    bad knob ran the node ungated (CONFIG_ERROR, exit 0) where a misspelt variable name kept it gated. One rule now:
    the default holds, a lost GPU is drained (host evidence), and the slip is said once and traced in the history's
    events and the metrics."""
    state = _state(tmp_path, body)
    prom = tmp_path / "prom"
    metrics_slip = "not an absolute path" in said      # its own slip: no metrics folder (said), the rest holds
    _verify_writes(monkeypatch, _lost())
    status = cli.main(["--state-dir", str(state), "--no-kernel-log", *([] if metrics_slip else ["--metrics-dir", str(prom)])],
                      {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8", **env})
    err = capsys.readouterr().err.splitlines()
    assert status == 1 and fake.nodes["n1"][0] == "drained", err                # gated: the host's evidence drains
    assert not any("CONFIG_ERROR" in line or "ungated" in line for line in err), err
    assert sum(said in line for line in err) == 1, err
    events = _events(state)
    assert [e["event"] for e in events] == ["fault", "drain"]
    assert all(e.get("setting_problems") == 1 and said in e.get("settings", "") for e in events), events
    if not metrics_slip:
        assert 'torchimages_prolog_setting_problems{node="n1"} 1.0' in (prom / "torchimages_n1.prom").read_text()
    assert not (tmp_path / "prom").exists() or not metrics_slip


@pytest.mark.parametrize(("body", "env", "said"), SLIPS[:8])
def test_slurm_step_semantics_a_bad_settings_line_gates_a_first_step_too(tmp_path, fake, monkeypatch, capsys,
                                                                        body, env, said):
    """The prolog as a job's first step reads the operator's settings file (never the job's environment): a bad line
    there exited 2 (CONFIG_ERROR), the step ran ungated. Now the defaults gate it: a lost GPU drains (exit 1)."""
    _state(tmp_path, body)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path), STEP_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert said in capsys.readouterr().err


def test_the_good_lines_of_a_settings_file_with_a_bad_one_still_hold(tmp_path, fake):
    """Only the bad line is not applied: the operator's other knobs hold (a typo in one line never turns their
    breaker, hang count or metrics folder back to the defaults)."""
    state = _state(tmp_path, f"TORCHIMAGES_HANG_RUNS=5\n{BREAKR}=0.5\nTORCHIMAGES_BREAKER=0.3\n".encode())
    cfg = cli.config(cli._parser().parse_args(["--state-dir", str(state), "--no-kernel-log"]), dict(PROLOG_ENV))
    assert (cfg.hang_runs, cfg.breaker) == (5, 0.3) and len(cfg.setting_problems) == 1


def test_nvsentinel_breaker_a_knob_given_twice_holds_neither_the_default_does(tmp_path, fake):
    """NVSentinel's breaker is the operator's share: of two values, which one they meant is unknown, so neither is
    taken (the larger would let a bad roll-out drain more of the partition): the default 10 % holds, said."""
    state = _state(tmp_path, b"TORCHIMAGES_BREAKER=0.9\nTORCHIMAGES_BREAKER=0.2\nTORCHIMAGES_BREAKER=0.5\n")
    cfg = cli.config(cli._parser().parse_args(["--state-dir", str(state), "--no-kernel-log"]), dict(PROLOG_ENV))
    assert cfg.breaker == 0.10 and len(cfg.setting_problems) == 2


def test_a_clean_run_writes_no_setting_trace(tmp_path, fake, monkeypatch):
    """No slip, no trace: the history's events carry no setting fields and the metrics say 0."""
    state = _state(tmp_path, b"TORCHIMAGES_BREAKER=0.2\n")
    prom = tmp_path / "prom"
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(state), "--no-kernel-log", "--metrics-dir", str(prom)], PROLOG_ENV) == 0
    assert all("setting_problems" not in e for e in _events(state))
    assert 'torchimages_prolog_setting_problems{node="n1"} 0.0' in (prom / "torchimages_n1.prom").read_text()


def test_slurm_prolog_semantics_a_misspelt_option_is_still_config_error(tmp_path, fake, monkeypatch, capsys):
    """An option on slurm.conf's Prolog= line is no knob: a misspelt one stops the run as before (CONFIG_ERROR,
    exit 0, traced); the rule above is the knobs'."""
    state = _state(tmp_path, None)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(["--state-dir", str(state), "--no-kernel-log", "--bugdet", "30"], PROLOG_ENV) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and fake.nodes["n1"][0] == "idle"
    assert [e["code"] for e in _events(state)] == ["CONFIG_ERROR"]


def test_a_settings_file_the_step_s_user_cannot_read_is_said_and_the_defaults_gate(tmp_path, fake, monkeypatch,
                                                                                  capsys):
    """A settings file mode 0600 owned by root, read by a job's step (the job's user): it was CONFIG_ERROR (the step
    ungated). Now said, the defaults gate. (Run as root the file is readable: the read itself is refused here.)"""
    state = _state(tmp_path, b"TORCHIMAGES_BREAKER=0.2\n")

    real = statefile.read_tail

    def refused(path: str, cap: int) -> Any:
        if os.path.basename(path) == "settings":
            raise PermissionError(13, "Permission denied", path)
        return real(path, cap)
    monkeypatch.setattr(statefile, "read_tail", refused)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path), STEP_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    assert "cannot be read" in capsys.readouterr().err
    assert os.path.exists(state / "settings")


# ---- class 5: a hung checker counted across runs; our own trouble between its hangs neither counts nor resets it

def _past(state: Path, *events: tuple[str, float]) -> None:
    """History events (code, seconds ago) as the prolog writes them: a hang's with this boot's id, the trace of our
    own trouble (ungated) without one."""
    from verify.prolog import kernlog
    boot = kernlog.host_clock(kernlog.PROC).boot_id or None
    for code, age in events:
        extra = {"boot_id": boot} if code == "PREFLIGHT_TIMEOUT" else None
        history.record(str(state), "n1", "not-assessed", code, "x", now=time.time() - age, extra=extra)


@pytest.mark.parametrize("ours", ["PROLOG_INTERRUPTED", "PROLOG_CRASHED", "PREFLIGHT_INTERRUPTED", "CONFIG_ERROR",
                                  "PROLOG_OVERRAN"])
def test_nvsentinel_checker_rule_our_own_trouble_between_hangs_never_resets_the_count(tmp_path, fake, monkeypatch,
                                                                                     capsys, ours):
    """NVSentinel's checker rule: N runs of the checker in a row that stall are evidence. A run of ours that ended on
    our own trouble (a user's scancel during the prolog, our crash, a setting, the backstop) ran no checker to its
    end: it reset the count, so a GPU stalling every preflight on a node whose jobs were often cancelled while the
    prolog hung (a 90 s start) stayed in service for good. Now it neither counts nor resets."""
    state = _state(tmp_path, None)
    _past(state, ("PREFLIGHT_TIMEOUT", 300.0), (ours, 200.0), ("PREFLIGHT_TIMEOUT", 100.0), (ours, 50.0))
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1, capsys.readouterr().err
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
    assert "hung past its budget on 3 runs in a row" in capsys.readouterr().out


@pytest.mark.parametrize("ours", ["PROLOG_INTERRUPTED", "PROLOG_CRASHED"])
def test_nvsentinel_checker_rule_our_own_trouble_alone_is_never_a_hang(tmp_path, fake, monkeypatch, ours):
    """Our own trouble never counts as a hang: two of them and one hang now are one run of three, no drain."""
    state = _state(tmp_path, None)
    _past(state, (ours, 200.0), (ours, 100.0))
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and fake.nodes["n1"][0] == "idle"


@pytest.mark.parametrize("other", ["REPORT_INVALID", "PREFLIGHT_NO_REPORT", "PREFLIGHT_BUSY", "BUDGET_TOO_SMALL"])
def test_nvsentinel_checker_rule_a_run_whose_checker_ended_still_ends_the_streak(tmp_path, fake, monkeypatch, other):
    """A run whose verify ended (a report refused, none written, a figure measured beside another prolog, a budget
    too small to confirm) is a checker that did not hang: the streak ends there, as before."""
    state = _state(tmp_path, None)
    _past(state, ("PREFLIGHT_TIMEOUT", 300.0), ("PREFLIGHT_TIMEOUT", 200.0), (other, 100.0))
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and fake.nodes["n1"][0] == "idle"


# ---- class 6 (as both sides read a report): CUDA error 222 is ARCH_NOT_IN_BUILD, the image's

def test_cuda_error_222_verify_gives_the_image_is_believed_by_both_sides_and_one_code_keeps_one_owner():
    """verify gives CUDA error 222 (a build's PTX newer than the driver's JIT) to the image as ARCH_NOT_IN_BUILD.
    Both readers believe that report (no drain, the node left in service), and a DRIVER_TOO_OLD claimed by the image
    is none verify writes: the code is the host's in both one-owner tables."""
    from scripts.fleet import plausible
    from verify.prolog import verdict
    from verify.shared import cuda_errors
    decoded = cuda_errors.decode("CUDA error: the provided PTX was compiled with an unsupported toolchain.")
    assert decoded is not None and (decoded.code, decoded.owner) == ("ARCH_NOT_IN_BUILD", "image")
    report = _report(_gpu("fail", code="ARCH_NOT_IN_BUILD", owner="image", summary="CUDA error 222"))
    v = verdict.decide(report)
    assert (v.kind, v.code, v.owner, v.drains) == (verdict.FAULT, "ARCH_NOT_IN_BUILD", "image", False)
    assert plausible.report_problem(report) is None
    forged = _report(_gpu("fail", code="DRIVER_TOO_OLD", owner="image", summary="CUDA error 222"))
    assert plausible.report_problem(forged) is not None and not verdict.decide(forged).drains


# ---- issue 26's hunt, rerun: a tiny preflight budget blames the host

@pytest.mark.parametrize(("budget", "timeout_s"), [(0.001, 12.0), (1e-300, 12.0), (5.0, 12.0), (30.0, 12.0),
                                                   (100.0, 40.0)])
def test_a_tiny_preflight_budget_never_starves_the_all_reduce_s_own_timeout(budget, timeout_s):
    """`verify --preflight --budget 0.001` gave the all-reduce's init_process_group 0.8 ms and its ranks 5 s: on this
    2-core host, loaded, nccl failed NCCL_FAILED / NCCL_TIMEOUT owned by the host for a setting (measured here: the
    rendezvous store unreachable; 'timed out after 5 s waiting for 2 rank(s)'). The check's limit has a floor in
    `import torch` times (verify/budget.py: "a check is then slow, never falsely failed"); its own timeout now too:
    never below the default budget's share (after the fix the same run passed, nccl 8.9 s at load 4.8)."""
    from verify.cli import preflight_options
    from verify.options import Options
    short, _ = preflight_options(Options(), budget, ["gpu", "shm", "nccl"], None)
    assert short.nccl_timeout_s == timeout_s
    short, _ = preflight_options(Options(), budget, ["gpu", "shm", "nccl"], 5.0)      # --timeout still caps it
    assert short.nccl_timeout_s == 4.0


def test_slurm_prolog_semantics_a_relative_state_dir_knob_gates_on_the_default_folder(tmp_path, fake, monkeypatch,
                                                                                      capsys):
    """TORCHIMAGES_STATE_DIR=state in slurmd's environment (its working folder is no folder of anyone's) was
    CONFIG_ERROR, the node ungated; a knob now, as the others: the default folder holds (its settings, history and
    breaker lock), said and traced there, and nothing is written in the working folder. `--state-dir state` on the
    Prolog= line is an option: CONFIG_ERROR as before."""
    default = tmp_path / "default"
    monkeypatch.setattr(cli, "DEFAULT_STATE_DIR", str(default))
    monkeypatch.setattr("verify.prolog.config.DEFAULT_STATE_DIR", str(default))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(["--no-kernel-log"], {**PROLOG_ENV, "TORCHIMAGES_STATE_DIR": "state"}) == 1
    assert fake.nodes["n1"][0] == "drained" and "not an absolute path" in capsys.readouterr().err
    events = history.read(str(default), "n1").events
    assert [e["event"] for e in events] == ["fault", "drain"] and events[-1]["setting_problems"] == 1
    assert not list(work.iterdir())
    fake.nodes["n1"] = ("idle", "none")
    assert cli.main(["--no-kernel-log", "--state-dir", "state"], dict(PROLOG_ENV)) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and fake.nodes["n1"][0] == "idle"


# ---- class 9: the newest evidence wins; of one moment's, the graver

@pytest.mark.parametrize("listed", [("pass", "fail"), ("fail", "pass")])
def test_a_pass_signed_in_the_same_second_never_hides_a_failure(listed):
    """make report / make gate: the newest trusted attestation decides. Signed times are written to the second; two
    nodes verifying one digest at once (or a rerun) sign a pass and a failure in the same second, and the registry's
    listing order decided: a pass listed first made the digest `verified: yes` and admitted it through make gate.
    One moment's evidence: the graver stands, whatever the order (as the prolog's metrics keep the graver of two
    overlapping runs, verify/prolog/metricsorder.py)."""
    from datetime import datetime, timezone

    from scripts.publish.report import Attestation, Summary, _decide, order, refuse_future
    from scripts.publish.signing import Trusted

    class Key:
        keyid = "ab" * 32

    def att(status: str, signed: str) -> Attestation:
        return Attestation("sha256:" + "1" * 64, Trusted(Key(), "/keys/release.pub"), signed,
                           {"checks": [], "created": signed}, status, None, {"node": "n1"})
    s = Summary("r@sha256:" + "2" * 64, attestations=[att(status, "2026-11-25T11:00:00Z") for status in listed])
    order(s)
    refuse_future(s, 300.0, datetime(2026, 11, 25, 12, tzinfo=timezone.utc))
    _decide(s, True)
    assert not s.verified and s.chosen is not None and s.chosen.status == "fail", s.reason
    # a pass signed later, even by a second, is newer evidence and decides
    s = Summary("r@sha256:" + "2" * 64, attestations=[att("fail", "2026-11-25T11:00:00Z"),
                                                       att("pass", "2026-11-25T11:00:01Z")])
    order(s)
    _decide(s, True)
    assert s.verified


# ---- class 7: make isolate names no node on the plumbing's trouble

def test_make_isolate_a_step_that_exited_0_with_no_report_is_no_node_s_strike():
    """NVSentinel's isolation rule: a node is named only on evidence of its link. A pair's step that exited 0 (verify
    ran to its end on both nodes) whose report file is not there (a reports folder not shared with the runner on
    the node that ran global rank 0) struck both nodes: with one node's mount broken, every pair
    that node led failed and it was named "failing". Now such a pair is not assessed (neither clears nor strikes, and
    never a clean answer); a step that exited non-zero without a report, or a file that is no report, still fails
    the pair."""
    from scripts.fleet.isolate import Outcome, plan_done
    from scripts.fleet.isolate_run import MISSING, exit_status, outcome
    pair = ("n1", "n2")
    assert outcome(pair, MISSING, 0, 3.0, 0).ours and not outcome(pair, MISSING, 1, 3.0, 0).ours
    assert not outcome(pair, None, 0, 3.0, 0).ours           # a file that is no report (garbled, a FIFO): failed
    nodes = [f"n{i}" for i in range(1, 9)]
    results: list[tuple[int, Outcome]] = []
    for rnd in range(1, 10):
        d, pairs = plan_done(nodes, results)
        if not pairs:
            break
        # n3's reports never land (its mount of the reports folder is stale): its pairs' steps exit 0, no report
        results += [(rnd, outcome(p, MISSING, 0, 3.0, 0) if "n3" in p else Outcome(p, True, 10.0)) for p in pairs]
    assert not d.named and exit_status(d) != 0 and "n3" in d.summary, d.summary


def test_nvsentinel_checker_rule_our_trace_stamped_ahead_never_ends_the_streak(tmp_path, fake, monkeypatch, capsys):
    """The trace of our own trouble (cli.ungated) keeps no /proc/uptime; hangs do, and are placed by it. A clock
    stepped back (NTP's first sync) left that trace "in the future", which ended the streak as evidence from the
    future does. It says nothing of the checker: skipped whatever its stamp."""
    state = _state(tmp_path, None)
    _past(state, ("PREFLIGHT_TIMEOUT", 300.0), ("PREFLIGHT_TIMEOUT", 200.0))
    history.record(str(state), "n1", "not-assessed", "PROLOG_INTERRUPTED", "stopped", now=time.time() + 86400)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1, capsys.readouterr().err
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")
