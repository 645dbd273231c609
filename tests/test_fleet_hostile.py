"""Issue 36, classes 8 (the fleet folder) and 9 (time): the folder `make fleet-report DIR=...` reads is hostile.

The practices followed: what could not be read is evidence missing, never a pass (every unreadable input listed, the
fleet not ok); files are opened the way a privileged reader must open what others wrote (O_NOFOLLOW, regular files
only, O_NONBLOCK so a FIFO never blocks, reads bounded in bytes); the walk is bounded in depth and names and follows
no symbolic link out of DIR; a refused figure makes its report invalid rather than vanishing; and evidence from the
future (beyond the clock tolerance CLOCK_SKEW) is not evidence. Pure logic on files under tmp_path.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet import fleet as fleet_mod
from scripts.fleet import walk as walk_mod
from scripts.fleet.fleet import Fleet, fleet, fleet_json, format_fleet, walk
from scripts.fleet.plausible import CATALOG_OWNER, UNJUDGED_CODES
from scripts.fsutil import TooLarge, read_bounded
from tests.verify_handmade import make_report

pytestmark = pytest.mark.unit


def _write(folder: Path, name: str, doc: Any) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def _node(host: str) -> dict[str, Any]:
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


def _not_passing(report: fleet_mod.Fleet) -> None:
    assert not report.ok and fleet_json(report)["ok"] is False
    assert "unreadable" in format_fleet(report) or report.invalid


def test_a_folder_that_cannot_be_read_is_listed_and_the_fleet_does_not_pass(tmp_path, monkeypatch):
    _write(tmp_path, "a.json", _node("a"))
    locked = tmp_path / "locked"
    _write(locked, "b.json", _node("b"))
    real_listing = walk_mod._listing

    def listing(top: Path, budget: int) -> list[os.DirEntry[str]]:
        if top == locked:           # root reads a mode-000 folder anyway: the refusal a normal user gets
            raise PermissionError(13, "Permission denied")
        return real_listing(top, budget)
    monkeypatch.setattr(walk_mod, "_listing", listing)
    report = fleet(tmp_path)
    assert [n.node for n in report.nodes] == ["a"] and report.unreadable == [
        ("locked/", "the folder cannot be read (Permission denied)")]
    _not_passing(report)


def test_dir_itself_unreadable_is_a_report_that_does_not_pass_not_no_reports(tmp_path, monkeypatch):
    def listing(top: Path, budget: int) -> list[os.DirEntry[str]]:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(walk_mod, "_listing", listing)
    report = fleet(tmp_path)
    assert report.nodes == [] and report.unreadable and not report.ok


def test_a_fifo_a_link_loop_and_a_link_out_are_listed_and_never_block(tmp_path):
    job = tmp_path / "job"
    _write(job, "a.json", _node("a"))
    os.mkfifo(job / "pipe.json")                                   # opened without blocking: refused
    (job / "self.json").symlink_to(job / "self.json")              # a loop: resolves to nothing
    outside = tmp_path / "outside"
    _write(outside, "bad.json", _node("bad"))
    (job / "out").symlink_to(outside, target_is_directory=True)
    (job / "again").symlink_to(job, target_is_directory=True)      # inside DIR: its target is read where it lies
    (job / "model.bin").symlink_to(outside / "bad.json")           # no report's name: not ours to list
    report = fleet(job)
    why = dict(report.unreadable)
    assert set(why) == {"pipe.json", "self.json", "out"}, why
    assert "not a regular file" in why["pipe.json"] and "resolves to nothing" in why["self.json"]
    assert "out of DIR" in why["out"] and [n.node for n in report.nodes] == ["a"]
    _not_passing(report)


def test_the_walk_is_bounded_in_depth_and_names(tmp_path, monkeypatch):
    monkeypatch.setattr(walk_mod, "MAX_DEPTH", 3)
    deep = tmp_path / "d1" / "d2" / "d3" / "d4"
    _write(deep, "x.json", _node("x"))
    _write(tmp_path, "a.json", _node("a"))
    paths, unreadable = walk(tmp_path)
    assert [p.name for p in paths] == ["a.json"] and unreadable == [("d1/d2/d3/d4/", "deeper than 3 folders below "
                                                                     "DIR: not read")]
    monkeypatch.setattr(walk_mod, "MAX_ENTRIES", 5)
    for i in range(10):
        _write(tmp_path / "many", f"n{i}.json", "{}")
    paths, unreadable = walk(tmp_path)
    assert any("more than 5 names" in why for _, why in unreadable)


def test_reads_are_bounded_in_bytes_and_regular_files_only(tmp_path):
    path = _write(tmp_path, "r.json", "x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(TooLarge, match="larger than any report"):
        read_bounded(path, 99, "report")
    with pytest.raises(OSError, match="not a regular file"):
        read_bounded(Path("/dev/zero"), 100)
    (tmp_path / "link.json").symlink_to(path)
    with pytest.raises(OSError):                                     # O_NOFOLLOW: a link is never opened
        read_bounded(tmp_path / "link.json", 100)


def test_a_drain_history_that_is_a_fifo_a_device_or_a_link_is_named_never_read(tmp_path):
    from scripts.fleet.history import read_state
    history = tmp_path / "history"
    history.mkdir()
    os.mkfifo(history / "n1.jsonl")
    (history / "n2.jsonl").symlink_to("/dev/zero")
    (history / "n3.jsonl").write_text('{"bad": 1}\n')
    found = read_state(tmp_path, [], now=time.time())
    assert "not a regular file" in (found["n1"].error or "") and found["n2"].error, found
    assert found["n3"].error is None


def test_a_negative_figure_is_refused_not_dropped(tmp_path):
    doc = _node("neg")
    doc["checks"][0]["metrics"] = {"bf16_TFLOPs_dev0": {"value": -3.5, "unit": "TFLOP/s"}}
    _write(tmp_path, "neg.json", doc)
    _write(tmp_path, "ok.json", _node("ok"))
    report = fleet(tmp_path)
    why = dict(report.invalid)
    assert "negative" in why["neg.json"] and [n.node for n in report.nodes] == ["ok"]
    _not_passing(report)


def test_json_nested_200000_deep_is_one_line(tmp_path):
    _write(tmp_path, "deep.json", "[" * 200_000 + "]" * 200_000)
    _write(tmp_path, "deep.log", "----- BEGIN VERIFY REPORT ----- x\n" + "{\"a\":" * 200_000 + "1" + "}" * 200_000
           + "\n----- END VERIFY REPORT -----\n")
    report = fleet(tmp_path)
    why = dict(report.invalid)
    assert set(why) == {"deep.json", "deep.log#1"} and all("\n" not in w for w in why.values())
    _not_passing(report)


def test_a_report_created_in_the_future_is_no_evidence(tmp_path):
    ahead = _node("ahead")
    ahead["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
    skewed = _node("skewed")
    skewed["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 120))
    _write(tmp_path, "ahead.json", ahead)
    _write(tmp_path, "skewed.json", skewed)
    report = fleet(tmp_path)
    why = dict(report.invalid)
    assert set(why) == {"ahead.json"} and "in the future" in why["ahead.json"] and "CLOCK_SKEW=5m" in why["ahead.json"]
    assert [n.node for n in report.nodes] == ["skewed"]                # 2 minutes ahead: within the tolerance
    assert [n.node for n in fleet(tmp_path, skew_s=86400 * 2).nodes] == ["ahead", "skewed"]      # the knob


def test_an_attestation_signed_or_reported_in_the_future_is_not_believed_whatever_max_age_says():
    from datetime import datetime, timezone

    from scripts.publish.report import Attestation, Summary, _decide, expire, format_report, refuse_future
    from scripts.publish.signing import Trusted

    class Key:
        keyid = "ab" * 32
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
    signer = Trusted(Key(), "/keys/release.pub")

    def judged(signed: str, created: str = "2026-11-25T11:00:00Z", skew_s: float = 300.0) -> Summary:
        att = Attestation("sha256:" + "1" * 64, signer, signed, {"checks": [], "created": created}, "pass", None,
                          {"node": "n1", "gpus": [], "gpu_count": 0, "driver": None, "torch": "x", "cuda": None})
        s = Summary("r@sha256:" + "2" * 64, attestations=[att])
        refuse_future(s, skew_s, now)
        _decide(s, True)
        expire(s, None, now, skew_s)          # no MAX_AGE given: the future is refused all the same
        return s
    ahead = judged("2026-11-26T12:00:00Z")                       # signed 24 h ahead
    assert not ahead.verified and "in the future" in ahead.reason and "CLOCK_SKEW=5m" in ahead.reason
    assert "verified: NO" in format_report(ahead) and "verified: yes" not in format_report(ahead)
    assert not judged("2026-11-25T11:00:00Z", created="2026-11-27T00:00:00Z").verified     # its report ahead
    assert judged("2026-11-25T12:04:00Z").verified                # 4 minutes ahead: clocks differ
    assert judged("2026-11-26T12:00:00Z", skew_s=2 * 86400).verified                        # the knob


def test_facts_recorded_in_the_future_are_refused_on_replay():
    from verify.replay import ReplayError, clock_skew, future_recorded
    now = time.time()
    path = Path("facts/host.json")
    with pytest.raises(ReplayError, match=r"in the future.*TORCHIMAGES_CLOCK_SKEW"):
        future_recorded(path, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 86400)), 300.0, now)
    with pytest.raises(ReplayError, match="in the future"):
        future_recorded(path, str(time.gmtime(now).tm_year + 2), 300.0, now)               # a year, translated
    for fine in (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60)), "2025", "2022-05", "last spring", None):
        future_recorded(path, fine, 300.0, now)
    assert clock_skew({}) == 300.0 and clock_skew({"TORCHIMAGES_CLOCK_SKEW": "60"}) == 60.0
    with pytest.raises(ReplayError, match="TORCHIMAGES_CLOCK_SKEW='soon'"):
        clock_skew({"TORCHIMAGES_CLOCK_SKEW": "soon"})


def test_a_fleet_that_does_not_pass_says_why_in_its_last_line():
    # a newcomer's `make fleet-report DIR=reports` exited 1 over pushed.json and an SBOM with nothing saying so last
    report = Fleet(Path("reports"), [], [("push/pushed.json", "not a verify report"), ("x.cdx.json", "not one")], [],
                   None, unreadable=[("secret", "permission denied")])
    assert not report.ok
    assert report.why_not_ok == "2 file(s) that are no valid verify report, 1 file(s) or folder(s) not readable"
    assert Fleet(Path("reports"), [], [], [], None).why_not_ok == ""


def _nccl(**metrics: float) -> dict[str, Any]:
    return {"name": "nccl", "status": "pass", "summary": "all-reduce verified", "details": [], "remedy": None,
            "code": None, "owner": None, "duration_s": 1.0, "data": {},
            "metrics": {k: {"value": v, "unit": "GB/s" if k == "busbw_max" else "count"} for k, v in metrics.items()}}


@pytest.mark.parametrize("change,said", [
    (lambda d: d["checks"].append(json.loads(json.dumps(d["checks"][0]))), "holds the gpu check 2 times"),
    (lambda d: d["checks"][0].update(code="GPU_LOST", owner="host"), "gpu check passes with code GPU_LOST"),
    (lambda d: d["checks"].append(_nccl(wrong=5)), "nccl check passes with wrong 5"),
    (lambda d: d["checks"].append(_nccl(busbw_ratio=20.0)), "busbw_ratio 20"),
    (lambda d: d["checks"].append(_nccl(busbw_max=50_000.0)), "busbw_max 50000"),
    (lambda d: d["checks"][0].update(metrics={"nvml_devices": {"value": 0, "unit": "count"}}), "nvml_devices 0"),
    (lambda d: d["checks"][0].update(metrics={"nvml_devices": {"value": float("nan"), "unit": "count"}}),
     "not a finite number"),
])
def test_a_pass_never_stands_on_a_report_that_cannot_be_true(tmp_path, change, said):
    """Impossible facts in reports (issue 36, class 6): verify writes one result per check, codes only what it did
    not pass, and never passes an all-reduce with wrong elements, a busbw no link carries, or a gpu check on no
    NVML device. Such a report is listed as invalid, with why, and the fleet does not pass."""
    doc = _node("forged")
    change(doc)
    _write(tmp_path, "forged.json", json.dumps(doc, allow_nan=True))
    _write(tmp_path, "ok.json", _node("ok"))
    report = fleet(tmp_path)
    assert said in dict(report.invalid).get("forged.json", ""), report.invalid
    _not_passing(report)


@pytest.mark.parametrize("change,said", [
    (lambda d: d["environment"].update(hostname="n4\nn5"), "no one host name"),
    (lambda d: d["environment"].update(hostname="n[4-9]"), "'n[4-9]'"),
    (lambda d: d["environment"].update(hostname="n4,n5"), "'n4,n5'"),
    (lambda d: d["environment"].update(hostname="../../etc/x"), "no one host name"),
    (lambda d: d["environment"].update(hostname="a" * 254), "no one host name"),
    (lambda d: d["environment"].update(scheduler={"node": "n[1-4]"}), "'n[1-4]'"),
    (lambda d: d.update(created="1970-01-01T00:00:00Z"), "clock was never set"),
    (lambda d: d.update(created="2000-01-01T00:00:00Z"), "clock was never set"),
    (lambda d: d.update(replay={"facts_dir": "tests/data/x", "host": "n9", "recorded": "2026-11-22T00:00:00Z",
                                "facts_schema": 3, "recorded_by": "2.0.0"}), "a replay of recorded facts"),
    (lambda d: d["checks"][0].update(metrics={"nvml_devices": {"value": 8.0, "unit": "count"},
                                              "torch_devices": {"value": 0.0, "unit": "count"}}), "torch_devices 0"),
], ids=["newline", "hostlist", "list", "path", "too-long", "scheduler-hostlist", "1970", "2000", "replay",
        "no-torch-device"])
def test_a_report_that_is_no_node_of_this_job_now_is_invalid(tmp_path, change, said):
    """Slurm's node names are one host each (a hostlist is many: a drain line naming it would drain many); a replay of
    recorded facts judged a record, not the node now; a report dated before any verify comes from a node whose clock
    was never set; a gpu pass on no torch device is none. Each is listed as invalid, and the fleet does not pass."""
    doc = _node("forged")
    change(doc)
    _write(tmp_path, "forged.json", doc)
    _write(tmp_path, "ok.json", _node("ok"))
    report = fleet(tmp_path)
    assert said in dict(report.invalid).get("forged.json", ""), report.invalid
    assert [n.node for n in report.nodes] == ["ok"]
    _not_passing(report)


def test_an_fqdn_and_a_report_without_a_name_are_nodes(tmp_path):
    _write(tmp_path, "a.json", _node("gpu-node-01.cluster.example.com"))
    unnamed = _node("x")
    del unnamed["environment"]["hostname"]
    _write(tmp_path, "node-7.json", unnamed)
    report = fleet(tmp_path)
    assert sorted(n.node for n in report.nodes) == ["gpu-node-01.cluster.example.com", "node-7"], report.invalid


@pytest.mark.parametrize("code", sorted(UNJUDGED_CODES))
def test_a_measurement_that_went_wrong_lists_no_node_to_drain(tmp_path, code):
    """MEASUREMENT_INVALID is verify's own trouble (its owner is host by default): the prolog has it not assessed,
    and the fleet report listed `torchimages:MEASUREMENT_INVALID` among the nodes to drain. Slurm's prolog semantics,
    held on the host side too: the tool's trouble never drains a node (the fleet still does not pass)."""
    doc = _node("n1")
    doc["status"] = "fail"
    # the owner verify gives it (a code it gives only its catalog's owner, given another, is a report no verify wrote)
    owner = CATALOG_OWNER.get(code, "host")
    doc["checks"][0].update(status="fail", code=code, owner=owner, summary="the figures contradict", remedy="rerun")
    _write(tmp_path, "n1.json", doc)
    report = fleet(tmp_path)
    assert [n.drain for n in report.nodes] == [[]] and not report.ok


