"""Hunt 98: bad input on the prolog's decision path (python -m verify.prolog as Prolog= and as a job's first step,
make undrain, the drain history, the kernel log, the hang streak).

Each finding, its rating, repro and fix:

1. (medium, wrong owner; class 1) A job's PyTorch and CUDA runtime knobs reached verify's checks in the job's first
   step: `TORCH_DISTRIBUTED_DEBUG=bogus srun torchimages-prolog` (python -m verify.prolog with SLURM_STEP_ID set)
   was `FAULT CHECK_CRASHED image gpu: check probe raised ValueError: The value of TORCH_DISTRIBUTED_DEBUG must be
   OFF, INFO, or DETAIL`: the job failed on the image for a variable of its own. The same door takes
   PYTORCH_CUDA_ALLOC_CONF (a key torch refuses fails the first allocation of the gpu check's kernel),
   CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT (the kernels built another way: ARCH_NOT_IN_BUILD, the image's) and
   CUDA_DEVICE_WAITS_ON_EXCEPTION (a faulting kernel halts for a debugger: a "hang"). Slurm's prolog semantics: a
   step runs with the job's environment, which judges no node; hunt 59 had taken NCCL_* and GLOO_* out for the same
   reason. verifyrun.drop_job_settings: TORCH_*, PYTORCH_*, TORCHINDUCTOR_*, TORCHDYNAMO_* and CUDA_* are the job's
   too in its step (and the shell's under make undrain), but Slurm's own CUDA variables (CUDA_VISIBLE_DEVICES,
   CUDA_DEVICE_ORDER, gres/mps's CUDA_MPS_*), which say which GPUs the job was given.
2. (high, a broken node kept in service; classes 3 and 4) At the gate a GPU reset of ANY board spent the kernel
   log's held evidence logged before it: an Xid 48 (double-bit ECC) on GPU 3 (PCI 0000:13:00), held because the
   node was drained by someone else (or the breaker held), was spent by NVSentinel's record of a reset of GPU 0
   (`GPU reset executed: GPU-00000000-..., success: true`), or of a board the node does not have, and the next
   prolog passed the node on a preflight that cannot see a double-bit error: `python -m verify.prolog` -> PASS,
   the Xid gone for good. hunt95 made make undrain ask for the reset of the GPU the drain named (foreign_reset);
   the gate still took any reset. Fix: drain.regained / repair.unrepaired: once the preflight's report places the
   GPUs (each device's pci_bus_id beside its UUID), a held event whose GPU has no successful reset after it, or every
   event where no reset names a GPU the report lists, is held again (saved) and judged: XID_HISTORY, drained behind
   the breaker. An event the report cannot place (no bus id or UUID, no report) stays spent, the documented limit.
   Practice: NVIDIA's Xid catalog actions (reset THAT GPU, or reboot); NVSentinel's remediation record per GPU UUID.
3. (high, a broken node kept in service; classes 4 and 8) The kernel-log state the prolog writes could outgrow what
   its own reader takes back (kernlog.STATE_CAP, 1 MiB from the tail): each held line is cut to about 1,024
   characters, but a character outside ASCII is six bytes of JSON (`\ufffd`, what undecodable bytes become), so 200
   watched Xid 94 lines carrying a kilobyte of such bytes beside an Xid 79 the breaker held made a 1.2 MB state; the
   next run found it "garbled: read again from the lookback", and an Xid 79 older than the lookback (the node idle
   over a weekend) was gone: the node passed. Repro: `python -m verify.prolog` on a node whose kernel log holds those
   lines, the node drained by someone else (the Xid held), then resumed: PASS. Fix: kernfit.bounded, called by
   kernlog.save: the held events and deferred lines are cut to 7/8 of STATE_CAP before the state is written, the
   watched ones first (oldest first), the drain-worthy ones last. Practice: NVIDIA's Xid catalog (an Xid 79 is acted
   on: reset or reboot), kept until acted on; POSIX file safety (a file we write is one our reader reads back).
4. (low, an input silently ignored in two corners; class 9) TORCHIMAGES_CLOCK_SKEW was not applied where a watched
   Xid without the kernel's stamp is aged by when it was first read (kernlog._aged used the 300 s default: one read
   while the clock ran 10 minutes fast was dropped under a 1 h allowance), nor in make undrain's first look at
   whether a reboot since the drain is proven (revalidate._proof). Both take the knob now.
5. (medium, a setting a job could write was applied; classes 1 and 8) The state folder's `settings` file was the
   operator's when neither it nor its folder was group- or other-writable, whoever owned them: a state folder a
   job's user made first (`--state-dir /tmp/torchimages`, gone at each reboot) held that user's
   `TORCHIMAGES_BREAKER=1`, believed by every Prolog= run as root (the breaker opened to the whole partition), while
   the history and the kernel-log state beside it were refused for that very owner (statefile.not_ours). Repro:
   `mkdir /tmp/s; echo TORCHIMAGES_BREAKER=1 > /tmp/s/settings; chown -R nobody /tmp/s`, then
   `python -m verify.prolog --state-dir /tmp/s` under Prolog=: breaker 1.0, nothing said. Fix: settings.operators
   also requires the file and its folder to belong to root or the prolog's own user, as statefile.not_ours does;
   otherwise said, traced, and the defaults hold. Practice: POSIX file safety (whose file it is, not only its mode);
   Slurm's prolog semantics (the operator's settings only).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _gpu, _nccl, _report, _shm, _verify_writes, install_fake
from verify.prolog import cli, kernlog, repair, verifyrun
from verify.prolog.verdict import EXIT_BREAKER, EXIT_FAULT, EXIT_PASS

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ 1. a job's PyTorch and CUDA knobs

JOBS_KNOBS = {"TORCH_DISTRIBUTED_DEBUG": "bogus", "PYTORCH_CUDA_ALLOC_CONF": "bogus:1", "CUDA_FORCE_PTX_JIT": "1",
              "CUDA_DISABLE_PTX_JIT": "1", "CUDA_DEVICE_WAITS_ON_EXCEPTION": "1", "CUDA_LAUNCH_BLOCKING": "1",
              "TORCH_NCCL_ASYNC_ERROR_HANDLING": "x", "TORCHINDUCTOR_MAX_AUTOTUNE": "1"}
SLURMS = {"CUDA_VISIBLE_DEVICES": "0,1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_MPS_PIPE_DIRECTORY": "/run/mps",
          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50"}


def _verify_sees(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """verify replaced: it writes a passing report and keeps the environment the prolog would give it."""
    seen: list[dict[str, str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int | None, str]:
        seen.append(verifyrun._verify_env(os.environ))
        Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(_report(_gpu())))
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    return seen


@pytest.mark.parametrize("env, dropped", [(STEP_ENV, True), (PROLOG_ENV, False)], ids=["first step", "Prolog="])
def test_slurm_prolog_semantics_a_jobs_pytorch_and_cuda_knobs_never_judge_the_node(tmp_path, monkeypatch, env,
                                                                                    dropped):
    # practice: Slurm's prolog semantics (a step runs with the job's environment; slurmd's is the operator's)
    install_fake(monkeypatch)
    for name, value in {**JOBS_KNOBS, **SLURMS}.items():
        monkeypatch.setenv(name, value)
    seen = _verify_sees(monkeypatch)
    assert cli.main(_args(tmp_path), dict(env)) == 0
    given = seen[0]
    assert all((name in given) is not dropped for name in JOBS_KNOBS), given
    assert all(given.get(name) == value for name, value in SLURMS.items())


def test_make_undrain_drops_the_shells_pytorch_and_cuda_knobs_and_says_so(monkeypatch):
    # practice: NVSentinel's return to service proves the node as the gate sees it, never under a shell's settings
    environ = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL", "CUDA_LAUNCH_BLOCKING": "1", "CUDA_MPS_PIPE_DIRECTORY": "/run/mps",
               "TORCHIMAGES_STATE_DIR": "/var/lib/torchimages", "PATH": "/usr/bin"}
    notes = verifyrun.drop_shell_settings(environ)
    assert set(environ) == {"CUDA_MPS_PIPE_DIRECTORY", "TORCHIMAGES_STATE_DIR", "PATH"}
    assert "CUDA_LAUNCH_BLOCKING" in notes[0] and "TORCH_DISTRIBUTED_DEBUG" in notes[0]


# ------------------------------------------------------------------ 2. a reset of another board repairs no held Xid

UUIDS = [f"GPU-{i:08x}-1111-2222-3333-444444444444" for i in range(8)]
XID48_GPU3 = "[ 5000.000001] NVRM: Xid (PCI:0000:13:00): 48, pid=1, name=x, An uncorrectable double bit error"
BOOTED = 1_000_000.0                   # the boot's wall time: the Xid at 5000 s is 1_005_000, the reset at 6000 s after


def _passes(monkeypatch: pytest.MonkeyPatch, placed: bool = True) -> None:
    """The preflight passes with 8 GPUs, each listed by UUID and (placed) by its bus id: GPU i on bus 0x10 + i."""
    devices = [{"index": i, "ecc": [True, True], "uuid": UUIDS[i],
                **({"pci_bus_id": f"00000000:{0x10 + i:02X}:00.0"} if placed else {})} for i in range(8)]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(data={"devices": devices}), _shm(), _nccl())).encode())


def _held_xid48(tmp_path: Path, fake: object, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Xid 48 on GPU 3 read and held (the node drained by ops meanwhile: not ours to drain); ops resumed it."""
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000))
    logs = iter([[XID48_GPU3]])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs, []), "journalctl"))
    _passes(monkeypatch)
    fake.nodes["n1"] = ("drained", "ops: looking at it")          # type: ignore[attr-defined]
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER
    fake.nodes["n1"] = ("idle", "none")                            # type: ignore[attr-defined]
    return args


