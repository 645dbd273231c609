"""The isolation planner and judge (scripts/fleet/isolate.py) against a simulated fabric: each pair's outcome is
what its members make it (a failing member fails the pair, a slow one slows it). Pure logic; the real run on Slurm is
tests/test_slurm_isolate.py."""
from __future__ import annotations

import itertools
import json
import math

import pytest

from scripts.fleet.isolate import Decision, Outcome, first_round, max_rounds, plan_done
from scripts.fleet.isolate_run import decision_json, exit_status, format_decision, outcome, step_argv

pytestmark = pytest.mark.unit
FAST, SLOW_FIGURE = 10.0, 1.0


def _pair(pair: tuple[str, ...], bad: dict[str, str]) -> Outcome:
    kinds = {bad.get(n) for n in pair}
    if "fail" in kinds:
        return Outcome(pair, False, None, "timed out", 90.0)
    return Outcome(pair, True, SLOW_FIGURE if "slow" in kinds else FAST, "", 5.0)


def run(count: int, bad: dict[str, str]) -> Decision:
    nodes = [f"n{i + 1}" for i in range(count)]
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            return decision
        number += 1
        assert len({n for p in pairs for n in p}) == 2 * len(pairs), f"a node twice in round {number}: {pairs}"
        results += [(number, _pair(p, bad)) for p in pairs]


def named(d: Decision) -> dict[str, str]:
    return {f.node: f.verdict for f in d.named}


def test_the_bound_is_ceil_log2_n_plus_one():
    assert [max_rounds(n) for n in (2, 3, 4, 5, 8, 9, 64)] == [2, 3, 3, 4, 4, 5, 7]


def test_none_bad_one_round_every_node_ok():
    d = run(4, {})
    assert d.rounds == 1 and named(d) == {} and d.undetermined == [] and exit_status(d) == 0
    assert d.summary.startswith("no node at fault")


@pytest.mark.parametrize("kind,verdict", [("fail", "failing"), ("slow", "slow")])
def test_one_bad_of_four_is_named_against_a_known_good_partner(kind, verdict):
    d = run(4, {"n3": kind})
    assert named(d) == {"n3": verdict} and d.undetermined == [] and d.rounds == 2
    n3 = next(f for f in d.findings if f.node == "n3")
    assert any("with n1" in e or "with n2" in e for e in n3.evidence), n3.evidence   # re-tested with a cleared node
    assert exit_status(d) == 1 and "at fault: n3" in d.summary


def test_odd_count_the_node_left_out_of_round_one_is_tested_in_round_two():
    assert first_round(["a", "b", "c"]) == [("a", "b")]
    d = run(5, {"n5": "fail"})
    assert named(d) == {"n5": "failing"} and d.rounds <= max_rounds(5)
    d = run(5, {"n2": "fail"})
    assert named(d) == {"n2": "failing"} and d.undetermined == []


def test_all_bad_names_no_node_and_says_the_cause_is_common():
    d = run(4, {n: "fail" for n in ("n1", "n2", "n3", "n4")})
    assert named(d) == {} and d.undetermined == ["n1", "n2", "n3", "n4"]
    assert d.rounds == max_rounds(4) and "no node named" in d.summary and exit_status(d) == 2


@pytest.mark.parametrize("bad", [("n1", "n2"), ("n1", "n3"), ("n2", "n4")])
def test_two_bad_of_four_both_named(bad):
    d = run(4, dict.fromkeys(bad, "fail"))
    assert named(d) == dict.fromkeys(bad, "failing") and d.undetermined == [] and d.rounds <= max_rounds(4)


def test_two_nodes_one_failing_pair_cannot_say_which():
    d = run(2, {"n1": "fail"})
    assert named(d) == {} and d.undetermined == ["n1", "n2"] and exit_status(d) == 2


def test_every_single_failing_node_is_found_within_the_bound():
    for count in range(3, 17):
        for node in (f"n{i + 1}" for i in range(count)):
            d = run(count, {node: "fail"})
            assert named(d) == {node: "failing"} and d.rounds <= max_rounds(count), (count, node, d.summary)


def test_no_healthy_node_is_ever_named():
    for count in range(2, 10):
        nodes = [f"n{i + 1}" for i in range(count)]
        for k in (1, 2, 3):
            for bad in itertools.combinations(nodes, k):
                for kind in ("fail", "slow"):
                    d = run(count, dict.fromkeys(bad, kind))
                    assert set(named(d)) <= set(bad) and d.rounds <= max_rounds(count), (count, bad, kind)


def test_a_majority_of_slow_nodes_is_not_called_healthy():
    d = run(4, {"n1": "slow", "n2": "slow"})
    assert d.spread and exit_status(d) == 2 and "median cannot single them out" in d.summary


def test_a_node_named_twice_or_a_single_node_is_refused():
    with pytest.raises(ValueError, match="named twice"):
        first_round(["a", "b", "a"])
    with pytest.raises(ValueError, match="at least two"):
        first_round(["a"])


def _report(status="skip", code="NCCL_NOT_EXERCISED", busbw=2.5, wrong=0):
    metrics = {} if busbw is None else {"busbw_max": {"value": busbw, "unit": "GB/s"}}
    return {"status": status, "created": "2026-12-01T00:00:00Z",
            "checks": [{"name": "nccl", "status": status, "code": code, "summary": "s",
                        "metrics": {**metrics, "wrong": {"value": wrong, "unit": "elements"}},
                        "data": {"nodes": 2, "world_size": 2}}]}


