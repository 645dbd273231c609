"""Issue 36, a seventy-sixth hunt through the public interfaces (`python -m verify.prolog`'s main under Prolog= and
as a job's first step, make fleet-report's reader), classes 1, 5, 6, 9 and 10.

Found:
- Class 6, facts that cannot be true (high: a node passed, and counted healthy by the fleet report, on a report no
  verify writes). verify's gpu check lists each NVML device as an object with its NVML `index` and facts of the types
  its facts contract declares (verify/checks/gpu/figures_table.py: `lost` a bool, `uuid` a string, `ecc` a list of
  bools). Both readers looked only at the entries that were objects, and at `lost is True`: a passing gpu check
  whose `devices` were eight strings matched its nvml_devices = 8 and passed the
  prolog on a node Slurm gave 8 GPUs (exit 0) and the fleet report, and so did a device listed `"lost": "true"` (a
  string: verify's lost GPU, hidden by its type). Repro: a preflight report whose gpu check passes with
  `data.devices` ["x"] * 8: prolog exit 0, "fleet: PASSING". Practice: NVIDIA's NVML (each device by its index
  0..count-1) and verify's facts contract; the project's first rule (no pass on facts that cannot be true). Fix:
  verify/prolog/deviceshape.py and scripts/fleet/deviceshape.py (one text: the host side never imports verify),
  read first by both `_devices_problem`s: REPORT_INVALID / invalid, never a pass, never a drain.
- Class 6 again, a report missing a check the run always writes (high: a node passed whose all-reduce was never
  judged). verify --preflight writes a result for each of its checks (gpu, shm, nccl), even one a signal cut or never
  started (verify/runner.py run_all: INTERRUPTED, not run). The prolog asked for all three and required only the gpu
  check (GPU_NOT_ASSESSED where Slurm gave GPUs): a passing report holding the gpu check alone passed a node Slurm
  gave 8 GPUs (exit 0, a `pass` in the history), whatever its NVLink or NCCL would have said. Repro: a report of
  the gpu check alone, passing, under Prolog= with SLURM_GPUS_ON_NODE=8: "prolog: PASS 1 check(s) passed". Practice:
  Slurm's prolog semantics (the gate is the preflight it ran, not part of it) and the project's first rule. Fix
  (verify/prolog/rechecks.unreported, read by cli.preflight on a whole run's pass): REPORT_INVALID, not assessed
  (exit 0 under Prolog=, 3 as a first step), never a drain; a fault the report shows is still judged whatever else is
  missing, and a confirmation's report (one check asked) keeps its own rule. The tests' report maker
  (tests/prolog_fakes._report) now writes a whole preflight as verify does (shm and nccl passes beside a judged gpu
  check, whole=False for a confirmation's), and the tests that built a revalidation's pass with no nccl or shm check
  now expect REPORT_INVALID (still exit 3, still drained).
- Class 6, GPUs Slurm gave versus an all-reduce that saw none (medium: a node passed whose all-reduce never touched
  its GPUs). Asked --expect-gpus N (the prolog asks it wherever Slurm gave GPUs), verify fails an all-reduce that saw
  no GPU (NCCL_NOT_EXERCISED, verify/checks/nccl/verdict.py: a fail when GPUs are expected, a skip only when none
  are). A pass whose nccl check skipped it so, beside a gpu check that judged 8 GPUs, passed. Repro: that report as a
  first step with SLURM_GPUS_ON_NODE=8: exit 0, a `pass`. Fix (rechecks.unreported, given whether GPUs were
  expected): REPORT_INVALID, not assessed; with no GPU expected the skip is verify's own and passes.
- Class 6, a container of another type (medium: figures hidden, a pass). verify writes each check's `metrics` and
  `data` as objects and the gpu check's `data.devices` as a list (verify/result.py). Both readers took a list in
  their place for "none": an nccl pass with `metrics` [{"wrong": 3}] had no wrong-element count to refuse, a gpu pass
  whose `devices` was an object had no device to read; both passed the prolog and the fleet report (and make
  isolate's pairs, which read the same rule). Fix (deviceshape.container_problem, both sides, one text):
  REPORT_INVALID / invalid. The real-world corpus (tests/test_cluster_hunt55.py) is still accepted whole.

Later (lows of the hunt's report, fixed): a device list naming one NVML index twice (one GPU counted twice hides
another: NVML numbers each device it counts once), and a passing check that names an owner (verify names an owner
only for what it did not pass, verify/result.py), are REPORT_INVALID / invalid on both sides. A list that does not
start at 0 is still read: a replayed excerpt (`--from-facts`) shows only the GPUs it was pasted with.

Looked at and held (no defect): every prolog option given as slurm.conf's Prolog= line would mistype it (`30s`,
`5m`, empty, -1, nan, inf, 1e999, Arabic-Indic and full-width digits, a trailing newline, `30 # comment`, 0x1e,
1_0, 1e-400) exits 0 under Prolog= and leaves a CONFIG_ERROR in the history or the default one; a report whose gpu
check is there twice, passes and fails, passes with a code, says PASS, lists one UUID in two cases or one bus id in
two spellings, or whose status contradicts its checks: REPORT_INVALID.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.fleet import deviceshape as host_shape
from scripts.fleet.fleet import fleet
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, _args, _verify_writes, install_fake
from tests.verify_handmade import gpu_facts, nccl_facts
from verify.checks import gpu, nccl
from verify.options import Options
from verify.prolog import cli, history
from verify.prolog import deviceshape as prolog_shape
from verify.prolog.verdict import decide

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


def _written() -> dict[str, Any]:
    """A preflight report as verify writes one on an 8-GPU node: its gpu and nccl checks judged by verify's own judges
    from recorded facts (tests/verify_handmade.py)."""
    g = gpu.judge(cast(Any, gpu_facts()), Options()).to_dict()
    n = nccl.judge(cast(Any, nccl_facts()), Options()).to_dict()
    assert (g["status"], n["status"], len(g["data"]["devices"])) == ("pass", "pass", 8)
    return {"schema_version": 2, "tool": {"name": "verify", "version": "2"}, "status": "pass",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "environment": {"hostname": "n1", "scheduler": {"kind": "slurm", "node": "n1"}}, "options": {},
            "checks": [g, n]}


def _devices(d: dict[str, Any]) -> list[Any]:
    return cast(list[Any], next(c for c in d["checks"] if c["name"] == "gpu")["data"]["devices"])


def _set(n: int, **kw: Any) -> Any:
    return lambda d: _devices(d)[n].update(kw)


def _replace(make: Any) -> Any:
    def change(d: dict[str, Any]) -> None:
        _devices(d)[:] = [make(i, dev) for i, dev in enumerate(_devices(d))]
    return change


NO_DEVICE = {
    "eight strings": _replace(lambda i, dev: f"GPU {i}"),
    "eight nulls": _replace(lambda i, dev: None),
    "an index written as a string": _set(3, index="3"),
    "an index written as true": _set(1, index=True),
    "a negative index": _set(2, index=-1),
    "lost written as the string true": _set(5, lost="true"),
    "lost written as 1": _set(5, lost=1),
    "a UUID written as a number": _set(0, uuid=7),
    "ECC written as a string": _set(4, ecc="on"),
    "ECC a list of strings": _set(4, ecc=["yes", "yes"]),
    "one index listed twice": _set(7, index=0),
}


@pytest.mark.parametrize("change", list(NO_DEVICE))
def test_nvml_devices_a_pass_listing_no_device_verify_writes_passes_neither_the_prolog_nor_the_fleet(
        tmp_path, fake, monkeypatch, capsys, change):
    """NVML numbers each device it lists and verify writes each as an object of its facts contract's types: a pass
    listing something else counted as many healthy GPUs (prolog exit 0, fleet PASSING). Now REPORT_INVALID under
    Prolog= (exit 0, not assessed: the tool's trouble never drains) and as a first step (exit 3), and invalid in the
    fleet report; nothing drained."""
    report = _written()
    NO_DEVICE[change](report)
    assert decide(report).code == "REPORT_INVALID" and report_problem(report)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    out = capsys.readouterr()
    assert "REPORT_INVALID" in out.out + out.err and fake.nodes["n1"] == ("idle", "none")
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    found = fleet(folder)
    assert not found.ok and [name for name, _ in found.invalid] == ["n1.json"]


@pytest.mark.parametrize("change", [None, "nulls for unknown facts", "a device lost and failed"])
def test_nvml_devices_what_verify_writes_still_passes_both(tmp_path, fake, monkeypatch, change):
    """The rule refuses no list verify writes: its own, unknown facts as null (a UUID NVML did not give), and a
    lost GPU's failed check still drains as the host's (GPU_LOST)."""
    report = _written()
    if change == "nulls for unknown facts":
        _devices(report)[2].update(uuid=None, pci_bus_id=None, ecc=[None, None], lost=None)
    elif change == "a device lost and failed":
        _devices(report)[6]["lost"] = True
        g = report["checks"][0]
        g.update(status="fail", code="GPU_LOST", owner="host", summary="GPU 6 is lost")
        report["status"] = "fail"
        assert decide(report).code == "GPU_LOST"
        _verify_writes(monkeypatch, json.dumps(report).encode())
        assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 1
        assert fake.nodes["n1"][0] == "drained"
        return
    assert decide(report).kind == "pass" and report_problem(report) is None
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    assert fleet(folder).ok
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert fake.nodes["n1"] == ("idle", "none")


def test_the_two_device_rules_are_one_text():
    """The prolog's rule and the host side's (which never imports verify) are one text below their docstrings, and
    give one answer."""
    root = Path(__file__).resolve().parents[1]
    body = [p.read_text().split('"""', 2)[2] for p in (root / "verify/prolog/deviceshape.py",
                                                         root / "scripts/fleet/deviceshape.py")]
    assert body[0] == body[1]
    assert prolog_shape.shape_problem(["x"]) == host_shape.shape_problem(["x"]) is not None


