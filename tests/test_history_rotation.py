"""The drain history's rotation against writers that could not take its lock (issue 36, class 2: concurrency).

A prolog whose wait for the history's lock runs out appends anyway (the line matters more than the rotation). The
holder may be rotating: reading the tail, writing a temp file, renaming it over the history. A line appended to the
old file in between was lost with it, and a drain's line lost is a repair return to service never asks for. Proven
with real processes (POSIX record locks are per process) racing real rotations, and with the two orders a writer's
append can take around a rename, replayed one by one.

CI45 lost a line (`w1-34`) even so: a writer's second append, made when its first went to a replaced file, was not
checked again, and the next rotation replaced that file too; and the check compared inode numbers of a file it had
closed, a number the next rotation's new file could be given. Now the writer holds the file it wrote to while it
checks, and checks each append (history.UNLOCKED_TRIES): 0 lines lost in 60 runs of the concurrency test, against
about 1 in 18 before."""
from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from verify.prolog import history, statefile

WRITERS, LINES, ROTATIONS = 4, 60, 150


def _writer(state: str, n: int) -> None:
    history.LOCK_WAIT_S = 0.0         # every busy lock is given up at once: the lockless path, as often as can be
    for i in range(LINES):
        assert history.record(state, "n1", "pass", None, f"w{n}-{i}", max_bytes=1 << 40) is None


def _rotator(state: str) -> None:
    target = history.path(state, "n1")
    for _ in range(ROTATIONS):
        with statefile.locked(history._lock_path(state, "n1"), 30.0):
            if os.path.exists(target):
                history._rotate(target, 1 << 30, 1 << 40)      # keeps every line: any line missing was lost


