"""Issue 36, a hundred-and-third hunt through the public interfaces: classes 6 (facts that cannot be true), 8 (files
the tooling reads are hostile) and 1 (a setting of ours is never the node's fault).

Found:
1. (high, a broken node passed or resumed; class 6, absent checks) The prolog refused a pass lacking one of the
   preflight's checks only where its gpu check passed (hunt76): a report of the shm check alone, a gpu check
   skipped beside shm without the all-reduce, or another check's name in the gpu check's place PASSED the node
   (`prolog: PASS 1 check(s) passed`), ended a hang streak and, under `make undrain` of a node drained for a shm
   fault, returned it to service, where Slurm allocated no GPU (a CPU job on a GPU node, a CPU partition). verify
   --preflight writes a result for each of gpu, shm and nccl on every node (a node without a GPU: gpu skipped
   GPU_NOT_VISIBLE, nccl NCCL_NOT_EXERCISED), so such a report is none of its runs. Repro: verify --preflight's
   report edited to hold `[{"name": "shm", "status": "pass"}]`, then `python -m verify.prolog` under Prolog=.
   Practice: facts that cannot be true are refused, never a pass (issue 36 class 6). Fix
   (verify/prolog/rechecks.py unreported): every passing whole-preflight report must hold all three checks, whatever
   its gpu check says: REPORT_INVALID, not assessed.
2. (medium, a setting silently applied as another; class 1 and 8) The state folder's `settings` file was split with
   str.splitlines and decoded with each undecodable byte replaced: a bare carriage return (an editor's Mac line
   end, `TORCHIMAGES_HANG_RUNS=3<CR>TORCHIMAGES_BREAKER=1`) made one shell line two settings (the breaker at 100 %
   applied, where the shell reads one value), a metrics folder of other bytes than UTF-8 (`/srv/m\\xff`) named
   another folder than the operator's (metrics written where node_exporter never reads, unsaid), and a NUL reached
   the system call (`metrics not written to ...: ValueError: embedded null byte`). Practice: files the tooling reads
   are hostile (issue 36 class 8: non-UTF-8, NUL bytes); a setting of ours gone wrong is said, its default holds.
   Fix (verify/prolog/settings.py _lines): split at a newline alone (CRLF's CR dropped); a line holding a control
   character or bytes that are not UTF-8 is no setting, said, its default holds.
3. (high, a traceback-class crash; class 8) `make fleet-report` stopped on one report whose schema_version was a
   list or an object (`internal error: TypeError: unhashable type: 'list'`): no table, no fleet.json, every other
   node's evidence unreported. Practice: one hostile file is listed invalid and never stops the report. Fix
   (scripts/fleet/reports.py _why_invalid): a schema_version other than an int is none this checkout reads.
4. (high, a broken node passed; class 6, local ranks on GPUs) A train pass over NCCL whose replicas all ran on one
   node, more of them than the GPUs the report's own gpu check counted (16 ranks on a node of 8, 2 on the one-GPU
   VM), was believed by the fleet report and the prolog's rule, where the nccl check's own rule refuses it: NCCL runs
   one rank per GPU (two on one: "Duplicate GPU detected"). Repro: the real H100 train report with data.world_size 2
   and a second replica (rank 1) on node "vm", then `make fleet-report`: PASSING. Practice: facts that cannot be true
   are refused (issue 36 class 6: world_size, nodes and local ranks against the GPUs). Fix (scripts/fleet/
   passfacts.py and verify/prolog/passfacts.py, one text: _gpus_problem): refused, not assessed, never a drain.
5. (high, a broken node passed; class 6) A passing nccl check whose own data rows list wrong elements (`sizes[i].wrong`
   5, 2**70) beside a `wrong` figure of 0 was believed by both readers, which read only the figure: verify writes that
   figure as the rows' sum and fails any wrong element (NCCL_WRONG_RESULT, the host's), so the rows are the
   all-reduce returning wrong values under a pass. Found by a mutation sweep of every field of a replayed report
   through the fleet reader. Fix (passfacts._nccl_problem, both sides): refused, not assessed, never a drain.
6. (high, a healthy node listed to drain / a broken group passed; class 6) A train check's group no verify writes was
   read on both sides: `nodes` as a string ("vm,vm2"), a number or an object read as no group, so a
   TRAIN_REPLICA_MISMATCH across two nodes listed its writer (rank 0) to drain for the replica the other node
   diverged (NVSentinel's isolation, hunt99's rule skipped); `nodes` naming one node twice, and a replica's rank past
   the world (rank 2**70 of 1) beside a pass, were believed. Practice: facts that cannot be true are refused (issue
   36 class 6: nodes, world_size and ranks). Fix (ranks._train_layout_problem, both sides, any status): `nodes`
   is a list of distinct names, every replica's rank is 0 to world_size - 1; else refused, never a drain.
7. (medium, an impossible pass believed; class 6) A passing gpu check listing a device whose current PCIe link is
   past its own maximum (Gen 9 of a Gen 5 slot, x32 of x16) or that draws over twice its enforced power limit
   (1e308 W of 700 W) was believed by both readers: verify's gpu check fails those facts (MEASUREMENT_INVALID) before
   it judges, so no pass of verify's lists them. Found by the mutation sweep. Fix (deviceshape._reading_problem,
   both sides, one text): refused, never a pass, never a drain.

Tried and held (no change): a mutation sweep of every field of a real replayed GPU report (11 hostile values each,
6,000 prolog runs: no crash, no drain); the prolog's every numeric option and knob given nan, inf, 1e309, '٣',
'1_0', '0x10', blanks (CONFIG_ERROR for an option, the default for a knob, each in one line); a fleet report whose
`created` is in another zone, fractional, lower-case, an ISO week, 2026-02-30 or the year 9999; a host name with a
NUL, U+2028, '..', '/' or 5,000 characters; integers of 5,000 digits; history lines whose epoch or start is an
integer past a float's range (garbled, in both readers).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet.fleet import fleet, fleet_json, format_fleet
from scripts.fleet.plausible import report_problem
from tests.prolog_fakes import (
    PROLOG_ENV,
    _args,
    _gpu,
    _nccl,
    _report,
    _shm,
    _undrain,
    _verify_writes,
    history_events,
    install_fake,
)
from tests.verify_handmade import make_report
from verify.prolog import cli, settings, slurm, verdict

pytestmark = pytest.mark.unit

# ------------------------------------------------------------------ 1. a pass lacking a preflight check

GPU_UNSEEN = {"name": "gpu", "status": "skip", "code": "GPU_NOT_VISIBLE", "owner": "job", "summary": "no GPU visible",
              "metrics": {}}
PARTIAL = {
    "the shm check alone": [_shm()],
    "the gpu check skipped beside shm, no all-reduce": [GPU_UNSEEN, _shm()],
    "another name in the gpu check's place": [{**_gpu(), "name": "gpus"}, _shm(), _nccl()],
    "no shm check beside a skipped gpu check and a passing all-reduce over gloo": [GPU_UNSEEN, _nccl("skip"),
                                                                                    {**_shm(), "name": "shmem"}],
}


def _partial(checks: list[dict[str, Any]]) -> bytes:
    return json.dumps(_report(*[dict(c) for c in checks], whole=False)).encode()


@pytest.mark.parametrize("case", list(PARTIAL))
def test_facts_that_cannot_be_true_a_preflight_pass_lacking_one_of_its_checks_is_refused_never_a_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    fake = install_fake(monkeypatch)
    _verify_writes(monkeypatch, _partial(PARTIAL[case]))
    assert cli.main(_args(tmp_path), dict(PROLOG_ENV)) == 0            # Prolog=: not assessed exits 0
    out = capsys.readouterr().out
    assert "REPORT_INVALID" in out and "PASS" not in out.replace("NOT ASSESSED", ""), out
    assert history_events(tmp_path)[-1] == ("not-assessed", "REPORT_INVALID")
    assert fake.nodes["n1"] == ("idle", "none") and "update" not in fake.verbs()


def test_a_cpu_nodes_whole_preflight_as_verify_writes_it_still_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    install_fake(monkeypatch)
    _verify_writes(monkeypatch, _partial([GPU_UNSEEN, _shm(), _nccl("skip")]))
    assert cli.main(_args(tmp_path), dict(PROLOG_ENV)) == 0
    assert history_events(tmp_path)[-1] == ("pass", None), capsys.readouterr().out


def test_nvsentinel_return_to_service_a_report_lacking_a_preflight_check_returns_no_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake = install_fake(monkeypatch)
    t0 = time.time() - 3600
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "SHM_TOO_SMALL", "x", t0))
    from verify.prolog import history
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "SHM_TOO_SMALL", "x", now=t0, extra={"check": "shm"})
    _verify_writes(monkeypatch, _partial([_shm()]))                    # the drained check passes, nothing else ran
    assert cli.main(_undrain(state), {}) != 0
    assert fake.nodes["n1"][0] == "drained" and "REPORT_INVALID" in capsys.readouterr().out


def test_the_same_return_with_the_whole_preflight_resumes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = install_fake(monkeypatch)
    t0 = time.time() - 3600
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "SHM_TOO_SMALL", "x", t0))
    from verify.prolog import history
    state = str(tmp_path / "state")
    history.record(state, "n1", "drain", "SHM_TOO_SMALL", "x", now=t0, extra={"check": "shm"})   # a CPU node
    _verify_writes(monkeypatch, _partial([GPU_UNSEEN, _shm(), _nccl("skip")]))
    assert cli.main(_undrain(state, "--return-passes", "1"), {}) == 0
    assert fake.nodes["n1"] == ("idle", "none")


# ------------------------------------------------------------------ 2. the settings file's lines, as the shell reads


def _settings(tmp_path: Path, body: bytes) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    (state / "settings").write_bytes(body)
    (state / "settings").chmod(0o644)
    return state


@pytest.mark.parametrize(("body", "said"), [
    (b"TORCHIMAGES_HANG_RUNS=3\rTORCHIMAGES_BREAKER=1\n", "U+000D"),
    (b"TORCHIMAGES_BREAKER=1\x00\n", "U+0000"),
    (b"TORCHIMAGES_BREAKER=1\xe2\x80\xa8\n", "U+2028"),
    (b"TORCHIMAGES_BREAKER=\xff1\n", "not UTF-8"),
])
def test_files_are_hostile_a_settings_line_of_control_characters_or_other_bytes_is_no_setting(
        tmp_path: Path, body: bytes, said: str) -> None:
    values, problems = settings.read(str(_settings(tmp_path, body)))
    assert values == {} and len(problems) == 1, problems
    assert said in problems[0] and "the defaults hold" in problems[0] and "\x00" not in problems[0].replace(
        "\\x00", ""), problems


def test_a_settings_file_written_with_crlf_line_ends_is_read_as_before(tmp_path: Path) -> None:
    body = b"\xef\xbb\xbfTORCHIMAGES_BREAKER=0.2\r\n# a comment\r\nTORCHIMAGES_HANG_RUNS=4\r\n"
    assert settings.read(str(_settings(tmp_path, body))) == ({"TORCHIMAGES_BREAKER": "0.2",
                                                               "TORCHIMAGES_HANG_RUNS": "4"}, [])


@pytest.mark.parametrize("folder", [b"/srv/m\xff", b"/srv/m\x00x"])
def test_slurm_prolog_semantics_a_metrics_folder_of_odd_bytes_is_said_and_nothing_is_written_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: bytes) -> None:
    install_fake(monkeypatch)
    meant = tmp_path / "m"
    state = _settings(tmp_path, b"TORCHIMAGES_METRICS_DIR=" + str(meant).encode() + folder[len(b"/srv/m"):] + b"\n")
    _verify_writes(monkeypatch, json.dumps(_report(_gpu())).encode())
    assert cli.main(["--state-dir", str(state), "--no-kernel-log"], dict(PROLOG_ENV)) == 0
    said = capsys.readouterr()
    out = said.out + said.err
    assert "settings line 1" in out and "is no setting" not in out and "the defaults hold" in out, out
    assert "embedded null byte" not in out and "Traceback" not in out
    assert history_events(tmp_path)[-1] == ("pass", None)                # gated all the same, on its defaults
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("m")]  # no folder of a name the operator never gave


# ------------------------------------------------------------------ 3. a fleet report past one hostile report


def _node(host: str) -> dict[str, Any]:
    doc = make_report()
    doc["environment"]["hostname"] = host
    doc["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return doc


@pytest.mark.parametrize("version", [[], {}, [2], 2.0, "2"])
def test_files_are_hostile_a_report_of_any_schema_version_is_listed_and_the_others_reported(
        tmp_path: Path, version: Any) -> None:
    for host in ("n1", "n2"):
        (tmp_path / f"{host}.json").write_text(json.dumps(_node(host)))
    odd = _node("n3")
    odd["schema_version"] = version
    (tmp_path / "n3.json").write_text(json.dumps(odd))
    report = fleet(tmp_path)
    assert sorted(n.node for n in report.nodes) == ["n1", "n2"]
    assert [name for name, _ in report.invalid] == ["n3.json"] and "schema_version" in report.invalid[0][1]
    assert not report.ok and fleet_json(report)["ok"] is False and "n3.json" in format_fleet(report)


# ------------------------------------------------------------------ 4. a train pass of more ranks than its node's GPUs

TRAIN_REPORT = Path(__file__).resolve().parent / "data" / "gpu" / "h100-80gb-hbm3-2026-11-25-train" / "report.json"


def _train(world: int, hosts: list[str]) -> dict[str, Any]:
    """verify's real train pass on a one-GPU H100 VM ("vm"), its replicas made `world` ranks on `hosts` in turn."""
    report = json.loads(TRAIN_REPORT.read_text())
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    train = next(c for c in report["checks"] if c["name"] == "train")
    first = train["data"]["replicas"][0]
    train["data"].update(world_size=world, nodes=sorted(set(hosts)),
                         replicas=[{**first, "rank": r, "node": hosts[r % len(hosts)]} for r in range(world)])
    return report


