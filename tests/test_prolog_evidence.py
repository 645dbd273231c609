"""torchimages-prolog against hostile evidence and settings (issue 36, a third hunt: classes 1, 3, 4, 6, 8 and 9):
a misspelt or blank setting, a report that holds a check twice or passes without its GPU count, a return to
service on evidence that disagrees (Gres, a failed reset, another node's history lines), and kernel-log evidence no
read of this boot could have kept (held events from the future, wall-clock lines from the future, one line logged
twice). On `cli.main` and its pure parts with Slurm's commands, verify and the kernel log replaced in-process
(argv recorded). Each test names the practice it holds the prolog to."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.prolog_fakes import PROLOG_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, config, history, kernlog, repair, slurm, xid

pytestmark = pytest.mark.unit

BOOT = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
def host_fault() -> dict[str, Any]:
    """A verify report of a host fault, made now: a report made before this run is not evidence (REPORT_INVALID), so
    one made once at import would go stale in a long run."""
    return _report(_gpu("fail", code="GPU_LOST", owner="host"))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _drains(fake: FakeSlurm) -> int:
    return sum(1 for a in fake.calls if a[:1] == ["update"] and "state=drain" in a)


# ---- class 1: a setting of ours is never the node's fault, and never silent

def test_slurm_s_prolog_semantics_a_misspelt_knob_is_said_and_the_node_still_gated(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: a TORCHIMAGES_BRAKER in a node's environment sets nothing; the run still gates with
    the default breaker (a typo never ungates a fleet) and says which knob was meant, on stderr and in syslog."""
    said: list[str] = []
    monkeypatch.setattr(cli, "_syslog", said.append)
    _verify_writes(monkeypatch, json.dumps(host_fault()).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "TORCHIMAGES_BRAKER": "0.5", "torchimages_hang_runs": "0"}) == 1
    err = capsys.readouterr().err
    assert "TORCHIMAGES_BRAKER is no setting of the prolog's: did you mean TORCHIMAGES_BREAKER?" in err
    assert "did you mean TORCHIMAGES_HANG_RUNS?" in err and _drains(fake) == 1
    assert any("TORCHIMAGES_BRAKER" in line for line in said)


def test_no_torchimages_variable_of_the_project_reads_as_a_misspelt_prolog_knob():
    """The near-miss rule never fires on the project's own variables (a job's TORCHIMAGES_IMAGE, ...): every
    TORCHIMAGES_* name the code, templates and tests set or read is a prolog knob or far from all of them (the docs
    name a misspelt one as an example)."""
    names: set[str] = set()
    for folder in ("verify", "scripts", "tests", "templates", "rootfs", "images", ".ci"):      # what sets or reads one
        for path in Path(ROOT, folder).rglob("*"):
            if path.is_file() and path.stat().st_size < 1 << 20 and path.name != Path(__file__).name \
                    and "__pycache__" not in path.parts:                  # bytecode holds this file's own names
                names |= set(re.findall(r"TORCHIMAGES_[A-Z0-9_]+", path.read_text(errors="replace")))
    names |= set(re.findall(r"TORCHIMAGES_[A-Z0-9_]+", Path(ROOT, "Makefile").read_text()))
    assert len(names) > 20 and config.misspelt(dict.fromkeys(names, "x")) == []


@pytest.mark.parametrize("env,option", [
    # (TORCHIMAGES_STATE_DIR=state and TORCHIMAGES_METRICS_DIR=prom: knobs, their defaults hold: hunt71)
    ({}, ("--state-dir", "relative/state")), ({}, ("--metrics-dir", "\t")),
])
def test_slurm_s_prolog_semantics_a_blank_or_relative_folder_is_config_error_and_writes_nothing_here(
        tmp_path, fake, monkeypatch, capsys, env, option):
    """Slurm's prolog semantics: under Prolog= the working folder is slurmd's, as a step the job's: a blank or
    relative state or metrics folder would scatter the history and the breaker's lock there. It is CONFIG_ERROR
    (exit 0, nothing drained), and its trace is never written into the working folder either. (An empty
    TORCHIMAGES_* knob is unset, its default holding: tests/test_cluster_lows36.py.)"""
    monkeypatch.chdir(tmp_path)
    _verify_writes(monkeypatch, json.dumps(host_fault()).encode())
    argv = ["--no-kernel-log", *option] if option else ["--no-kernel-log"]
    if "TORCHIMAGES_STATE_DIR" not in env and "--state-dir" not in option:
        argv += ["--state-dir", str(tmp_path / "state")]
    assert cli.main(argv, {**PROLOG_ENV, **env}) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and _drains(fake) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["state"])