@pytest.mark.host
def test_no_line_is_lost_when_writers_without_the_lock_append_while_it_rotates(tmp_path):
    state = str(tmp_path)
    history.record(state, "n1", "pass", None, "first")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_rotator, args=(state,))] + \
        [ctx.Process(target=_writer, args=(state, n)) for n in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = Path(history.path(state, "n1")).read_text().splitlines()
    details = [json.loads(line)["detail"] for line in lines]
    wanted = {"first"} | {f"w{n}-{i}" for n in range(WRITERS) for i in range(LINES)}
    assert wanted - set(details) == set(), "lines lost"
    read = history.read(state, "n1")
    assert not read.bad_lines and sorted(e["detail"] for e in read.events) == sorted(wanted)    # each once


@pytest.mark.unit
@pytest.mark.parametrize("when", ["before the rename", "after the rename"])
def test_a_line_appended_to_the_file_being_rotated_is_kept(tmp_path, monkeypatch, when):
    """One writer holds the lock and rotates; another, its wait run out, appends to the file being replaced: before
    the rename (the rotation carries it over) or after the rotation's last look (the writer appends it again)."""
    state = str(tmp_path)
    target = history.path(state, "n1")
    history.record(state, "n1", "drain", "GPU_LOST", "old")
    real_replace = statefile.replace
    late: list[int] = []

    def replace(path: str, data: bytes, mode: int = 0o644) -> None:
        if when == "before the rename":
            monkeypatch.setattr(history, "LOCK_WAIT_S", 0.0)
            assert history.record(state, "n1", "drain", "XID_HISTORY", "raced") is None   # lock held: lockless
        else:
            late.append(os.open(target, os.O_WRONLY | os.O_APPEND))    # opened before the rename, written after
        real_replace(path, data, mode)

    monkeypatch.setattr(statefile, "replace", replace)
    with statefile.locked(history._lock_path(state, "n1"), 5.0):
        history._rotate(target, 100, 1 << 20)
    monkeypatch.setattr(statefile, "replace", real_replace)
    if late:
        entry = history._entry("n1", "drain", "XID_HISTORY", "raced", 2000.0, None)
        os.write(late[0], entry)
        os.close(late[0])
        wrote = os.stat(target)           # the writer's own check, as _append_unlocked makes it
        assert entry not in Path(target).read_bytes()
        assert history._settled(state, "n1", target, entry, _fstat_of_old(wrote))   # the writer's check, after its write
    assert [e["detail"] for e in history.read(state, "n1").events] == ["old", "raced"]


@pytest.mark.unit
def test_a_lockless_writer_holds_the_file_it_wrote_to_while_it_checks(tmp_path, monkeypatch):
    """The writer's check compares the file it wrote to with the path's: closed first, its inode number could be
    given to the next rotation's new file, which then looked like the file written to, and a line written to the
    replaced one was lost (CI45 lost `w1-34`). The written file is held open until the check is done."""
    state = str(tmp_path)
    history.record(state, "n1", "pass", None, "first")
    seen: list[bool] = []
    real = history._settled

    def check(state_dir: str, node: str, target: str, data: bytes, wrote: os.stat_result) -> bool:
        # the written file is still open in this process while its check runs
        fds = [int(f) for f in os.listdir("/proc/self/fd")]
        seen.append(any(_same(fd, wrote) for fd in fds))
        return real(state_dir, node, target, data, wrote)

    monkeypatch.setattr(history, "_settled", check)
    entry = history._entry("n1", "pass", None, "second", 2000.0, None)
    history._append_unlocked(state, "n1", history.path(state, "n1"), entry)       # the path a busy lock takes
    assert seen == [True]
    assert [e["detail"] for e in history.read(state, "n1").events] == ["first", "second"]


def _same(fd: int, wrote: os.stat_result) -> bool:
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (wrote.st_dev, wrote.st_ino)


def _fstat_of_old(now: os.stat_result) -> os.stat_result:
    """The fstat of the replaced file the late writer wrote to: another inode than the path's now."""
    fields = list(now)
    fields[1] = now.st_ino + 1
    return os.stat_result(fields)


@pytest.mark.unit
def test_nvsentinel_flap_rule_reads_the_history_in_its_order_not_its_stamps(tmp_path):
    """NVSentinel's return to service: a node drained again soon after a resume needs hardware inspection. The resume
    was stamped two days ahead (its clock wrong, then stepped back) and the drain an hour after the real resume:
    compared by stamps the drain came "before" the resume and the flap was never seen, by the prolog (make undrain
    resumed it again) or by the fleet report. The history is append-only: its order is what happened."""
    from scripts.fleet.history import read_state
    state, day = str(tmp_path), 86400.0
    now = 1795635600.0
    history.record(state, "n1", "drain", "GPU_LOST", "first", now=now - 3 * day)
    history.record(state, "n1", "resume", None, "passes", now=now + 2 * day)          # a clock two days ahead
    history.record(state, "n1", "drain", "GPU_LOST", "again", now=now + 3600)         # stepped back, an hour later
    events = history.read(state, "n1").events
    flap = history.failed_again_after_resume(events, 7 * day)
    assert flap and "a clock stepped back" in flap and "needs hardware inspection" in flap
    found = read_state(tmp_path, ["n1"], now=now + 2 * 3600)["n1"]
    assert found.inspect and "a clock stepped back" in found.inspect
    history.record(state, "n1", "resume", None, "passes", now=now + 30 * day)
    history.record(state, "n1", "drain", "GPU_LOST", "a month on", now=now + 40 * day)
    assert history.failed_again_after_resume(history.read(state, "n1").events, 7 * day) is None


@pytest.mark.unit
@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_a_lock_planted_as_a_link_or_fifo_never_loses_the_event(tmp_path, planted):
    """A hostile state folder: a symbolic link (to /etc/passwd) or a FIFO where the history's lock belongs was
    refused, never followed, and the event with it: a drain never recorded, a hang never counted. The event is kept
    (appended without the lock), the link untouched, and the trouble said."""
    state = str(tmp_path)
    lock = history._lock_path(state, "n1")
    os.makedirs(os.path.dirname(lock))
    victim = tmp_path / "victim"
    victim.write_text("root:x:0:0\n")
    if planted == "symlink":
        os.symlink(victim, lock)
    else:
        os.mkfifo(lock)
    said = history.record(state, "n1", "drain", "GPU_LOST", "kept")
    assert said and "appended without it" in said
    assert [e["detail"] for e in history.read(state, "n1").events] == ["kept"] and victim.read_text() == "root:x:0:0\n"


@pytest.mark.unit
def test_no_line_is_lost_when_threads_append_while_one_rotates(tmp_path):
    """Threads of one process: fcntl's record locks are the process's, so every thread "held" the history's lock at
    once (and one closing its fd released it for all): a line appended while another thread rotated was lost.
    The writers and the rotation of one process take turns (history.THREADS)."""
    import threading
    state = str(tmp_path)
    target = history.path(state, "n1")
    history.record(state, "n1", "pass", None, "first")
    errors: list[str] = []

    def write(n: int) -> None:
        for i in range(LINES):
            if said := history.record(state, "n1", "pass", None, f"t{n}-{i}", max_bytes=1 << 40):
                errors.append(said)

    def rotate() -> None:
        for _ in range(ROTATIONS):
            with history.THREADS, statefile.locked(history._lock_path(state, "n1"), 30.0):
                history._rotate(target, 1 << 30, 1 << 40)

    threads = [threading.Thread(target=rotate)] + [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    wanted = {"first"} | {f"t{n}-{i}" for n in range(WRITERS) for i in range(LINES)}
    assert not errors and sorted(e["detail"] for e in history.read(state, "n1").events) == sorted(wanted)


@pytest.mark.unit
def test_a_line_seen_half_written_when_rotation_reads_the_size_is_not_garbled(tmp_path, monkeypatch):
    """A write past a page boundary grows the file page by page: the rotation may read its size mid-line. That half
    line was kept as the new file's last, a lockless writer then appended its own line to the new file, and the
    carried-over rest joined them: two lines garbled, both lost (CI41 lost one). The new file ends at a whole line;
    the rest is carried over whole."""
    state = str(tmp_path)
    target = history.path(state, "n1")
    history.record(state, "n1", "drain", "GPU_LOST", "old")
    half = history._entry("n1", "pass", None, "half-written", 2000.0, None)
    other = history._entry("n1", "pass", None, "lockless", 2001.0, None)
    writing = os.open(target, os.O_WRONLY | os.O_APPEND)
    os.write(writing, half[:40])              # the rotation reads the size here
    real_replace = statefile.replace

    def replace(path: str, data: bytes, mode: int = 0o644) -> None:
        real_replace(path, data, mode)
        statefile.append(target, other)       # a writer without the lock, into the new file
        os.write(writing, half[40:])          # the first write ends, in the old file
        os.close(writing)

    monkeypatch.setattr(statefile, "replace", replace)
    with statefile.locked(history._lock_path(state, "n1"), 5.0):
        history._rotate(target, 100, 1 << 20)
    read = history.read(state, "n1")
    assert not read.bad_lines
    assert sorted(e["detail"] for e in read.events) == ["half-written", "lockless", "old"]
