"""The fleet report (issue 18, items 6 and 8): every node's verify report of a job in one table and DIR/fleet.json.

The reports are real: `python -m verify --checks shm,arrow` run on this host, and the gpu and nccl checks replayed
from the hand-made H100 facts (`--from-facts`), then copied and edited the way a fleet differs: another host name, a
slow node, a host-owned failure, an interrupted run, an empty one, a broken file."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.cluster import REPORT_BEGIN, REPORT_END
from scripts.fleet.fleet import FLEET_JSON, drain_reason, fleet, fleet_json, format_fleet, read_reports
from tests.helpers import DATA, ROOT, assert_clean_failure, run_cli

pytestmark = pytest.mark.host

H100_FACTS = DATA / "facts-handmade" / "h100-8gpu-handmade"
PHASES = {"container_start": 1.0, "import_torch": 2.0, "cuda_init": 0.5, "process_group_init": 0.3, "first_batch": 0.2}


def _verify(*args: str) -> dict[str, Any]:
    out = Path(args[-1])
    proc = subprocess.run([sys.executable, "-m", "verify", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert out.is_file(), proc.stdout + proc.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Two real CPU reports of this host and one real GPU report (replayed facts)."""
    where = tmp_path_factory.mktemp("real")
    cpu = [_verify("--checks", "shm,arrow", "--shm-min", "64m", "--json", str(where / f"run{i}.json")) for i in (1, 2)]
    gpu = _verify("--from-facts", str(H100_FACTS), "--json", str(where / "h100.json"))
    for report in cpu:
        assert report["status"] == "pass", report
    assert gpu["status"] == "pass" and gpu["replay"], gpu
    return {"cpu1": cpu[0], "cpu2": cpu[1], "gpu": gpu}


def _as(report: dict[str, Any], host: str, phases: dict[str, float] | None = None) -> dict[str, Any]:
    doc = copy.deepcopy(report)
    doc["environment"]["hostname"] = host
    doc["environment"]["phases"] = dict(phases or PHASES)
    doc["replay"] = None        # the replayed GPU report stands for a live one (a replay is no node: _not_a_node_now)
    for c in doc["checks"]:     # each host's own boards: one GPU UUID in two nodes' reports is a copy (fleet/boards.py)
        for d in (c.get("data") or {}).get("devices") or [] if c["name"] == "gpu" else []:
            if isinstance(d, dict) and d.get("uuid"):
                d["uuid"] = f"{d['uuid']}-{host}"
    return doc


def _check(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["checks"] if c["name"] == name)


def _write(folder: Path, name: str, doc: Any) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))


@pytest.fixture
def job(tmp_path, real) -> Path:
    """A job's output folder: 4 healthy CPU nodes, one of them slow (still passing its own check), a host-owned
    failure, an interrupted run, an empty one, two broken files."""
    folder = tmp_path / "job"
    _write(folder, "node-a.json", _as(real["cpu1"], "node-a"))
    _write(folder, "node-b.json", _as(real["cpu2"], "node-b"))
    _write(folder, "node-c.json", _as(real["cpu1"], "node-c"))
    slow = _as(real["cpu2"], "node-slow", {k: v * 4 for k, v in PHASES.items()})
    # at most half of every peer's (the median is of the passing nodes: a, b, c and itself), its check still "pass"
    runs = [_check(real[r], "arrow")["metrics"]["zero_copy_throughput"]["value"] for r in ("cpu1", "cpu2")]
    _check(slow, "arrow")["metrics"]["zero_copy_throughput"]["value"] = min(runs) / 2
    _write(folder, "node-slow.json", slow)
    bad = _as(real["cpu1"], "node-bad")
    arrow = _check(bad, "arrow")
    arrow.update(status="fail", code="ARROW_SLOW", owner="host", summary="zero copy holds but reads run at 0.1x memory",
                 remedy="Keep training data on local NVMe or tmpfs.")
    bad["status"] = "fail"
    _write(folder, "node-bad.json", bad)
    cut = _as(real["cpu2"], "node-cut")
    cut.update(status="fail", interrupted="SIGTERM")
    # as verify/runner.py's interrupted_result writes the check a SIGTERM stopped (a report failed by a skip alone
    # is one no verify wrote: scripts/fleet/plausible.py)
    _check(cut, "arrow").update(status="fail", code="INTERRUPTED", owner="job", summary="interrupted by SIGTERM",
                                remedy="Rerun verify.")
    _write(folder, "sub/deeper/node-cut.json", cut)
    empty = _as(real["cpu1"], "node-empty")
    empty.update(checks=[], status="skip")
    _write(folder, "node-empty.json", empty)
    _write(folder, "truncated.json", json.dumps(real["cpu1"])[:500])
    wrong = _as(real["cpu1"], "node-wrong")
    wrong["status"] = "great"
    _write(folder, "wrong.json", wrong)
    _write(folder, "notes.txt", "a log without any report in it\n")
    return folder