def test_the_fleet_and_the_prolog_hold_one_set_of_unjudged_codes():
    from verify.prolog import verdict
    assert UNJUDGED_CODES == verdict.UNJUDGED_CODES


def test_dns_names_are_case_insensitive_n1_and_N1_are_one_node(tmp_path):
    """RFC 4343: host names compare case-insensitively, and `n1.` is n1 rooted. Two reports of the same checks from
    N1 and n1 are one node reported twice (the fleet does not pass), never two healthy nodes; the table counts one."""
    _write(tmp_path, "a.json", _node("N1"))
    _write(tmp_path, "b.json", _node("n1"))
    _write(tmp_path, "c.json", _node("n2."))
    _write(tmp_path, "d.json", _node("N2"))
    report = fleet(tmp_path)
    assert {n.node for n in report.nodes} == {"N1", "n2."} and set(report.duplicates) == {"N1", "n2."}
    assert not report.ok and "from 2 node(s)" in format_fleet(report)


def test_a_drain_history_is_read_however_the_report_spells_its_node(tmp_path):
    """The prolog writes STATE/history/<Slurm's name>.jsonl (N1): a report naming n1 reads that history, one row;
    two files for one host (N1.jsonl and n1.jsonl) are named as trouble, never one of them silently dropped."""
    from scripts.fleet.history import read_state
    from verify.prolog import history as prolog_history
    prolog_history.record(str(tmp_path), "N1", "drain", "GPU_LOST", "x", now=time.time())
    found = read_state(tmp_path, ["n1"])
    assert list(found) == ["n1"] and [e["event"] for e in found["n1"].events] == ["drain"]
    prolog_history.record(str(tmp_path), "n1", "pass", None, "x", now=time.time())
    found = read_state(tmp_path, ["n1"])
    assert list(found) == ["n1"] and "name this one node" in str(found["n1"].error)


def test_an_earlier_fleet_json_is_read_bounded_before_it_is_replaced(tmp_path, monkeypatch):
    """DIR/fleet.json is replaced only when it is an earlier fleet report: it was read whole to tell, so one of
    gigabytes (sparse here) filled the memory. Read bounded as every file under DIR: larger than any report, it is
    no fleet report and is kept (one line, exit 2); a FIFO there is never waited on."""
    from scripts.errors import UserError
    from scripts.fleet.fleet import write_fleet
    _write(tmp_path, "a.json", _node("a"))
    report = fleet(tmp_path)
    huge = tmp_path / "fleet.json"
    with open(huge, "wb") as fh:
        fh.truncate(8 << 30)                     # 8 GiB, sparse: read whole it is 8 GiB of memory
    with pytest.raises(UserError, match="is not a fleet report"):
        write_fleet(report)
    huge.unlink()
    os.mkfifo(huge)
    with pytest.raises(UserError, match="is not a fleet report"):
        write_fleet(report)
