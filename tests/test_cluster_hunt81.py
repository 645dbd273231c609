"""Issue 36, an eighty-first hunt through the public interfaces (`python -m verify.prolog`'s main under Prolog=, make
fleet-report's reader and the prolog's report rule), classes 1, 2, 4, 6, 7 and 8.

Found:
- Class 4, kernel-log evidence counted within its lookback (high: a healthy node drained). NVIDIA's catalog drains
  on a watched Xid (94 contained ECC, 92, 63, 32 ...) only when it repeats on one device within --lookback, and the
  kernel's stamp ages each held event. A line without the kernel's stamp (`journalctl -o short-iso` from a wrapper
  that ignored the format, a log stamped in wall time, `dmesg` of a kernel with printk.time off) was held with no
  stamp and never aged: three Xid 94 of one GPU two days apart each (lookback 24 h) drained the node as
  XID_REPEATED. Repro: three Prolog= runs, two days apart, each reading one more `<iso> n1 kernel: NVRM: Xid
  (PCI:0000:3b:00): 94, ...` line: DRAINED n1. Practice: NVIDIA's Xid catalog ("3 on one device within the lookback",
  xid.REPEATS). Fix (verify/prolog/kernlog._aged): such an event ages by its line's wall stamp, else by when it was
  first read (`read`, kept with it); a drain-worthy one is kept until acted on, as before.

Each test names the practice it follows.
"""
from __future__ import annotations

import time
from typing import Any

import pytest

from verify.prolog import cli, kernlog

from .prolog_fakes import PROLOG_ENV, _gpu, _report, _verify_writes, history_events, install_fake

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


@pytest.mark.parametrize("stamped", ["wall", "none"])
def test_nvidia_xid_catalog_a_watched_xid_repeats_only_within_the_lookback(tmp_path, fake, monkeypatch, capsys,
                                                                         stamped):
    """Three Xid 94 (contained ECC, a watched code) on one GPU, two days apart each, in a log without the kernel's
    stamps: none within a lookback of 24 h of another, so no drain; three within hours still drain."""
    import json
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    t0 = time.time()

    def xid94(t: float, n: int) -> str:
        text = f"NVRM: Xid (PCI:0000:3b:00): 94, pid={100 + n}, Contained ECC error."
        return f"{_iso(t)} n1 kernel: {text}" if stamped == "wall" else text

    def runs(step_s: float) -> list[tuple[str, str | None]]:
        lines: list[str] = []
        for n in range(3):
            now = t0 + n * step_s
            lines.append(xid94(now - 60, n))
            up = 1e6 + n * step_s
            monkeypatch.setattr(kernlog, "host_clock", lambda proc=kernlog.PROC, now=now, up=up: kernlog.Clock(
                "boot-a", up, now - up, now))
            monkeypatch.setattr(kernlog, "read", lambda timeout, seen=list(lines): kernlog.KernelLog(seen, "journalctl"))
            cli.main(["--state-dir", str(state), "--lookback", "24"], dict(PROLOG_ENV))
        return history_events(state.parent)

    state = tmp_path / "state"
    events = runs(2 * 86400.0)
    out = capsys.readouterr()
    assert fake.nodes["n1"][0] == "idle", out
    assert [e for e, _ in events] == ["pass", "pass", "pass"], events
    fake.nodes["n1"] = ("idle", "none")
    state = tmp_path / "again" / "state"
    events = runs(3600.0)
    assert fake.nodes["n1"][0] == "drained" and "XID_REPEATED" in fake.nodes["n1"][1], capsys.readouterr()
