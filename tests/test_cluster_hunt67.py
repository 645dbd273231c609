"""Issue 36, a sixty-seventh hunt through the public interfaces (make targets, `python -m verify.prolog`, files).

Found:
- Class 10 / class 1, the launchers and a setting of ours (medium: a silent ignore of an operator setting). The clock
  tolerance is one setting under two names: make report, make gate and make fleet-report read CLOCK_SKEW, the prolog
  and make isolate's runner TORCHIMAGES_CLOCK_SKEW (verify/shared/clockskew.py). `make isolate CLOCK_SKEW=10m` wrote a
  job that judged every pair's report by the runner's default 5 minutes (the knob was no knob of make isolate, and
  said nowhere), and `TORCHIMAGES_CLOCK_SKEW=1h make isolate` then `sbatch` from another shell lost it too: a pair
  whose node's clock ran 10 minutes ahead was "not assessed" and the answer "undetermined" against the operator's
  own tolerance. `TORCHIMAGES_CLOCK_SKEW=1h make fleet-report` (the name the operator set fleet-wide for the prolog)
  was dropped without a word. Now make isolate writes the tolerance it was given, under either name, into its job
  (sbatch's own TORCHIMAGES_CLOCK_SKEW still wins), and make fleet-report applies the prolog's name where CLOCK_SKEW
  is not given, saying so; a value only the prolog reads (0) is said and not applied, never an error of the report.
  NVSentinel's isolation rule is unchanged: a report stamped past the tolerance is no evidence of the step.

- Class 3, return to service must prove the repair (high: a broken node resumed). `make undrain` resumed a node drained
  for a fault one check found (an all-reduce that returned wrong values: NCCL_WRONG_RESULT of the nccl check; a
  /dev/shm too small: the shm check) on a preflight that passed without that check measuring again: its nccl check
  skipped (NCCL_SINGLE_RANK: one rank, nothing crossed a link) or missing, its shm check missing (a `--python` that
  ran other checks). Three such passes in a row resumed it. NVSentinel's return to service reruns the check that
  failed: now the check each drain since the node was last in service stood on (the history's `check`) must pass
  or warn in the report, else REPAIR_UNPROVEN (not assessed, exit 3, it stays drained).

- Class 1, a setting of ours is never the node's fault, nor invisible (medium: a silent ungated fleet). Where the
  operator names node_exporter's folder in the state folder's `settings` file (the one place a job's step reads it
  from), a typo on another line of that file, a bad knob in slurmd's environment or a misspelt option on the
  Prolog= line (CONFIG_ERROR, exit 0, ungated) wrote its trace to the history only: the metrics' trace looked for
  the folder in the environment alone, so node_exporter kept showing the last run's PASS of every node now running
  ungated. The trace now reads that one knob from the settings file leniently (the operator's file only: no link,
  not writable by group or others).

- Class 6, facts that cannot be true (high: a broken node passes the prolog; the fleet passes it). A gpu check that
  passes while one of its own NVML devices records volatile uncorrectable ECC errors, retired pages or a row remap
  pending, a failed row remap or an NVML recovery action (verify's gpu check fails each: ECC_UNCORRECTABLE,
  RETIREMENT_PENDING, ROW_REMAP_FAILED, GPU_RESET_REQUIRED), or any check that passes or warns while its own
  findings list a failure (verify's Findings.apply fails it on any), was believed: the prolog passed the node, the
  fleet report counted it healthy. Now refused as a report no verify writes, by verify's own rule on the prolog's
  side (verify/prolog/hidden.py calls verify/shared/gpumemory.memory) and the same rule on the host side (scripts/fleet/plausible.py),
  held to one answer here.

- Class 1 / class 3, an abbreviated option read two ways (medium: a wrong exit status). argparse takes a unique
  prefix of a long option (`--reval` is --revalidate, `--state` is --state-dir); what the prolog reads before or
  without its parser (is this Slurm's Prolog=? where does the trace go?) matched whole names only. So
  `python -m verify.prolog --reval --node n1` with a typo beside it, or a crash of ours during it, exited 0 as a gate
  run's CONFIG_ERROR ("the node stays in service, ungated") where make undrain's 0 means "resumed", and an abbreviated
  state folder sent the trace to the default history. Now argv is read as argparse matches it (config.spelt_out),
  by the shell wrapper too (verify/bin/torchimages-prolog: its own "cannot start" exit, 3 for a revalidation).

- Class 8, files the cluster tooling reads and writes are hostile (high where it bites: a root file clobbered). make
  fleet-report METRICS_DIR= wrote each node's file with prometheus_client's write_to_textfile, whose temp file
  `<file>.<pid>.<thread id>` is opened following a link planted there: run as root into node_exporter's folder, it
  wrote through the link (the prolog's own metrics had refused this already). Now a temp file of an unguessable name,
  then a rename (fsutil.atomic_write), mode 0644.

Left (lows, as before): empty knob values handled inconsistently (since: one rule, tests/test_cluster_lows36.py);
TORCHIMAGES_CLOCK_SKEW=0 accepted by the prolog but not by make (now said by make fleet-report rather than silently
dropped).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.durations import parse_duration
from scripts.fleet import plausible
from scripts.fleet.isolate_facts import skew
from tests.helpers import ROOT
from tests.prolog_fakes import PROLOG_ENV, _gpu, _report, _undrain, _verify_runs, drained, install_fake
from verify.prolog import cli, hidden, history
from verify.prolog.config import spelt_out
from verify.prolog.verdict import decide

CUDA_TAG = "2.13.0-cuda13.0-cudnn9-runtime-debian12"


def _cli(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in the environment), its job under tmp_path."""
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), **env}, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _isolate(tmp_path: Path, **env: str) -> str:
    status, said = _cli(tmp_path, "isolate", NODES="4", LOCAL_IMAGE="1", IMAGE=CUDA_TAG, GPUS="8", **env)
    assert status == 0, said
    return next((tmp_path / "build" / "slurm").glob("isolate-*.sbatch")).read_text()


