"""Issue 36, a sixty-sixth hunt: the classes the earlier hunts touched least.

- Class 7, NVSentinel's isolation rule (a node is cleared only by a measurement of the link it shares with a
  known-good partner): a pair's report whose nccl check ran on one node, with fewer ranks than the pair, on a Slurm
  node outside the pair, across more nodes than the pair, or stamped outside its step's time (before it began; in
  the future past TORCHIMAGES_CLOCK_SKEW) measured no link of that pair now: the pair is not assessed, never a pass
  that clears both nodes (it ended "no node at fault", exit 0). And the fleet report lists no drain for the node
  that wrote a failed collective's report (global rank 0 of an all-reduce across nodes): one of the group is at
  fault, which make isolate names.
- Slurm's word ALL is no node name (a drain or resume of nodename=ALL would act on every node).
- Class 10, the launchers: make isolate SQSH= mounts the squashfs make slurm would (it pulled the registry's image
  without a word), and a launcher knob a target does not read (RDMA_RESOURCE for make slurm, PREFLIGHT for make
  isolate, SQSH for make k8s-verify; RDMA_RESOURCE for one node or GPU-less pods) is said, never dropped silently;
  the docker launcher refuses a reports folder holding ':' (docker run --volume's separator) before any node starts.
- Class 1, Slurm's prolog and epilog semantics are one: slurmd runs Epilog= with its own environment, and drains a
  node whose Epilog exits non-zero, as for Prolog=. Run as Epilog= (SLURM_SCRIPT_CONTEXT=epilog_slurmd, SLURM_JOB_ID
  set) the prolog read slurmd's environment as a job's: the operator's TORCHIMAGES_STATE_DIR, _BREAKER, _HANG_RUNS
  and _METRICS_DIR were ignored (the epilog's history went to another folder than the prolog's) and --revalidate was
  not refused there.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.errors import UserError
from scripts.fleet.isolate import decide
from scripts.fleet.isolate_facts import skew
from scripts.fleet.isolate_run import exit_status, outcome

pytestmark = pytest.mark.unit

NODES = ["n1", "n2", "n3", "n4"]


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _pair_report(nodes: int | None = 2, world: int | None = 16, created: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"backend": "nccl"}
    if nodes is not None:
        data["nodes"] = nodes
    if world is not None:
        data["world_size"] = world
    check: dict[str, Any] = {"name": "nccl", "status": "pass", "code": None, "owner": None, "summary": "ok", "details": [],
             "remedy": None, "duration_s": 1.0, "data": data,
             "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}, "wrong": {"value": 0, "unit": ""}}}
    report: dict[str, Any] = {"schema_version": 3, "status": "pass", "checks": [check]}
    if created is not None:
        report["created"] = created
    return report


def _judged(report: dict[str, Any], began: float) -> tuple[int, str]:
    """Every pair of a 4-node isolation wrote `report`: the exit status and the answer."""
    results = [(1, outcome(pair, report, 0, 5.0, 8, began)) for pair in (("n1", "n2"), ("n3", "n4"))]
    decision = decide(NODES, results)
    return exit_status(decision), decision.summary


@pytest.mark.parametrize(("nodes", "world", "said"), [
    (1, 8, "across 1 node(s), not the pair's 2"),      # each node all-reduced over its own NVLink
    (3, 24, "across 3 node(s), not the pair's 2"),     # a report of another group
    (None, 1, "1 rank(s), fewer than the pair's 2 nodes"),
])
def test_nvsentinel_isolation_a_report_that_measured_no_link_of_the_pair_clears_neither_node(nodes, world, said):
    now = time.time()
    single = outcome(("n1", "n2"), _pair_report(nodes, world, _stamp(now)), 0, 5.0, 8, now)
    assert not single.ok and single.ours and said in single.why
    status, summary = _judged(_pair_report(nodes, world, _stamp(now)), now)
    assert status == 2 and not summary.startswith("no node at fault") and said in summary


@pytest.mark.parametrize(("node", "ok"), [("n9", False), ("N1", True), ("n2.", True), (None, True)])
def test_nvsentinel_isolation_a_report_written_on_a_node_outside_the_pair_clears_neither(node, ok):
    """The report says the Slurm node it ran on (environment.scheduler.node, SLURMD_NODENAME: the names make isolate
    pairs): another node's report measured no link of this pair. One host however it is spelt is one node."""
    now = time.time()
    report = _pair_report(created=_stamp(now))
    report["environment"] = {"scheduler": {"kind": "slurm", "node": node, "job": "7"}}
    got = outcome(("n1", "n2"), report, 0, 5.0, 8, now)
    assert got.ok == ok and (ok or ("'n9'" in got.why and got.ours)), got.why


