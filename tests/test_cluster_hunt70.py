"""Issue 36, a seventieth hunt through the public interfaces (`python -m verify.prolog`'s main, `make fleet-report`'s
command, make isolate's runner, the state files).

Found:
- Class 1, a setting of ours is never the node's fault (high: a healthy node drained, past the breaker). Round 69
  fitted the prolog's cap under slurm.conf's PrologEpilogTimeout (slurmd kills a Prolog= past it and drains the node,
  "Prolog error", no reason of ours). slurm.conf was read as a state file of ours: a symlink refused. But
  /etc/slurm/slurm.conf -> a shared copy (NFS, a config-management checkout) is the common layout, and there the
  timeout went unread (one note) and the cap unfitted: `PrologEpilogTimeout=30` drained every node whose run needed a
  confirmation, as before round 69. So did the value Slurm's own parser (parse_config.c) reads in double quotes
  (`PrologEpilogTimeout="30"`), a number strtol reads (0x1e), and a timeout set in a file slurm.conf names on an
  `Include` line (case-blind, relative to slurm.conf's folder, wildcards): an operator's split config. Fix
  (verify/prolog/slurmconf.py): read as Slurm reads it; slurmd's own file is followed through a link, regular files
  only (a FIFO or a device is refused in one line), at most 4 MiB of each from the head (where the global settings
  are; a larger one is said), Include followed 8 levels and 64 files deep, a loop read once. `Prolog=` itself set
  in an included file costs nothing: the prolog never reads it (slurmd runs what it names).
- Class 6, facts that cannot be true (high where it bites: a broken node counted healthy). verify's json.dumps never
  writes a key twice; the prolog reads its report with verify/strictjson.py (a key twice: REPORT_INVALID). The host
  side read with json.loads, which keeps the last: a node's report whose shm check said `"status": "fail", "code":
  "SHM_TOO_SMALL", "owner": "host"` and then `"status": "pass", "code": null` was a passing node in `make
  fleet-report` ("fleet: PASSING", exit 0) and a pass of its pair in make isolate's runner, while the prolog refused
  it. Fix: the host side reads a report, and a history line, by the same rule (scripts/fleet/jsonrecord.py, standard
  library only: the host side never imports verify); the prolog's history and kernel-log state likewise (a line that
  says two things is a garbled line, never the last of them).

- Class 3 / class 2, return to service under concurrency (medium: a wrong exit status; the known low, re-rated). Two
  `make undrain NODE=n1` at once (a person and a script) each passed their preflight; the first resumed n1, and the
  second, finding Slurm's drain gone at its last look, exited 5 ("REFUSED ... its drain changed") and recorded a
  `resume-refused` after the resume: a script paging on a refusal paged for a node in service on a proof. Now a
  revalidation whose own preflight passed, that finds the node not drained in Slurm and a resume in its history
  that it did not see at its start (no drain after it), says "RESUMED n1 already" and exits 0, recording nothing; a
  resume by hand (no history line) or a drain since still refuse (NVSentinel: a cordon lifted on proof, never
  one someone else set).

- Class 1 / class 8, a setting of ours is never the node's fault (high: a broken node kept in service). Under
  Prolog= each note goes to syslog too. A path slurmd's environment gives that is no UTF-8 (SLURM_CONF=/etc/\\xff/...:
  Python holds its bytes as surrogates) went into a note ("slurm.conf not read ...") unescaped, and syslog.syslog
  raised UnicodeEncodeError, which _syslog did not catch: the run with a lost GPU ended PROLOG_CRASHED, exit 0, the
  node in service. Now the syslog line is written with such bytes escaped, and an encoding error is caught there as
  an unwritable syslog is (the run's verdict stands).

- Class 8 / class 6, every input listed, evidence never lost in silence (high: a broken node passes the fleet).
  make slurm's job writes one report per node (its local checks) beside the collective's (nccl.json from global rank
  0, whose nccl check records the `nodes` it ran across). A node whose verify hung on a stuck GPU, was killed by the
  step's timeout or never started wrote no report, and `make fleet-report` read the others alone: "fleet: PASSING: 3
  node(s), every report valid and passing", exit 0, for a job of 4 nodes whose collective said 4. Now where the
  folder holds per-node reports, a collective across more nodes than wrote one is "missing reports (not ok)",
  counted in the last line and in fleet.json (`unreported`); make isolate's pair folders (one report a pair, by
  design) are untouched.

- Class 9 / class 1, stale evidence and a setting dropped without a word (medium). make report and make gate read
  MAX_AGE ("the oldest verification believed"); `make fleet-report DIR=... MAX_AGE=7d` ignored it in silence, and a
  report of an earlier job left in a reused folder (TORCHIMAGES_REPORTS is the user's to fix) counted a node as
  passing on evidence 40 days old. Now make fleet-report reads MAX_AGE: a report created longer ago is invalid
  ("stale evidence, not of the node now"), the fleet does not pass; without MAX_AGE any age is believed, as for
  make report.

- Class 6, facts that cannot be true (medium: an impossible figure believed, on both sides). Round 50's rate rule
  (no rate below 0 or past any machine, RATE_MOST) left out the one bit rate verify writes, the fabric check's
  `link_gbps` (Gb/s, the sum of its ports' rates): a fabric pass at -3,200 Gb/s passed the prolog and counted in the
  fleet. Now "Gb/s" is in both tables (its ceiling 8 x the GB/s one), refused as a report no verify writes.

- Class 1 (low, fixed): an option given twice (`--state-dir /a ... --state-dir /b`, a wrapper that appends its own)
  runs on the last, as argparse keeps it; what is read without the parser (the trace of a bad setting, whether this
  is Prolog=) took the first: the CONFIG_ERROR of a misspelt option went to /a's history, not the one the prolog
  keeps. Now the last, and nothing after `--`.

- Class 8 / class 3, a history that grows without bound, read in part (high: a flapping node returned without
  inspection). The history rotates past 1 MiB under its lock; on a file system that gives no lock at all (NFS
  whose lock manager is down: ENOLCK, where round 54 made every writer append without it) no writer ever rotated,
  and the file grew for good. Past READ_CAP (4 MiB: some 16,000 events, a week of short jobs on a busy node) a
  reader takes its tail, and `make undrain` judged NVSentinel's flap rule on that tail: the resume before the last
  drain cut off, a fault that came back within the window read as a first one, and the node was resumed (History.cut
  was set and read by no one). Now a writer that can have no lock rotates all the same (a writer meanwhile checks
  its line was kept, as with a busy lock), and a revalidation of a history read in part refuses in one line.

Each test names the practice it follows (Slurm's prolog semantics and slurm.conf grammar, NVSentinel's
return-to-service and breaker rules, NVIDIA's Xid catalog).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _undrain, _verify_writes, drained, install_fake
from verify.prolog import cli, history, slurmconf

pytestmark = pytest.mark.unit
REAL_SYSLOG = cli._syslog


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], conf: Path) -> str:
    """A Prolog= run of n1 (slurmd's environment naming `conf`) that passes; what it said on stderr."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_CONF": str(conf)}) == 0
    return capsys.readouterr().err


# --- class 1: slurm.conf's PrologEpilogTimeout as slurmd reads it -------------------------------------------------------

def test_slurm_prolog_semantics_a_symlinked_slurm_conf_still_fits_the_cap(tmp_path, fake, monkeypatch, capsys):
    """/etc/slurm/slurm.conf -> a shared copy: slurmd reads it through the link, and kills a Prolog= past its
    PrologEpilogTimeout (a drain, past the breaker). The prolog refused the link and ran to its own 90 s cap."""
    shared = tmp_path / "shared.conf"
    shared.write_text("ClusterName=c\nPrologEpilogTimeout=30\n")
    (tmp_path / "slurm.conf").symlink_to(shared)
    said = _capped(tmp_path, monkeypatch, capsys, tmp_path / "slurm.conf")
    assert "PrologEpilogTimeout=30 is under the prolog's cap of 90 s" in said and "capped at 20 s" in said, said


@pytest.mark.parametrize("line", ['PrologEpilogTimeout="30"', "PrologEpilogTimeout=0x1e", "PrologEpilogTimeout=036",
                                  "PrologFlags=Alloc \\\n  PrologEpilogTimeout=30"])
def test_slurm_conf_values_are_read_as_slurm_s_parser_reads_them(tmp_path, line):
    """parse_config.c: a value in double quotes, a number as strtol(.., 0) reads it, a line continued by a backslash."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"ClusterName=c\n{line}\n")
    assert slurmconf.prolog_timeout({"SLURM_CONF": str(conf)}) == (30.0, None)


def test_slurm_prolog_semantics_a_timeout_in_an_included_file_fits_the_cap(tmp_path, fake, monkeypatch, capsys):
    """`Include` (any case) names another file of slurm.conf, relative to slurm.conf's folder, wildcards expanded:
    a timeout there is slurmd's all the same. Missed, the cap stayed 90 s under a timeout of 40."""
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "a.conf").write_text("PrologEpilogTimeout=300\n")
    (tmp_path / "conf.d" / "b.conf").write_text("INCLUDE deeper.conf\n")     # from slurm.conf's folder, as Slurm reads it
    (tmp_path / "deeper.conf").write_text("prologepilogtimeout=40\ninclude conf.d/b.conf\n")     # a loop: read once
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nInclude conf.d/*.conf   # the site's part\n")
    said = _capped(tmp_path, monkeypatch, capsys, conf)
    assert "PrologEpilogTimeout=40 is under the prolog's cap of 90 s" in said and "capped at 30 s" in said, said


def test_an_included_file_that_is_hostile_is_said_never_a_hang(tmp_path):
    """A FIFO or a device named by Include (or by a link) is refused in one line; the rest of slurm.conf still
    counts, and the smaller timeout holds."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"Include {tmp_path / 'fifo'}\nInclude zero\nPrologEpilogTimeout=50\nInclude missing.conf\n")
    timeout, note = slurmconf.prolog_timeout({"SLURM_CONF": str(conf)})
    assert timeout == 50.0
    assert "a FIFO" in str(note) and "a character device" in str(note) and "missing.conf" in str(note), note


def test_a_huge_slurm_conf_is_read_from_its_head_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(slurmconf, "CAP", 1024)
    conf = tmp_path / "slurm.conf"
    conf.write_text("PrologEpilogTimeout=45\n" + "NodeName=n1 CPUs=2\n" * 200)
    timeout, note = slurmconf.prolog_timeout({"SLURM_CONF": str(conf)})
    assert timeout == 45.0 and "only its first 1024 were read" in str(note)


# --- class 6: a JSON object that names a key twice --------------------------------------------------------------------

def _two_faced(report: dict[str, Any]) -> str:
    """The report as text, its first check's failure followed by a pass under the same keys (a key given twice)."""
    text = json.dumps(report)
    first = report["checks"][0]
    text = text.replace(f'"code": "{first["code"]}"', f'"code": "{first["code"]}", "status": "pass", "code": null', 1)
    return text[:-1] + ', "status": "pass"}'


def test_fleet_report_refuses_a_report_that_names_a_key_twice(tmp_path, monkeypatch):
    """The prolog refuses the report (REPORT_INVALID: verify/strictjson.py); the fleet report took its last
    `status` and counted a host fault as a passing node."""
    from scripts.fleet.fleet import fleet
    from verify import strictjson
    shm = {"name": "shm", "status": "fail", "code": "SHM_TOO_SMALL", "owner": "host", "summary": "64 MiB",
           "metrics": {}}
    text = _two_faced(_report(shm))
    with pytest.raises(ValueError, match="duplicate key"):
        strictjson.loads(text, non_finite=True)
    (tmp_path / "n1.json").write_text(text)
    report = fleet(tmp_path)
    assert not report.ok and not report.nodes
    assert "duplicate key 'status'" in report.invalid[0][1], report.invalid


def test_make_isolate_reads_a_pair_report_that_names_a_key_twice_as_none(tmp_path):
    from scripts.fleet import isolate_run
    nccl = {"name": "nccl", "status": "fail", "code": "NCCL_WRONG_RESULT", "owner": "host", "summary": "wrong",
            "metrics": {}}
    (tmp_path / "r.json").write_text(_two_faced(_report(nccl)))
    assert isolate_run._read_report(tmp_path / "r.json") is None     # no result: the pair is not cleared


def test_a_history_line_that_names_a_key_twice_is_garbled_on_both_sides(tmp_path):
    """NVSentinel's return to service reads the drain history: a line `"event": "drain" ... "event": "pass"` says
    two things, and was read as its last (a drain turned into a pass by a hand edit)."""
    from scripts.fleet import history as fleet_history
    from verify.prolog import history
    state = tmp_path / "state"
    history.record(str(state), "n1", "drain", "GPU_LOST", "x", extra={"gpus": 8, "check": "gpu"})
    path = Path(history.path(str(state), "n1"))
    path.write_text(path.read_text().rstrip("\n")[:-1] + ', "event": "pass"}\n')
    assert history.read(str(state), "n1").bad_lines == [1]
    assert fleet_history.parse("n1", str(path), path.read_text()).bad_lines == [1]


# --- class 3: two revalidations of one node at once ----------------------------------------------------------------------

def _meanwhile(monkeypatch: pytest.MonkeyPatch, state: str, fake: Any, *, record: bool, drain_after: bool = False) -> None:
    """verify passes; while it runs another `make undrain` of n1 resumes it (its history line kept, or a resume by
    hand without one), and a gate run may drain it again after that."""
    def run(cmd: list[str], limit: float) -> tuple[int, str]:
        Path(cmd[cmd.index("--json") + 1]).write_text(json.dumps(_report(_gpu())))
        fake.nodes["n1"] = ("idle", "none")
        if record:
            history.record(state, "n1", "resume", None, "1 check(s) passed")
        if drain_after:
            history.record(state, "n1", "drain", "GPU_LOST", "GPU 3 lost", extra={"gpus": 8, "check": "gpu"})
        return 0, ""
    monkeypatch.setattr(cli, "_run_verify", run)


def test_nvsentinel_a_second_undrain_of_a_node_another_resumed_on_proof_exits_0(tmp_path, fake, monkeypatch, capsys):
    state = drained(tmp_path, fake, "PCIE_DOWNGRADED", "gpu")
    _meanwhile(monkeypatch, state, fake, record=True)
    assert cli.main(_undrain(state), {"SLURMD_NODENAME": "n1"}) == 0
    assert "RESUMED n1 already: another revalidation resumed it" in capsys.readouterr().err
    assert [e["event"] for e in history.read(state, "n1").events] == ["drain", "resume"]     # nothing recorded twice
    assert fake.verbs().count("update nodename=n1 state=resume") == 0      # this one resumed nothing


@pytest.mark.parametrize("how", ["by hand", "drained again since"])
def test_nvsentinel_a_resume_not_on_record_or_a_drain_since_still_refuses(tmp_path, fake, monkeypatch, capsys, how):
    state = drained(tmp_path, fake, "PCIE_DOWNGRADED", "gpu")
    _meanwhile(monkeypatch, state, fake, record=how != "by hand", drain_after=how != "by hand")
    assert cli.main(_undrain(state), {"SLURMD_NODENAME": "n1"}) == 5
    assert "its drain changed while the preflight ran" in capsys.readouterr().err


@pytest.mark.parametrize("ago, status", [(-1.0, 0), (600.0, 5), (-7200.0, 5)],
                         ids=["resumed since this run began", "resumed before it", "a resume stamped in the future"])
def test_nvsentinel_an_undrain_that_starts_after_the_other_resumed_exits_0_only_for_that(tmp_path, fake, monkeypatch,
                                                                                        capsys, ago, status):
    """The second `make undrain` of the pair may read Slurm only once the first has resumed n1 (its interpreter
    slower to start): "n1 is not drained (idle)" exited 5, a refusal for a node in service on a proof (CI, 2026-11-30).
    A resume in the history stamped since this run began is that; one before it (an idle node resumed long ago: a
    user's undrain of the wrong node) or past the clock still refuses."""
    state = drained(tmp_path, fake, "PCIE_DOWNGRADED", "gpu")
    fake.nodes["n1"] = ("idle", "none")
    monkeypatch.setattr("time.time", lambda: 1_800_000_000.0)
    history.record(state, "n1", "resume", None, "1 check(s) passed", now=1_800_000_000.0 - ago)
    assert cli.main(_undrain(state), {"SLURMD_NODENAME": "n1"}) == status
    err = capsys.readouterr().err
    events = [e["event"] for e in history.read(state, "n1").events]
    if status == 0:
        assert "RESUMED n1 already: another revalidation resumed it since this one began" in err
        assert events == ["drain", "resume"]
    else:
        assert "REFUSED n1 is not drained (idle)" in err and events[-1] == "resume-refused"
    assert "update nodename=n1 state=resume" not in fake.verbs()


# --- class 1 / 8: bytes that are no UTF-8 in slurmd's environment ---------------------------------------------------------

def test_slurm_prolog_semantics_a_path_that_is_no_utf8_never_crashes_a_drain(tmp_path, fake, monkeypatch, capsys):
    """SLURM_CONF=/tmp/<0xff>/slurm.conf (slurmd's environment, as os.environ holds it): its note went to syslog,
    whose encoder refused the surrogate: PROLOG_CRASHED, exit 0, the lost GPU kept in service."""
    import syslog
    lines: list[str] = []
    monkeypatch.setattr(cli, "_syslog", REAL_SYSLOG)
    monkeypatch.setattr(syslog, "openlog", lambda *a: None)
    monkeypatch.setattr(syslog, "syslog", lambda level, line: lines.append(line.encode("utf-8").decode()))  # strict, as C's
    lost = _report(_gpu("fail", code="GPU_LOST", owner="host", summary="GPU 3 is lost"))
    _verify_writes(monkeypatch, json.dumps(lost).encode())
    conf = os.fsdecode(bytes(tmp_path) + b"/\xff/slurm.conf")
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_CONF": conf}) == 1
    assert fake.nodes["n1"][0] == "drained" and "DRAINED n1" in capsys.readouterr().err
    assert any("slurm.conf not read" in line and "\\udcff" in line for line in lines), lines


# --- class 8 / 6: a node of the job that wrote no report -----------------------------------------------------------------

def _local(host: str) -> dict[str, Any]:
    import time

    from tests.verify_handmade import make_report
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


def _collective(writer: str, nodes: int) -> dict[str, Any]:
    doc = _local(writer)
    doc["checks"] = [{"name": "nccl", "status": "pass", "code": None, "owner": None, "summary": "all-reduce verified",
                      "details": [], "remedy": None, "duration_s": 1.0,
                      "data": {"backend": "nccl", "nodes": nodes, "world_size": 8 * nodes},
                      "metrics": {"busbw_max": {"value": 40.0, "unit": "GB/s"}, "wrong": {"value": 0, "unit": "count"}}}]
    return doc


@pytest.mark.parametrize(("hosts", "missing"), [(("n1", "n2", "n3"), 1), (("n1", "n2", "n3", "n4"), 0),
                                                (("n1", "N1.", "n2"), 2)])
def test_a_node_of_the_collective_that_wrote_no_report_keeps_the_fleet_from_passing(tmp_path, hosts, missing):
    """Slurm's job of 4 nodes, one of them hung: its report is missing, the collective's says 4 nodes. The fleet
    passed on the 3 that wrote one. (N1. is n1: one host however it is spelt.)"""
    from scripts.fleet.fleet import fleet, fleet_json, format_fleet
    for i, host in enumerate(hosts):
        (tmp_path / f"r{i}.json").write_text(json.dumps(_local(host)))
    (tmp_path / "nccl.json").write_text(json.dumps(_collective("n1", 4)))
    report = fleet(tmp_path)
    assert report.ok is (missing == 0) and fleet_json(report)["unreported"] == missing
    if missing:
        assert f"{missing} node(s) of the collective across 4 with no report of their own" in report.why_not_ok
        assert "missing reports (not ok)" in format_fleet(report)


def test_make_isolate_s_pair_reports_are_no_missing_node(tmp_path):
    """make isolate writes one report a pair (global rank 0's), and no per-node report: no node is missing there."""
    from scripts.fleet.fleet import fleet
    (tmp_path / "1-1.json").write_text(json.dumps(_collective("n1", 2)))
    (tmp_path / "1-2.json").write_text(json.dumps(_collective("n3", 2)))
    assert fleet(tmp_path).unreported == (0, 0)


# --- class 9: stale evidence under MAX_AGE ------------------------------------------------------------------------------

def test_make_fleet_report_reads_max_age_as_make_report_does(tmp_path):
    """A report of 40 days ago beside one of now: under MAX_AGE=7d it is stale, never a passing node of this job."""
    import time

    from scripts.cli import main as scripts_main
    from scripts.fleet.fleet import fleet
    old = _local("n2")
    old["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 40 * 86400))
    (tmp_path / "n1.json").write_text(json.dumps(_local("n1")))
    (tmp_path / "n2.json").write_text(json.dumps(old))
    assert fleet(tmp_path).ok                                  # no MAX_AGE: any age is believed, as make report has it
    report = fleet(tmp_path, max_age_s=7 * 86400)
    assert not report.ok and [n.node for n in report.nodes] == ["n1"]
    assert "older than MAX_AGE=7d: stale evidence" in report.invalid[0][1]
    assert scripts_main(["fleet-report", "--dir", str(tmp_path), "--max-age", "7d"]) == 1


# --- class 6: a bit rate below 0 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [-3200.0, 1e7])
def test_a_fabric_link_rate_no_port_has_is_refused_on_both_sides(value):
    from scripts.fleet import plausible
    from verify.prolog import verdict
    fabric = {"name": "fabric", "status": "pass", "summary": "8 ports",
              "metrics": {"link_gbps": {"value": value, "unit": "Gb/s"}}}
    report = _report(_gpu(), fabric)
    assert verdict.decide(report, True).code == "REPORT_INVALID"
    assert "link_gbps" in str(plausible.report_problem(report))


# --- class 1 (low): an option given twice ------------------------------------------------------------------------------

def test_the_trace_of_a_bad_setting_goes_where_the_run_would_have_kept_it(tmp_path, fake, capsys):
    first, last = tmp_path / "a", tmp_path / "b"
    assert cli.main(["--state-dir", str(first), "--state-dir", str(last), "--bugdet", "30"], dict(PROLOG_ENV)) == 0
    assert "CONFIG_ERROR" in capsys.readouterr().err
    assert [e["code"] for e in history.read(str(last), "n1").events] == ["CONFIG_ERROR"]
    assert not first.exists()


# --- class 8 / 3: a history that never rotated, read in part ----------------------------------------------------------

def test_a_history_on_a_file_system_without_locks_still_rotates(tmp_path, monkeypatch):
    """NFS whose lock manager is down (ENOLCK): every writer appends without the lock, and none rotated."""
    def lockf(fd: int, op: int, *rest: Any) -> None:
        raise OSError(errno.ENOLCK, "no lock")
    monkeypatch.setattr(fcntl, "lockf", lockf)
    state = str(tmp_path / "state")
    history.record(state, "n1", "resume", None, "repaired", extra={"gpus": 8})
    for _ in range(300):
        assert "appended without it" in str(history.record(state, "n1", "pass", None, "x" * 900, max_bytes=64 << 10,
                                                           keep_lines=20))
    assert os.path.getsize(history.path(state, "n1")) <= (64 << 10) + 2048        # it grew to 300 KiB
    events = history.read(state, "n1").events
    assert events[0]["event"] == "resume" and len(events) < 80      # the milestone kept ahead of the last lines


def test_nvsentinel_flap_rule_a_history_read_in_part_returns_no_node(tmp_path, fake, monkeypatch, capsys):
    """A resume two days ago, 4 MiB of passes since, a drain now: the flap rule read the tail and saw no resume."""
    import time
    state = drained(tmp_path, fake, "PCIE_DOWNGRADED", "gpu")
    path = Path(history.path(state, "n1"))
    drain = path.read_text()
    resumed = time.time() - 2 * 86400
    history.record(state, "n1", "resume", None, "resumed", now=resumed)
    lines = path.read_text().splitlines()[1:]
    passes = [json.dumps({"schema": 1, "time": "2026-11-29T00:00:00Z", "epoch": resumed + 60 + i, "node": "n1",
                          "event": "pass", "code": None, "detail": "y" * 300, "id": f"p{i}"}) for i in range(14000)]
    path.write_text("\n".join([*lines, *passes]) + "\n" + drain)     # no rotation ran: no lock on its file system
    assert history.read(state, "n1").cut
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(_undrain(state), {"SLURMD_NODENAME": "n1"}) == 5
    assert "read in part" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"
