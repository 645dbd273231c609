"""Issue 36's lows left by the hunts (tests/test_cluster_hunt66.py, hunt67): each reproduced through the public
interface first (make targets as `python -m scripts`, `verify.prolog`'s main, verify's judges, the wrapper).

1. Job knobs given to make are the job's (Slurm's sbatch semantics: the batch script reads the environment sbatch had,
   not make's). `make slurm|isolate TORCHIMAGES_JOIN_TIMEOUT=600` and `make isolate TORCHIMAGES_ISOLATE_TIMEOUT=60`
   wrote `${TORCHIMAGES_JOIN_TIMEOUT:-300}` and nothing for the step timeout: sbatch from another shell ran 300 s
   each, and a value no job reads ('5m') was found only when the job ran. Real; fixed for the class
   (scripts/fleet/job_knobs.py): make checks each once (one line, exit 2, no job written) and writes it in as the
   job's default; an sbatch of its own still wins (the documented `TORCHIMAGES_JOIN_TIMEOUT=<s> sbatch`, as for
   TORCHIMAGES_CLOCK_SKEW in hunt67) and is checked where the job reads it; make slurm says it does not read
   TORCHIMAGES_ISOLATE_TIMEOUT, make k8s-verify either.
2. Facts that contradict each other are refused (verify/FACTS.md): two NVML devices with one `index`. verify's facts
   contract already refused it ("devices holds index N more than once", MEASUREMENT_INVALID / FACTS_INVALID: not
   real there), but a report whose passing gpu check lists one index twice passed the prolog and the fleet report
   (real). Now both readers refuse it beside "one GPU (UUID) listed twice" (verdict._devices_problem,
   plausible._devices_problem): REPORT_INVALID, not assessed, never a pass.
3. Slurm's Prolog= semantics (any non-zero exit drains): no exit path of the metrics drains: _metrics caught its
   trouble and the status was mapped after it. But the metrics recorded the status before that mapping:
   node_exporter showed torchimages_prolog_exit_status 4 (breaker, dry run) or 3 (not assessed) for a Prolog= run
   that exited 0 (real, as a false record). The exit status is now settled before the metrics write it; a metrics
   failure (a history read included, which was outside the guard and could turn a drain's exit 1 into a crash's 0)
   is said on stderr and in syslog under Prolog=, and the exit stands. The trace of a run stopped by a signal
   recorded 3 where a step exits 128 + the signal: it records the exit too.
4. One rule for empty knobs (the shell's ${X:-default}): TORCHIMAGES_BREAKER= and _HANG_RUNS= were CONFIG_ERROR (the
   node ungated), _CLOCK_SKEW= the default in silence, _METRICS_DIR= no metrics in silence, _STATE_DIR= CONFIG_ERROR,
   _ISOLATE_TIMEOUT= / _JOIN_TIMEOUT= the default in silence (real). Now every TORCHIMAGES_* knob the prolog (its
   environment and its settings file), make fleet-report, make slurm/isolate and their jobs read: empty (or blanks)
   is unset, its default holds, one line says so (stderr and syslog under Prolog=; make's output; the job's log).
   Options (--metrics-dir '', --state-dir ' ') are no knobs: as before.
5. A forged SLURM_SCRIPT_CONTEXT: slurmd's Prolog= and Epilog= environments have no SLURM_STEP_ID, every step has
   one. A step that exported SLURM_SCRIPT_CONTEXT=prolog_slurmd read as Prolog= for its exits (real): the job's or
   image's fault exited 0 (the job ran on), a drain asked no requeue. context.by_slurmd now needs no SLURM_STEP_ID
   (the wrapper and __main__'s fallback too); the forgery is said in one line.
6. A job's environment in the prolog as a first step (Slurm runs a step with the user's environment; Python's `-I`
   isolation; the loader searches LD_LIBRARY_PATH first). PYTHONPATH: not real (the wrapper runs `python3 -I`, verify
   runs `-I` with PYTHONPATH set to the prolog's own package, PYTHON* dropped: asserted below). LD_LIBRARY_PATH and
   SLURM_CONF: real; sinfo, scontrol, journalctl, verify and the prolog's own Python ran with the job's. Now in a
   job's step only folders root alone can write stay on LD_LIBRARY_PATH (Apptainer's /.singularity.d/libs, a CUDA
   folder) and SLURM_CONF only as a file root alone can write (slurmd's: /etc/slurm, its configless cache); the
   owner of the prolog's own package counts as root there (in a container a user unpacked, enroot's, all is theirs);
   the wrapper starts the prolog's Python without the job's LD_LIBRARY_PATH (verify/prolog/steplibs.py). Under
   Prolog= (slurmd's environment) nothing changes.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.errors import UserError
from scripts.fleet import plausible
from scripts.fleet.job_knobs import isolate_timeout, join_timeout
from tests.helpers import ROOT
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _gpu, _report, _verify_writes, history_events, install_fake
from tests.verify_handmade import assert_refused, gpu_facts
from verify.prolog import cli, config, metrics, settings, steplibs
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit

CUDA_TAG = "2.13.0-cuda13.0-cudnn9-runtime-debian12"
UUIDS = [f"GPU-{i:08x}-0000-0000-0000-000000000000" for i in range(8)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _args(tmp_path: Path, *extra: str) -> list[str]:
    return ["--state-dir", str(tmp_path / "state"), "--no-kernel-log", *extra]


def _lost() -> bytes:
    return json.dumps(_report(_gpu("fail", code="GPU_LOST", owner="host"))).encode()


# ---- 1. job knobs given to make are written into the job

def _cli(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in its environment), its job under tmp_path."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), "NODES": "4", "LOCAL_IMAGE": "1",
                               "IMAGE": CUDA_TAG, "GPUS": "8", **env}, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _job_reads(script: str, names: str, **sbatch_env: str) -> tuple[list[str], str]:
    """What the job's timeout lines leave in `names` (space-separated) when bash runs them as sbatch does, from a
    shell with `sbatch_env` only; and what they said on stderr."""
    head = "\n".join(ln for ln in script.splitlines() if ln.startswith(("export ", 'if [ -n "${TORCHIMAGES_',
                                                                       'case "$RDZV_JOIN_TIMEOUT"'))
                     and "TIMEOUT" in ln)
    shown = " ".join(f'"${{{n}-unset}}"' for n in names.split())
    proc = subprocess.run(["bash", "-c", f"set -u\n{head}\nprintf '%s\\n' {shown}"], capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"], "HOME": "/tmp", **sbatch_env}, timeout=30,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split(), proc.stderr


def _written(tmp_path: Path, target: str, **env: str) -> str:
    status, said = _cli(tmp_path, target, **env)
    assert status == 0, said
    return next((tmp_path / "build" / "slurm").glob("*.sbatch")).read_text()


@pytest.mark.host
@pytest.mark.parametrize("target", ["slurm", "isolate"])
def test_slurm_sbatch_semantics_a_join_timeout_given_to_make_is_the_job_s(tmp_path, target):
    script = _written(tmp_path / "a", target, TORCHIMAGES_JOIN_TIMEOUT="600")
    assert _job_reads(script, "RDZV_JOIN_TIMEOUT")[0] == ["600"]                  # sbatch from a shell without it
    assert _job_reads(script, "RDZV_JOIN_TIMEOUT", TORCHIMAGES_JOIN_TIMEOUT="90")[0] == ["90"]     # sbatch's wins
    values, err = _job_reads(script, "RDZV_JOIN_TIMEOUT", TORCHIMAGES_JOIN_TIMEOUT=" ")   # empty: unset, said
    assert values == ["600"] and "TORCHIMAGES_JOIN_TIMEOUT is empty: read as unset, its default holds (600 s)" in err
    assert _job_reads(_written(tmp_path / "b", target), "RDZV_JOIN_TIMEOUT")[0] == ["300"]     # none: the default


@pytest.mark.host
def test_nvsentinel_isolation_the_step_timeout_given_to_make_isolate_is_the_job_s(tmp_path):
    script = _written(tmp_path / "a", "isolate", TORCHIMAGES_ISOLATE_TIMEOUT="60")
    assert _job_reads(script, "TORCHIMAGES_ISOLATE_TIMEOUT")[0] == ["60"]
    assert _job_reads(script, "TORCHIMAGES_ISOLATE_TIMEOUT", TORCHIMAGES_ISOLATE_TIMEOUT="120")[0] == ["120"]
    assert "after 60 s" in script.split("#SBATCH")[0]          # the header says what the job does
    status, said = _cli(tmp_path / "b", "slurm", TORCHIMAGES_ISOLATE_TIMEOUT="60")
    assert status == 0 and "note: TORCHIMAGES_ISOLATE_TIMEOUT='60' is not read by make slurm" in said, said


@pytest.mark.host
@pytest.mark.parametrize(("target", "knob", "value"), [
    ("slurm", "TORCHIMAGES_JOIN_TIMEOUT", "5m"), ("isolate", "TORCHIMAGES_JOIN_TIMEOUT", "0"),
    ("slurm", "TORCHIMAGES_JOIN_TIMEOUT", "\u0663\u0660\u0660"), ("isolate", "TORCHIMAGES_JOIN_TIMEOUT", "0600"),
    ("isolate", "TORCHIMAGES_ISOLATE_TIMEOUT", "soon"), ("isolate", "TORCHIMAGES_ISOLATE_TIMEOUT", "0"),
    ("isolate", "TORCHIMAGES_ISOLATE_TIMEOUT", "100000")])
def test_a_job_knob_no_job_could_read_is_refused_by_make_in_one_line(tmp_path, target, knob, value):
    status, said = _cli(tmp_path, target, **{knob: value})
    assert status == 2 and said.startswith("error: ") and knob in said and "Traceback" not in said, said
    assert not (tmp_path / "build" / "slurm").exists()


@pytest.mark.parametrize(("text", "seconds"), [("600", 600), ("1", 1), ("999999", 999999), (" 42 ", 42)])
def test_the_join_timeout_make_accepts_is_one_the_job_s_guard_accepts(text, seconds):
    assert join_timeout({"TORCHIMAGES_JOIN_TIMEOUT": text}, 300) == (seconds, [])
    with pytest.raises(UserError):
        join_timeout({"TORCHIMAGES_JOIN_TIMEOUT": text + "0" * 6}, 300)


# ---- 2. two NVML devices with one index

def _gpu_pass(devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {**_report(_gpu("pass", len(devices), code=None, owner=None, data={"devices": devices, "findings": []})),
            "schema_version": 2}


@pytest.mark.parametrize("twice", [0, 2, 7])
def test_facts_that_contradict_each_other_one_nvml_index_twice_is_refused_by_every_reader(twice):
    facts = gpu_facts(8)
    facts["devices"][twice + 1 if twice < 7 else 0]["index"] = twice
    assert_refused("gpu", facts, f"index {twice} more than once")       # verify's own contract: held already
    devices = [{"index": i, "uuid": u} for i, u in enumerate(UUIDS)]
    devices[twice + 1 if twice < 7 else 0]["index"] = twice
    verdict = decide(_gpu_pass(devices), True, True)
    assert verdict.code == "REPORT_INVALID" and f"index {twice} listed twice" in verdict.summary, verdict
    assert f"index {twice} listed twice" in str(plausible.report_problem(_gpu_pass(devices)))


def test_distinct_nvml_indices_are_believed_by_every_reader():
    devices = [{"index": i, "uuid": u} for i, u in enumerate(UUIDS)]
    assert decide(_gpu_pass(devices), True, True).kind == "pass" and plausible.report_problem(_gpu_pass(devices)) is None
    no_index = [{"uuid": u} for u in UUIDS]                   # an index not written is no index twice
    assert decide(_gpu_pass(no_index), True, True).kind == "pass"


# ---- 3. the metrics record the exit status the prolog exits with

def _exit_metric(folder: Path) -> float:
    line = next(ln for ln in (folder / "torchimages_n1.prom").read_text().splitlines()
                if ln.startswith("torchimages_prolog_exit_status"))
    return float(line.split()[-1])


@pytest.mark.parametrize(("extra", "body", "exits"), [
    (("--dry-run",), _lost, 0),                            # a host fault not drained (4 as a step)
    ((), lambda: None, 0),                                 # verify wrote nothing: not assessed (3 as a step)
    ((), _lost, 1),                                        # drained: 1, and Slurm keeps it drained
])
def test_slurm_prolog_semantics_the_metrics_record_the_exit_the_prolog_exits_with(tmp_path, fake, monkeypatch,
                                                                                  extra, body, exits):
    prom = tmp_path / "prom"
    _verify_writes(monkeypatch, body(), rc=0 if body() else 1)
    assert cli.main(_args(tmp_path, "--metrics-dir", str(prom), *extra), PROLOG_ENV) == exits
    assert _exit_metric(prom) == exits


def test_slurm_prolog_semantics_a_metrics_failure_of_ours_never_changes_the_exit(tmp_path, fake, monkeypatch, capsys):
    said: list[str] = []
    monkeypatch.setattr(cli, "_syslog", said.append)
    _verify_writes(monkeypatch, _lost())
    (tmp_path / "prom").write_text("a file, no folder")
    assert cli.main(_args(tmp_path, "--metrics-dir", str(tmp_path / "prom")), PROLOG_ENV) == 1     # drained
    assert "metrics not written" in capsys.readouterr().err and any("metrics not written" in s for s in said)

    def crash(*_: Any, **__: Any) -> None:
        raise RecursionError("deep")
    monkeypatch.setattr(metrics, "write", crash)
    for env, exits in ((PROLOG_ENV, 0), (STEP_ENV, 3)):
        _verify_writes(monkeypatch, None, rc=1)
        assert cli.main(_args(tmp_path, "--metrics-dir", str(tmp_path / "p2")), env) == exits


@pytest.mark.parametrize(("env", "exits"), [(PROLOG_ENV, 0), (STEP_ENV, 128 + signal.SIGTERM)])
def test_the_trace_of_a_stopped_prolog_records_the_exit_it_exits_with(tmp_path, fake, monkeypatch, env, exits):
    def stopped(cmd: list[str], limit: float) -> tuple[int, str]:
        raise cli.Interrupted(signal.SIGTERM)
    monkeypatch.setattr(cli, "_run_verify", stopped)
    assert cli.main(_args(tmp_path, "--metrics-dir", str(tmp_path / "prom")), env) == exits
    assert _exit_metric(tmp_path / "prom") == exits


# ---- 4. empty is unset, said

@pytest.mark.parametrize(("knob", "attr", "default"), [
    ("TORCHIMAGES_BREAKER", "breaker", config.DEFAULT_BREAKER), ("TORCHIMAGES_HANG_RUNS", "hang_runs", 3),
    ("TORCHIMAGES_CLOCK_SKEW", "clock_skew_s", 300.0), ("TORCHIMAGES_METRICS_DIR", "metrics_dir", None),
    ("TORCHIMAGES_RETURN_PASSES", "return_passes", 3)])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_prolog_knob_is_unset_and_said_in_the_environment_and_the_settings_file(tmp_path, knob, attr,
                                                                                         default, value):
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), {**PROLOG_ENV, knob: value})
    assert getattr(cfg, attr) == default
    assert any(n.startswith(f"{knob} is empty: read as unset, its default holds") for n in cfg.notes), cfg.notes
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    (state / settings.FILE).write_text(f"{knob}={value}\n")
    (state / settings.FILE).chmod(0o644)
    cfg = cli.config(cli._parser().parse_args(_args(tmp_path)), dict(PROLOG_ENV))
    assert getattr(cfg, attr) == default and any(f"{settings.FILE} {knob} is empty" in n for n in cfg.notes)


def test_an_empty_state_folder_knob_is_the_default_folder_said(tmp_path):
    cfg = cli.config(cli._parser().parse_args(["--no-kernel-log"]), {**PROLOG_ENV, "TORCHIMAGES_STATE_DIR": ""})
    assert cfg.state_dir == config.DEFAULT_STATE_DIR
    assert any(n.startswith("TORCHIMAGES_STATE_DIR is empty") for n in cfg.notes)


def test_slurm_prolog_semantics_an_empty_breaker_gates_the_node_by_the_default_never_ungates_it(tmp_path, fake,
                                                                                               monkeypatch, capsys):
    """TORCHIMAGES_BREAKER= (a slurmd environment file with the value left out) was CONFIG_ERROR: a broken node ran
    jobs ungated. Now the default breaker holds and the node is drained."""
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "TORCHIMAGES_BREAKER": ""}) == 1
    assert fake.nodes["n1"][0] == "drained" and "TORCHIMAGES_BREAKER is empty" in capsys.readouterr().err
    assert ("not-assessed", "CONFIG_ERROR") not in history_events(tmp_path)


def test_the_empty_knob_rule_is_said_in_one_text_on_both_sides():
    """verify/ and scripts/ never import each other: the prolog's line and make's are twins, held to one text."""
    from scripts.fleet import job_knobs
    assert settings.blank_note("X", "d") == job_knobs.blank_note("X", "d")


def test_empty_job_knobs_are_unset_said_by_make_and_the_runner():
    assert join_timeout({"TORCHIMAGES_JOIN_TIMEOUT": ""}, 300) == (
        None, ["TORCHIMAGES_JOIN_TIMEOUT is empty: read as unset, its default holds (300 s)"])
    assert isolate_timeout({"TORCHIMAGES_ISOLATE_TIMEOUT": " "}, 300.0, 86400.0)[0] is None
    assert isolate_timeout({}, 300.0, 86400.0) == (None, [])


@pytest.mark.host
def test_an_empty_clock_skew_given_to_make_fleet_report_is_said(tmp_path):
    (tmp_path / "reports").mkdir()
    _, said = _cli(tmp_path, "fleet-report", DIR=str(tmp_path / "reports"), TORCHIMAGES_CLOCK_SKEW="")
    assert "note: TORCHIMAGES_CLOCK_SKEW is empty: read as unset" in said, said


# ---- 5. a forged SLURM_SCRIPT_CONTEXT

FORGED = {**STEP_ENV, "SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}


def test_slurm_step_semantics_a_step_forging_slurmd_s_context_still_fails_its_job_and_is_requeued(tmp_path, fake,
                                                                                                monkeypatch, capsys):
    """Slurm's own variable (SLURM_STEP_ID, which slurmd's Prolog= and Epilog= never have) outweighs the context a
    job exported: the exits, the requeue and the drain are a step's, and the forgery is said."""
    image = {"name": "shm", "status": "fail", "code": "CHECK_CRASHED", "owner": "image", "summary": "x"}
    statuses = {}
    for name, env in (("step", STEP_ENV), ("forged", FORGED)):
        _verify_writes(monkeypatch, json.dumps(_report(image)).encode())
        statuses[name] = cli.main(_args(tmp_path / name), env)
    assert statuses["forged"] == statuses["step"] != 0
    assert "SLURM_SCRIPT_CONTEXT='prolog_slurmd' in a job's step" in capsys.readouterr().err
    _verify_writes(monkeypatch, _lost())
    assert cli.main(_args(tmp_path / "drain"), FORGED) == 1
    assert ["requeue", "7"] in fake.calls and fake.nodes["n1"][0] == "drained"
    # slurmd's own Prolog= (no step) is unchanged: the image's fault exits 0 there
    _verify_writes(monkeypatch, json.dumps(_report(image)).encode())
    assert cli.main(_args(tmp_path / "prolog"), PROLOG_ENV) == 0


