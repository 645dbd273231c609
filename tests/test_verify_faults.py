"""verify under faults: bad input, timeouts, signals, unwritable paths, no temp dir, hostile output."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import ROOT, assert_clean_failure, run_cli, wait_for

pytestmark = pytest.mark.unit

SCHEMA = json.loads((ROOT / "verify" / "report.schema.json").read_text())


def _one_line_usage_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_clean_failure(proc, *needles)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stdout == "", proc.stdout


@pytest.mark.parametrize("args,env,needle", [
    (["--shm-min", "infg"], {}, "--shm-min"), (["--shm-min", "0"], {}, "out of range"), (["--shm-min", "-1"], {}, "--shm-min"),
    (["--shm-min", ""], {}, "--shm-min"), (["--timeout", "0"], {}, "greater than 0"), (["--timeout", "nan"], {}, "finite"),
    (["--timeout", "inf"], {}, "finite"), (["--timeout", "-1"], {}, "--timeout"), (["--nccl-timeout", "nan"], {}, "finite"),
    (["--expect-gpus", "-1"], {}, "at least 0"), (["--expect-gpus", "x"], {}, "integer"),
    (["--arrow-min-ratio", "nan"], {}, "finite"), (["--checks", ","], {}, "(none given)"),
    (["--nccl-min-size", "1g", "--nccl-max-size", "1m"], {}, "larger than"), (["--arrow-size", "12q"], {}, "not a size"),
    (["--no-such-flag"], {}, "unrecognized"), ([], {"RANK": "abc"}, "RANK='abc'"), ([], {"RANK": "1"}, "no group"),
    ([], {"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE=0"), ([], {"RANK": "3", "WORLD_SIZE": "2", "MASTER_ADDR": "x"}, "not below"),
    ([], {"LOCAL_RANK": "-1"}, "LOCAL_RANK"), ([], {"RANK": "\u00b2"}, "RANK='\u00b2'"),
    ([], {"VERIFY_TEST_HANG_ONCE": "/nonexistent-dir/hung"}, "VERIFY_TEST_HANG_ONCE"),
    ([], {"VERIFY_TEST_HANG_ONCE": "/"}, "is a directory"), (["--json", "/nonexistent-dir/r.json"], {}, "does not exist"),
    (["--save-facts", "a", "--from-facts", "b"], {}, "exclude each other"),
    (["bench", "--repeats", "0"], {}, "--repeats"), (["bench", "--size", "0"], {}, "out of range"),
    (["bench", "--repeats", "nan"], {}, "--repeats"), (["--json", "r.json", "bench"], {}, "bench takes no verify option"),
    (["no-such-command"], {}, "invalid choice")])
@pytest.mark.host
def test_bad_input_is_one_line_exit_2_and_nothing_runs(args, env, needle, tmp_path):
    proc = run_cli(*args, module="verify", env=env, timeout=60)
    _one_line_usage_error(proc, needle)
    assert not list(tmp_path.iterdir())


@pytest.mark.host
def test_report_paths_are_checked_before_the_first_check(tmp_path):
    proc = run_cli("--checks", "shm", "--json", str(tmp_path), module="verify", timeout=60)
    _one_line_usage_error(proc, "is a directory")
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o555)
    try:
        if os.access(read_only, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        proc = run_cli("--checks", "shm", "--junit", str(read_only / "r.xml"), module="verify", timeout=60)
        _one_line_usage_error(proc, "not writable")
    finally:
        read_only.chmod(0o755)


def _leftovers(marker: str) -> list[str]:
    """Processes whose environment carries this test's marker (ours only: /proc/<pid>/environ is private)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append(f"{entry.name}: {cmdline}")
        except OSError:
            continue
    return found


