"""torchimages-prolog against hostile state and settings (issue 36, classes 1, 3 and 4; a second hunt): history and
kernel-log state lines of the wrong JSON type, a kernel log with many lines at one stamp, the clock-skew knob. On
`cli.main` and its pure parts with Slurm's commands, verify and the kernel log replaced in-process (argv recorded).
Each test names the practice it holds the prolog to."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, XID79, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify import replay
from verify.prolog import cli, history, kernlog, repair, slurm
from verify.shared import clockskew

pytestmark = pytest.mark.unit



@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _history(tmp_path: Path, *lines: Any) -> str:
    target = history.path(str(tmp_path / "state"), "n1")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "a") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return target


def _event(event: Any, code: Any = None, epoch: float = 1000.0, **extra: Any) -> dict[str, Any]:
    return {"schema": 1, "time": "2001-09-09T01:46:40Z", "epoch": epoch, "node": "n1", "event": event, "code": code,
            "detail": "x", **extra}


# ---- a history line of the wrong type is a garbled line, never a crash

ILL_TYPED = [
    _event("not-assessed", ["PREFLIGHT_TIMEOUT"]), _event("drain", {"a": 1}), _event("drain", 7),
    _event("drain", "GPU_LOST", check=["gpu"]), _event("drain", "GPU_LOST", gpus="8"),
    _event("drain", "GPU_LOST", boot_id=["a"]), _event("drain", "GPU_LOST", action={"reboot": 1}),
    _event("drain", "GPU_LOST", detail=["x"]), _event("drain", "GPU_LOST", node=1), {**_event("pass"), "schema": True},
    _event(["drain"], "GPU_LOST"), _event("drain", "GPU_LOST", gpus=float("nan")),
    _event("drain", "GPU_LOST", gpus=True), _event("drain", "GPU_LOST", gpus=-8), _event("drain", "GPU_LOST", gpus=8.0),
]


@pytest.mark.parametrize("line", ILL_TYPED, ids=lambda e: json.dumps(e, allow_nan=True)[:60])
def test_a_history_line_of_the_wrong_type_is_garbled_not_a_crash(line):
    """NVSentinel's return to service needs the node's whole record: a line whose fields have the wrong JSON type
    (a list where a code belongs) is no event: named as garbled, as unparsable lines are."""
    events, bad = history.parse(json.dumps(_event("pass")) + "\n" + json.dumps(line, allow_nan=True) + "\n")
    assert len(events) == 1 and bad == [2]


def test_an_ill_typed_history_never_crashes_the_prolog(tmp_path, fake, monkeypatch, capsys):
    """Slurm's prolog semantics: our own crash under Prolog= is no drain, but it is no gate either: the prolog runs,
    judges and says the history is garbled (the hang streak reads what is left)."""
    _history(tmp_path, *([_event("not-assessed", ["PREFLIGHT_TIMEOUT"])] * 3))
    _verify_writes(monkeypatch, None, rc=None)                  # verify hangs: the streak is read
    status = cli.main([*_args(tmp_path, "--budget", "10")], PROLOG_ENV)
    err = capsys.readouterr().err
    assert status == 0 and "PROLOG_CRASHED" not in err and "garbled line(s) in the history" in err
    assert fake.nodes["n1"][0] == "idle"


def test_an_ill_typed_history_refuses_the_return_to_service(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's return to service: a drain record whose check is a list is garbled, not clean: refused (exit 5)."""
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "GPU_LOST", "x", 1000))
    _history(tmp_path, _event("drain", "GPU_LOST", check=["gpu"]))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {}) == 5
    err = capsys.readouterr().err
    assert "garbled line(s) in the history (line 1)" in err and fake.nodes["n1"][0] == "drained"


# ---- the kernel-log state: every field checked for type

