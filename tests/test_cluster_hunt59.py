"""Round 59 of issue 36's hunt, part 1: the prolog as a job's first step reads no setting from the job's environment.

Slurm's prolog semantics: Prolog= runs as SlurmdUser with slurmd's environment (the operator's); a job's step
(`srun torchimages-prolog`) runs with the user's, which srun passes whole. So there the prolog's knobs
(TORCHIMAGES_BREAKER, _HANG_RUNS, _STATE_DIR, _METRICS_DIR, _CLOCK_SKEW), Slurm's own words a job can export
(SLURM_SCRIPT_CONTEXT), verify's paths and floors and a torchrun group's variables are the job's: none may drain a
healthy node or wave a broken one through. The operator's are the command line, the state folder's `settings`
file and, under Prolog=, slurmd's environment (verify/prolog/settings.py). NVSentinel's breaker and checker rule are
the operator's settings, never a workload's.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.prolog_fakes import (
    PROLOG_ENV,
    STEP_ENV,
    _args,
    _gpu,
    _report,
    _verify_writes,
    allow_test_hooks,
    history_events,
    install_fake,
)
from verify.prolog import cli, history, kernlog, settings, slurm, verifyrun

pytestmark = pytest.mark.unit


def _lost() -> bytes:
    return json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode()


def _hung_before(state: Path, *ages_s: float) -> None:
    boot = kernlog.host_clock(kernlog.PROC).boot_id or None
    for age in ages_s:
        history.record(str(state), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past", now=time.time() - age,
                       extra={"boot_id": boot})


def test_slurm_step_semantics_a_job_s_breaker_never_opens_the_partition(tmp_path, monkeypatch, capsys):
    """NVSentinel's breaker is the operator's: a job exporting TORCHIMAGES_BREAKER=1 let a bad roll-out's failing
    steps drain the whole partition. In a step it is ignored and said; under Prolog= slurmd's own is taken."""
    fake = install_fake(monkeypatch)
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1000))
    _verify_writes(monkeypatch, _lost())
    job = {**STEP_ENV, "TORCHIMAGES_BREAKER": "1"}
    assert cli.main(_args(tmp_path), job) == 4        # the breaker (10 %: one of four) holds, the node stays
    err = capsys.readouterr().err
    assert fake.nodes["n1"][0] == "idle" and "TORCHIMAGES_BREAKER in a job's step" in err, err
    assert history_events(tmp_path)[-1] == ("drain-refused", "GPU_LOST")
    # slurmd's environment is the operator's: taken as before
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "TORCHIMAGES_BREAKER": "1"}) == 1
    assert fake.nodes["n1"][0] == "drained"


def test_slurm_step_semantics_a_job_s_state_folder_never_feeds_the_checker_rule(tmp_path, monkeypatch, capsys):
    """TORCHIMAGES_STATE_DIR from a job pointed the prolog at a history of the job's making: two forged hangs and
    one timeout (a busy GPU) drained a healthy node with PREFLIGHT_HUNG. Ignored in a step: the operator's folder
    (the command line's) holds no streak, so it is one timeout, not assessed."""
    fake = install_fake(monkeypatch)
    forged = tmp_path / "forged"
    _hung_before(forged, 120.0, 60.0)
    _verify_writes(monkeypatch, None, rc=None)
    env = {**STEP_ENV, "TORCHIMAGES_STATE_DIR": str(forged), "TORCHIMAGES_HANG_RUNS": "2"}
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--budget", "30"], env) == 3
    assert not [c for c in fake.calls if c[:1] == ["update"]] and fake.nodes["n1"][0] == "idle"
    assert history_events(tmp_path) == [("not-assessed", "PREFLIGHT_TIMEOUT")]
    assert len(history.read(str(forged), "n1").events) == 2          # the job's folder untouched
    err = capsys.readouterr().err
    assert "TORCHIMAGES_STATE_DIR in a job's step" in err and "TORCHIMAGES_HANG_RUNS in a job's step" in err


