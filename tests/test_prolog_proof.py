"""torchimages-prolog acts only on proof (issue 36): a drain whose breaker cannot be verified after the claim is given
back (NVSentinel's breaker: the tool's trouble never drains); a node drained on kernel-log evidence never returns
without the kernel log read (NVSentinel's return to service, NVIDIA's Xid catalog); a hang streak ends at a reboot
(a new boot id: the GPU a hang stood for was re-probed). On `cli.main` and the drain with Slurm's commands, verify
and the kernel log replaced in-process (argv recorded)."""
from __future__ import annotations

import json
import os
import time

import pytest

from tests.prolog_fakes import FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history, kernlog, slurm
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT, EXIT_NOT_ASSESSED, FAULT, Verdict

pytestmark = pytest.mark.unit

PROLOG_ENV = {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURMD_NODENAME": "n1"}
STEP_ENV = {"SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7"}
LOST = Verdict(FAULT, "GPU_LOST", "host", "gpu 0 lost", "gpu")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _events(tmp_path, node: str = "n1") -> list[tuple[str, str | None]]:
    return [(e["event"], e["code"]) for e in history.read(str(tmp_path / "state"), node).events]


# ---- the breaker that cannot be verified after the claim: the tool's trouble, never a drain

def _recount_fails(fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch, answer: tuple[int, str],
                   resume: tuple[int, str] | None = None) -> None:
    """sinfo answers normally until n1 is claimed, then `answer`; scontrol's resume answers `resume` when given."""
    real_run = fake.run

    def run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        name = os.path.basename(argv[0])
        if name == "sinfo" and fake.nodes["n1"][0] == "drained":
            fake.calls.append(argv[1:])
            return answer
        if resume is not None and argv[1:4] == ["update", "nodename=n1", "state=resume"]:
            fake.calls.append(argv[1:])
            return resume
        return real_run(argv, dry_run, quiet)
    monkeypatch.setattr(slurm, "run", run)


@pytest.mark.parametrize("answer", [
    (1, "sinfo: error: Unable to contact slurm controller (connect failure)"),
    (0, ""),                                                    # lists no node at all
    (0, "n2|idle|none\nn3|idle|none\n"),                        # no longer lists this node: another pool's count
], ids=["sinfo-fails", "sinfo-empty", "node-missing"])
def test_a_claim_whose_breaker_cannot_be_recounted_is_given_back(tmp_path, fake, monkeypatch, capsys, answer):
    """NVSentinel's breaker: the claim is kept only once the re-count shows it within the share. A re-count that
    cannot be had (sinfo fails, lists nothing, or no longer lists the node) proves nothing: the claim is given back
    (exit 4, `drain-refused` in the history), as a count that cannot be had before the claim refuses the drain."""
    _recount_fails(fake, monkeypatch, answer)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--breaker", "0.5")), STEP_ENV)
    assert cli._drain(cfg, LOST) == EXIT_BREAKER
    err = capsys.readouterr().err
    assert fake.nodes["n1"] == ("idle", "none"), err
    assert fake.verbs() == ["-h", "update nodename=n1 state=drain", "-h", "update nodename=n1 state=resume"]
    assert _events(tmp_path) == [("drain-refused", "GPU_LOST")]
    assert "breaker cannot count" in history.read(str(tmp_path / "state"), "n1").events[-1]["detail"]
    assert "given back" in err and "cannot count" in err


def test_under_prolog_a_recount_that_fails_exits_0_and_leaves_the_node_in_service(tmp_path, fake, monkeypatch):
    """Slurm's prolog semantics: as Prolog=, a non-zero exit drains the node; a re-count that fails is the tool's
    trouble, so the prolog gives its claim back and exits 0 (the history tells it apart)."""
    _recount_fails(fake, monkeypatch, (1, "sinfo: error: slurm_load_partitions: Socket timed out"))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main([*_args(tmp_path), "--breaker", "0.5"], PROLOG_ENV) == 0
    assert fake.nodes["n1"] == ("idle", "none")
    assert ("drain-refused", "GPU_LOST") in _events(tmp_path) and ("drain", "GPU_LOST") not in _events(tmp_path)


def test_a_failed_recount_whose_give_back_slurm_refuses_is_a_drain_on_record(tmp_path, fake, monkeypatch, capsys):
    """NVSentinel's breaker: when Slurm refuses the give-back too, the node IS drained with our reason: recorded as
    a drain (what return to service must prove kept), exit 1, and the line says the give-back failed."""
    _recount_fails(fake, monkeypatch, (1, "sinfo: error"), resume=(1, "scontrol: error: Unable to contact"))
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path, "--breaker", "0.5")), STEP_ENV)
    assert cli._drain(cfg, LOST) == EXIT_FAULT
    err = capsys.readouterr().err
    assert fake.nodes["n1"][0] == "drained" and "could not be given back" in err
    assert _events(tmp_path)[-1] == ("drain", "GPU_LOST")