@pytest.mark.parametrize("state", [
    {"boot_id": ["b"], "mono": 1.0, "at_mono": [], "unstamped": [], "held": []},
    {"boot_id": "b", "mono": "5", "at_mono": [], "unstamped": [], "held": []},
    {"boot_id": "b", "mono": True, "at_mono": [], "unstamped": [], "held": []},
    {"boot_id": "b", "mono": 1.0, "at_mono": "abc", "unstamped": [], "held": []},
    {"boot_id": "b", "mono": 1.0, "at_mono": [1], "unstamped": [], "held": []},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [{}], "held": []},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [], "held": {"line": "x", "mono": 1}},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [], "held": [{"line": ["x"], "mono": 1}]},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [], "held": [{"line": "x", "mono": "1"}]},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [], "held": [{"line": "x", "mono": None}]},
    {"boot_id": "b", "mono": 1.0, "at_mono": [], "unstamped": [], "held": [{"line": "x", "mono": 1}],
     "at_count": "2"},
])
def test_a_kernel_log_state_of_the_wrong_type_is_garbled(tmp_path, state):
    """The kernel log's state is a hostile file too: a field of the wrong JSON type is a garbled state (said, the
    lines read again from the lookback), never coerced (str() of a list, float("5")) into a cursor."""
    target = kernlog.state_path(str(tmp_path), "n1")
    os.makedirs(os.path.dirname(target))
    Path(target).write_text(json.dumps({"schema": 1, **state}))
    loaded, problem = kernlog.load(str(tmp_path), "n1")
    assert problem and "garbled" in problem and loaded == kernlog.State()


# ---- kernel-log evidence: each line acted on exactly once, held until acted on

CLOCK = kernlog.Clock("boot-a", 6000.0)


def _xids(n: int, stamp: str = "5000.000001", code: int = 92, start: int = 0) -> list[str]:
    """n distinct watched Xid lines at one stamp (a burst the kernel printed within one microsecond)."""
    return [f"[ {stamp}] NVRM: Xid (PCI:0000:3b:00): {code}, pid={i}, High single-bit ECC error rate"
            for i in range(start, start + n)]


def _round_trip(tmp_path: Path, state: kernlog.State) -> kernlog.State:
    assert kernlog.save(str(tmp_path), "n1", state) is None
    loaded, problem = kernlog.load(str(tmp_path), "n1")
    assert problem is None
    return loaded


def test_more_lines_at_one_stamp_than_the_state_keeps_are_read_once(tmp_path):
    """NVIDIA's Xid catalog read as evidence once: 600 lines at one stamp (more than the 500 digests the state
    keeps) are new on the first run and none is new on the next, nor after more lines join that stamp."""
    burst = _xids(600)
    state, _ = kernlog.advance(kernlog.State(), burst, CLOCK, 86400)
    state = _round_trip(tmp_path, state)
    again, _ = kernlog.advance(state, burst, CLOCK, 86400)
    assert again.held == state.held                           # nothing read twice
    more = [*burst, *_xids(2, start=600)]
    after, _ = kernlog.advance(_round_trip(tmp_path, again), more, CLOCK, 86400)
    assert len(after.held) - len(again.held) in (0, 2) and [e["line"] for e in after.held][-2:] == more[-2:]


def test_identical_lines_at_one_stamp_are_each_one_event():
    """Two identical lines the kernel printed at one stamp are two lines of the log: each read once, neither lost
    (the cursor counts positions, a digest set folded them into one)."""
    twice = [XID79, XID79]
    state, found = kernlog.advance(kernlog.State(), twice, CLOCK, 86400)
    assert len(found) == 2
    again, found = kernlog.advance(state, twice, CLOCK, 86400)
    assert len(again.held) == 2
    third, _ = kernlog.advance(again, [*twice, XID79], CLOCK, 86400)
    assert len(third.held) == 3


def test_a_ring_buffer_that_wrapped_into_the_cursor_s_stamp_reads_nothing_twice():
    """dmesg's ring buffer drops its oldest lines: a read that starts inside the burst at the cursor's stamp has
    fewer lines there than were read; what it still holds of them is not read again, what follows is."""
    burst = _xids(700)
    state, _ = kernlog.advance(kernlog.State(), burst, CLOCK, 86400)
    wrapped = [*burst[300:], *_xids(3, start=700)]
    after, _ = kernlog.advance(state, wrapped, CLOCK, 86400)
    held = [e["line"] for e in after.held]
    assert held[-3:] == wrapped[-3:] and len(held) == len(set(held)) == kernlog.HELD_MAX


def test_unstamped_lines_past_the_kept_digests_are_read_once():
    """A kernel booted with printk.time=0 stamps no line: 600 of them are read once, not again on the next run."""
    lines = [f"NVRM: Xid (PCI:0000:3b:00): 92, pid={i}, High single-bit ECC error rate" for i in range(600)]
    state, _ = kernlog.advance(kernlog.State(), lines, CLOCK, 86400)
    again, _ = kernlog.advance(state, lines, CLOCK, 86400)
    held = [e["line"] for e in again.held]
    assert held == [e["line"] for e in state.held] and len(held) == len(set(held))