def test_slurm_step_semantics_without_state_dir_a_step_uses_the_default_never_the_job_s(tmp_path):
    cfg = cli.config(cli._parser().parse_args(["--no-kernel-log"]),
                     {**STEP_ENV, "TORCHIMAGES_STATE_DIR": str(tmp_path), "TORCHIMAGES_METRICS_DIR": str(tmp_path),
                      "TORCHIMAGES_CLOCK_SKEW": "1w", "TORCHIMAGES_HANG_RUNS": "0"})
    assert (cfg.state_dir, cfg.metrics_dir, cfg.clock_skew_s, cfg.hang_runs) == (
        cli.DEFAULT_STATE_DIR, None, 300.0, 3) and cfg.job_env
    # by hand or under Prolog= the environment is the operator's
    cfg = cli.config(cli._parser().parse_args(["--no-kernel-log"]),
                     {**PROLOG_ENV, "TORCHIMAGES_STATE_DIR": str(tmp_path), "TORCHIMAGES_HANG_RUNS": "0"})
    assert (cfg.state_dir, cfg.hang_runs, cfg.job_env) == (str(tmp_path), 0, False)


@pytest.mark.parametrize("args", [[], ["--mode", "prolog"]])
def test_slurm_step_semantics_a_job_exporting_slurm_script_context_is_still_a_step(tmp_path, monkeypatch, args):
    """SLURM_SCRIPT_CONTEXT is slurmd's word for Prolog=, but a job can export it: with it a step read the job's
    knobs as slurmd's, let its VERIFY_TEST_* hooks through and made an allocated GPU it cannot see the host's. A
    step is known by SLURM_STEP_ID (slurmstepd's; slurmd's Prolog= environment has none)."""
    env = {**STEP_ENV, "SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "TORCHIMAGES_BREAKER": "1", "SLURM_GPUS_ON_NODE": "8"}
    cfg = cli.config(cli._parser().parse_args([*_args(tmp_path), *args]), env)
    assert cfg.job_env and cfg.breaker == 0.10 and not cfg.host_gpus
    install_fake(monkeypatch)
    seen: list = []
    monkeypatch.setenv("VERIFY_TEST_HANG", "gpu")

    def run(cmd, limit):
        seen.append(dict(os.environ))
        Path(cmd[cmd.index("--json") + 1]).write_bytes(json.dumps(_report(_gpu())).encode())
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    cli.main([*_args(tmp_path), *args], env)
    assert seen and "VERIFY_TEST_HANG" not in seen[0]


def test_slurm_prolog_semantics_the_settings_file_is_the_operator_s_in_a_step(tmp_path, monkeypatch, capsys):
    """The operator sets the knobs of a step where no job reaches: the state folder's `settings` file."""
    fake = install_fake(monkeypatch)
    fake.nodes["n2"] = ("drained", slurm.reason("n2", "GPU_LOST", "x", 1000))
    state = tmp_path / "state"
    state.mkdir()
    (state / "settings").write_text("# the operator's\nTORCHIMAGES_BREAKER=0.5\n\nexport TORCHIMAGES_HANG_RUNS = '5'\n")
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), {**STEP_ENV, "TORCHIMAGES_BREAKER": "0"})
    assert (cfg.breaker, cfg.hang_runs) == (0.5, 5)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path), STEP_ENV) == 1 and fake.nodes["n1"][0] == "drained"
    # the command line still comes first
    assert cli.config(cli._parser().parse_args(_args(tmp_path, "--breaker", "0.2")), STEP_ENV).breaker == 0.2