def test_the_fleet_table_json_outliers_drains_and_phases(job):
    proc = run_cli("fleet-report", env={"DIR": str(job)})
    assert proc.returncode == 1, proc.stdout + proc.stderr          # a node failed, one is invalid
    out = proc.stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("node-")}
    assert set(lines) == {"node-a", "node-b", "node-c", "node-slow", "node-bad", "node-cut"}
    assert lines["node-a"].split()[1:3] == ["cpu", "pass"]
    assert lines["node-bad"].split()[1:5] == ["cpu", "FAIL", "ARROW_SLOW", "host"]
    assert lines["node-cut"].split()[1:5] == ["cpu", "INTERRUPTED", "INTERRUPTED", "job"]
    assert "node-empty.json: it lists no checks: nothing was judged" in out      # no verify writes one: invalid
    # the slow node passed its own check, and is flagged against the fleet's median all the same
    assert lines["node-slow"].split()[2] == "pass" and "!" in lines["node-slow"]
    assert "  node-slow: arrow.zero_copy_throughput" in out and "x the cpu median" in out
    assert "drain (a failing check owned by the host):\n  node-bad: torchimages:ARROW_SLOW zero copy holds" in out
    assert "SLOW: above 1.5x the median" in next(line for line in out.splitlines() if line.startswith("  node-slow "))
    assert "invalid reports (not counted):" in out and "truncated.json: not JSON" in out
    assert "wrong.json: does not validate against report.schema.json at status" in out
    # a text file without a report block is listed, never skipped (tests/test_cluster_lows82.py: a pod that died early)
    assert "notes.txt: no verify report in it" in out

    data = json.loads((job / FLEET_JSON).read_text())
    assert data["kind"] == "torchimages-fleet-report" and data["ok"] is False
    nodes = {n["node"]: n for n in data["nodes"]}
    assert nodes["node-cut"]["report"] == "sub/deeper/node-cut.json"
    assert [n for n, v in nodes.items() if v["passing"]] == ["node-a", "node-b", "node-c", "node-slow"]
    assert not nodes["node-cut"]["passing"] and "node-empty" not in nodes
    assert data["drain"] == [{"node": "node-bad", "reason": "torchimages:ARROW_SLOW zero copy holds but reads run at "
                                                            "0.1x memory"}]
    slow = nodes["node-slow"]["figures"]["arrow.zero_copy_throughput"]
    assert slow["outlier"] and slow["ratio"] < 0.8 and slow["nodes"] >= 3 and slow["model"] == "cpu"
    assert {o["node"] for o in data["outliers"]} >= {"node-slow"}
    assert nodes["node-slow"]["slow_start"] and not nodes["node-a"]["slow_start"]
    assert nodes["node-a"]["phases"] == PHASES and nodes["node-a"]["phases_total"] == pytest.approx(4.0)
    assert {i["report"] for i in data["invalid"]} == {"truncated.json", "wrong.json", "node-empty.json", "notes.txt"}
    assert not list(job.glob(".fleet.json.*")), "written atomically: no temporary file left"

    again = run_cli("fleet-report", "--dir", str(job))                # its own fleet.json is not a node's report
    assert again.stdout.split("wrote")[0] == out.split("wrote")[0]


