"""Issue 36, a fourth hunt: round 48's fixes tried again in other spellings (they hold; kept so that they stay so).

- a report's `created` of another JSON type, in the future, or in another script's digits is no evidence of this run
  (REPORT_INVALID), as one without it;
- NVSentinel's checker rule: a hang streak ends at a reboot (another boot id), and a boot id spelt in another case
  or with spaces is the same boot;
- one host however it is spelt (a trailing dot, the short name beside the full one), never two full names that
  differ."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.prolog_fakes import STEP_ENV, FakeSlurm, _args, _verify_writes, install_fake
from verify.prolog import cli, history, kernlog
from verify.prolog.revalidate import _same_host
from verify.prolog.thisrun import not_this_run

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


@pytest.mark.parametrize("created", [1795966873, ["2026-11-29T15:00:00Z"], {"t": 1}, True, "2099-01-01T00:00:00Z",
                                     "２０２６-11-29T15:00:00Z", "2026-11-29T15:00:00+00:00", ""])
def test_a_created_time_verify_never_writes_is_no_evidence_of_this_run(created):
    now = time.time()
    assert not_this_run({"created": created, "checks": []}, now, now + 1, 300.0)


def _hangs(tmp_path: Path, boot: str) -> None:
    for age in (600.0, 300.0):
        history.record(str(tmp_path / "state"), "n1", "not-assessed", "PREFLIGHT_TIMEOUT", "ran past",
                       now=time.time() - age, extra={"boot_id": boot})


def test_nvsentinel_checker_rule_a_reboot_ends_the_streak(tmp_path, fake, monkeypatch):
    _hangs(tmp_path, "0f0f0f0f-0000-4000-8000-000000000000")          # another boot's hangs
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 3 and not fake.calls


@pytest.mark.parametrize("spelt", [str.upper, lambda b: f" {b}\n"])
def test_nvsentinel_checker_rule_one_boot_however_its_id_is_spelt(tmp_path, fake, monkeypatch, spelt):
    _hangs(tmp_path, spelt(kernlog.host_clock(kernlog.PROC).boot_id))
    _verify_writes(monkeypatch, None, rc=None)
    assert cli.main(_args(tmp_path, "--budget", "30"), STEP_ENV) == 1
    assert "update nodename=n1 state=drain" in fake.verbs()


@pytest.mark.parametrize("slurm_host, host, same", [
    ("n1.", "N1", True), ("n1", "n1.cluster.example.", True), ("N1.Cluster.Example", "n1.cluster.example", True),
    ("n1.a.example", "n1.b.example", False), ("n1", "n10", False), ("", "n1", False),
])
def test_one_host_however_it_is_spelt(slurm_host, host, same):
    assert _same_host(slurm_host, host) is same