# ---- class 6: a pass that lacks a check verify --preflight always writes

SHM: dict[str, Any] = {"name": "shm", "status": "pass", "summary": "/dev/shm ok", "details": [], "metrics": {},
                       "remedy": None, "code": None, "owner": None, "duration_s": 0.0, "output": None, "data": {}}


def _checks(report: dict[str, Any], *names: str) -> dict[str, Any]:
    by = {c["name"]: c for c in [*report["checks"], SHM]}
    return {**report, "checks": [by[n] for n in names]}


@pytest.mark.parametrize("names", [("gpu",), ("gpu", "shm"), ("gpu", "nccl")])
def test_verify_preflight_a_pass_lacking_a_check_it_always_writes_is_no_pass(tmp_path, fake, monkeypatch, capsys,
                                                                             names):
    """verify --preflight writes a result for each of its checks (gpu, shm, nccl), even one a signal cut or never
    started (verify/runner.py run_all). A passing report of the gpu check alone passed a node Slurm gave 8 GPUs whose
    all-reduce was never judged (exit 0, counted a pass in the history). Now REPORT_INVALID: under Prolog= exit 0 and
    nothing drained (the tool's trouble, Slurm's prolog semantics), as a first step exit 3."""
    report = _checks(_written(), *names)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    out = capsys.readouterr().out
    assert "REPORT_INVALID" in out and "no result of its" in out and fake.nodes["n1"] == ("idle", "none"), out
    assert [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events] == ["not-assessed"] * 2