def test_make_undrain_without_node_is_refused_in_one_line(tmp_path, fake, capsys):
    """`make undrain` names the node it resumes: an empty NODE= is a usage error (exit 2), never this host's node
    revalidated in its place."""
    assert cli.main(["--state-dir", str(tmp_path), "--revalidate", "--node", ""], {}) == 2
    assert "--node is empty: name the node (make undrain NODE=<node>" in capsys.readouterr().err
    assert not any(a[:1] == ["update"] for a in fake.calls)


def test_a_revalidation_takes_a_relative_state_dir_from_where_it_runs(tmp_path, fake, monkeypatch):
    """`make undrain STATE_DIR=state` is run by hand from the checkout: a relative folder is read from there."""
    monkeypatch.chdir(tmp_path)
    cfg = cli.config(cli._parser().parse_args(["--revalidate", "--node", "n1", "--state-dir", "state"]), {})
    assert cfg.state_dir == str(tmp_path / "state")


# ---- class 6: a pass never stands on a report that cannot be true

def test_slurm_s_gres_a_pass_whose_gpu_check_gives_no_count_is_no_pass(tmp_path, fake, monkeypatch, capsys):
    """Slurm's Gres: where Slurm allocated 8 GPUs, a passing gpu check that lists no NVML device count (or a
    count that is not one: a pass on 0 devices no verify writes) proves nothing of them: not assessed (no drain,
    no pass)."""
    for devices, code in ((None, "GPU_COUNT_UNPROVEN"), (0, "REPORT_INVALID")):
        _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=devices))).encode())
        assert cli.main(_args(tmp_path, "--mode", "step"), {"SLURM_STEP_ID": "0", "SLURM_GPUS_ON_NODE": "8"}) == 3
        assert code in capsys.readouterr().out


@pytest.mark.parametrize("env", [{"SLURM_GPUS_ON_NODE": "0", "SLURM_JOB_GPUS": "0,1"},
                                 {"SLURM_GPUS_ON_NODE": "2", "SLURM_JOB_GPUS": "0,1,2,3"}])
def test_slurm_s_gres_environment_that_disagrees_proves_the_larger(tmp_path, fake, monkeypatch, capsys, env):
    """Slurm's GRES environment (SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS): where the two disagree, the larger count is
    held; a count of 0 beside the ids 0,1 let a report with no gpu check pass, a count of 2 beside four ids let
    a gpu check of 3 devices pass."""
    for body in (_report({"name": "shm", "status": "pass"}), _report(_gpu(devices=3))):
        _verify_writes(monkeypatch, json.dumps(body).encode())
        assert cli.main(_args(tmp_path), {**PROLOG_ENV, **env}) == 0
        out = capsys.readouterr().out
        if body["checks"][0]["name"] == "shm" or env["SLURM_GPUS_ON_NODE"] == "2":
            assert "PASS" not in out and re.search(r"GPU_NOT_ASSESSED|GPU_COUNT_UNPROVEN", out)


@pytest.mark.parametrize("checks", [[_gpu(), _gpu(devices=0)], [_gpu(), {"name": "gpu", "status": "skip"}],
                                    [_gpu("fail", code="GPU_LOST", owner="host"), _gpu()]])