def _reset(monkeypatch: pytest.MonkeyPatch, uuid: str) -> None:
    monkeypatch.setattr(repair, "read_resets", lambda timeout: ([repair.Reset(BOOTED + 6000, uuid.lower(), True)], ""))


@pytest.mark.parametrize("board", [UUIDS[0], "GPU-deadbeef-0000-0000-0000-000000000000"], ids=["GPU 0", "not its own"])
def test_nvidia_xid_catalog_a_reset_of_another_board_spends_no_held_xid_at_the_gate(tmp_path, monkeypatch, capsys,
                                                                                     board):
    fake = install_fake(monkeypatch)
    args = _held_xid48(tmp_path, fake, monkeypatch)
    _reset(monkeypatch, board)
    assert cli.main(args, STEP_ENV) == EXIT_FAULT and fake.nodes["n1"][0] == "drained"
    said = capsys.readouterr()
    assert "XID_HISTORY" in said.out and "stand again" in said.err
    assert [e["line"] for e in kernlog.load(str(tmp_path / "state"), "n1")[0].held] == []     # acted on: settled


def test_nvidia_xid_catalog_the_reset_of_the_xids_own_gpu_spends_it(tmp_path, monkeypatch):
    fake = install_fake(monkeypatch)
    args = _held_xid48(tmp_path, fake, monkeypatch)
    _reset(monkeypatch, UUIDS[3])                      # GPU 3, on bus 0x13: the GPU the Xid names
    assert cli.main(args, STEP_ENV) == EXIT_PASS and fake.nodes["n1"] == ("idle", "none")
    assert cli.main(args, STEP_ENV) == EXIT_PASS       # spent for good, not read again


