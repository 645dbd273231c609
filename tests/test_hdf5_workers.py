"""The hdf5 check's DataLoader read under CPU emulation: a stalled worker (qemu-user deadlocks a forked child now and
then) costs one bounded attempt, not the check's whole limit; natively nothing is retried; a read that stalls in
every attempt is not assessed, never a pass and never the image's fault. Real DataLoader workers over a real file."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from verify.checks.hdf5 import check as hdf5
from verify.options import Options

pytestmark = pytest.mark.host

h5py = pytest.importorskip("h5py")


class _Stalling(hdf5._RowSums):
    """Worker reads that hang while the marker file says so: 'once' hangs the first attempt only, 'always' every one."""

    def __getitem__(self, index: int) -> float:
        mode = Path(self.path + ".mode").read_text()
        if mode == "always" or (mode == "once" and _first(self.path + ".hung")):
            time.sleep(3600)
        return super().__getitem__(index)


def _first(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return os.path.getmtime(marker) > time.time() - 1.0    # the other worker of the same (first) attempt
    return True


@pytest.fixture
def stalling_file(tmp_path, monkeypatch):
    data = np.random.default_rng(0).standard_normal((hdf5.ROWS, 8)).astype(np.float32)
    path = str(tmp_path / "rows.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("gzip", data=data, chunks=(256, 8), compression="gzip")
    monkeypatch.setattr(hdf5, "_RowSums", _Stalling)
    monkeypatch.setattr(hdf5, "STALL_S", 3.0)
    # DataLoader's shutdown waits this long per worker for a clean exit (5 s): a hung test worker never exits cleanly
    monkeypatch.setattr("torch.utils.data._utils.MP_STATUS_CHECK_INTERVAL", 0.2)

    def mode(text: str) -> tuple[str, np.ndarray]:
        with open(path + ".mode", "w") as f:
            f.write(text)
        return path, data
    return mode


def test_a_stalled_attempt_under_emulation_is_retried_and_said(stalling_file):
    path, data = stalling_file("once")
    start = time.monotonic()
    ok, msg = hdf5._read_with_workers(path, data, emulated=True)
    assert ok is True and "4096 rows, sums match" in msg and "after 1 stalled attempt(s) under CPU emulation" in msg
    assert time.monotonic() - start < 60        # bounded: the hung workers were killed, not waited for


def test_every_attempt_stalling_is_not_assessed_and_warns_for_the_job(stalling_file, monkeypatch):
    path, data = stalling_file("always")
    monkeypatch.setattr(hdf5, "TRIES", 2)
    ok, msg = hdf5._read_with_workers(path, data, emulated=True)
    assert ok is None and f"in each of {hdf5.TRIES} attempts under CPU emulation" in msg
    facts = {"h5py": "3.16.0", "hdf5_built": "2.0.0", "hdf5_loaded": "2.0.0",
             "filters": {"gzip": True, "lzf": True, "szip": False}, "datasets": ["gzip"], "corrupted": [],
             "write_MBps": 100.0, "read_MBps": 200.0, "workers_ok": ok, "workers_msg": msg}
    result = hdf5.judge(facts, Options())  # type: ignore[arg-type]
    assert (result.status, result.code, result.owner) == ("warn", "EMULATION_STALLED", "job"), result.to_dict()
    assert "not assessed" in result.summary


def test_natively_a_read_is_tried_once_and_a_dying_worker_is_the_finding(stalling_file, monkeypatch):
    path, data = stalling_file("none")
    ok, msg = hdf5._read_with_workers(path, data, emulated=False)
    assert ok is True and "stalled" not in msg
    os.remove(path)               # each worker's open fails: the DataLoader raises, the check says so
    ok, msg = hdf5._read_with_workers(path, data, emulated=False)
    assert ok is False and "DataLoader with 2 workers" in msg