@pytest.mark.host
def test_slurm_step_semantics_the_wrapper_reads_a_forged_context_as_a_step(tmp_path):
    """The wrapper's own `cannot start` exit (cli's twin): 3 in a step whatever SLURM_SCRIPT_CONTEXT says."""
    top = tmp_path / "opt" / "verify"
    (top / "verify" / "bin").mkdir(parents=True)
    shutil.copy2(ROOT / "verify" / "bin" / "torchimages-prolog", top / "verify" / "bin" / "torchimages-prolog")
    venv = top.parent / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python3").write_text("#!/bin/sh\nexit 1\n")      # the install's Python cannot run: cannot start
    (venv / "python3").chmod(0o755)
    for env, exits in ((FORGED, 3), (PROLOG_ENV, 0), (STEP_ENV, 3)):
        proc = subprocess.run([str(top / "verify" / "bin" / "torchimages-prolog")], capture_output=True,
                              text=True, timeout=60, check=False, env={"PATH": "/usr/bin:/bin", **env})
        assert "PROLOG_CRASHED" in proc.stderr and proc.returncode == exits, proc.stderr


# ---- 6. the job's loader path and slurm.conf never reach the prolog's tools in a step

def _job_folder(tmp_path: Path) -> Path:
    """A folder a job could write (group and others may: whoever owns it)."""
    folder = tmp_path / "joblib"
    folder.mkdir()
    folder.chmod(0o777)
    (folder / "slurm.conf").write_text("ClusterName=other\n")
    return folder


