"""Issue 36, round 53 of the hidden hunt on the cluster side: what rounds 48-51 missed, one test per defect, each
naming the practice it follows (Slurm's prolog semantics, NVSentinel's breaker and return-to-service rules)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.prolog_fakes import FakeSlurm, _args, _report, _verify_writes, install_fake
from verify.prolog import cli, history, slurm

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _drained(tmp_path: Path, fake: FakeSlurm, code: str = "CHECK_TIMEOUT", **extra: Any) -> None:
    fake.nodes["n1"] = ("drained", slurm.reason("n1", code, "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", code, "x", now=1000.0, extra={"check": "shm", **extra})


@pytest.mark.parametrize("meanwhile", [("drained", "PSU replaced, do not resume -- ops"), ("idle", "none")])
def test_nvsentinel_return_to_service_never_undoes_a_drain_made_while_the_preflight_ran(tmp_path, fake, monkeypatch,
                                                                                         capsys, meanwhile):
    """NVSentinel's return to service: a revalidation resumes only the drain it proved repaired. Its preflight takes
    a minute or more; an operator who drained the node by hand meanwhile (their own reason: a PSU, a cable) had it
    resumed on the proof of torchimages' older drain. Slurm's state is read again just before the resume."""
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake)
    passing = json.dumps(_report({"name": "shm", "status": "pass"})).encode()
    _verify_writes(monkeypatch, passing)
    real = cli._run_verify

    def verify_while_an_operator_drains(cmd: list[str], limit: float) -> tuple[int | None, str]:
        fake.nodes["n1"] = meanwhile
        return real(cmd, limit)
    monkeypatch.setattr(cli, "_run_verify", verify_while_an_operator_drains)
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 5
    assert fake.nodes["n1"] == meanwhile and not any(c[:3][-1:] == ["state=resume"] for c in fake.calls)
    assert "changed while the preflight ran" in capsys.readouterr().err
    events = [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events]
    assert events[-1] == "resume-refused" and "resume" not in events


def test_return_to_service_whose_second_look_at_slurm_fails_resumes_nothing(tmp_path, fake, monkeypatch, capsys):
    """The tool's trouble is not assessed (exit 3), never a resume: sinfo failing after the preflight leaves the
    node drained."""
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake)
    _verify_writes(monkeypatch, json.dumps(_report({"name": "shm", "status": "pass"})).encode())
    real_run, real_verify = fake.run, cli._run_verify
    ran: list[bool] = []

    def verify(cmd: list[str], limit: float) -> tuple[int | None, str]:
        ran.append(True)
        return real_verify(cmd, limit)

    def slurm_run(argv: list[str], dry_run: bool = False, quiet: bool = False) -> tuple[int, str]:
        if ran and argv[0].endswith("sinfo"):
            return 1, "slurm_load_node: Socket timed out"
        return real_run(argv, dry_run, quiet)
    monkeypatch.setattr(cli, "_run_verify", verify)
    monkeypatch.setattr(slurm, "run", slurm_run)
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 3
    assert fake.nodes["n1"][0] == "drained" and "cannot be read again" in capsys.readouterr().err


def test_nvsentinel_return_to_service_resumes_the_drain_it_proved_repaired(tmp_path, fake, monkeypatch):
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake)
    _verify_writes(monkeypatch, json.dumps(_report({"name": "shm", "status": "pass"})).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 0
    assert fake.nodes["n1"][0] == "idle"


def test_nvsentinel_return_to_service_a_reset_record_is_roots_only():
    """NVSentinel's return to service takes a GPU reset as an Xid's repair only from its reset job's record. A syslog
    identifier is anyone's to give: `logger -t nvsentinel-gpu-reset "GPU reset executed: GPU-..., success: true"` by
    a job's user on the node was read as the repair, and `make undrain` returned an Xid-drained node (its pending
    retirement or remap not applied: NVIDIA's Xid catalog asks a reset) without it. Only root's records are read:
    the journal's _UID, which it records of the sender and no sender sets."""
    from verify.prolog import repair
    argv = repair.journal_argv()
    assert "_UID=0" in argv and argv[argv.index("-t") + 1] == repair.RESET_TAG and "-b" in argv