# ---- a hang streak ends at a reboot: a new boot id restarts it

def _hung_before(tmp_path, epoch: float, runs: int = 2, **extra: object) -> None:
    target = history.path(str(tmp_path / "state"), "n1")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "a") as fh:
        for i in range(runs):
            fh.write(json.dumps({"schema": 1, "time": "t", "epoch": epoch + i, "node": "n1", "event": "not-assessed",
                                 "code": "PREFLIGHT_TIMEOUT", "detail": "ran past", **extra}) + "\n")


@pytest.mark.parametrize("before", [
    {"boot_id": "boot-a"},                     # recorded in the boot before this one
    {},                                        # a line written before boot ids were recorded, before this boot
], ids=["other-boot-id", "before-boot-time"])
def test_a_reboot_by_hand_restarts_the_hang_streak(tmp_path, fake, monkeypatch, before):
    """NVSentinel's hung-checker rule counts hangs of one GPU state in a row; a reboot (done by hand, nothing in the
    history says so) re-probes the GPUs, so hangs of the boot before are no evidence against this one: the third
    hang, the first of this boot, is not assessed (exit 3), never PREFLIGHT_HUNG."""
    now = time.time()
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-b", 60.0, now - 60, now))
    _hung_before(tmp_path, now - 3600, **before)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30", "--hang-runs", "3"), STEP_ENV) == EXIT_NOT_ASSESSED
    assert fake.nodes["n1"] == ("idle", "none") and _events(tmp_path)[-1] == ("not-assessed", "PREFLIGHT_TIMEOUT")
    assert history.read(str(tmp_path / "state"), "n1").events[-1]["boot_id"] == "boot-b"    # this boot, recorded


@pytest.mark.parametrize("same", [{"boot_id": "boot-b"}, {}], ids=["same-boot-id", "after-boot-time"])
def test_hangs_of_this_boot_still_drain_behind_the_breaker(tmp_path, fake, monkeypatch, same):
    """The same rule, within one boot: the third hang in a row drains with PREFLIGHT_HUNG."""
    now = time.time()
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-b", 600.0, now - 600, now))
    _hung_before(tmp_path, now - 300, **same)
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30", "--hang-runs", "3"), STEP_ENV) == EXIT_FAULT
    assert fake.nodes["n1"][1].startswith("torchimages:PREFLIGHT_HUNG #")


def test_the_hang_streak_stops_at_another_boot():
    """history.streak, pure: a run of another boot (its boot id, else its time before this boot) ends the streak."""
    def ev(epoch: float, **extra: object) -> dict[str, object]:
        return {"event": "not-assessed", "code": "PREFLIGHT_TIMEOUT", "epoch": epoch, "time": "t", **extra}
    codes = cli.HANG_CODES
    assert history.streak([ev(10, boot_id="a"), ev(20, boot_id="b")], codes, "b", 5.0) == 1
    assert history.streak([ev(10), ev(20, boot_id="b")], codes, "b", 15.0) == 1
    assert history.streak([ev(10), ev(20)], codes, "b", 5.0) == 2
    assert history.streak([ev(10, boot_id="b"), ev(20, boot_id="b")], codes, "b", 15.0) == 2   # the id decides
    assert history.streak([ev(10), ev(20)], codes) == 2          # nothing known of the boot: as before