@pytest.mark.parametrize(("offset", "said"), [(86400.0 * 365, "after its step ended"),
                                              (3600.0, "after its step ended"),
                                              (-86400.0 * 30, "before its step began")])
def test_nvsentinel_isolation_a_report_stamped_outside_its_step_is_no_evidence(offset, said):
    now = time.time()
    status, summary = _judged(_pair_report(created=_stamp(now + offset)), now)
    assert status == 2 and said in summary, summary


def test_a_report_stamped_within_the_step_and_the_clock_tolerance_still_clears_the_pair():
    now = time.time()
    for at in (now, now + 4.0, now + 200.0, now - 1.0):      # created is whole seconds; clocks differ by minutes
        assert outcome(("n1", "n2"), _pair_report(created=_stamp(at)), 0, 5.0, 8, now).ok
    assert _judged(_pair_report(created=_stamp(now)), now)[0] == 0
    # a verify of before `nodes` (no data.nodes): judged on its figures as before; one that does not say its world
    # size or when it ran clears no pair (hunt81)
    assert outcome(("n1", "n2"), _pair_report(None, 16, _stamp(now)), 0, 5.0, 8, now).ok
    assert not outcome(("n1", "n2"), _pair_report(None, None, _stamp(now)), 0, 5.0, 8, now).ok
    assert not outcome(("n1", "n2"), _pair_report(), 0, 5.0, 8, now).ok


@pytest.mark.parametrize("value", ["-5", "nan", "5 min", "400d", "1e9", "2d"])   # 0 is one: tests/test_cluster_lows82.py
def test_the_isolation_s_clock_tolerance_refuses_a_value_no_clock_needs(value):
    with pytest.raises(UserError, match="TORCHIMAGES_CLOCK_SKEW"):
        skew({"TORCHIMAGES_CLOCK_SKEW": value})
    assert skew({"TORCHIMAGES_CLOCK_SKEW": "10m"}) == 600.0 and skew({}) == 300.0


@pytest.mark.host
def test_make_isolate_s_runner_says_a_single_node_pair_in_its_answer(tmp_path: Path) -> None:
    """Through the runner's own entry (srun and scontrol as stand-ins): a launcher that ran each pair's all-reduce on
    one node ends "undetermined", exit 2, with the pairs not assessed in the answer, never "no node at fault"."""
    from tests.isolate_fakes import _isolate
    report = _pair_report(1, 8, _stamp(time.time()))
    status, lines = _isolate(tmp_path, NODES, {"raw": json.dumps(report)})
    assert status == 2 and "not assessed" in lines[-1] and "across 1 node(s)" in lines[-1], lines[-3:]
    answer = json.loads((tmp_path / "isolate.json").read_text())
    assert all(p["verdict"] == "not-assessed" for p in answer["pairs"])
    status, lines = _isolate(tmp_path, NODES, {"raw": json.dumps(report)},
                             env={"TORCHIMAGES_CLOCK_SKEW": "forever"})
    assert status == 2 and "TORCHIMAGES_CLOCK_SKEW" in lines[-1]


# ------------------------------------------------------- launchers: a knob given and not applied is said

@pytest.mark.parametrize(("nodes", "gpus", "said"), [(1, 8, "single-node"), (2, 0, "gloo")])
def test_kubernetes_launcher_an_rdma_request_it_does_not_apply_is_said(nodes, gpus, said):
    """RDMA_RESOURCE given for a single-node job or GPU-less pods: no RDMA device is requested there (nothing
    crosses a fabric over RDMA), and the note says so instead of dropping the knob without a word."""
    from scripts.fleet.cluster import rdma_hint
    hint = rdma_hint(nodes, gpus, "rdma/rdma_shared_device_a")
    assert hint is not None and "RDMA_RESOURCE=rdma/rdma_shared_device_a is not requested" in hint and said in hint