def _start(args: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.Popen, str, Path, Path]:
    marker = f"verify-test-{uuid.uuid4().hex}"
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    err = tmp_path / "stderr.txt"
    proc = subprocess.Popen([sys.executable, "-m", "verify", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=err.open("w"), text=True,
                            env={**os.environ, "VERIFY_TEST_MARKER": marker, "TMPDIR": str(scratch), **env})
    return proc, marker, scratch, err


def _scratch_bytes(scratch: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(scratch):     # os.walk skips what vanishes while it looks; rglob raises
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:        # removed while we looked
                pass
    return total


def _run_watching(args: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.Popen, str, Path, int]:
    proc, marker, scratch, _ = _start(args, tmp_path, **env)
    biggest = 0
    while proc.poll() is None:
        biggest = max(biggest, _scratch_bytes(scratch))
        time.sleep(0.1)
    proc.communicate(timeout=60)
    return proc, marker, scratch, biggest


@pytest.mark.host
def test_checks_killed_at_their_timeout_leave_nothing_in_their_temp_dirs(tmp_path):
    """The issue's repro, smaller (`--checks arrow --arrow-size 6g --timeout 6`): the real arrow check killed while it
    writes; then a check that wrote 8 MiB to its TMPDIR and hangs (the hook), killed too. Their data goes with them."""
    proc, marker, scratch, biggest = _run_watching(["--checks", "arrow,hdf5", "--arrow-size", "3g", "--timeout", "4",
                                                    "--json", str(tmp_path / "r.json")], tmp_path, VERIFY_TEST_HANG="hdf5")
    checks = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}
    assert proc.returncode == 1
    for name in ("arrow", "hdf5"):
        assert checks[name]["code"] == "CHECK_TIMEOUT" and "timed out after 4 s" in checks[name]["summary"], checks[name]
    assert "test hook: hdf5 hangs" in checks["hdf5"]["output"]
    assert biggest >= 8 << 20, "no check wrote its data: the test would prove nothing"
    assert list(scratch.iterdir()) == [], list(scratch.rglob("*"))
    assert _leftovers(marker) == []


@pytest.mark.host
@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_running_check_writes_the_partial_report_and_leaves_nothing(tmp_path, sig, code):
    proc, marker, scratch, err = _start(["--checks", "nccl,shm,hdf5", "--shm-min", "16m", "--json", str(tmp_path / "r.json"),
                                         "--junit", str(tmp_path / "r.xml")], tmp_path,
                                        VERIFY_TEST_HANG="nccl-last-rank")   # the collective cannot finish early
    wait_for(err, "[1/3] nccl: running", 60)
    deadline = time.monotonic() + 30   # the check's process and its gloo ranks come up, however loaded the host
    while len(_leftovers(marker)) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_leftovers(marker)) >= 3, "expected verify, the check and its ranks to be running"
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    stderr = err.read_text()
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr + out and f"interrupted by {sig.name}" in stderr
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, SCHEMA)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["interrupted"] == sig.name and report["status"] == "fail"
    assert (checks["nccl"]["status"], checks["nccl"]["code"]) == ("fail", "INTERRUPTED")
    assert {(checks[n]["status"], checks[n]["code"]) for n in ("shm", "hdf5")} == {("skip", "INTERRUPTED")}
    assert ET.parse(tmp_path / "r.xml").getroot().get("failures") == "1"
    time.sleep(0.5)
    assert _leftovers(marker) == []
    assert list(scratch.iterdir()) == []