@pytest.mark.parametrize("world", [2, 16])
def test_facts_that_cannot_be_true_a_train_pass_of_more_nccl_ranks_on_one_node_than_its_gpus_is_refused(
        tmp_path: Path, world: int) -> None:
    report = _train(world, ["vm"])
    said = report_problem(report)
    assert said is not None and f"{world} ranks over NCCL on one node" in said and "counted 1 GPU" in said, said
    assert verdict.decide(report).code == "REPORT_INVALID"                 # the prolog's reader: the same rule
    (tmp_path / "vm.json").write_text(json.dumps(report))
    found = fleet(tmp_path)
    assert not found.ok and not found.nodes and "NCCL runs one rank per GPU" in found.invalid[0][1]


def test_one_rank_per_gpu_on_each_node_is_still_believed(tmp_path: Path) -> None:
    for report in (_train(1, ["vm"]), _train(2, ["vm", "vm2"])):
        assert report_problem(report) is None and verdict.decide(report).kind == verdict.PASS


# ------------------------------------------------------------------ 5. an nccl pass whose own rows returned wrong values


@pytest.mark.parametrize("wrong", [5, 2 ** 70, 0.5])
def test_facts_that_cannot_be_true_an_nccl_pass_whose_rows_list_wrong_elements_is_refused(
        tmp_path: Path, wrong: float) -> None:
    from tests.judging import replayed_report
    report = replayed_report(Path(__file__).resolve().parent / "data" / "facts-handmade" / "h100-8gpu-handmade")
    nccl = next(c for c in report["checks"] if c["name"] == "nccl")
    assert nccl["status"] == "pass" and report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
    nccl["data"]["sizes"][1]["wrong"] = wrong                          # the figure (their sum) still says 0
    said = report_problem(report)
    assert said is not None and "wrong element(s)" in said, said
    assert verdict.decide(report).code == "REPORT_INVALID"