def test_a_held_drain_is_not_pushed_out_by_watched_events():
    """Evidence is kept until acted on: an Xid 79 the breaker kept from draining stays held when 600 watched Xids
    follow it (the state keeps at most 500 events: the watched ones give way)."""
    state, _ = kernlog.advance(kernlog.State(), [XID79], CLOCK, 86400)
    noise = [f"[ 5001.{i:06d}] NVRM: Xid (PCI:0000:3b:00): 92, pid={i}, High single-bit ECC error rate"
             for i in range(600)]
    after, found = kernlog.advance(state, noise, CLOCK, 86400)
    assert any(f.code == 79 for f in found) and len(after.held) <= kernlog.HELD_MAX


# ---- the clock-skew allowance: one knob, shared, ours

def test_the_clock_skew_allowance_reads_as_clock_skew_does():
    """One allowance for every time from the future (verify/shared/clockskew.py): seconds or a duration with a unit
    (as CLOCK_SKEW for report, gate and fleet-report), 0 to a day; anything else one line."""
    assert clockskew.allowance({}) == 300.0 and clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": " "}) == 300.0
    assert clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": "5m"}) == 300.0
    assert clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": "90"}) == 90.0
    assert clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": "0"}) == 0.0
    assert clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": "1.5H"}) == 5400.0
    for bad in ("soon", "-1", "inf", "nan", "1e3", "2y", "53w", "9" * 40, "\u0665m"):
        with pytest.raises(ValueError, match=r"TORCHIMAGES_CLOCK_SKEW=.* (is not a duration|a clock tolerance is 0 to 1d)") as exc:
            clockskew.allowance({"TORCHIMAGES_CLOCK_SKEW": bad})
        assert "\n" not in str(exc.value)
    # one allowance: replay reads the shared one and neither side keeps a copy of its own
    assert replay.clock_skew({}) == clockskew.DEFAULT_S
    assert not hasattr(replay, "CLOCK_SKEW_S") and not hasattr(repair, "CLOCK_SKEW_S")


def test_the_prolog_believes_a_reset_record_within_the_allowance_it_is_given(tmp_path, fake, monkeypatch):
    """NVIDIA's Xid catalog: a GPU reset is Xid 79's repair; NVSentinel's record of one stamped 10 minutes ahead
    is not believed under the default 5 minutes, and is under TORCHIMAGES_CLOCK_SKEW=15m."""
    now = time.time()
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "XID_HISTORY", "x", now - 100))
    _history(tmp_path, _event("drain", "XID_HISTORY", epoch=now - 100, boot_id="a", action="reboot", gpus=8))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("a", 50.0, None, now))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: None)
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(now + 600, "gpu-1", True)], ""))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    # an Xid drain's return to service reads the kernel log (tests/test_prolog_proof.py): no new line in it
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    args = ["--state-dir", str(tmp_path / "state"), "--revalidate", "--node", "n1"]
    assert cli.main(args, {}) == 5
    assert fake.nodes["n1"][0] == "drained"
    assert cli.main(args, {"TORCHIMAGES_CLOCK_SKEW": "15m"}) == 0
    assert fake.nodes["n1"][0] == "idle"


# ---- a second hunt (issue 36's classes): each hostile case a test first



@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV])
def test_a_node_named_in_the_prolog_line_that_is_not_this_one_drains_nothing(tmp_path, fake, monkeypatch, capsys, env):
    """Slurm's prolog semantics: slurmd says which node runs the prolog (SLURMD_NODENAME). A `--node n2` copied
    into slurm.conf's Prolog= line (or a job's first step) would drain n2 for every other node's fault: it is our
    setting, CONFIG_ERROR (exit 0 under Prolog=, 2 as a step), and Slurm is asked nothing."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", 7, code="GPU_LOST", owner="host"))).encode())
    status = cli.main([*_args(tmp_path), "--node", "n2"], env)
    err = capsys.readouterr().err
    assert status == (0 if env is PROLOG_ENV else 2) and "SLURMD_NODENAME" in err and "n2" in err
    assert fake.nodes["n2"] == ("idle", "none") and not [a for a in fake.calls if a and a[0] == "update"]


def test_journalctl_and_dmesg_lines_of_one_event_are_one_line():
    """NVIDIA's Xid catalog read as evidence once, whichever tool gave the kernel log: journalctl's
    short-monotonic line carries the host and `kernel:` before the message, dmesg's does not; a run that falls back
    to dmesg after one that read journalctl does not read the lines at the cursor's stamp again."""
    journal = "[ 5000.000001] n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
    state, found = kernlog.advance(kernlog.State(), [journal], CLOCK, 86400)
    assert len(found) == 1
    again, _ = kernlog.advance(kernlog.settle(state), [XID79], CLOCK, 86400)
    assert again.held == []