@pytest.mark.host
def test_without_a_writable_temp_dir_verify_falls_back_or_says_so(tmp_path, monkeypatch, capsys):
    proc = run_cli("--checks", "shm", "--shm-min", "16m", module="verify", env={"TMPDIR": str(tmp_path / "missing")},
                   timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import tempfile

    from verify import cli

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr("verify.runner.tempfile.mkdtemp", refuse)
    assert cli.main(["--checks", "shm"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("verify: no writable temporary directory") and "--tmpfs /tmp" in err
    assert len(err.strip().splitlines()) == 1


def test_control_characters_are_stripped_from_junit(tmp_path):
    from verify.report import write_junit
    from verify.result import CheckResult
    nasty = "bad \x00\x1b[31mred\x1b[0m \x07bell \ud800 end"
    r = CheckResult("shm", "fail", nasty, details=[nasty], remedy=nasty, code="CHECK_CRASHED", owner="image", output=nasty)
    write_junit([r], str(tmp_path / "r.xml"))
    case = ET.parse(tmp_path / "r.xml").getroot().findall("testcase")[0]
    assert case.findall("failure")[0].get("message") == "bad [31mred[0m bell  end"
    assert [p.name for p in tmp_path.iterdir()] == ["r.xml"]          # no temporary file left beside it


@pytest.mark.host
def test_a_rank_that_never_joins_is_an_nccl_timeout_with_advice_from_what_was_seen(tmp_path):
    proc = run_cli("--checks", "nccl", "--nccl-timeout", "5", "--json", str(tmp_path / "r.json"), module="verify",
                   env={"VERIFY_TEST_HANG": "nccl-last-rank"}, timeout=300)
    check = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert proc.returncode == 1 and (check["code"], check["owner"]) == ("NCCL_TIMEOUT", "host"), check["summary"]
    assert "init:" in check["summary"] and "The group never formed" in check["remedy"]
    assert check["duration_s"] < 120


def test_at_a_timeout_without_proc_the_leader_alone_gets_the_stack_signal(monkeypatch):
    """No readable /proc (a sandbox): the timeout still ends in a CHECK_TIMEOUT, not a traceback from os.listdir."""
    from verify import runner

    def no_proc(path):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr("verify.runner.os.listdir", no_proc)
    assert runner._group_members(os.getpid()) == []


def test_the_stack_count_is_of_the_stacks_the_report_keeps():
    """Many workers' stacks overflow the kept tail: the detail must not promise stacks the output no longer has."""
    from verify import runner
    stack = ["Thread 0x00007f0e7dc286c0 (most recent call first):"] + ['  File "x.py", line 1 in f'] * 9 + [""]
    output = "\n".join(["check starts"] + stack * 20)          # 220 lines, 20 stacks
    result = runner._failed("hdf5", None, output, 30.0, 30.0)
    kept = (result.output or "").count("most recent call first")
    assert result.code == "CHECK_TIMEOUT" and 0 < kept < 20
    assert result.details == [f"the Python stacks of its {kept} stuck thread(s) at the timeout are in the output "
                              f"({20 - kept} more cut: the output keeps its last {runner.STACK_TAIL_LINES} lines)"]


def test_a_crash_on_a_small_but_empty_scratch_disk_is_not_disk_full():
    """A 6 MiB TMPDIR with 6 MiB free is small, not full: a SIGSEGV there is the image's crash."""
    from verify import runner
    small = runner._failed("hdf5", -11, "", 1.0, 60.0, scratch_free=6 << 20, scratch_total=6 << 20)
    assert (small.code, small.owner, small.summary) == ("CHECK_CRASHED", "image", "crashed with SIGSEGV")
    full = runner._failed("hdf5", -11, "", 1.0, 60.0, scratch_free=100 << 10, scratch_total=2 << 20)
    assert (full.code, full.owner) == ("DISK_FULL", "host") and "(100 KiB free)" in full.summary


def test_a_child_that_cannot_write_its_result_on_a_full_disk_is_disk_full_by_its_exit_status(monkeypatch, tmp_path):
    """ENOSPC is read from the errno in the child and crosses to the runner as an exit status, not as words."""
    import errno

    from verify import child, runner
    from verify.result import CheckResult

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", path)
    monkeypatch.setattr(child, "write_atomic", full)
    monkeypatch.setattr(child, "run_one", lambda name, options: (None, CheckResult(name, "pass", "ok")))
    monkeypatch.setattr(sys, "argv", ["verify.child", "arrow", str(tmp_path / "out.json")])
    assert child.main() == child.EXIT_NO_SPACE
    result = runner._failed("arrow", child.EXIT_NO_SPACE, "", 1.0, 60.0)
    assert (result.code, result.owner) == ("DISK_FULL", "host")
    assert runner._failed("arrow", 1, "No space left on device", 1.0, 60.0).code == "CHECK_CRASHED"


@pytest.mark.host
def test_a_check_that_wrote_its_result_and_hangs_on_its_way_out_keeps_its_verdict(tmp_path):
    """A check's process that wrote its result whole, then never exited (its exit joining a worker that qemu-user
    deadlocked): the verdict it wrote stands, with a line saying the exit was killed; not a CHECK_TIMEOUT."""
    proc = run_cli("--checks", "fabric", "--timeout", "6", "--json", str(tmp_path / "r.json"), module="verify",
                   env={"VERIFY_TEST_HANG_AT_EXIT": "fabric"}, timeout=120)
    fabric = json.loads((tmp_path / "r.json").read_text())["checks"][0]
    assert fabric["code"] != "CHECK_TIMEOUT" and fabric["status"] in ("pass", "skip", "warn"), fabric
    assert any("did not exit within 6 s and was killed" in d for d in fabric["details"]), fabric
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr
