"""The fleet report's drain history and Prometheus metrics (issue 26, items 3 and 8, the fleet side).

The histories are written by the prolog's own writer (verify.prolog.history.record), so the host-side reader is
held to the format the prolog really writes; bad lines are added by hand. The metrics files are parsed back with
prometheus_client's own text parser. The end-to-end test runs `make fleet-report`'s command on a real
`verify --checks shm,arrow` report of this host."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scripts.fleet.fleet import Figure, Fleet, Node, fleet_json, format_fleet
from scripts.fleet.history import WINDOW_S, parse, read_state
from scripts.fleet.metrics import write_metrics
from tests.helpers import ROOT, assert_clean_failure, run_cli
from verify.prolog import history as prolog_history

HOUR = 3600.0
NOW = 1795635600.0


def _histories(state: Path) -> None:
    """n1: drained, resumed, drained again 5 h later (the prolog flagged it); n2: drained 10 days ago, resumed,
    passing since; n3: a history with two bad lines around good ones."""
    rec = prolog_history.record
    rec(str(state), "n1", "pass", None, "preflight passed", now=NOW - 40 * HOUR)
    rec(str(state), "n1", "drain", "NCCL_BUSBW_LOW", "drained", now=NOW - 30 * HOUR)
    rec(str(state), "n1", "resume", None, "revalidated", now=NOW - 20 * HOUR)
    rec(str(state), "n1", "drain", "XID_79", "drained", now=NOW - 15 * HOUR)
    rec(str(state), "n1", "inspect", "XID_79", "drained again 5.0 h after it was resumed", now=NOW - 15 * HOUR)
    rec(str(state), "n2", "drain", "SHM_SMALL", "drained", now=NOW - 10 * 86400)
    rec(str(state), "n2", "resume", None, "revalidated", now=NOW - 9 * 86400)
    rec(str(state), "n2", "pass", None, "preflight passed", now=NOW - HOUR)
    rec(str(state), "n3", "pass", None, "preflight passed", now=NOW - 2 * HOUR)
    with open(prolog_history.path(str(state), "n3"), "a", encoding="utf-8") as fh:
        fh.write('{"schema": 1, "event": "drain", "epoch": "yesterday"\n')      # cut short, and a string epoch
        fh.write('{"schema": 9, "time": "x", "epoch": 1, "event": "pass"}\n')   # a schema this reader does not know
        fh.write('{"schema": 1, "time": "x", "epoch": 1, "event": "drain", "code": ["XID_79"]}\n')   # a list: garbled
    rec(str(state), "n3", "fault", "SHM_SMALL", "preflight failed", now=NOW - HOUR)


@pytest.mark.unit
def test_history_last_event_counts_inspect_and_bad_lines(tmp_path):
    _histories(tmp_path)
    found = read_state(tmp_path, ["n1", "n2", "n3", "n4"], now=NOW)
    assert list(found) == ["n1", "n2", "n3", "n4"]
    n1, n2, n3, n4 = found.values()
    assert n1.last is not None and n1.last["event"] == "inspect"
    assert (n1.window["drain"], n1.window["resume"]) == (2, 1) and n1.inspect and "flagged by the prolog" in n1.inspect
    assert n2.last is not None and n2.last["event"] == "pass"
    assert (n2.window["drain"], n2.window["resume"]) == (0, 0)            # both older than the window
    assert n2.inspect is None                                               # resumed, and not drained again
    assert n3.bad_lines == [2, 3, 4] and [e["event"] for e in n3.events] == ["pass", "fault"]
    assert n4.events == [] and n4.last is None and n4.error is None         # no file: an empty history
    data = fleet_json(_fleet(tmp_path, found))
    assert data["inspect"] == [{"node": "n1", "why": n1.inspect}]
    assert {h["node"]: (h["last_event"] or {}).get("event") for h in data["history"]} == \
        {"n1": "inspect", "n2": "pass", "n3": "fault", "n4": None}
    text = format_fleet(_fleet(tmp_path, found))
    assert "hardware inspection (failed again after a resume):\n  n1: flagged by the prolog" in text
    assert "history files with trouble:\n  history/n3.jsonl: 3 bad line(s) skipped (line 2, 3, 4)" in text


@pytest.mark.unit
def test_inspect_without_the_prolog_saying_it_and_not_outside_the_window():
    lines = [{"schema": 1, "time": f"t{i}", "epoch": NOW + e, "node": "n", "event": ev, "code": "C", "detail": ""}
             for i, (ev, e) in enumerate([("drain", 0), ("resume", HOUR), ("drain", 3 * HOUR)])]
    text = "\n".join(json.dumps(x) for x in lines) + "\nnot json at all\n"
    from scripts.fleet.history import judge
    soon = judge(parse("n", "history/n.jsonl", text), now=NOW + 4 * HOUR)
    assert soon.inspect and soon.inspect.startswith("drained again (C) 2.0 h after it was resumed on t1")
    assert soon.bad_lines == [4]
    later = [dict(x) for x in lines]
    later[2]["epoch"] = NOW + HOUR + WINDOW_S + 1                          # the fault came back after the window
    assert judge(parse("n", "f", "\n".join(map(json.dumps, later))), now=NOW + 30 * 86400).inspect is None


@pytest.mark.unit
def test_state_dir_that_is_no_folder_is_one_line(tmp_path):
    from scripts.errors import UserError
    with pytest.raises(UserError, match=r"STATE_DIR=.* is not a folder"):
        read_state(tmp_path / "missing", ["n1"])


def _node(name: str, verdict: str = "pass", **kw: Any) -> Node:
    return Node(report=f"{name}.json", node=name, verdict=verdict, code=kw.get("code"), owner=kw.get("owner"),
                summary="", model="NVIDIA H100 80GB HBM3", replay=False, figures=kw.get("figures", []),
                phases=kw.get("phases", {}))


def _fleet(folder: Path, histories: Any = None) -> Fleet:
    busbw = Figure("nccl", "busbw_max", "busbw_max", None, 361.5, "GB/s", "H100", median=450.0, peers=3,
                   ratio=0.803, outlier=False)
    slow = Figure("gpu", "bf16_TFLOPs_dev3", "bf16_TFLOPs", 3, 410.0, "TFLOP/s", "H100", median=700.0, peers=3,
                  ratio=0.586, outlier=True)
    nodes = [_node("n1", "fail", code="NCCL_BUSBW_LOW", owner="host", figures=[busbw, slow],
                   phases={"container_start": 1.5, "import_torch": 2.25, "cuda_init": None}),
             _node("n2", figures=[Figure("train", "tokens_per_s", "tokens_per_s", None, 12345.0, "tokens/s", "H100")])]
    return Fleet(folder, nodes, [], [], None, histories=histories)


def _families(path: Path) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        found.setdefault(family.name, []).extend(family.samples)
    return found


@pytest.mark.unit
def test_metrics_parse_back_with_the_values(tmp_path):
    _histories(tmp_path / "state")
    histories = read_state(tmp_path / "state", ["n1", "n2"], now=NOW)
    written = write_metrics(_fleet(tmp_path, histories), tmp_path / "prom", histories)
    assert sorted(p.name for p in written) == [f"torchimages_fleet_n{i}.prom" for i in (1, 2, 3)]
    assert sorted(p.name for p in (tmp_path / "prom").iterdir()) == sorted(p.name for p in written)   # no temp file
    n1 = _families(tmp_path / "prom" / "torchimages_fleet_n1.prom")
    verdict = n1["torchimages_fleet_verdict"][0]
    assert verdict.value == 1 and verdict.labels == {"source": "fleet", "node": "n1", "verdict": "fail",
                                                     "code": "NCCL_BUSBW_LOW", "owner": "host"}
    assert n1["torchimages_fleet_passing"][0].value == 0
    figures = {(s.labels["check"], s.labels["name"], s.labels["unit"]): s.value for s in n1["torchimages_check_figure"]}
    assert figures == {("nccl", "busbw_max", "GB/s"): 361.5, ("gpu", "bf16_TFLOPs_dev3", "TFLOP/s"): 410.0}
    assert {s.labels["name"]: s.value for s in n1["torchimages_fleet_figure_ratio"]} == \
        {"busbw_max": 0.803, "bf16_TFLOPs_dev3": 0.586}
    assert n1["torchimages_fleet_outliers"][0].value == 1
    # the unknown phase (cuda_init: None) is left out, never 0
    assert {s.labels["phase"]: s.value for s in n1["torchimages_time_to_first_step_seconds"]} == \
        {"container_start": 1.5, "import_torch": 2.25}
    assert {s.labels["event"]: s.value for s in n1["torchimages_node_history_events"]} == \
        {**dict.fromkeys(prolog_history.EVENTS, 0), "pass": 1, "drain": 2, "resume": 1, "inspect": 1}
    assert {s.labels["event"]: s.value for s in n1["torchimages_node_history_events_window"]}["drain"] == 2
    assert n1["torchimages_node_inspect"][0].value == 1
    assert n1["torchimages_node_history_last_event_timestamp_seconds"][0].labels["event"] == "inspect"
    assert not n1.get("torchimages_fleet_slow_start")      # no fleet median of the phases: no slow flag, not 0
    n2 = _families(tmp_path / "prom" / "torchimages_fleet_n2.prom")
    assert not n2.get("torchimages_fleet_outliers")        # its figure had no median: not compared, no count
    assert n2["torchimages_fleet_passing"][0].value == 1 and n2["torchimages_node_inspect"][0].value == 0
    assert [s.value for s in n2["torchimages_check_figure"]] == [12345.0]
    assert "torchimages_time_to_first_step_seconds" not in n2 or not n2["torchimages_time_to_first_step_seconds"]
    n3 = _families(tmp_path / "prom" / "torchimages_fleet_n3.prom")      # history only: no verdict invented
    assert "torchimages_fleet_verdict" not in n3 and n3["torchimages_node_history_bad_lines"][0].value == 3


@pytest.mark.unit
def test_the_reused_names_keep_the_prologs_help_text(tmp_path):
    """node_exporter refuses one metric name with two help texts across files: the prolog's file and the fleet's."""
    from verify.prolog.metrics import write as prolog_write
    _histories(tmp_path / "state")
    histories = read_state(tmp_path / "state", ["n1"], now=NOW)
    write_metrics(_fleet(tmp_path, histories), tmp_path / "prom", histories)
    report = {"checks": [{"name": "nccl", "status": "pass", "metrics": {"busbw_max": {"value": 1.0, "unit": "GB/s"}}}],
              "environment": {"phases": {"import_torch": 1.0}}}
    prolog_write(str(tmp_path / "prom"), "n1", report, {"verdict": "pass", "exit": 0, "history": {"pass": 1}})
    helps: dict[str, set[tuple[str, str]]] = {}
    for path in (tmp_path / "prom").iterdir():
        for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
            helps.setdefault(family.name, set()).add((family.documentation, family.type))
    shared = {"torchimages_check_figure", "torchimages_time_to_first_step_seconds", "torchimages_node_history_events"}
    for name in shared:
        assert len(helps[name]) == 1, (name, helps[name])


@pytest.mark.unit
def test_metrics_dir_that_cannot_be_written_is_one_line(tmp_path):
    from scripts.errors import UserError
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match=r"METRICS_DIR=.*cannot write the metrics"):
        write_metrics(_fleet(tmp_path), blocker / "prom")


@pytest.mark.host
def test_fleet_report_with_state_dir_and_metrics_dir(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    proc = subprocess.run([sys.executable, "-m", "verify", "--checks", "shm,arrow", "--shm-min", "64m", "--json",
                           str(job / "n1.json")], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((job / "n1.json").read_text())
    report["environment"]["hostname"] = "n1"
    (job / "n1.json").write_text(json.dumps(report))
    plain = run_cli("fleet-report", env={"DIR": str(job)})
    assert plain.returncode == 0 and "drain history: not read (give STATE_DIR=" in plain.stdout, plain.stdout
    assert "metrics: not written" in plain.stdout and json.loads((job / "fleet.json").read_text())["history"] is None

    _histories(tmp_path / "state")
    proc = run_cli("fleet-report", env={"DIR": str(job), "STATE_DIR": str(tmp_path / "state"),
                                        "METRICS_DIR": str(tmp_path / "prom")})
    out = proc.stdout + proc.stderr
    # n1 flagged for inspection and n3's garbled lines: no healthy fleet (tests/test_fleet_history_verdict.py)
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert "1 node(s) flagged for hardware inspection, 1 drain history file(s) not wholly read" in out
    assert "hardware inspection (failed again after a resume):\n  n1: flagged by the prolog" in out
    assert "history/n3.jsonl: 3 bad line(s) skipped (line 2, 3, 4)" in out
    data = json.loads((job / "fleet.json").read_text())
    assert [i["node"] for i in data["inspect"]] == ["n1"]
    assert {h["node"]: h["bad_lines"] for h in data["history"]}["n3"] == [2, 3, 4]
    assert "metrics: 3 file(s) written" in out
    n1 = _families(tmp_path / "prom" / "torchimages_fleet_n1.prom")
    arrow = {s.labels["name"]: s.value for s in n1["torchimages_check_figure"] if s.labels["check"] == "arrow"}
    assert arrow["zero_copy_throughput"] == report["checks"][1]["metrics"]["zero_copy_throughput"]["value"]
    phases = {s.labels["phase"] for s in n1.get("torchimages_time_to_first_step_seconds", [])}
    known = {k for k, v in report["environment"]["phases"].items() if v is not None}
    assert phases == known and "cuda_init" not in phases                  # this host has no CUDA: unknown, left out

    assert_clean_failure(run_cli("fleet-report", env={"DIR": str(job), "STATE_DIR": str(tmp_path / "nope")}),
                         "STATE_DIR=", "is not a folder", code=2)


@pytest.mark.unit
def test_slow_start_and_outliers_where_the_fleet_compared(tmp_path):
    report = _fleet(tmp_path)
    report.phase_median = 2.0
    report.nodes[0].slow_start = True
    write_metrics(report, tmp_path / "prom")
    n1 = _families(tmp_path / "prom" / "torchimages_fleet_n1.prom")
    assert [s.value for s in n1["torchimages_fleet_slow_start"]] == [1]
    assert [s.value for s in n1["torchimages_fleet_outliers"]] == [1]
    assert "torchimages_node_inspect" not in n1 or not n1["torchimages_node_inspect"]   # no STATE_DIR: no history
    write_metrics(report, tmp_path / "prom")           # again: each file replaced, no temp file left beside
    assert sorted(p.name for p in (tmp_path / "prom").iterdir()) == ["torchimages_fleet_n1.prom",
                                                                    "torchimages_fleet_n2.prom"]
