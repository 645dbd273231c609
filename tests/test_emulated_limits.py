"""Under CPU emulation (qemu-user) a step takes several times as long: the shm check's allocation attempts and a
check's own limit stretch by EMULATED_SLOWDOWN, so a slow emulator is never read as a small /dev/shm (the arm64 image's
verify failed SHM_TOO_SMALL-style after 60 s while a second test worker loaded the host); natively nothing changes."""
from __future__ import annotations

import pytest

from verify.checks.shm import check as shm
from verify.environment import EMULATED_SLOWDOWN
from verify.options import Options

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("emulated", [False, True])
def test_the_allocation_attempts_stretch_only_under_emulation(monkeypatch, tmp_path, emulated):
    limits: list[float] = []
    monkeypatch.setattr(shm, "emulation", lambda: {"emulated": emulated})
    monkeypatch.setattr(shm, "shm_path", lambda: str(tmp_path))

    def attempt(code: str, size: int, folder: str, timeout: float) -> tuple[bool, str]:
        limits.append(timeout)
        return True, "ok"
    monkeypatch.setattr(shm, "_attempt", attempt)
    facts = shm.probe(Options())
    assert facts["raw_ok"] and facts["torch_ok"]
    assert limits == [shm.ATTEMPT_S * (EMULATED_SLOWDOWN if emulated else 1.0)] * 2