def test_return_to_service_without_any_record_of_the_drain_is_refused(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's return to service needs the node's record: Slurm shows our drain but the history holds no drain
    (another --state-dir than the prolog's, a history deleted): a flap could not be told, so it is refused (exit
    5) with the path it read."""
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "CHECK_TIMEOUT", "x", 1000))
    fake.info = {"Gres": "gpu:8"}
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {}) == 5
    err = capsys.readouterr().err
    assert "no drain" in err and "history" in err and fake.nodes["n1"][0] == "drained"


def test_make_undrain_reads_the_state_dir_it_is_given():
    """`make undrain NODE=n STATE_DIR=...` reads the history there (the Makefile exported STATE_DIR, the prolog read
    only TORCHIMAGES_STATE_DIR: the default folder's missing history looked clean)."""
    text = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    recipe = text[text.index("\nundrain:"):].split("\n")[2]
    assert "--state-dir" in recipe and "STATE_DIR" in recipe


def test_the_breaker_never_counts_a_partition_this_node_is_not_in(tmp_path, fake, capsys):
    """NVSentinel's breaker counts the nodes of this node's pool: a --partition (or SLURM_JOB_PARTITION) sinfo lists
    without this node is another pool's count: not drained (exit 4; 0 under Prolog=), said in one line."""
    from verify.prolog.verdict import EXIT_BREAKER, FAULT, Verdict
    fake.nodes = {"m1": ("idle", "none"), "m2": ("idle", "none")}
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--partition", "other", "--breaker", "0.5")), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")) == EXIT_BREAKER
    assert "does not list n1 in partition other" in str(cfg.closing)     # said last by the gate (cli._gate)
    assert not [a for a in fake.calls if a and a[0] == "update"]


def test_a_claim_slurm_would_not_give_back_is_a_drain_on_record(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's breaker under concurrency: a claim that took the partition past the breaker is given back; when
    Slurm refuses the resume, the node IS drained with our reason: the history says drain (with what return to
    service must prove) and the line says the give-back failed, never "given back"."""
    from verify.prolog.verdict import EXIT_FAULT, FAULT, Verdict
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1000))
    real_run = fake.run

    def racing(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if argv[1:4] == ["update", "nodename=n1", "state=drain"]:
            fake.nodes["n3"] = ("drained", slurm.reason("n3", "GPU_LOST", "x", 1000))    # another prolog's claim
        if argv[1:4] == ["update", "nodename=n1", "state=resume"]:
            fake.calls.append(argv[1:])
            return 1, "scontrol: error: Unable to contact slurm controller"
        return real_run(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", racing)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--breaker", "0.5")), STEP_ENV)
    assert cli._drain(cfg, Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")) == EXIT_FAULT
    err = capsys.readouterr().err
    assert fake.nodes["n1"][0] == "drained" and "could not be given back" in err and "given back:" not in err
    assert [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events][-1] == "drain"


def test_one_oversize_field_never_erases_the_history(tmp_path):
    """Every field of a history line is bounded: a check name or code of 5 MiB made one line past half of the
    rotation's size, and rotation (which keeps the tail's whole lines) kept nothing, the drain included. Practice:
    bounded state files whose rotation keeps the newest events (NVSentinel's return to service reads them)."""
    state = str(tmp_path / "state")
    assert history.record(state, "n1", "drain", "GPU_LOST", "first", extra={"gpus": 8}) is None
    assert history.record(state, "n1", "drain", "G" * (5 << 20), "x" * (5 << 20),
                          extra={"check": "c" * (5 << 20), "boot_id": "b" * (5 << 20)}) is None
    past = history.read(state, "n1")
    assert [e["detail"] for e in past.events][:1] == ["first"] and len(past.events) == 2, past
    assert max(len(json.dumps(e)) for e in past.events) < 2000