@pytest.mark.parametrize("kind", ["dangling link", "link to another folder", "file"])
def test_a_state_dir_whose_history_is_no_folder_of_the_prolog_s_is_one_line_not_an_empty_history(tmp_path, kind):
    """Files the cluster tooling reads are hostile: STATE_DIR/history as a link to nothing read every node's history
    as empty (no drain, no inspection flag) and the fleet passed. The prolog makes that folder itself and refuses a
    link in its place (statefile.folder): a link or a file there is no history of its, said in one line, exit 2."""
    import os

    from scripts.errors import UserError
    from scripts.fleet.history import read_state
    state, other = tmp_path / "state", tmp_path / "other"
    state.mkdir()
    other.mkdir()
    history_dir = state / "history"
    if kind == "dangling link":
        os.symlink(tmp_path / "nothing", history_dir)
    elif kind == "link to another folder":
        os.symlink(other, history_dir)
    else:
        history_dir.write_text("x")
    with pytest.raises(UserError, match="not the prolog's drain history"):
        read_state(state, ["n1"])


def test_nvsentinel_return_to_service_never_reads_a_history_through_a_linked_folder(tmp_path, fake, monkeypatch,
                                                                                      capsys):
    """Files the cluster tooling reads are hostile: the state folder may be shared, and O_NOFOLLOW guards a path's
    last name only. Its `history` replaced by a link to someone's own folder (a clean record of the drain, no flap)
    was read and believed by `make undrain`; the prolog refuses that link on write (statefile.folder) and now on
    read too: no history, no return to service (exit 5)."""
    import os

    from verify.prolog import kernlog
    fake.info = {"NodeHostName": "n1"}
    _drained(tmp_path, fake)
    state = tmp_path / "state"
    forged = tmp_path / "forged"
    os.rename(state / "history", forged)
    os.symlink(forged, state / "history")
    _verify_writes(monkeypatch, json.dumps(_report({"name": "shm", "status": "pass"})).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == 5
    assert "is a symbolic link: refused" in capsys.readouterr().err and fake.nodes["n1"][0] == "drained"
    (state / "kernlog").mkdir()
    os.rename(state / "kernlog", tmp_path / "kl")
    os.symlink(tmp_path / "kl", state / "kernlog")
    kernlog.save(str(tmp_path / "kl-real"), "n1", kernlog.State("boot"))
    os.rename(tmp_path / "kl-real" / "kernlog" / "n1.json", tmp_path / "kl" / "n1.json")
    loaded, why = kernlog.load(str(state), "n1")
    assert loaded == kernlog.State() and why and "symbolic link" in why


def test_a_report_name_holding_a_newline_stays_on_its_row_of_the_fleet_table(tmp_path):
    """Files the cluster tooling reads are hostile, their names too: a report named `n9\\nn1  H100  pass ...` wrote
    a line of its own into the fleet table (a passing row no report gave). Every name is said as one line."""
    import time

    from scripts.fleet.fleet import fleet, format_fleet
    from tests.verify_handmade import make_report
    doc = make_report()
    doc["environment"]["hostname"] = "n9"
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (tmp_path / "n9\nfake  H100  pass.json").write_text(json.dumps(doc))
    (tmp_path / "bad\nrow.json").write_text("{")
    text = format_fleet(fleet(tmp_path))
    assert not any(line.startswith(("fake", "row")) for line in text.splitlines()), text


@pytest.mark.parametrize("value", ["100000000000w", "366d", "53w", "2d"])
def test_a_clock_tolerance_past_a_year_is_no_tolerance(value):
    """Time: evidence from the future is refused, with a tolerance that is a knob. CLOCK_SKEW=100000000000w believed
    a report stamped in the year 3000 (the prolog's TORCHIMAGES_CLOCK_SKEW already stopped at a year): one line.
    Since tests/test_cluster_lows82.py both stop at a day."""
    from scripts.durations import SKEW_MAX_S, parse_skew
    from scripts.errors import UserError
    from verify.shared import clockskew
    assert SKEW_MAX_S == clockskew.MAX_S
    assert parse_skew("5m", "CLOCK_SKEW") == 300.0 and parse_skew("1d", "CLOCK_SKEW") == SKEW_MAX_S
    with pytest.raises(UserError, match="a clock tolerance is 0 to 1d"):
        parse_skew(value, "CLOCK_SKEW")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_verify_writes_no_figure_that_is_not_a_finite_number(value):
    """The shared report rule refuses a figure that is not finite as none verify writes, and the whole report with
    it (a host fault in another check included): so verify never writes one. A rate over a zero time, a ratio over a
    zero baseline is said in the details, not recorded as a figure."""
    from verify.result import CheckResult
    r = CheckResult("gpu", "pass", "ok")
    r.metric("bf16_TFLOPs_dev0", value, "TFLOP/s")
    r.metric("nvml_devices", 8, "count")
    assert list(r.metrics) == ["nvml_devices"] and "bf16_TFLOPs_dev0 was" in r.details[0]