@pytest.mark.parametrize("body, said", [
    (b"TORCHIMAGES" + b"_BRAKER=0.5\n", "did you mean TORCHIMAGES_BREAKER"), (b"garbage\n", "is no setting"),
    (b"TORCHIMAGES_BREAKER=0.1\nTORCHIMAGES_BREAKER=1\n", "given twice"),
    (b"TORCHIMAGES_BREAKER=nan\n", "is not a share"), (b"TORCHIMAGES_BREAKER=0.1\x00\n", "control character U+0000"),
    (b"TORCHIMAGES_STATE_DIR=/tmp\n", "is no setting"), (b"x" * (settings.CAP + 10), "more than any settings file"),
    (b"TORCHIMAGES_HANG_RUNS=1\n", "2 or more"), (b"TORCHIMAGES_CLOCK_SKEW=2y\n", "not a duration"),
    (b"TORCHIMAGES_METRICS_DIR=prom\n", "not an absolute path"),
])
def test_slurm_prolog_semantics_a_bad_settings_file_is_said_and_its_defaults_gate(tmp_path, monkeypatch, capsys,
                                                                                 body, said):
    """A settings file that is no settings file is the operator's setting gone wrong: one line each, never a traceback
    and never the node's fault. Since round 71 (tests/test_cluster_hunt71.py) the bad line is not applied and the
    defaults gate the node, as a misspelt TORCHIMAGES_* variable did (it was CONFIG_ERROR: the node ran ungated)."""
    fake = install_fake(monkeypatch)
    state = tmp_path / "state"
    state.mkdir()
    (state / "settings").write_bytes(body)
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1 and fake.nodes["n1"][0] == "drained"     # gated: the lost GPU
    err = capsys.readouterr().err.strip().splitlines()
    assert not any("CONFIG_ERROR" in line for line in err) and sum(said in line for line in err) == 1, err
    assert history_events(tmp_path)[-1] == ("drain", "GPU_LOST")
    fake.nodes["n1"] = ("idle", "none")
    assert cli.main(_args(tmp_path), STEP_ENV) == 1 and fake.nodes["n1"][0] == "drained"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "group-writable", "folder-world-writable"])
def test_a_settings_file_or_test_hooks_switch_a_job_could_have_written_is_ignored(tmp_path, monkeypatch, capsys,
                                                                                 kind):
    """Files the cluster tooling reads are hostile: a link (to /dev/zero), a FIFO, or a file in a shared folder a
    job can write is no operator's word: ignored and said, never followed, never hanging the read."""
    install_fake(monkeypatch)
    state = tmp_path / "state"
    state.mkdir()
    if kind == "symlink":
        (state / "settings").symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(state / "settings")
    else:
        (state / "settings").write_text("TORCHIMAGES_BREAKER=1\n")
        allow_test_hooks(state)
        os.chmod(state / "settings", 0o664) if kind == "group-writable" else os.chmod(state, 0o1777)
        if kind == "folder-world-writable":
            assert not verifyrun.hooks_allowed("step", str(state))
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cfg.breaker == 0.10 and any("not the operator's, ignored" in n for n in cfg.notes), cfg.notes


def test_the_preflight_never_joins_a_torchrun_group_a_job_script_exported(monkeypatch):
    """A job script exporting MASTER_ADDR, WORLD_SIZE and RANK before its first step made the preflight's nccl check
    join a group that never forms: a timeout, confirmed alone, a healthy node drained. The preflight is one node's
    gate: a group's variables never reach it; in a step nor do verify's paths and floors (VERIFY_SHM_PATH: the shm
    check on the job's folder; TORCHIMAGES_DRIVER_MIN above the real floor: DRIVER_TOO_OLD, the host's), nor its
    LD_PRELOAD (the loader runs it in every check: one that sleeps, a confirmed host "hang", as sitecustomize was)."""
    job = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "LOCAL_RANK": "0",
           "TORCHELASTIC_RUN_ID": "x", "VERIFY_SHM_PATH": "/nonexistent", "TORCHIMAGES_DRIVER_MIN": "999.0",
           "VERIFY_FABRIC_ROOT": "/tmp", "VERIFY_TEST_HANG": "gpu", "NCCL_DEBUG": "WARN", "PATH": "/bin",
           "LD_PRELOAD": "/home/u/sleep.so", "LD_AUDIT": "/home/u/audit.so"}
    environ = dict(job)
    verifyrun.drop_job_settings(environ, job=True)
    # hooks: hooks_allowed's; NCCL_DEBUG is the job's too (round 56: the nccl check sets INFO into its own log when
    # none is set, and reads its transports there)
    assert environ == {"VERIFY_TEST_HANG": "gpu", "PATH": "/bin"}
    environ = dict(job)
    verifyrun.drop_job_settings(environ, job=False)
    assert "RANK" not in environ and "MASTER_ADDR" not in environ and environ["VERIFY_SHM_PATH"] == "/nonexistent"
    assert environ["NCCL_DEBUG"] == "WARN"            # under Prolog= or by hand: the operator's