def test_a_report_that_cannot_place_the_xids_gpu_counts_any_reset_as_before(tmp_path, monkeypatch):
    # the documented limit: no bus id beside the UUIDs, so which GPU the Xid named cannot be told
    fake = install_fake(monkeypatch)
    args = _held_xid48(tmp_path, fake, monkeypatch)
    _reset(monkeypatch, UUIDS[0])
    _passes(monkeypatch, placed=False)
    assert cli.main(args, STEP_ENV) == EXIT_PASS and fake.nodes["n1"] == ("idle", "none")


def test_a_reset_of_the_gpu_that_failed_since_repairs_nothing():
    clock = kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000)
    spent = [{"line": XID48_GPU3, "mono": 5000.000001}]
    report = {"checks": [{"name": "gpu", "data": {"devices": [{"uuid": UUIDS[3], "pci_bus_id": "0000:13:00.0"}]}}]}
    ok, failed = (repair.Reset(BOOTED + t, UUIDS[3].lower(), s) for t, s in ((6000, True), (7000, False)))
    assert repair.unrepaired(spent, [ok, failed], report, clock) == spent
    assert repair.unrepaired(spent, [ok], report, clock) == []
    before = repair.Reset(BOOTED + 4000, UUIDS[3].lower(), True)          # before the Xid: no repair of it
    assert repair.unrepaired(spent, [before], report, clock) == spent


# ------------------------------------------------------------------ 3. a kernel-log state its own reader takes back