def _cli(tmp_path: Path, target: str, **env: str) -> tuple[int, str]:
    """`make <target>` as the Makefile runs it (python -m scripts, knobs in the environment), its job under tmp_path."""
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    proc = subprocess.run([sys.executable, "-m", "scripts", target], cwd=ROOT, capture_output=True, text=True,
                          env={**base, "BUILD_DIR": str(tmp_path / "build"), "LOCAL_IMAGE": "1", "IMAGE": CUDA_TAG,
                               "GPUS": "8", **env}, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


CUDA_TAG = "2.13.0-cuda13.0-cudnn9-runtime-debian12"


def _sidecar(tmp_path: Path) -> str:
    sqsh = tmp_path / "shared" / "x.sqsh"
    sqsh.parent.mkdir(parents=True)
    sqsh.with_name("x.sqsh.json").write_text(json.dumps({"sha256": "ab" * 32, "image_id": "sha256:1", "tag": CUDA_TAG}))
    return str(sqsh)


@pytest.mark.host
def test_slurm_launcher_make_isolate_mounts_the_squashfs_make_slurm_would(tmp_path: Path) -> None:
    """make isolate SQSH=...: the pairs run the squashfs the nodes share, checked by its recorded sha256 as make slurm
    does; it wrote a job pulling the registry's (Docker Hub's, without REGISTRY) image instead, without a word."""
    sqsh = _sidecar(tmp_path)
    status, said = _cli(tmp_path, "isolate", NODES="4", SQSH=sqsh)
    assert status == 0, said
    script = next((tmp_path / "build" / "slurm").glob("isolate-*.sbatch")).read_text()
    assert f"TORCHIMAGES_IMAGE=${{TORCHIMAGES_IMAGE:-{sqsh}}}" in script
    assert "export TORCHIMAGES_SQSH_SHA256=" + "ab" * 32 in script and "no registry" in script
    status, said = _cli(tmp_path, "isolate", NODES="4", SQSH=sqsh, LAUNCHER="docker")
    assert status == 2 and "SQSH is for LAUNCHER=pyxis" in said


@pytest.mark.host
@pytest.mark.parametrize(("target", "knob", "value"), [("isolate", "PREFLIGHT", "1"), ("isolate", "VERIFY_ARGS", "-x"),
                                                       ("isolate", "RDMA_RESOURCE", "rdma/a"),
                                                       ("slurm", "RDMA_RESOURCE", "rdma/a"),
                                                       ("k8s-verify", "SQSH", "/s/x.sqsh"),
                                                       ("k8s-verify", "LAUNCHER", "docker")])
def test_launchers_a_knob_the_target_does_not_read_is_said(tmp_path: Path, target: str, knob: str, value: str) -> None:
    status, said = _cli(tmp_path, target, NODES="2", **{knob: value})
    assert status == 0 and f"note: {knob}={value!r} is not read by make {target}" in said, said
    # the Makefile's own defaults (LAUNCHER=pyxis, every other knob empty) say nothing
    status, said = _cli(tmp_path, target, NODES="2", LAUNCHER="pyxis", PREFLIGHT="", SQSH="")
    assert status == 0 and "is not read by make" not in said, said


# ------------------------------------------------------- Slurm's Epilog= is slurmd's, as its Prolog= is

EPILOG_ENV = {"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.prolog_fakes import install_fake
    return install_fake(monkeypatch)


def test_slurm_epilog_semantics_the_operator_s_knobs_in_slurmd_s_environment_hold(tmp_path, fake, monkeypatch, capsys):
    from tests.prolog_fakes import _gpu, _report, _verify_writes, history_events
    from verify.prolog import cli
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    env = {**EPILOG_ENV, "TORCHIMAGES_STATE_DIR": str(tmp_path / "state"), "TORCHIMAGES_HANG_RUNS": "5"}
    cfg = cli.config(cli._parser().parse_args(["--no-kernel-log"]), env)
    assert not cfg.job_env and cfg.under_prolog and cfg.hang_runs == 5 and cfg.state_dir == str(tmp_path / "state")
    assert cli.main(["--no-kernel-log"], env) == 0
    assert history_events(tmp_path) == [("pass", None)]       # the history the prolog keeps, in the operator's folder
    assert "job's environment" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--bugdet", "30"], ["--revalidate", "--node", "n1"]])
def test_slurm_epilog_semantics_a_setting_of_ours_is_never_a_drain(tmp_path, fake, monkeypatch, capsys, argv):
    """A misspelt option, or --revalidate copied into Epilog=: CONFIG_ERROR, exit 0 (non-zero drains the node)."""
    from tests.prolog_fakes import _verify_writes
    from verify.prolog import cli
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log", *argv], EPILOG_ENV) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err and not fake.calls


def test_slurm_epilog_semantics_a_host_fault_still_drains_and_a_step_is_still_the_job_s(tmp_path, fake, monkeypatch):
    from tests.prolog_fakes import _gpu, _report, _verify_writes
    from verify.prolog import cli
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("fail", 7, code="GPU_LOST", owner="host"))).encode())
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--no-kernel-log"], EPILOG_ENV) == 1
    assert fake.nodes["n1"][1].startswith("torchimages:GPU_LOST")
    # a job's step that exports SLURM_SCRIPT_CONTEXT=epilog_slurmd is still a step (SLURM_STEP_ID): the job's
    step = {**EPILOG_ENV, "SLURM_STEP_ID": "0", "TORCHIMAGES_BREAKER": "1"}
    assert cli.config(cli._parser().parse_args(["--state-dir", str(tmp_path / "s2")]), step).job_env