def test_gpu_figures_are_compared_per_model_and_fewer_than_three_nodes_say_so(tmp_path, real):
    folder = tmp_path / "gpus"
    for host in ("gpu-1", "gpu-2", "gpu-3", "gpu-4"):
        doc = _as(real["gpu"], host)
        if host == "gpu-3":       # one device at 0.7x the fleet's H100s (its report still says pass)
            metrics = _check(doc, "gpu")["metrics"]
            metrics["bf16_TFLOPs_dev5"]["value"] *= 0.7
        _write(folder, f"{host}.json", doc)
    _write(folder, "cpu-1.json", _as(real["cpu1"], "cpu-1"))
    _write(folder, "cpu-2.json", _as(real["cpu2"], "cpu-2"))
    report = fleet(folder)
    text = format_fleet(report)
    assert report.ok, text
    gpu = {n.node: n for n in report.nodes}
    assert gpu["gpu-1"].model == "NVIDIA H100 80GB HBM3" and gpu["cpu-1"].model == "cpu"
    assert [(n.node, f.key) for n, f in report.outliers] == [("gpu-3", "gpu.bf16_TFLOPs_dev5")]
    bf16 = next(f for f in gpu["gpu-1"].figures if f.key == "gpu.bf16_TFLOPs_dev0")
    assert bf16.peers == 4 and bf16.median is not None and not bf16.outlier
    assert {f.family for f in gpu["gpu-1"].figures} >= {"bf16_TFLOPs", "d2d_GBps", "h2d_GBps", "d2h_GBps", "busbw_max"}
    assert "gpu-1 " in text and "bf16 TFLOP/s" in text and "busbw GB/s" in text
    assert "note: cpu: arrow.memory_read_bandwidth" in text and "from 2 passing node(s), fewer than 3" in text
    row = next(line for line in text.splitlines() if line.startswith("gpu-3 "))
    assert "!" in row


def test_reports_a_pod_printed_into_saved_kubectl_logs(tmp_path, real):
    folder = tmp_path / "k8s"
    blocks = []
    for pod in ("verify-x-0", "verify-x-1", "verify-x-2"):
        blocks += ["some verify output", f"{REPORT_BEGIN} /reports/node.json", json.dumps(_as(real["cpu1"], pod), indent=1),
                   REPORT_END]
    _write(folder, "logs.txt", "\n".join(blocks) + "\n")
    valid, invalid = read_reports(folder)
    assert [name for name, _ in valid] == ["logs.txt#1", "logs.txt#2", "logs.txt#3"] and not invalid
    report = fleet(folder)
    assert [n.node for n in report.nodes] == ["verify-x-0", "verify-x-1", "verify-x-2"] and report.ok


def test_the_node_is_the_schedulers_node_then_the_host_then_the_file(tmp_path, real):
    folder = tmp_path / "names"
    slurm = _as(real["cpu1"], "same-host")
    slurm["environment"]["scheduler"] = {"kind": "slurm", "job": "12", "step": "0", "node": "n1", "launcher": "docker"}
    _write(folder, "a.json", slurm)
    nameless = copy.deepcopy(real["cpu2"])
    del nameless["environment"]["hostname"]
    _write(folder, "node-7.json", nameless)
    assert sorted(n.node for n in fleet(folder).nodes) == ["n1", "node-7"]


def test_interrupted_or_empty_is_never_passing_whatever_the_status_field_says(tmp_path, real):
    folder = tmp_path / "liars"
    cut = _as(real["cpu1"], "cut")
    cut["interrupted"] = "SIGTERM"          # status still "pass": the interruption wins
    _write(folder, "cut.json", cut)
    skipped = _as(real["cpu2"], "skipped")
    for check in skipped["checks"]:
        check.update(status="skip", code="PACKAGE_MISSING", owner="image")
    _write(folder, "skipped.json", skipped)   # status "pass" though nothing was judged
    report = fleet(folder)
    assert {n.node: n.verdict for n in report.nodes} == {"cut": "interrupted", "skipped": "skip"}
    assert not report.ok and not any(n.passing for n in report.nodes)