XID79 = "[ 10.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
GARBLED_94 = [f"[ {100 + i}.000001] NVRM: Xid (PCI:0000:3c:00): 94, pid=1, " + "\ufffd" * 1000 for i in range(200)]


def test_nvidia_xid_catalog_a_held_xid_79_outlives_a_flood_of_long_garbled_xid_lines(tmp_path, monkeypatch):
    fake = install_fake(monkeypatch)
    monkeypatch.setattr(kernlog, "host_clock",
                        lambda proc=kernlog.PROC: kernlog.Clock("boot-a", 9000.0, BOOTED, BOOTED + 9000))
    logs = iter([[XID79, *GARBLED_94]])
    monkeypatch.setattr(kernlog, "read", lambda timeout: kernlog.KernelLog(next(logs, []), "journalctl"))
    _passes(monkeypatch)
    fake.nodes["n1"] = ("drained", "ops: looking at it")
    args = ["--state-dir", str(tmp_path / "state")]
    assert cli.main(args, STEP_ENV) == EXIT_BREAKER                # not ours to drain: the Xid 79 held
    assert os.path.getsize(kernlog.state_path(str(tmp_path / "state"), "n1")) <= kernlog.STATE_CAP
    fake.nodes["n1"] = ("idle", "none")
    assert cli.main(args, STEP_ENV) == EXIT_FAULT and fake.nodes["n1"][0] == "drained"     # read back, acted on


def test_the_state_is_cut_watched_events_first_then_deferred_lines_drain_worthy_last():
    from verify.prolog import kernfit
    held = [{"line": XID79, "mono": 10.000001}] + [{"line": x, "mono": 100.0 + i} for i, x in enumerate(GARBLED_94)]
    deferred = ["2026-12-02T10:00:00Z NVRM: Xid (PCI:0000:3b:00): 94, " + "x" * 900] * 50
    kept, later = kernfit.bounded(held, deferred, 100_000, kernlog._drains)
    assert kept[0]["line"] == XID79 and later == deferred and len(kept) > 1 and [e["mono"] for e in kept[1:]] == \
        [e["mono"] for e in held[len(held) - len(kept) + 1:]]                  # the newest watched ones kept
    kept, later = kernfit.bounded(held, deferred, 20_000, kernlog._drains)      # the deferred lines go next
    assert kept == held[:1] and 0 < len(later) < len(deferred)
    assert kernfit.bounded(held[:3], deferred[:2], 10 ** 9, kernlog._drains) == (held[:3], deferred[:2])


# ------------------------------------------------------------------ 4. the clock-skew knob in every corner

def test_a_watched_xid_first_read_by_a_clock_ahead_ages_by_the_operators_allowance():
    now = BOOTED + 9000
    clock = kernlog.Clock("boot-a", 9000.0, BOOTED, now)
    event = {"line": "NVRM: Xid (PCI:0000:3b:00): 94, pid=1, Contained ECC error", "mono": -1.0, "read": now + 600}
    assert kernlog._aged(event, None, clock, 86400.0, 300.0)             # 10 min ahead of a 5 min allowance: no age
    assert not kernlog._aged(event, None, clock, 86400.0, 3600.0)        # within the operator's 1 h: held


# ------------------------------------------------------------------ 5. a settings file another user owns

@pytest.mark.parametrize("owned", ["folder", "file"])
def test_a_settings_file_another_user_owns_is_no_operators_word(tmp_path, monkeypatch, owned):
    # practice: POSIX file safety (owner and mode both); the defaults hold, said and traced
    from verify.prolog import config
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    (state / "settings").write_text("TORCHIMAGES_BREAKER=1\n")
    (state / "settings").chmod(0o644)
    state.chmod(0o755)
    real = os.lstat if owned == "file" else os.stat
    path = str(state / "settings") if owned == "file" else str(state)

    def other(p, *a, **k):           # the one path seen as another user's (os.chown needs root; the test does not)
        info = real(p, *a, **k)
        return os.stat_result((*info[:4], 65534, *info[5:])) if str(p) == path else info
    monkeypatch.setattr(os, "lstat" if owned == "file" else "stat", other)
    cfg = config.config(config._parser().parse_args(_args(tmp_path)), dict(PROLOG_ENV))
    assert cfg.breaker == 0.1 and any("belongs to another user (uid 65534)" in p for p in cfg.setting_problems)