@pytest.mark.host
def test_slurm_epilog_semantics_the_wrapper_reads_slurmd_s_context_as_the_prolog_does(tmp_path: Path) -> None:
    """The shell wrapper under Epilog= (a job's id set, as slurmd sets it there): slurmd's PATH is the operator's, so
    its python3 runs the prolog as under Prolog= (read as a job's, PATH was replaced by the system's folders); and a
    python3 that cannot run the prolog is not assessed, exit 0."""
    import shutil
    import subprocess

    from tests.helpers import ROOT

    def install(where: Path, venv_python: str | None) -> Path:
        """The image's layout: opt/verify/verify/bin/torchimages-prolog and, if given, opt/venv/bin/python3."""
        wrapper = where / "opt" / "verify" / "verify" / "bin" / "torchimages-prolog"
        wrapper.parent.mkdir(parents=True)
        wrapper.write_text((ROOT / "verify" / "bin" / "torchimages-prolog").read_text())
        if venv_python is not None:
            (where / "opt" / "venv" / "bin").mkdir(parents=True)
            (where / "opt" / "venv" / "bin" / "python3").write_text(f"#!/bin/sh\n{venv_python}\n")
            (where / "opt" / "venv" / "bin" / "python3").chmod(0o755)
        return wrapper

    # slurmd's PATH: the wrapper's tools, and a python3 that leaves a mark when it is run
    marker, folder = tmp_path / "path-ran", tmp_path / "slurmd-bin"
    folder.mkdir()
    for tool in ("dirname", "readlink", "timeout", "sleep"):
        (folder / tool).symlink_to(shutil.which(tool, path="/usr/bin:/bin") or f"/bin/{tool}")
    (folder / "python3").write_text(f"#!/bin/sh\necho slurmd >> {marker}; echo 3.12\n")
    (folder / "python3").chmod(0o755)
    wrapper = install(tmp_path / "a", None)
    subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"], capture_output=True, text=True, timeout=60,
                   env={"PATH": str(folder), **EPILOG_ENV}, check=False)
    assert marker.read_text().splitlines() == ["slurmd", "slurmd"]     # the probe, then the prolog
    wrapper = install(tmp_path / "b", "exit 1")
    proc = subprocess.run(["/bin/sh", str(wrapper), "--budget", "5"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", **EPILOG_ENV}, check=False)
    assert proc.returncode == 0 and "PROLOG_CRASHED" in proc.stderr, (proc.returncode, proc.stderr)


# ------------------------------------------ the fleet report: a collective's failure is no drain of its writer

def _group_report(tmp_path: Path, nodes: int, code: str = "NCCL_WRONG_RESULT") -> dict[str, Any]:
    """A real report (verify --from-facts, the hand-made H100 facts) made the one global rank 0 writes for an
    all-reduce across `nodes` nodes that failed (make slurm's nccl.json, make isolate's pair reports)."""
    import subprocess
    import sys

    from tests.helpers import DATA, ROOT
    out = tmp_path / "replayed.json"
    subprocess.run([sys.executable, "-m", "verify", "--from-facts", str(DATA / "facts-handmade" / "h100-8gpu-handmade"),
                    "--json", str(out)], cwd=ROOT, capture_output=True, timeout=300, check=False)
    doc = json.loads(out.read_text())
    doc.update(replay=None, status="fail", created=_stamp(time.time()))
    doc["environment"]["hostname"] = "n1"
    doc["environment"]["scheduler"] = {"kind": "slurm", "node": "n1", "job": "7", "step": "0", "launcher": "pyxis"}
    doc["checks"] = [{"name": "nccl", "status": "fail", "code": code, "owner": "host", "summary": "3 wrong elements",
                      "details": [], "remedy": "make isolate", "duration_s": 1.0, "output": None,
                      "data": {"nodes": nodes, "world_size": 8 * nodes, "backend": "nccl", "mode": "x", "sizes": []},
                      "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}, "wrong": {"value": 3, "unit": "count"}}}]
    return doc


@pytest.mark.host
@pytest.mark.parametrize(("nodes", "drained"), [(2, False), (8, False), (1, True)])
def test_nvsentinel_isolation_a_collective_s_failure_drains_not_the_node_that_wrote_it(tmp_path: Path, nodes: int,
                                                                                      drained: bool) -> None:
    """A failed all-reduce across nodes, in the report global rank 0 wrote on n1: the fleet report listed n1 to drain
    (make isolate, beside it, named n2). Now n1 stays not passing (no false pass) with a note naming make isolate;
    a failure within one node is still that node's drain."""
    from scripts.fleet.fleet import fleet, format_fleet
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "nccl.json").write_text(json.dumps(_group_report(tmp_path, nodes)))
    report = fleet(folder)
    shown = format_fleet(report)
    assert [n.verdict for n in report.nodes] == ["fail"] and "not passing:" in shown
    assert bool(report.drains) is drained, shown
    assert drained or ("ran across" in shown and "make isolate" in shown)


@pytest.mark.parametrize("name", ["ALL", "all", "All"])
def test_slurm_prolog_semantics_slurm_s_word_for_every_node_is_no_node_name(tmp_path, fake, monkeypatch, capsys, name):
    """make undrain NODE=ALL, or a --node/SLURMD_NODENAME of ALL: refused in one line before any scontrol (a drain
    or resume of nodename=ALL would act on every node); under Prolog= it is our setting, never a drain."""
    from tests.prolog_fakes import PROLOG_ENV, _verify_writes
    from verify.prolog import cli
    _verify_writes(monkeypatch, None, rc=None)
    args = ["--state-dir", str(tmp_path / "state"), "--no-kernel-log"]
    assert cli.main([*args, "--revalidate", "--node", name], {}) == 2
    assert cli.main(args, {**PROLOG_ENV, "SLURMD_NODENAME": name}) == 0
    assert "every node" in capsys.readouterr().err and not fake.calls


@pytest.mark.host
@pytest.mark.parametrize("target", ["slurm", "isolate"])
def test_docker_launcher_a_reports_folder_docker_s_volume_syntax_splits_is_refused_first(tmp_path: Path,
                                                                                        target: str) -> None:
    """docker run --volume SRC:DST splits on ':': a job submitted from /scratch/run:2 is refused in one line before
    any node starts (it failed on every node with docker's "invalid volume specification"); ',' is docker's to take."""
    import subprocess

    from scripts.fleet.launch_guards import docker_path_guard
    status, said = _cli(tmp_path, target, NODES="2", LAUNCHER="docker")
    assert status == 0, said
    script = next((tmp_path / "build" / "slurm").glob("*.sbatch")).read_text()
    guard = "\n".join(docker_path_guard())
    assert guard in script and script.index(guard) < script.index("docker run")
    for folder, code in (("/scratch/run:2", 2), ("/scratch/run,2", 0), ("/scratch/run 2", 0)):
        proc = subprocess.run(["bash", "-c", guard], env={"TORCHIMAGES_REPORTS": folder, "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, check=False)
        assert proc.returncode == code and (code == 0 or "REFUSED" in proc.stderr), (folder, proc.stderr)
