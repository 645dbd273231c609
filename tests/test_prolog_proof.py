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

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, XID79, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history, kernlog, slurm
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT, EXIT_NOT_ASSESSED, FAULT, Verdict

pytestmark = pytest.mark.unit

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
    err = capsys.readouterr().err + str(cfg.closing)           # the gate says the closing line last (cli._gate)
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


# ---- return to service reads the evidence the drain stood on: a kernel-log drain needs the kernel log

REVALIDATE_ENV = {"SLURMD_NODENAME": "n1"}


def _rebooted_after(tmp_path, fake: FakeSlurm, monkeypatch: pytest.MonkeyPatch, code: str, check: str | None,
                    reason_code: str | None = None, epoch: float = 1000.0, **extra: object) -> list[object]:
    """n1 drained with our reason for `code` (the history's drain with `check`), rebooted since (the repair NVIDIA's
    Xid catalog asks for is done), Gres gpu:8; verify would pass with 8 GPUs. The argv verify is started with."""
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:8"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", reason_code or code, "x", epoch))
    history.record(str(tmp_path / "state"), "n1", "drain", code, "x", now=epoch,
                   extra={"check": check, "boot_id": "boot-a", "gpus": 8, **extra})
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-b", 60.0))
    seen: list[object] = []
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode(), seen)
    return seen


@pytest.mark.parametrize("code, check, reason_code, extra", [
    ("XID_HISTORY", "kernel-log", None, {}),                          # an Xid 79 (or an NV_ERR status) in the log
    ("XID_REPEATED", "kernel-log", None, {}),                         # a watched Xid 3 times on one device
    ("GPU_LOST", "gpu", None, {"kernel_log": "XID_HISTORY"}),         # the gpu check's fault, the log's Xid with it
    ("CHECK_TIMEOUT", "shm", "XID_HISTORY", {}),                      # Slurm's reason: the history's line is older
], ids=["xid", "xid-repeated", "gpu-with-xid", "reason-only"])
def test_revalidate_without_the_kernel_log_never_resumes_a_kernel_log_drain(tmp_path, fake, monkeypatch, capsys,
                                                                            code, check, reason_code, extra):
    """NVSentinel's return to service must prove the repair: a node drained on kernel-log evidence (NVIDIA's Xid
    catalog) comes back only once that log is read again. `--revalidate --no-kernel-log` for it is refused in one
    line (cause and fix), exit 5, before verify runs; the node stays drained."""
    epoch = 1000.0 + (600 if reason_code else 0)            # a reason 600 s after the history's line: not that drain
    seen = _rebooted_after(tmp_path, fake, monkeypatch, code, check, reason_code, **extra)
    if reason_code:
        fake.nodes["n1"] = ("drained", slurm.reason("n1", reason_code, "x", epoch))
    status = cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], REVALIDATE_ENV)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 5 and fake.nodes["n1"][0] == "drained" and not seen, err
    assert len(err) == 1 and err[0].startswith("torchimages-prolog: REFUSED n1: ") and "--no-kernel-log" in err[0]
    assert "kernel log" in err[0]


def test_revalidate_without_the_kernel_log_still_resumes_a_drain_the_log_had_no_part_in(tmp_path, fake, monkeypatch):
    """The refusal is for the drains that stood on the kernel log: a lost GPU the gpu check saw alone, rebooted since,
    resumes on a passing preflight with --no-kernel-log as before."""
    seen = _rebooted_after(tmp_path, fake, monkeypatch, "GPU_LOST", "gpu")
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], REVALIDATE_ENV) == 0
    assert fake.nodes["n1"] == ("idle", "none") and seen


def test_revalidate_of_a_kernel_log_drain_whose_log_cannot_be_read_stays_drained(tmp_path, fake, monkeypatch, capsys):
    """The same rule when the log is asked for but cannot be read (kernel.dmesg_restrict, no journal): the Xid may be
    back, unseen; not assessed (KERNEL_LOG_UNREAD, exit 3), the node stays drained. Read and clean, it resumes."""
    _rebooted_after(tmp_path, fake, monkeypatch, "XID_HISTORY", "kernel-log")
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(None, "dmesg: read kernel buffer failed"))
    args = ["--state-dir", str(tmp_path / "state"), "--revalidate", "--node", "n1"]
    assert cli.main(args, REVALIDATE_ENV) == EXIT_NOT_ASSESSED
    assert fake.nodes["n1"][0] == "drained" and "KERNEL_LOG_UNREAD" in capsys.readouterr().out
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([], "journalctl"))
    assert cli.main(args, REVALIDATE_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


def test_a_drain_the_kernel_log_stood_on_says_so_in_its_record(tmp_path, fake, monkeypatch):
    """What return to service must prove is kept with the drain: a gpu check's fault drained with an Xid 79 held in
    the kernel log records that evidence (`kernel_log`), so revalidation knows to read the log."""
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog([XID79], "journalctl"))
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 6000.0))
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state")], STEP_ENV) == EXIT_FAULT
    drain = history.last_drain(history.read(str(tmp_path / "state"), "n1").events)
    assert drain is not None and drain["code"] == "GPU_LOST" and drain["kernel_log"] == "XID_HISTORY"


# ---- a reboot is the kernel's two records agreeing

BOOT = kernlog.host_clock().boot_id


@pytest.mark.parametrize(("boot_id", "ago"), [(BOOT.upper(), 3600), (f" {BOOT}\n", 3600), ("another-boot", 3600)])
def test_nvidia_xid_catalog_a_reboot_is_another_boot_id_and_a_boot_after_the_drain(tmp_path, fake, monkeypatch, capsys,
                                                                                   boot_id, ago):
    """NVIDIA's Xid catalog (GPU_LOST: reset or reboot) and NVSentinel's return to service: a drain record naming
    this boot in capitals or with spaces, or another boot id while this boot began before the drain (btime), proves
    no reboot: it resumed a node whose lost GPU had seen no repair. Refused, not resumed."""
    epoch = int(time.time()) - ago
    # this boot began two hours ago, before the drain (a drain stamped in the future tells nothing of its time:
    # tests/test_cluster_hunt68.py)
    booted = time.time() - 7200
    monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC: kernlog.Clock(BOOT, 7200.0, booted, time.time()))
    monkeypatch.setattr(kernlog, "boot_time", lambda proc=kernlog.PROC: booted)
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "GPU_LOST", "x", epoch))
    fake.info = {"Gres": "gpu:8"}
    history.record(str(tmp_path / "state"), "n1", "drain", "GPU_LOST", "x", now=float(epoch),
                   extra={"gpus": 8, "boot_id": boot_id, "action": "reboot", "check": "gpu"})
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--revalidate", "--node", "n1"],
                    {"SLURMD_NODENAME": "n1"}) == 5
    assert "no GPU reset recorded since" in capsys.readouterr().err
    assert not any(a[:3] == ["update", "nodename=n1", "state=resume"] for a in fake.calls)