def test_a_bad_setting_s_trace_in_a_step_goes_to_the_operator_s_folder_never_the_job_s(tmp_path, monkeypatch):
    """The trace of an ungated run (CONFIG_ERROR, kept where the run reads as Prolog=) goes where the operator's
    history is: a job's TORCHIMAGES_STATE_DIR hid it in its own. A step whose job exported SLURM_SCRIPT_CONTEXT is
    a step (SLURM_STEP_ID; tests/test_cluster_lows36.py): its bad option is a usage error, exit 2, written nowhere."""
    install_fake(monkeypatch)
    job_dir = tmp_path / "job"
    env = {**STEP_ENV, "SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "TORCHIMAGES_STATE_DIR": str(job_dir)}
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--bugdet", "3"], env) == 2
    assert history_events(tmp_path) == [] and not job_dir.exists()
    env = {**STEP_ENV, "SLURM_STEP_ID": "", "TORCHIMAGES_STATE_DIR": str(job_dir)}   # a batch script: the job's too
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--mode", "prolog", "--bugdet", "3"], env) == 0
    assert history_events(tmp_path) == [("not-assessed", "CONFIG_ERROR")] and not job_dir.exists()


# ---- class 7: `make isolate` with an intermittently slow node

def test_make_isolate_never_hides_a_slow_pair_behind_no_node_at_fault():
    """A node slow one all-reduce in two (0.3x the median, then a pass with another partner) reads the same as one
    slow pair by a busy host's noise, which the isolation tolerates (one strike names no node). It ended "no node at
    fault: every node passed in a pair", the slow pair unsaid; now the answer says it, with its pair and ratio."""
    from scripts.fleet.isolate import Outcome, plan_done
    from scripts.fleet.isolate_run import exit_status
    nodes = ["n1", "n2", "n3", "n4"]
    runs = dict.fromkeys(nodes, 0)
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            break
        number += 1
        for p in pairs:
            for n in p:
                runs[n] += 1
            slow = "n1" in p and runs["n1"] % 2 == 1
            results.append((number, Outcome(p, True, 3.0 if slow else 10.0, "", 1.0)))
    assert exit_status(decision) == 0 and not decision.named      # one strike: noise as often as not
    assert "1 slow pair(s) on record" in decision.summary and "n1+n2 (round 1, 0.30x the median)" in decision.summary
    assert "run make isolate again" in decision.summary


# ---- class 10: launchers

def test_k8s_verify_multi_node_pods_never_share_a_node(test_specs):
    """Kubernetes schedules an Indexed Job's pods wherever they fit: with GPUS=4 on 8-GPU nodes both pods of NODES=2
    could land on one node, and the "multi-node" all-reduce passed over that node's NVLink and /dev/shm, the fabric
    never crossed (a fault hidden). A required pod anti-affinity on kubernetes.io/hostname keeps one pod per node,
    beside the architecture's node affinity (kubernetes-validate --strict checks the whole manifest in test_k8s)."""
    from scripts.fleet.cluster import k8s_manifests
    spec = next(s for s in test_specs if s.tag == "2.15.0-cuda13.2-cudnn9-runtime-debian12")
    job = k8s_manifests(spec, "ghcr.io/acme/x:1", 2, 4)[-1]
    pod = job["spec"]["template"]["spec"]
    term = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term == {"labelSelector": {"matchLabels": {"job-name": job["metadata"]["name"]}},
                    "topologyKey": "kubernetes.io/hostname"}
    assert "nodeAffinity" in pod["affinity"] or "nodeSelector" in pod       # the architecture's, kept
    single = k8s_manifests(spec, "ghcr.io/acme/x:1", 1, 4)[-1]["spec"]["template"]["spec"]
    assert "podAntiAffinity" not in single.get("affinity", {})



def test_a_settings_file_the_step_s_user_cannot_reach_is_said_never_silently_dropped(tmp_path, monkeypatch):
    """A job's step runs as the job's user (Slurm): a state folder it may not search hides the operator's settings.
    The defaults hold (the operator's stricter ones unapplied), and the run says so."""
    import errno
    real = os.lstat

    def lstat(path, *a, **kw):
        if str(path).endswith("/settings"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, *a, **kw)
    monkeypatch.setattr(os, "lstat", lstat)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), STEP_ENV)
    assert cfg.breaker == 0.10 and any("cannot be read (Permission denied)" in n for n in cfg.notes), cfg.notes