def test_a_report_that_holds_one_check_twice_is_report_invalid(tmp_path, fake, monkeypatch, capsys, checks):
    """Slurm's prolog semantics: verify writes one result per check; a report with two (8 GPUs beside 0, a pass
    beside a skip or a fault) cannot be true: REPORT_INVALID, never a pass, never a drain."""
    _verify_writes(monkeypatch, json.dumps(_report(*checks)).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0
    assert "REPORT_INVALID" in capsys.readouterr().out and _drains(fake) == 0


def _stamped(report: dict[str, Any], created: str | None = None, **extra: Any) -> bytes:
    when = created or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return json.dumps({**report, "created": when, **extra}).encode()


@pytest.mark.parametrize("body", [
    _stamped(host_fault(), replay={"facts_dir": "/data/other-node/facts", "host": "gpu-17", "recorded": "2021-08-12"}),
    _stamped(host_fault(), "2031-01-01T00:00:00Z"), _stamped(host_fault(), "2019-01-01T00:00:00Z"),
    _stamped(host_fault(), "2026-02-30T00:00:00Z"), _stamped(_report(_gpu()), "2019-01-01T00:00:00Z")])
def test_evidence_of_another_host_or_time_never_drains_nor_passes(tmp_path, fake, monkeypatch, capsys, body):
    """Slurm's prolog semantics and NVSentinel's rule that evidence is this node's now: a report the preflight run
    hands back that replays recorded facts (verify --from-facts: another host's ECC error of 2021), or was created
    outside this run (a kept report, a clock stepped), drained n1 on it; it is REPORT_INVALID, never a drain and
    never a pass, as the fleet report refuses both."""
    _verify_writes(monkeypatch, body)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 0
    out = capsys.readouterr().out
    assert "REPORT_INVALID" in out and "PASS" not in out and _drains(fake) == 0


def test_a_report_created_during_this_run_is_judged(tmp_path, fake, monkeypatch):
    _verify_writes(monkeypatch, _stamped(host_fault()))
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and _drains(fake) == 1


# ---- class 3: return to service proves the repair on evidence that agrees

def _drained(tmp_path: Path, fake: FakeSlurm, gpus: int = 8, **extra: Any) -> None:
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "GPU_LOST", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "GPU_LOST", "x", now=1000.0,
                   extra={"gpus": gpus, "boot_id": "an-earlier-boot", "action": "reboot", "check": "gpu", **extra})


def _revalidate(tmp_path: Path) -> int:
    return cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"],
                    {"SLURMD_NODENAME": "n1"})


def test_nvsentinel_return_to_service_gres_below_the_drain_s_count_proves_the_larger(tmp_path, fake, monkeypatch,
                                                                                     capsys):
    """NVSentinel's return to service: Slurm's Gres says 4 GPUs, the drain recorded 8; evidence that disagrees
    proves the larger, so NVML seeing 4 keeps the node drained, and seeing 8 resumes it."""
    fake.info = {"Gres": "gpu:4"}
    _drained(tmp_path, fake)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=4))).encode())
    assert _revalidate(tmp_path) == 3 and fake.nodes["n1"][0] == "drained"
    assert "the preflight must see 8" in capsys.readouterr().err
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=8))).encode())
    assert _revalidate(tmp_path) == 0 and fake.nodes["n1"][0] == "idle"


def test_nvidia_xid_catalog_a_failed_reset_of_any_gpu_since_the_drain_is_no_repair():
    """NVIDIA's Xid catalog asks for a GPU reset: which GPU faulted is not always known, so a successful reset of
    one GPU beside a failed reset of another (perhaps the faulted one) is partial evidence, never the repair; a
    later success of that GPU is."""
    ok_a, failed_b = repair.Reset(2000.0, "gpu-a", True), repair.Reset(2100.0, "gpu-b", False)
    assert repair.reset_since([ok_a, failed_b], 1000.0, 3000.0) is None
    assert repair.reset_since([ok_a, failed_b, repair.Reset(2200.0, "gpu-b", True)], 1000.0, 3000.0) is not None
    drain = {"code": "GPU_LOST", "epoch": 1000.0, "boot_id": "a", "action": "reboot"}
    problem = repair.repair_problem(drain, None, kernlog.Clock("a", 50.0, now=3000.0), None, ([ok_a, failed_b], ""))
    assert "the last GPU reset since failed (gpu-b)" in str(problem)


def test_nvsentinel_return_to_service_another_node_s_line_in_the_history_is_garbled(tmp_path, fake, monkeypatch,
                                                                                    capsys):
    """NVSentinel's return to service needs the node's own record: a line naming another node (a file copied from
    its history) is garbled, so the history is not clean and the resume is refused (exit 5); the fleet's reader
    reads it so too."""
    from scripts.fleet import history as fleet_history
    fake.info = {"Gres": "gpu:8"}
    _drained(tmp_path, fake)
    target = history.path(str(tmp_path / "state"), "n1")
    with open(target, "a") as fh:
        fh.write(json.dumps({"schema": 1, "time": "x", "epoch": 1001.0, "node": "n9", "event": "resume", "code": None,
                             "detail": "x"}) + "\n")
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert _revalidate(tmp_path) == 5 and "garbled line(s) in the history (line 2)" in capsys.readouterr().err
    assert fleet_history.parse("n1", "history/n1.jsonl", Path(target).read_text()).bad_lines == [2]