def test_verify_preflight_a_whole_report_passes_and_a_fault_is_judged_whatever_else_is_missing(tmp_path, fake,
                                                                                               monkeypatch):
    """The rule refuses no whole preflight (gpu, shm, nccl: a pass), and a fault the report shows is judged whatever
    else is missing (the project's first rule): a lost GPU alone drains (the host's evidence)."""
    _verify_writes(monkeypatch, json.dumps(_checks(_written(), "gpu", "shm", "nccl")).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert fake.nodes["n1"] == ("idle", "none")
    lost = _checks(_written(), "gpu")
    lost["checks"][0].update(status="fail", code="GPU_LOST", owner="host", summary="GPU 6 is lost")
    lost["status"] = "fail"
    _verify_writes(monkeypatch, json.dumps(lost).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 1
    assert fake.nodes["n1"][0] == "drained"


def test_verify_preflight_asked_for_gpus_never_skips_an_all_reduce_that_saw_none(tmp_path, fake, monkeypatch, capsys):
    """Asked --expect-gpus (Slurm gave the node GPUs), verify fails an all-reduce that saw no GPU (NCCL_NOT_EXERCISED,
    verify/checks/nccl/verdict.py) and skips it only when no GPU was expected. A pass whose nccl check skipped it
    beside a gpu check that judged 8 GPUs passed a node whose all-reduce never touched them; now REPORT_INVALID as a
    first step (exit 3; under Prolog= exit 0, not assessed); asked for no GPU, the skip is verify's and passes."""
    report = _checks(_written(), "gpu", "shm", "nccl")
    report["checks"][2].update(status="skip", code="NCCL_NOT_EXERCISED", owner="job",
                               summary="no GPU visible: NCCL not exercised; all-reduce verified over gloo, world size 2")
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**STEP_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 3
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert capsys.readouterr().out.count("NCCL_NOT_EXERCISED") == 2 and fake.nodes["n1"] == ("idle", "none")
    assert cli.main(_args(tmp_path), STEP_ENV) == 0
    assert [e["event"] for e in history.read(str(tmp_path / "state"), "n1").events] == ["not-assessed"] * 2 + ["pass"]


# ---- class 6: a list where verify writes an object

CONTAINERS = {
    "nccl metrics as a list": lambda d: d["checks"][2].update(metrics=[{"wrong": 3}]),
    "gpu data as a list": lambda d: d["checks"][0].update(data=[]),
    "gpu devices as an object": lambda d: d["checks"][0]["data"].update(devices={"0": {"index": 0}}),
    "shm metrics as a string": lambda d: d["checks"][1].update(metrics="2 GiB"),
    "a passing gpu check owned by the host": lambda d: d["checks"][0].update(owner="host"),
}


@pytest.mark.parametrize("change", list(CONTAINERS))
def test_a_container_of_another_type_hides_no_figure_from_either_reader(tmp_path, fake, monkeypatch, capsys, change):
    """verify writes each check's metrics and data as objects and the gpu check's devices as a list
    (verify/result.py). A list in their place was read as empty: an all-reduce's wrong-element count or the GPUs'
    facts unseen, and the report passed the prolog and the fleet. Now REPORT_INVALID / invalid on both sides."""
    report = _checks(_written(), "gpu", "shm", "nccl")
    CONTAINERS[change](report)
    assert decide(report).code == "REPORT_INVALID" and report_problem(report)
    _verify_writes(monkeypatch, json.dumps(report).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "8"}) == 0
    assert "REPORT_INVALID" in capsys.readouterr().out and fake.nodes["n1"] == ("idle", "none")
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "n1.json").write_text(json.dumps(report))
    assert not fleet(folder).ok