def test_a_folder_without_reports_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("nothing here")
    for env in ({"DIR": str(tmp_path / "empty")}, {"DIR": str(tmp_path / "missing")}, {"DIR": str(tmp_path / "empty" / "readme.txt")},
                {"DIR": ""}, {}):
        proc = run_cli("fleet-report", env={k: v for k, v in env.items()} | ({} if env else {"DIR": ""}))
        assert_clean_failure(proc, code=2)
        assert proc.stderr.count("\n") == 1 and not (tmp_path / "empty" / FLEET_JSON).exists(), proc.stderr
    assert "no verify report under" in run_cli("fleet-report", env={"DIR": str(tmp_path / "empty")}).stderr
    assert "is not a folder" in run_cli("fleet-report", env={"DIR": str(tmp_path / "missing")}).stderr


def test_make_fleet_report_runs_the_command(tmp_path, real):
    folder = tmp_path / "made"
    for host in ("a", "b", "c"):
        _write(folder, f"{host}.json", _as(real["cpu1"], host))
    proc = subprocess.run(["make", "--no-print-directory", "fleet-report", f"DIR={folder}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 report(s) from 3 node(s): 3 passing" in proc.stdout and (folder / FLEET_JSON).is_file()


def test_drain_reason_is_one_line():
    assert drain_reason("GPU_LOST", "GPU 00000000:1B:00.0\nfell off the bus") == \
        "torchimages:GPU_LOST GPU 00000000:1B:00.0\\nfell off the bus"


def test_unreadable_or_huge_files_are_invalid_not_fatal(tmp_path, real):
    folder = tmp_path / "odd"
    _write(folder, "ok.json", _as(real["cpu1"], "ok"))
    (folder / "latin1.json").write_bytes(b"\xff\xfe{}")
    _write(folder, "list.json", [1, 2])
    _write(folder, "v9.json", {"schema_version": 9})
    _write(folder, "deep.json", "[" * 100000 + "]" * 100000)
    (folder / "folder.json").mkdir()
    with open(folder / "big.json", "wb") as handle:          # sparse: 65 MiB on paper, nothing on disk
        handle.truncate(65 << 20)
    report = fleet(folder)
    why = dict(report.invalid)
    assert set(why) == {"latin1.json", "list.json", "v9.json", "big.json", "deep.json"}
    assert "cannot read it" in why["latin1.json"] and "JSON list" in why["list.json"]
    assert "schema_version 9" in why["v9.json"] and "larger than any verify report" in why["big.json"]
    assert [n.node for n in report.nodes] == ["ok"] and fleet_json(report)["ok"] is False


@pytest.mark.parametrize("mutate", [
    lambda d: d["environment"].update(phases="slow", scheduler=5, gpus=5, hostname=7),
    lambda d: d["environment"].update(phases={"import_torch": "x", "first_batch": float("nan"), "cuda_init": -1,
                                              "container_start": True, "7": None}),
    lambda d: d["environment"].update(gpus=[{"name": 3}, "NVIDIA L4", None]),
    lambda d: d["checks"][0].update(data={"devices": "none", "torch_to_nvml": [5, {"torch_index": "a"}]}),
    lambda d: d["checks"][0].update(name="gpu", data={"devices": [{"index": 0, "name": "  "}, 3]}),
    lambda d: d["checks"][0]["metrics"].update(x_dev99={"value": 1e308, "unit": "GB/s"}, y={"value": -1, "unit": "GB/s"}),
])
def test_odd_but_valid_shapes_never_crash_the_report(tmp_path, real, mutate):
    doc = _as(real["cpu1"], "odd")
    mutate(doc)
    _write(tmp_path / "odd", "odd.json", doc)
    report = fleet(tmp_path / "odd")
    assert format_fleet(report) and json.dumps(fleet_json(report), allow_nan=False)
    node = report.nodes[0] if report.nodes else None
    assert node is None or all(v is None or v >= 0 for v in node.phases.values())


def _failing(real: dict[str, dict[str, Any]], host: str) -> dict[str, Any]:
    bad = _as(real["cpu1"], host)
    _check(bad, "arrow").update(status="fail", code="ARROW_SLOW", owner="host", summary="reads at 0.1x memory",
                                remedy="Keep training data on local NVMe or tmpfs.")
    bad["status"] = "fail"
    return bad


def test_a_symlinked_folder_out_of_dir_is_listed_never_followed_and_the_fleet_does_not_pass(tmp_path, real):
    # issue 36: the walk follows no link out of DIR (it used to read them); a report behind one is listed, so a
    # failing node there is never hidden behind a pass
    elsewhere = tmp_path / "elsewhere"
    _write(elsewhere, "node-bad.json", _failing(real, "node-bad"))
    folder = tmp_path / "job"
    _write(folder, "node-a.json", _as(real["cpu1"], "node-a"))
    (folder / "linked").symlink_to(elsewhere, target_is_directory=True)
    (folder / "loop").symlink_to(folder, target_is_directory=True)        # a cycle: its target is DIR, read once
    report = fleet(folder)
    assert {n.node: n.verdict for n in report.nodes} == {"node-a": "pass"}
    assert [name for name, _ in report.unreadable] == ["linked"] and "out of DIR" in report.unreadable[0][1]
    assert not report.ok


def test_a_report_carrying_a_kind_field_is_not_skipped(tmp_path, real):
    folder = tmp_path / "job"
    _write(folder, "node-a.json", _as(real["cpu1"], "node-a"))
    for name, kind in (("sub/fleet.json", "torchimages-fleet-report"), ("kinded.json", "whatever")):
        doc = _failing(real, name)
        doc["kind"] = kind
        _write(folder, name, doc)
    report = fleet(folder)
    seen = {n.report for n in report.nodes} | {name for name, _ in report.invalid}
    assert {"sub/fleet.json", "kinded.json"} <= seen and not report.ok


def test_a_nodes_report_named_fleet_json_is_never_overwritten(tmp_path, real):
    folder = tmp_path / "job"
    for host in ("a", "b"):
        _write(folder, f"{host}.json", _as(real["cpu1"], host))
    _write(folder, FLEET_JSON, _as(real["cpu1"], "c"))
    before = (folder / FLEET_JSON).read_bytes()
    proc = run_cli("fleet-report", env={"DIR": str(folder)})
    assert_clean_failure(proc, code=2)
    assert "is not a fleet report" in proc.stderr and (folder / FLEET_JSON).read_bytes() == before
    assert "3 report(s) from 3 node(s)" in proc.stdout          # the node's report was read, as a node's
    # an earlier fleet report is replaced, and not read as a node
    (folder / FLEET_JSON).unlink()
    assert run_cli("fleet-report", env={"DIR": str(folder)}).returncode == 0
    again = run_cli("fleet-report", env={"DIR": str(folder)})
    assert again.returncode == 0 and "2 report(s) from 2 node(s)" in again.stdout


def test_impossible_figures_do_not_make_healthy_nodes_outliers(tmp_path, real):
    folder = tmp_path / "job"
    for host in ("a", "b", "c"):
        _write(folder, f"{host}.json", _as(real["cpu1"], host))
    for host in ("x", "y", "z", "w"):
        forged = _as(real["cpu1"], host)
        _check(forged, "arrow")["metrics"]["zero_copy_throughput"]["value"] = 1e308
        _write(folder, f"{host}.json", forged)
    report = fleet(folder)
    assert report.outliers == [], [(n.node, f.key) for n, f in report.outliers]
    why = dict(report.invalid)
    assert set(why) == {"x.json", "y.json", "z.json", "w.json"} and "impossible" in why["x.json"]
    assert not report.ok


def test_duplicate_node_names_are_said_and_not_ok(tmp_path, real):
    folder = tmp_path / "job"
    _write(folder, "one/node-a.json", _as(real["cpu1"], "node-a"))
    _write(folder, "two/node-a.json", _as(real["cpu2"], "node-a"))
    _write(folder, "node-b.json", _as(real["cpu1"], "node-b"))
    report = fleet(folder)
    assert not report.ok and report.duplicates == {"node-a": ["one/node-a.json", "two/node-a.json"]}
    assert "node-a: 2 reports of the same checks" in format_fleet(report)
    assert fleet_json(report)["duplicates"] == [{"node": "node-a", "reports": ["one/node-a.json", "two/node-a.json"]}]
