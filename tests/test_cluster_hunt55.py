"""Round 55 of issue 36's hunt (classes 6, 7, 8 and 10), each test naming the practice it follows.

Class 6, facts that cannot be true, held against what verify really writes: every record of the real-world corpus
(tests/data/real-world), judged as `python -m verify --from-facts` judges it and built into its report by verify's own
report.build_report, is a report the prolog's rule and the host side's (fleet report, `make isolate`) both accept.
The shared rule must refuse no report verify writes: a refused report is not assessed as a whole, so a host fault in
another of its checks (a wrong all-reduce) was withheld (Slurm's prolog semantics: the node's evidence drains).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts.fleet import plausible
from tests.judging import replayed_report
from verify.prolog import verdict

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "real-world"
KMSG_ONLY = CORPUS / "nvswitch-node-dev-kmsg-nvswitch-open-calico-ipv6-perf-lines-no-xid-gpud-fixture" / "facts"


def test_every_report_verify_writes_from_the_real_world_corpus_is_accepted_by_the_one_rule(tmp_path):
    """The prolog's rule, the host side's, and the fleet report's reading (verify's report schema first): a skip
    for want of evidence (FACTS_INCOMPLETE, verify/codes.py UNOWNED_SKIPS) has no owner, and the schema demanded
    one, so the fleet report listed 29 of these reports invalid, a failed check beside the skip unseen."""
    from scripts.fleet.reports import read_reports
    seen, refused = 0, []
    for facts in sorted(CORPUS.glob("*/facts")) + sorted(CORPUS.glob("*/facts-schema2")):
        report = replayed_report(facts)
        (tmp_path / f"n{seen}.json").write_text(json.dumps(report), encoding="utf-8")
        seen += 1
        prolog = verdict.decide(report)
        if (prolog.kind, prolog.code) == (verdict.NOT_ASSESSED, "REPORT_INVALID") or plausible.report_problem(report):
            refused.append((facts.parent.name, prolog.summary, plausible.report_problem(report)))
    assert seen > 400 and not refused, refused
    valid, invalid = read_reports(tmp_path)
    assert len(valid) == seen and not invalid, invalid[:5]


def test_a_gpu_pass_that_read_no_nvml_device_is_verify_s_no_pass_where_slurm_gave_gpus_and_hides_no_fault():
    """verify's partial judgement (NVML's devices not recorded, a clean kernel log) passes the gpu check on 0 NVML
    devices, "the devices themselves not assessed". Both rules refused that report, and the wrong all-reduce beside
    it with it. Now: accepted; where Slurm allocated GPUs it is GPU_NOT_ASSESSED (no pass, no drain: the tool could
    not see, docs/cluster-safety.md); a host fault beside it drains."""
    report = replayed_report(KMSG_ONLY)
    gpu = report["checks"][0]
    assert (gpu["status"], gpu["metrics"]["nvml_devices"]["value"]) == ("pass", 0.0)
    assert plausible.report_problem(report) is None
    allocated = verdict.decide(report, gpus_expected_by_scheduler=True)
    assert (allocated.kind, allocated.code) == (verdict.NOT_ASSESSED, "GPU_NOT_ASSESSED"), allocated
    assert verdict.decide(report, gpus_expected_by_scheduler=False).kind == verdict.PASS
    report["checks"].append({"name": "nccl", "status": "fail", "code": "NCCL_WRONG_RESULT", "owner": "host",
                             "summary": "3 wrong elements", "metrics": {"wrong": {"value": 3.0, "unit": "count"}}})
    report["status"] = "fail"
    assert plausible.report_problem(report) is None
    v = verdict.decide(report, gpus_expected_by_scheduler=True)
    assert (v.code, v.drains) == ("NCCL_WRONG_RESULT", True), v


@pytest.mark.parametrize("change", [
    lambda g: g["metrics"].update(torch_devices={"value": 8.0, "unit": "count"}),   # torch saw 8: verify warns
    lambda g: g["data"].update(devices=[{"index": 0, "uuid": "GPU-1"}]),           # a device listed, 0 counted
    lambda g: g.update(data={}),                     # verify lists its (empty) NVML devices beside the count
])
def test_a_gpu_pass_on_no_device_that_verify_never_writes_stays_refused(change):
    report = replayed_report(KMSG_ONLY)
    change(report["checks"][0])
    assert plausible.report_problem(report) is not None
    assert verdict.decide(report, True).code == "REPORT_INVALID"


def _train(facts: dict[str, Any], source: str | None = None) -> Any:
    from verify import judging
    from verify.checks import CHECKS
    from verify.options import Options
    return judging.judge(CHECKS["train"], facts, Options(), source=source)


@pytest.mark.parametrize("field,value,said", [
    ("timed_steps", 500, "timed 500 step(s) after a warm-up of 3, but recorded 30"),
    ("wall_s", 0.5, "longer than its whole run"),
])
def test_a_train_record_timing_more_than_it_ran_is_refused_never_a_faster_pass(field, value, said):
    """Class 6: the trainer times len(steps) - WARMUP steps, inside its whole run (trainer.py). A record of 500 timed
    steps of 30 made the rate 18x what ran (a slow node's TRAIN_SLOW hidden); refused, never judged (FACTS.md)."""
    from tests.verify_handmade import handmade_train_facts
    facts = handmade_train_facts()
    assert _train(facts).status == "pass"
    facts["ranks"][0][field] = value
    r = _train(facts, source="r/train.json")
    assert (r.status, r.code) == ("fail", "FACTS_INVALID") and said in r.summary, r
    live = _train(facts)                     # a live run's contradiction: the measurement, never the node's fault
    assert live.code == "MEASUREMENT_INVALID" and verdict.decide(
        {"status": "fail", "checks": [json.loads(json.dumps(live.to_dict(), default=vars))]}).kind == verdict.NOT_ASSESSED


def test_a_job_s_test_hook_never_reaches_the_prolog_s_verify_as_a_first_step(tmp_path):
    """Class 10, the sitecustomize door of round 53 by another name: a first step's environment is the job's, and
    VERIFY_TEST_HANG=gpu there hangs every run's gpu check (CHECK_TIMEOUT, the host's; confirmed alone, or
    PREFLIGHT_HUNG after --hang-runs): a healthy node drained by a job's variable."""
    from verify.prolog import verifyrun
    job = {"VERIFY_TEST_HANG": "gpu", "VERIFY_TEST_CRASH": "gpu", "SLURM_STEP_ID": "0"}
    assert not verifyrun.hooks_allowed("step", str(tmp_path))
    # the operator's switch (a regular file in the state folder, no link), or slurmd's own environment under Prolog=
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / verifyrun.TEST_HOOKS_FILE).symlink_to(tmp_path / "elsewhere")
    assert not verifyrun.hooks_allowed("step", str(tmp_path))
    (tmp_path / verifyrun.TEST_HOOKS_FILE).unlink()
    (tmp_path / verifyrun.TEST_HOOKS_FILE).write_text("")
    assert verifyrun.hooks_allowed("step", str(tmp_path)) and verifyrun.hooks_allowed("prolog", str(tmp_path / "no"))
    environ = dict(job)
    verifyrun.drop_test_hooks(environ)
    assert environ == {"SLURM_STEP_ID": "0"}