# ------------------------------------------------------------------ 6. a train group no verify writes, on any status


def _diverged(nodes: Any) -> dict[str, Any]:
    """A two-node train whose replica on vm2 diverged (the host's TRAIN_REPLICA_MISMATCH), written by rank 0 on vm."""
    report = _train(2, ["vm", "vm2"])
    train = next(c for c in report["checks"] if c["name"] == "train")
    train["data"]["replicas"][1]["checksum"] = "ffffffffffffffff"
    train["data"]["nodes"] = nodes
    train.update(status="fail", code="TRAIN_REPLICA_MISMATCH", owner="host",
                 summary="replicas differ at step 120: rank 1 on vm2", remedy="Drain the node the summary names.")
    report["status"] = "fail"
    return report


@pytest.mark.parametrize("nodes", ["vm,vm2", 2.0, {"vm": 1, "vm2": 1}, ["vm", "vm", "vm2"]])
def test_nvsentinel_isolation_a_train_failure_whose_nodes_are_no_list_drains_no_writer(
        tmp_path: Path, nodes: Any) -> None:
    report = _diverged(nodes)
    assert "its train check's data nodes" in str(report_problem(report))
    assert verdict.decide(report).code == "REPORT_INVALID"
    (tmp_path / "vm.json").write_text(json.dumps(report))
    found = fleet(tmp_path)
    assert not found.ok and not found.drains and "data nodes" in found.invalid[0][1]


