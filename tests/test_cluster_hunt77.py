"""Issue 36, a seventy-seventh hunt through the public interfaces (make isolate's runner as the batch script starts
it, its plan and answer), classes 7, 8, 4 and 2 from the reading side.

Found:
- Class 7, `make isolate` never names a node on evidence its own answer disbelieves (medium: a healthy node named
  "failing", exit 1, the operator drains it). _clean_for took a partner as a known-good reference when its failures
  fell beside a node that never passed; _unexplained, which decides "intermittent", does not excuse those. Two
  flaky nodes (each passed once, each failed beside the broken ones) were the two references that named a healthy
  third, while the same answer listed one of them as intermittent. Repro: 5 nodes, n1 and n5 fail every
  all-reduce, n2 and n4 their first, third, ...: "at fault: n1 (failing), n3 (failing); intermittent: n2", exit 1
  (n3 is healthy). Practice: NVSentinel's isolation rule (a node is cleared, and a partner is a reference, only on
  evidence; a flapping check is a fault to investigate, not health). Fix (scripts/fleet/isolate.py _settled): a node
  the answer calls intermittent is no reference; named and intermittent are settled together until neither changes.
  Now "intermittent, undetermined: n2, n4 ...; undetermined: n1, n3, n5", exit 2: nothing named on that record.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from scripts.fleet.isolate import Outcome, decide
from scripts.fleet.isolate_run import exit_status

pytestmark = pytest.mark.unit


def _pair(a: str, b: str, ok: bool) -> Outcome:
    return Outcome((a, b), ok, 10.0 if ok else None, "" if ok else "NCCL_WRONG_RESULT", 1.0)


# the record of the repro's rounds: n1, n5 broken; n2, n4 fail their odd all-reduces; n3 healthy
RECORD = [(1, _pair("n1", "n2", False)), (1, _pair("n3", "n4", False)),
          (2, _pair("n1", "n3", False)), (2, _pair("n2", "n4", True)),
          (3, _pair("n1", "n4", False)), (3, _pair("n2", "n3", False)),
          (4, _pair("n5", "n2", False))]


def test_nvsentinel_isolation_an_intermittent_node_is_no_reference_that_names_a_healthy_one() -> None:
    d = decide([f"n{i}" for i in range(1, 6)], RECORD)
    named = {f.node for f in d.named}
    assert "n3" not in named, d.summary
    # every node named had each of its strikes against partners the answer itself clears (ok, never intermittent)
    verdicts = {f.node: f.verdict for f in d.findings}
    assert not named or all(verdicts[m] == "ok" for n in named for t in d.tried
                            if n in t.outcome.nodes and t.verdict == "fail" for m in t.outcome.nodes if m != n)
    assert set(d.intermittent) == {"n2", "n4"}
    assert exit_status(d) == 2


def test_nvsentinel_isolation_a_broken_node_against_clean_references_is_still_named() -> None:
    # the rule's other side: a node failing beside two partners with a clean record is named as before
    d = decide(["n1", "n2", "n3", "n4"], [(1, _pair("n1", "n2", False)), (1, _pair("n3", "n4", True)),
                                         (2, _pair("n1", "n3", False)), (2, _pair("n2", "n4", True))])
    assert [f.node for f in d.named] == ["n1"] and exit_status(d) == 1


@pytest.mark.host
def test_nvsentinel_isolation_the_runner_names_no_healthy_node_beside_two_flaky_ones(tmp_path: Path) -> None:
    from tests.isolate_fakes import _isolate
    rc, lines = _isolate(tmp_path, [f"n{i}" for i in range(1, 6)], {"bad": ["n1", "n5"], "flaky": ["n2", "n4"]})
    last = lines[-1]
    assert rc == 2 and "at fault" not in last and "n3" in last and "intermittent" in last, lines
