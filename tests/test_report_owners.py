"""Issue 36, class 6 (facts that cannot be true are refused): a report that gives a code an owner, or a status,
verify never gives it.

The prolog kept a node in service on `ECC_UNCORRECTABLE` owned by the job (a host fault read as the job's: Slurm's
Prolog= exits 0, the job lands on a GPU with uncorrectable ECC errors), and passed a gpu `warn` carrying `GPU_LOST`
(NVIDIA's Xid catalog: Xid 79, the GPU fell off the bus, is drain-and-reset, never a warning). verify does move some
codes' owners by the facts (an application's Xid is the job's, a CUDA error's owner is its catalog's), so the rule is
read from verify's own source: tests/codewalk.py walks every place verify names a code beside an owner or a status,
and the codes it only ever gives their catalog's owner, or only ever writes on a failure, are the ones a report may
not give otherwise. Such a report is none verify wrote: REPORT_INVALID, never a drain and never a pass, in the prolog,
the fleet report and `make isolate` alike.
"""
from __future__ import annotations

import json

import pytest

from scripts.fleet import plausible
from tests import codewalk
from tests.helpers import ROOT
from tests.prolog_fakes import PROLOG_ENV, _args, _gpu, _report, _verify_writes, install_fake
from verify import replay
from verify.codes import CODES
from verify.prolog import cli, verdict

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def given() -> codewalk.Given:
    return codewalk.walk()


def test_the_walk_reads_every_place_verify_names_a_code(given):
    """A site the walker cannot resolve is a person's decision (codewalk.RESOLVED), never a silent gap."""
    assert given.unresolved == []


def test_the_prolog_s_sets_are_what_verify_s_source_gives(given):
    assert codewalk.catalog_owned(given) == verdict.CATALOG_OWNED
    assert codewalk.failures_only(given) == verdict.FAILURES_ONLY


def test_the_host_side_copies_are_the_prolog_s():
    """The host side never imports verify (tests/test_layout.py): its copies are held equal here."""
    assert {c: CODES[c].owner for c in verdict.CATALOG_OWNED} == plausible.CATALOG_OWNER
    assert plausible.FAILURES_ONLY == verdict.FAILURES_ONLY


def test_the_walk_sees_the_owners_and_statuses_verify_does_move(given):
    """Not vacuous: an application's Xid is the job's (NVIDIA's Xid catalog: 13, 31, 43 are the program's), a GPU
    no container sees is the host's under Slurm (the prolog's own override), an aggregate ECC count is a warning;
    a lost GPU is always the host's and always a failure."""
    assert {"host", "job"} <= given.owners["XID_ERROR"] and "XID_ERROR" not in verdict.CATALOG_OWNED
    assert "GPU_NOT_VISIBLE" not in verdict.CATALOG_OWNED
    assert "warn" in given.statuses["ECC_UNCORRECTABLE"] and "ECC_UNCORRECTABLE" not in verdict.FAILURES_ONLY
    assert {"GPU_LOST", "ECC_UNCORRECTABLE", "ROW_REMAP_FAILED"} <= verdict.CATALOG_OWNED
    assert {"GPU_LOST", "ROW_REMAP_FAILED", "GPU_RESET_REQUIRED", "SDC_MISMATCH"} <= verdict.FAILURES_ONLY


def test_every_verdict_verify_gives_a_real_machine_keeps_to_the_sets():
    """The real-world corpus (tests/data/real-world: 235 machines' facts), judged by verify as `--from-facts` does:
    no verdict gives a catalog-owned code another owner, or writes a failure-only code as anything else. The walk
    once missed an owner unpacked beside a reason (`why, remedy, owner = ...`: BANDWIDTH_LOW is the job's where P2P
    is disabled, a DGX A100 of the corpus); this is the evidence beside the proof."""
    seen = 0
    for facts in sorted((ROOT / "tests" / "data" / "real-world").glob("*/facts")):
        folder = replay.load(str(facts), None, {})
        for record in folder.records:
            r = replay.judge(record, folder.options)
            seen += 1
            assert not (r.code in verdict.CATALOG_OWNED and r.owner not in (None, CODES[r.code].owner)), (facts, r)
            assert not (r.code in verdict.FAILURES_ONLY and r.status != "fail"), (facts, r)
    assert seen > 200
    assert "BANDWIDTH_LOW" not in verdict.CATALOG_OWNED
    # a literal code beside another object's owner is no pair (`"NCCL_FAILED"` beside a CUDA error's owner)
    assert {"host", "job", "image"} <= codewalk.walk().owners["NCCL_FAILED"]


@pytest.mark.parametrize("status,code,owner", [
    ("fail", "ECC_UNCORRECTABLE", "job"), ("fail", "GPU_LOST", "image"), ("fail", "ROW_REMAP_FAILED", "job"),
    ("warn", "GPU_LOST", "host"), ("skip", "GPU_LOST", "host"), ("warn", "ROW_REMAP_FAILED", "host"),
    ("fail", "SHM_TOO_SMALL_FOR_LOADER", "host"), ("fail", "GPU_LOST", "HOST")])
def test_a_code_given_an_owner_or_status_verify_never_gives_it_never_drains_and_never_passes(
        tmp_path, monkeypatch, capsys, status, code, owner):
    """Slurm's prolog semantics: a report no verify wrote is not assessed (exit 0 under Prolog=, the node left as it
    is, said in the trace); never a pass that lets a broken GPU take the job, never a drain on a forged owner."""
    fake = install_fake(monkeypatch)
    report = _report(_gpu(status, code=code, owner=owner))
    _verify_writes(monkeypatch, json.dumps(report).encode())
    rc = cli.main(_args(tmp_path), PROLOG_ENV)
    err = capsys.readouterr().err
    assert fake.nodes["n1"][0] == "idle" and "REPORT_INVALID" in err and "PASS" not in err, err
    assert rc == 0
    assert plausible.report_problem(report) is not None


@pytest.mark.parametrize("status,code,owner,drains", [
    ("fail", "ECC_UNCORRECTABLE", "host", True), ("fail", "GPU_LOST", "host", True),
    ("warn", "XID_ERROR", "job", False), ("fail", "XID_ERROR", "host", True)])
def test_what_verify_does_write_is_still_judged(tmp_path, monkeypatch, capsys, status, code, owner, drains):
    fake = install_fake(monkeypatch)
    report = _report(_gpu(status, code=code, owner=owner))
    _verify_writes(monkeypatch, json.dumps(report).encode())
    cli.main(_args(tmp_path), PROLOG_ENV)
    err = capsys.readouterr().err
    assert "REPORT_INVALID" not in err and (fake.nodes["n1"][0] == "drained") == drains, err
    assert plausible.report_problem(report) is None