# ---- classes 4 and 9: kernel-log evidence is what this boot's log holds, each event once, none from the future

CLOCK = kernlog.Clock(BOOT, 6000.0, booted=1_000_000.0, now=1_006_000.0)
XID79_AT = "[ {t}] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


@pytest.mark.parametrize("held", [
    {"line": XID79_AT.format(t="9000.000000"), "mono": 9000.0},             # past this boot's uptime
    {"line": XID79_AT.format(t="100.000000"), "mono": 1e300},               # a stamp that is not its line's
    {"line": XID79_AT.format(t="100.000000"), "mono": -1.0},
    {"line": "2999-01-01T00:00:00+0000 h kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "mono": -1.0},
])
def test_nvidia_xid_catalog_held_evidence_no_read_of_this_boot_could_keep_is_dropped(tmp_path, fake, monkeypatch,
                                                                                     capsys, held):
    """NVIDIA's Xid catalog drains on an Xid 79 the log holds: a kept state (a file in a folder others may write)
    holding one stamped past this boot's uptime, or with a stamp its line does not carry, or in wall time from the
    future, is no evidence: dropped with a line, the node not drained on an empty log."""
    state = kernlog.State(BOOT, 50.0, held=[held])
    assert kernlog.advance(state, [], CLOCK, 86400)[1] == []
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: CLOCK)
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    assert kernlog.save(str(tmp_path / "state"), "n1", state) is None
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, PROLOG_ENV) == 0 and _drains(fake) == 0
    assert "no read of this boot could have kept" in capsys.readouterr().err
    good = kernlog.State(BOOT, 100.0, held=[{"line": XID79_AT.format(t="100.000000"), "mono": 100.0}])
    assert kernlog.advance(good, [], CLOCK, 86400)[1]          # one a read kept is still held


def test_a_wall_clock_line_from_the_future_is_no_evidence_within_the_clock_skew_knob():
    """Time: a line stamped in wall time (a tool that ignored -o short-monotonic) past now is no evidence beyond
    TORCHIMAGES_CLOCK_SKEW; within it, it is (clocks differ by a little)."""
    def line(ahead_s: float) -> str:
        from datetime import datetime, timezone
        stamp = datetime.fromtimestamp(float(CLOCK.now or 0) + ahead_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+0000")
        return f"{stamp} h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    assert kernlog.advance(kernlog.State(), [line(86400)], CLOCK, 86400)[1] == []
    assert kernlog.advance(kernlog.State(), [line(60)], CLOCK, 86400, skew_s=300)[1]
    assert kernlog.advance(kernlog.State(), [line(600)], CLOCK, 86400, skew_s=300)[1] == []
    assert kernlog.advance(kernlog.State(), [line(600)], CLOCK, 86400, skew_s=3600)[1]


def test_nvidia_xid_catalog_one_watched_line_logged_three_times_is_one_event():
    """NVIDIA's Xid catalog drains a watched Xid (94, contained ECC) only when it repeats: one record forwarded
    three times (the same stamp and words, with or without journalctl's host prefix) is one event, no drain;
    three records at three stamps, or three lines without a stamp, are three."""
    one = "[ 500.000001] NVRM: Xid (PCI:0000:3b:00): 94, pid=7, Contained ECC error."
    prefixed = "[ 500.000001] node1 kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=7, Contained ECC error."
    assert xid.judge(xid.parse([one, one, prefixed])) is None
    three = [one.replace("500.000001", f"50{i}.000001") for i in range(3)]
    assert (xid.judge(xid.parse(three)) or ("",))[0] == "XID_REPEATED"
    bare = one.split("] ", 1)[1]
    assert xid.judge(xid.parse([bare] * 3)) is not None


def test_a_drain_ends_with_its_own_line(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: slurmd's log shows what the prolog did; a drain says DRAINED, the node, the code
    and the way back, not only the sinfo and scontrol commands it ran."""
    _verify_writes(monkeypatch, json.dumps(host_fault()).encode())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1
    assert "DRAINED n1: GPU_LOST (host's); return to service once repaired: make undrain NODE=n1" in \
        capsys.readouterr().err
    assert os.path.exists(history.path(str(tmp_path / "state"), "n1"))