def test_a_pair_outcome_needs_a_right_result_and_a_finite_figure():
    pair = ("a", "b")
    assert outcome(pair, _report(), 0, 3.0, 0) == Outcome(pair, True, 2.5, "", 3.0)
    assert not outcome(pair, _report(), 0, 3.0, 8).ok                     # GPUs expected: a skip is no pass
    assert not outcome(pair, _report(busbw=math.inf), 0, 3.0, 0).ok
    assert not outcome(pair, _report(busbw=None), 0, 3.0, 0).ok
    assert not outcome(pair, _report(wrong=3), 0, 3.0, 0).ok
    assert "NCCL_TIMEOUT" in outcome(pair, _report("fail", "NCCL_TIMEOUT"), 1, 3.0, 0).why
    assert outcome(pair, None, 1, 3.0, 0).why == "no report (step exit 1)"
    assert outcome(pair, _report(), None, 90.0, 0) == Outcome(pair, False, None, "timed out", 90.0)
    assert not outcome(pair, {"checks": []}, 0, 1.0, 0).ok and not outcome(pair, "x", 0, 1.0, 0).ok
    # a pass that does not say across how many nodes and ranks it ran, or when, clears no pair (hunt81)
    for unsaid in ("world_size", "created"):
        report = _report()
        report.pop(unsaid, None)
        report["checks"][0]["data"].pop(unsaid, None)
        left = outcome(pair, report, 0, 3.0, 0)
        assert not left.ok and f"does not say {unsaid}" in left.why, left


def test_the_step_names_its_pair_and_expands_the_launcher_options(monkeypatch):
    monkeypatch.setenv("TORCHIMAGES_IMAGE", "reg#img@sha256:abc")
    argv = step_argv(["srun", "--container-image=${TORCHIMAGES_IMAGE}", "--", "bash", "-c", 'eval "$X"'], ("a", "b"), 8)
    assert argv == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=a,b", "--kill-on-bad-exit=1",
                    "--export=ALL", "--gres=gpu:8", "--container-image=reg#img@sha256:abc", "bash", "-c", 'eval "$X"']


def test_the_answer_is_printed_and_written_with_its_figures():
    d = run(4, {"n3": "slow"})
    text = format_decision(d)
    assert "n3" in text and "SLOW" in text and "busbw 1 GB/s" in text
    doc = json.loads(json.dumps(decision_json(d)))
    assert doc["named"][0]["node"] == "n3" and doc["rounds"] == 2 and doc["max_rounds"] == 3
    assert {p["verdict"] for p in doc["pairs"]} == {"pass", "slow"}


@pytest.mark.host
@pytest.mark.parametrize("launcher", ["pyxis", "docker", "oci", "none"])
def test_the_isolate_script_parses_and_steps_through_the_launcher(launcher, test_specs):
    import shlex
    import subprocess

    from scripts.fleet.isolate_job import isolate_script, pair_script, step_base
    from scripts.fleet.slurm import NEEDS, Job
    spec = next(s for s in test_specs if s.tag == "2.13.0-cpu-debian12")
    job = Job(spec, f"ghcr.io/acme/{spec.image}", 4, 8, launcher, bundle="/shared/b", python="/shared/venv/bin/python",
              checkout="/shared/torchimages")
    text = isolate_script(job)
    proc = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"# This cluster needs: {NEEDS[launcher]}" in text and "#SBATCH --nodes=4" in text
    assert "#SBATCH --gres=gpu:8" in text and "-I -c " in text and "/shared/torchimages --gpus 8" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("export TORCHIMAGES_ISOLATE_STEP="))
    assert json.loads(shlex.split(line.partition("=")[2])[0]) == step_base(job)
    pair = pair_script(job)
    assert "--nnodes=2 --nproc-per-node=8" in pair and '--json "$out/$TORCHIMAGES_GROUP.json"' in pair
    assert '--rdzv-id="$SLURM_JOB_ID-$TORCHIMAGES_GROUP"' in pair
    if launcher == "pyxis":
        assert "--container-image=${TORCHIMAGES_IMAGE}" in step_base(job)
    if launcher == "docker":
        assert "TORCHIMAGES_DOCKER_STEP" in text and "docker run --rm --init" in text


@pytest.mark.host
def test_the_runner_outside_its_batch_script_is_one_line(tmp_path):
    import subprocess
    import sys

    from tests.helpers import ROOT
    env = {"PATH": "/usr/bin:/bin", "TORCHIMAGES_ISOLATE_STEP": "[]", "TORCHIMAGES_REPORTS": str(tmp_path)}
    for extra, said in (({}, "RDZV_PORT is not set"),
                        ({"RDZV_PORT": "20001", "SLURM_JOB_NODELIST": "n1"}, "isolate: ")):
        proc = subprocess.run([sys.executable, "-m", "scripts.fleet.isolate_run"], cwd=ROOT, env={**env, **extra},
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and not (tmp_path / "isolate.json").exists()


def test_one_slow_pair_by_noise_names_no_healthy_node():
    """Seen on this shared 2-core host (tests/test_slurm_isolate.py): n3 degraded, and n4's re-test beside a cleared
    n2 came out at 0.41x the median by load alone. One strike is not enough: n4 meets another cleared partner (n1)
    in round 3 and passes; n3, failing with two cleared partners, is the one named."""
    nodes = ["n1", "n2", "n3", "n4"]
    noisy = {frozenset(("n2", "n4"))}
    results: list[tuple[int, Outcome]] = []
    number = 0
    while True:
        decision, pairs = plan_done(nodes, results)
        if not pairs:
            break
        number += 1
        for p in pairs:
            o = _pair(p, {"n3": "fail"})
            results.append((number, Outcome(p, True, 4.1, "", 25.0) if frozenset(p) in noisy else o))
    assert named(decision) == {"n3": "failing"} and decision.undetermined == [] and decision.rounds == 3
    assert next(f for f in decision.findings if f.node == "n4").verdict == "ok"