def test_the_same_failure_as_verify_writes_it_is_no_drain_of_its_writer_either(tmp_path: Path) -> None:
    report = _diverged(["vm", "vm2"])
    assert report_problem(report) is None
    (tmp_path / "vm.json").write_text(json.dumps(report))
    assert not fleet(tmp_path).drains                 # the collective's failure across 2 nodes (hunt99's rule)


@pytest.mark.parametrize("rank", [1, 2 ** 70, -1])
def test_facts_that_cannot_be_true_a_replica_rank_past_the_world_is_refused(rank: int) -> None:
    report = _train(1, ["vm"])
    next(c for c in report["checks"] if c["name"] == "train")["data"]["replicas"][0]["rank"] = rank
    assert "ranks are 0 to 0" in str(report_problem(report))
    assert verdict.decide(report).code == "REPORT_INVALID"


# ------------------------------------------------------------------ 7. a gpu pass beside a reading past its own limit

HANDMADE = Path(__file__).resolve().parent / "data" / "facts-handmade" / "h100-8gpu-handmade"


@pytest.mark.parametrize(("field", "value", "said"), [("pcie_gen", 9, "above its pcie_gen_max"),
                                                      ("pcie_width", 32, "above its pcie_width_max"),
                                                      ("power_w", 1e308, "no board draws over")])
def test_facts_that_cannot_be_true_a_gpu_pass_beside_a_reading_past_its_own_limit_is_refused(
        field: str, value: float, said: str) -> None:
    from tests.judging import replayed_report
    report = replayed_report(HANDMADE)
    gpu = next(c for c in report["checks"] if c["name"] == "gpu")
    assert gpu["status"] == "pass" and report_problem(report) is None and verdict.decide(report).kind == verdict.PASS
    gpu["data"]["devices"][3][field] = value
    assert said in str(report_problem(report)) and "NVML device 3" in str(report_problem(report))
    assert verdict.decide(report).code == "REPORT_INVALID"