def _seen(monkeypatch: pytest.MonkeyPatch, fake: Any) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The environments verify and Slurm's commands were started with."""
    verify_env: list[dict[str, str]] = []
    slurm_env: list[dict[str, str]] = []

    def run(cmd: list[str], limit: float) -> tuple[int, str]:
        verify_env.append(cli._verify_env(os.environ))
        Path(cmd[cmd.index("--json") + 1]).write_bytes(_lost())
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)
    real = fake.run

    def slurm_run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        slurm_env.append(dict(os.environ))
        return real(argv, dry_run, quiet)
    monkeypatch.setattr("verify.prolog.slurm.run", slurm_run)
    return verify_env, slurm_env


def test_slurm_step_semantics_a_job_s_library_path_and_slurm_conf_never_reach_the_prolog_s_tools(tmp_path, fake,
                                                                                                 monkeypatch, capsys):
    job = _job_folder(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{job}:/usr/lib:relative")
    monkeypatch.setenv("SLURM_CONF", str(job / "slurm.conf"))
    monkeypatch.setenv("PYTHONPATH", str(job))
    verify_env, slurm_env = _seen(monkeypatch, fake)
    assert cli.main(_args(tmp_path), STEP_ENV) == 1
    for env in (*verify_env, *slurm_env):
        assert env.get("LD_LIBRARY_PATH") == "/usr/lib" and "SLURM_CONF" not in env
    assert verify_env and all(e["PYTHONPATH"] == cli.PACKAGE_ROOT for e in verify_env)     # PYTHONPATH: held already
    err = capsys.readouterr().err
    assert f"LD_LIBRARY_PATH of a job's step: {job}, relative dropped" in err and "SLURM_CONF=" in err


def test_slurm_prolog_semantics_slurmd_s_own_library_path_and_slurm_conf_are_kept(tmp_path, fake, monkeypatch):
    job = _job_folder(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{job}:/usr/lib")
    monkeypatch.setenv("SLURM_CONF", str(job / "slurm.conf"))
    verify_env, slurm_env = _seen(monkeypatch, fake)
    assert cli.main(_args(tmp_path), PROLOG_ENV) == 1
    assert all(e["LD_LIBRARY_PATH"] == f"{job}:/usr/lib" and e["SLURM_CONF"] == str(job / "slurm.conf")
               for e in (*verify_env, *slurm_env))


@pytest.mark.skipif(os.geteuid() != 0, reason="a file root alone can write is made by root")
def test_a_slurm_conf_root_alone_can_write_is_slurmd_s_and_kept(tmp_path):
    folder = tmp_path / "etc"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    (folder / "slurm.conf").write_text("ClusterName=c\n")
    (folder / "slurm.conf").chmod(0o644)
    environ = {"SLURM_CONF": str(folder / "slurm.conf"), steplibs.STEP_LIBS: f"{folder}:/usr/lib"}
    assert steplibs.confine(environ, True) == []
    assert environ == {"SLURM_CONF": str(folder / "slurm.conf"), "LD_LIBRARY_PATH": f"{folder}:/usr/lib"}


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another owner is made by root")
def test_a_folder_of_a_user_neither_root_nor_the_prolog_s_owner_is_the_job_s(tmp_path, monkeypatch):
    folder = tmp_path / "lib"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    os.chown(folder, 65534, 65534)          # a job's user owns its own folders
    monkeypatch.setattr(steplibs, "owners", lambda: {0})
    environ = {"LD_LIBRARY_PATH": f"{folder}:/usr/lib"}
    assert steplibs.confine(environ, True) and environ["LD_LIBRARY_PATH"] == "/usr/lib"
    # inside a container a user unpacked (enroot) the prolog's own package is that user's: so are its libraries
    monkeypatch.setattr(steplibs, "owners", lambda: {0, 65534})
    environ = {"LD_LIBRARY_PATH": f"{folder}:/usr/lib"}
    assert steplibs.confine(environ, True) == [] and environ["LD_LIBRARY_PATH"] == f"{folder}:/usr/lib"


@pytest.mark.host
def test_slurm_step_semantics_the_prolog_s_own_python_starts_without_the_job_s_library_path(tmp_path):
    """The wrapper hands a step's LD_LIBRARY_PATH over aside (verify.prolog filters it for verify): the prolog's
    own interpreter, whose libpython or libz the loader finds first there, starts without it."""
    top = tmp_path / "opt" / "verify"
    (top / "verify" / "bin").mkdir(parents=True)
    for entry in (ROOT / "verify").iterdir():
        if entry.name != "bin":
            (top / "verify" / entry.name).symlink_to(entry)
    shutil.copy2(ROOT / "verify" / "bin" / "torchimages-prolog", top / "verify" / "bin" / "torchimages-prolog")
    venv = top.parent / "venv" / "bin"          # the image's /opt/venv beside /opt/verify
    venv.mkdir(parents=True)
    seen = tmp_path / "seen"
    # the install's venv python3: records the environment it was started with, then runs the real one
    (venv / "python3").write_text(
        f'#!/bin/sh\necho "LD=${{LD_LIBRARY_PATH-unset}} HANDED=${{TORCHIMAGES_STEP_LD_LIBRARY_PATH-unset}}" >> {seen}\n'
        f'exec {sys.executable} "$@"\n')
    (venv / "python3").chmod(0o755)
    job = _job_folder(tmp_path)
    wrapper = top / "verify" / "bin" / "torchimages-prolog"
    subprocess.run([str(wrapper), "--help"], capture_output=True, text=True, timeout=120, check=False,
                   env={"PATH": "/usr/bin:/bin", **STEP_ENV, "LD_LIBRARY_PATH": str(job)})
    assert seen.read_text().splitlines()[-1] == f"LD=unset HANDED={job}"
    subprocess.run([str(wrapper), "--help"], capture_output=True, text=True, timeout=120, check=False,
                   env={"PATH": "/usr/bin:/bin", **PROLOG_ENV, "LD_LIBRARY_PATH": str(job)})
    assert seen.read_text().splitlines()[-1] == f"LD={job} HANDED=unset"      # slurmd's own: as it was