def _job_skew(script: str, **sbatch_env: str) -> float:
    """The TORCHIMAGES_CLOCK_SKEW the job's runner reads (its export lines run as bash runs them at sbatch), in
    seconds as the runner parses it (isolate_facts.skew)."""
    exports = "\n".join(line for line in script.splitlines() if line.startswith("export TORCHIMAGES_CLOCK_SKEW="))
    proc = subprocess.run(["bash", "-c", f"{exports}\nprintf %s \"${{TORCHIMAGES_CLOCK_SKEW:-}}\""], capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"], **sbatch_env}, timeout=30, check=True)
    return skew({"TORCHIMAGES_CLOCK_SKEW": proc.stdout})


@pytest.mark.host
def test_nvsentinel_isolation_make_isolate_applies_the_clock_tolerance_it_was_given_under_either_name(tmp_path):
    assert _job_skew(_isolate(tmp_path / "a", CLOCK_SKEW="10m")) == 600.0
    # given at make time under the runner's own name, then sbatch from a shell without it: still the job's
    assert _job_skew(_isolate(tmp_path / "b", TORCHIMAGES_CLOCK_SKEW="1h")) == 3600.0
    # sbatch's own environment still wins (the runner reads TORCHIMAGES_CLOCK_SKEW when the job runs)
    assert _job_skew(_isolate(tmp_path / "c", CLOCK_SKEW="10m"), TORCHIMAGES_CLOCK_SKEW="2m") == 120.0
    # neither given: no line, the runner's default
    script = _isolate(tmp_path / "d")
    assert "TORCHIMAGES_CLOCK_SKEW=" not in script and _job_skew(script) == 300.0


@pytest.mark.host
@pytest.mark.parametrize(("knob", "value"), [("CLOCK_SKEW", "2d"), ("TORCHIMAGES_CLOCK_SKEW", "soon"),
                                             ("CLOCK_SKEW", "400d")])
def test_make_isolate_refuses_a_clock_tolerance_its_job_could_not_read(tmp_path, knob, value):
    status, said = _cli(tmp_path, "isolate", NODES="4", LOCAL_IMAGE="1", IMAGE=CUDA_TAG, GPUS="8", **{knob: value})
    assert status == 2 and said.startswith("error: ") and knob in said and "Traceback" not in said, said
    assert not (tmp_path / "build" / "slurm").exists()


@pytest.mark.unit
@pytest.mark.parametrize("seconds", [0.5, 90.0, 600.0, 365 * 86400.0])
def test_the_tolerance_written_into_the_job_reads_back_as_given(seconds):
    from scripts.fleet.isolate_job import _skew_line
    from scripts.fleet.slurm import Job
    job = Job(spec=None, image="x", nodes=2, gpus=8, clock_skew=seconds)     # type: ignore[arg-type]
    written = _skew_line(job).strip().splitlines()[-1].removeprefix("export TORCHIMAGES_CLOCK_SKEW=${TORCHIMAGES_CLOCK_SKEW:-")
    assert parse_duration(written.removesuffix("}"), "TORCHIMAGES_CLOCK_SKEW") == seconds


@pytest.fixture(scope="module")
def shm_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real report of this host (verify's shm check)."""
    out = tmp_path_factory.mktemp("shm") / "shm.json"
    proc = subprocess.run([sys.executable, "-m", "verify", "--checks", "shm", "--shm-min", "64m", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert out.is_file(), proc.stdout + proc.stderr
    return dict(json.loads(out.read_text()))


def _as(report: dict[str, Any], created: float, host: str) -> dict[str, Any]:
    doc = json.loads(json.dumps(report))
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created))
    return doc


@pytest.mark.host
def test_make_fleet_report_applies_the_prolog_s_clock_tolerance_where_clock_skew_is_not_given(tmp_path, shm_report):
    job = tmp_path / "job"
    job.mkdir()
    now = time.time()
    for name, at in (("n1", now), ("n2", now), ("n3", now + 1800)):       # n3's clock half an hour ahead
        (job / f"{name}.json").write_text(json.dumps(_as(shm_report, at, name)))
    status, said = _cli(tmp_path, "fleet-report", DIR=str(job), TORCHIMAGES_CLOCK_SKEW="1h")
    assert status == 0 and "note: TORCHIMAGES_CLOCK_SKEW='1h'" in said and "fleet: PASSING" in said, said
    # CLOCK_SKEW, make's own name, wins where both are given
    status, said = _cli(tmp_path, "fleet-report", DIR=str(job), TORCHIMAGES_CLOCK_SKEW="1h", CLOCK_SKEW="5m")
    assert status == 1 and "n3.json: created" in said and "note: TORCHIMAGES_CLOCK_SKEW" not in said, said
    # 0 is a tolerance under either name (one parser since tests/test_cluster_lows82.py), applied and said
    status, said = _cli(tmp_path, "fleet-report", DIR=str(job), TORCHIMAGES_CLOCK_SKEW="0")
    assert status == 1 and "note: TORCHIMAGES_CLOCK_SKEW='0'" in said and "n3.json: created" in said, said
    assert "Traceback" not in said


# ---- class 3: the check that found the fault measures again before the node returns (NVSentinel's return to service)

UNDRAIN_ENV = {"SLURMD_NODENAME": "n1"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _check(name: str, status: str = "pass", code: str | None = None) -> dict[str, Any]:
    return {"name": name, "status": status, "code": code, "owner": None, "summary": name, "metrics": {}}


SKIPPED_NCCL = _check("nccl", "skip", "NCCL_SINGLE_RANK")


@pytest.mark.unit
@pytest.mark.parametrize(("code", "check", "others"), [
    ("NCCL_WRONG_RESULT", "nccl", [_check("shm"), SKIPPED_NCCL]),     # one rank: nothing crossed a link
    ("NCCL_WRONG_RESULT", "nccl", [_check("shm")]),                   # no nccl check at all
    ("SHM_TOO_SMALL", "shm", [SKIPPED_NCCL]),                          # no shm check at all
])
def test_nvsentinel_return_to_service_the_check_that_failed_must_measure_again(tmp_path, fake, monkeypatch, capsys,
                                                                              code, check, others):
    state = drained(tmp_path, fake, code, check)
    runs = _verify_runs(monkeypatch, [json.dumps(_report(_gpu(), *others, whole=False)).encode()])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 3
    assert fake.nodes["n1"][0] == "drained" and len(runs) == 1
    said = capsys.readouterr()
    # a pass with no result of a check is no report verify writes (tests/test_cluster_hunt76.py): nothing proven
    want = "REPAIR_UNPROVEN" if any(o["name"] == check for o in others) else "REPORT_INVALID"
    assert (f"{want} {check}" if want == "REPAIR_UNPROVEN" else want) in said.out, said
    last = history.read(state, "n1").events[-1]
    assert (last["event"], last["code"]) == ("resume-refused", want)


@pytest.mark.unit
@pytest.mark.parametrize(("code", "check", "status"), [("NCCL_WRONG_RESULT", "nccl", "pass"),
                                                       ("SHM_TOO_SMALL", "shm", "warn")])
def test_a_drain_whose_check_now_passes_or_warns_still_returns(tmp_path, fake, monkeypatch, code, check, status):
    state = drained(tmp_path, fake, code, check)
    body = _report(_gpu(), _check("shm", "pass"), _check("nccl", "pass"))
    if status == "warn":
        body["checks"][1] = {**_check("shm", "warn", "SHM_TOO_SMALL_FOR_LOADER"), "owner": "job"}
    _verify_runs(monkeypatch, [json.dumps(body).encode()])
    assert cli.main(_undrain(state), UNDRAIN_ENV) == 0 and fake.nodes["n1"] == ("idle", "none")


# ---- class 1: a CONFIG_ERROR is seen in node_exporter where the operator's settings file names its folder

# a knob misspelt (a letter dropped), built here so that the project's own names hold none (test_prolog_evidence.py)
TYPO = "TORCHIMAGES_" + "BREAKR=0.3"


def _settings(tmp_path: Path, *lines: str, mode: int = 0o644) -> tuple[Path, Path]:
    state, metrics = tmp_path / "state", tmp_path / "metrics"
    state.mkdir()
    state.chmod(0o755)
    (state / "settings").write_text("\n".join([f"TORCHIMAGES_METRICS_DIR={metrics}", *lines]) + "\n")
    (state / "settings").chmod(mode)
    return state, metrics


def _metrics_verdict(metrics: Path) -> str | None:
    files = list(metrics.glob("torchimages_n1.prom")) if metrics.is_dir() else []
    line = next((x for x in files[0].read_text().splitlines() if x.startswith("torchimages_prolog_verdict{")), None) \
        if files else None
    return line


@pytest.mark.unit
@pytest.mark.parametrize(("lines", "argv", "env"), [
    ([TYPO], [], PROLOG_ENV),                         # a typo on another line of the file
    (["TORCHIMAGES_HANG_RUNS=1"], [], PROLOG_ENV),                        # a bad value in the file
    ([], [], {**PROLOG_ENV, "TORCHIMAGES_BREAKER": "ten"}),               # a bad knob in slurmd's environment
    ([], ["--bugdet", "30"], PROLOG_ENV),                                 # a misspelt option on the Prolog= line
    ([TYPO], [], {**PROLOG_ENV, "SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_ID": "7"}),
])
def test_slurm_prolog_semantics_a_config_error_is_in_the_metrics_the_settings_file_names(tmp_path, fake, monkeypatch,
                                                                                          lines, argv, env):
    """A bad setting is in node_exporter's file the settings file names. A misspelt option stops the run (CONFIG_ERROR);
    a bad knob, in the file or the environment, is not applied and its default gates the node (round 71:
    tests/test_cluster_hunt71.py), the run's verdict and torchimages_prolog_setting_problems in the metrics."""
    state, metrics = _settings(tmp_path, *lines)
    _verify_runs(monkeypatch, [json.dumps(_report(_gpu())).encode()])
    status = cli.main(["--state-dir", str(state), "--no-kernel-log", *argv], env)
    assert status == 0          # under Prolog= (or Epilog=) a setting of ours never drains the node
    said = _metrics_verdict(metrics)
    if argv:
        assert said is not None and 'code="CONFIG_ERROR"' in said and 'verdict="not-assessed"' in said, said
    else:
        assert said is not None and 'verdict="pass"' in said, said
        assert 'torchimages_prolog_setting_problems{node="n1"} 1.0' in (metrics / "torchimages_n1.prom").read_text()


@pytest.mark.unit
def test_a_settings_file_others_could_write_names_no_metrics_folder_for_the_trace(tmp_path, fake):
    state, metrics = _settings(tmp_path, TYPO, mode=0o666)
    assert cli.main(["--state-dir", str(state), "--no-kernel-log", "--bugdet", "3"], PROLOG_ENV) == 0
    assert _metrics_verdict(metrics) is None


# ---- class 6: a pass whose own data shows a failure verify fails it for is no report verify writes

UUIDS = [f"GPU-{i:08x}-0000-0000-0000-000000000000" for i in range(8)]
HIDDEN = [({"ecc_volatile_uncorrectable": 3}, "ECC_UNCORRECTABLE"), ({"ecc_sram_uncorrectable": 1}, "ECC_UNCORRECTABLE"),
          ({"retired_pages_pending": True}, "RETIREMENT_PENDING"), ({"row_remap": {"failed": 1}}, "ROW_REMAP_FAILED"),
          ({"row_remap": {"pending": 2, "failed": 0}}, "RETIREMENT_PENDING"),
          ({"recovery_action": "reset"}, "GPU_RESET_REQUIRED"), ({"row_remap": [1]}, "never writes")]
HEALTHY = [{"ecc_volatile_uncorrectable": 0, "ecc_aggregate_uncorrectable": 0}, {"recovery_action": "none"},
           {"row_remap": {"pending": 0, "failed": 0}}, {"retired_pages_pending": False}, {"recovery_action": "unknown"}]


def _gpu_with(status: str = "pass", **device: Any) -> dict[str, Any]:
    devices = [{"index": i, "uuid": u} for i, u in enumerate(UUIDS)]
    devices[3].update(device)
    return _gpu(status, 8, code=None if status == "pass" else "THROTTLED", owner=None if status == "pass" else "host",
                data={"devices": devices, "findings": []})


@pytest.mark.unit
@pytest.mark.parametrize(("fields", "said"), HIDDEN)
def test_facts_that_cannot_be_true_a_gpu_pass_on_a_device_verify_fails_is_refused_by_every_reader(fields, said):
    for status in ("pass", "warn"):
        check = _gpu_with(status, **fields)
        report = {**_report(check), "schema_version": 2}
        verdict = decide(report, True, True)
        assert verdict.code == "REPORT_INVALID" and said in verdict.summary, verdict
        assert plausible.report_problem(report) is not None and said.split()[0] in str(plausible.report_problem(report))
        assert bool(hidden.hidden_failure(check)) and bool(plausible._hidden_failure(check))


@pytest.mark.unit
@pytest.mark.parametrize("fields", HEALTHY)
def test_a_device_verify_passes_is_believed_by_every_reader(fields):
    report = {**_report(_gpu_with(**fields)), "schema_version": 2}
    assert decide(report, True, True).kind == "pass" and plausible.report_problem(report) is None


@pytest.mark.unit
@pytest.mark.parametrize("name", ["gpu", "shm", "nccl"])
def test_a_check_passing_beside_its_own_failed_finding_is_refused(name):
    check = _gpu_with() if name == "gpu" else {"name": name, "status": "pass", "code": None, "owner": None,
                                                 "summary": "ok", "metrics": {}, "data": {}}
    check["data"]["findings"] = [{"severity": "fail", "code": "GPU_LOST", "text": "lost", "remedy": "", "owner": "host",
                                  "device": 0}]
    report = {**(_report(_gpu_with(), check) if name != "gpu" else _report(check)), "schema_version": 2}
    assert decide(report, True, True).code == "REPORT_INVALID" and plausible.report_problem(report) is not None
    check["data"]["findings"][0]["severity"] = "warn"        # a warning finding beside a pass is verify's (HANDLED)
    assert plausible._hidden_failure(check) is None and hidden.hidden_failure(check) is None


@pytest.mark.unit
def test_slurm_prolog_semantics_a_pass_hiding_uncorrectable_ecc_is_not_assessed_never_a_pass(tmp_path, fake, monkeypatch):
    """Under Prolog=: no pass recorded (the node's streak and return to service never stand on it), and no drain on a
    report no verify writes (the tool's trouble): not assessed, exit 0."""
    body = json.dumps(_report(_gpu_with(ecc_volatile_uncorrectable=4))).encode()
    _verify_runs(monkeypatch, [body])
    state = tmp_path / "state"
    assert cli.main(["--state-dir", str(state), "--no-kernel-log"], {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    last = history.read(str(state), "n1").events[-1]
    assert (last["event"], last["code"]) == ("not-assessed", "REPORT_INVALID") and fake.nodes["n1"][0] == "idle"


# ---- class 1: an abbreviated option is the option it abbreviates, before the parser as in it

@pytest.mark.unit
@pytest.mark.parametrize("option", ["--revalidate", "--revalidat", "--reval"])
def test_a_revalidation_with_a_bad_option_is_refused_however_revalidate_is_abbreviated(tmp_path, fake, option, capsys):
    args = [option, "--node", "n1", "--state-dir", str(tmp_path / "state"), "--no-kernel-log", "--bugdet", "3"]
    assert cli.main(args, {}) == 2          # never 0, make undrain's "resumed"
    assert "NOT ASSESSED" not in capsys.readouterr().err
    assert not (tmp_path / "state" / "history").exists()        # no gate run's trace either


@pytest.mark.unit
def test_slurm_prolog_semantics_the_trace_of_a_bad_setting_goes_to_the_abbreviated_state_folder(tmp_path, fake):
    state = tmp_path / "state"
    assert cli.main(["--state", str(state), "--no-kernel-log", "--bugdet", "3"], PROLOG_ENV) == 0
    last = history.read(str(state), "n1").events[-1]
    assert (last["event"], last["code"]) == ("not-assessed", "CONFIG_ERROR")


@pytest.mark.unit
def test_spelt_out_matches_argparse_s_own_prefix_rule():
    assert spelt_out(["--reval", "--state=/x", "--no-k", "--node", "n1", "--", "--reval"]) == \
        ["--revalidate", "--state-dir=/x", "--no-kernel-log", "--node", "n1", "--", "--reval"]
    assert spelt_out(["--m", "step"]) == ["--m", "step"]       # ambiguous (--mode, --metrics-dir, --min-confirm)


# ---- class 8: the fleet report's metrics follow no link planted where their temp file goes

@pytest.mark.unit
def test_fleet_metrics_write_through_no_link_planted_at_the_temp_file_s_name(tmp_path):
    import threading

    from scripts.fleet.history import NodeHistory, judge
    from scripts.fleet.metrics import write_metrics
    from scripts.fleet.model import Fleet
    folder, victim = tmp_path / "textfile", tmp_path / "root-owned"
    folder.mkdir()
    victim.write_text("precious\n")
    # write_to_textfile's temp name: <path>.<pid>.<thread ident>, known to anyone who can guess them
    planted = folder / f"torchimages_fleet_n1.prom.{os.getpid()}.{threading.current_thread().ident}"
    planted.symlink_to(victim)
    history = judge(NodeHistory("n1", "history/n1.jsonl"), time.time())
    written = write_metrics(Fleet(tmp_path, [], [], [], None), folder, {"n1": history})
    assert victim.read_text() == "precious\n"
    target = folder / "torchimages_fleet_n1.prom"
    assert written == [target] and not target.is_symlink() and "torchimages_node_inspect" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o644          # node_exporter reads it



@pytest.mark.host
@pytest.mark.parametrize(("args", "status"), [(["--revalidate"], 3), (["--reval"], 3), (["--rev", "--node", "n1"], 3),
                                              (["--budget", "5"], 0), (["--", "--reval"], 0)])
def test_the_wrapper_reads_an_abbreviated_option_as_the_prolog_does(tmp_path, args, status):
    """The wrapper's own trouble (no python3 it may run) exits as verify.prolog would have: 3 for a revalidation, 0 for
    a gate run outside Slurm's knowledge (by hand, as Prolog=)."""
    wrapper = tmp_path / "opt" / "verify" / "verify" / "bin" / "torchimages-prolog"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text((ROOT / "verify" / "bin" / "torchimages-prolog").read_text())
    tools = tmp_path / "bin"                # the wrapper's tools, and no python3 at all
    tools.mkdir()
    for tool in ("dirname", "readlink", "timeout", "logger"):
        if found := shutil.which(tool, path="/usr/bin:/bin"):
            (tools / tool).symlink_to(found)
    proc = subprocess.run(["/bin/sh", str(wrapper), *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": str(tools)}, check=False)
    assert proc.returncode == status and "NOT ASSESSED: no python3" in proc.stderr, proc.stderr
