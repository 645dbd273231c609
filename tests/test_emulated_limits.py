"""Under CPU emulation (qemu-user) a step takes several times as long: the shm check's allocation attempts and a
check's own limit stretch by EMULATED_SLOWDOWN, so a slow emulator is never read as a small /dev/shm (the arm64 image's
verify failed SHM_TOO_SMALL-style after 60 s while a second test worker loaded the host); natively nothing changes.
A check that timed out runs once more under emulation (qemu-user can deadlock a forked child), natively never."""
from __future__ import annotations

import pytest

from verify import environment, runner
from verify.checks.shm import check as shm
from verify.environment import EMULATED_SLOWDOWN
from verify.options import Options
from verify.result import CheckResult

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("emulated", [False, True])
def test_the_allocation_attempts_stretch_only_under_emulation(monkeypatch, tmp_path, emulated):
    limits: list[float] = []
    monkeypatch.setattr(environment, "emulation", lambda: {"emulated": emulated})
    monkeypatch.setattr(shm, "shm_path", lambda: str(tmp_path))

    def attempt(code: str, size: int, folder: str, timeout: float) -> tuple[bool, str]:
        limits.append(timeout)
        return True, "ok"
    monkeypatch.setattr(shm, "_attempt", attempt)
    facts = shm.probe(Options())
    assert facts["raw_ok"] and facts["torch_ok"]
    assert limits == [shm.ATTEMPT_S * (EMULATED_SLOWDOWN if emulated else 1.0)] * 2


@pytest.mark.parametrize("emulated", [False, True])
def test_a_timed_out_check_runs_once_more_only_under_emulation_and_a_second_timeout_still_fails(monkeypatch, emulated):
    """run_all's decision, each attempt timed out at once (no clock waited on): the real kill at a timeout, and a
    second attempt that then passes, are tests/test_verify_host.py's."""
    attempts: list[tuple[str, float | None]] = []

    def timed_out(name: str, options: Options, timeout: float | None = None) -> tuple[CheckResult, None]:
        attempts.append((name, timeout))
        return runner._failed(name, None, f"test hook: {name} hangs", 8.0, timeout or 0.0), None
    monkeypatch.setattr(runner, "emulation", lambda: {"emulated": emulated})
    monkeypatch.setattr(runner, "run_check", timed_out)
    (result,) = runner.run_all(["shm"], Options(), 8.0)
    assert (result.status, result.code, result.owner) == ("fail", "CHECK_TIMEOUT", "host")
    assert attempts == [("shm", 8.0)] * (2 if emulated else 1)          # the second attempt has the same limit
    if emulated:
        assert result.data["first_attempt"] == {"summary": "timed out after 8 s and was killed",
                                                "output": "test hook: shm hangs"}
        assert result.details[-1].startswith("first attempt timed out after 8 s and was killed under CPU emulation")
    else:
        assert "first_attempt" not in result.data
