"""Property tests of the one plausibility gate (verify/figures.py, verify/judging.py): for every figure a gpu or
nccl judge reads, a generated non-finite, negative, huge, fractional, wrongly typed or missing value never
yields a pass.
"""
from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import examples
from tests.verify_handmade import gpu_facts, nccl_facts
from verify import figures, judging
from verify.checks import CHECKS, gpu, nccl
from verify.options import Options

pytestmark = pytest.mark.unit

BAD = st.one_of(st.just(float("nan")), st.just(float("inf")), st.just(float("-inf")),
                st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=1e13, allow_infinity=False),
                st.text(max_size=5), st.booleans(), st.lists(st.integers(), max_size=2))
MISSING = st.sampled_from(["delete", "none"])


def _paths(facts: dict[str, Any], spec: figures.Spec) -> list[tuple[str, list[Any]]]:
    """Every concrete location of every declared figure in these facts: (declared path, steps to it)."""
    out = []
    for path, rule in spec:
        if not isinstance(rule, figures.Figure):
            continue
        steps: list[list[Any]] = [[]]
        for part in path.split("."):
            key = part.removesuffix("[]")
            nxt = []
            for s in steps:
                node: Any = facts
                for k in s:
                    node = node[k]
                value = node.get(key) if isinstance(node, dict) else None
                if value is None:
                    continue
                if part.endswith("[]"):
                    nxt += [s + [key, i] for i in range(len(value))]
                else:
                    nxt.append(s + [key])
            steps = nxt
        out += [(path, s) for s in steps]
    return out


def _set(facts: dict[str, Any], steps: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(facts)
    node: Any = out
    for k in steps[:-1]:
        node = node[k]
    node[steps[-1]] = value
    return out


GPU_PATHS = _paths(gpu_facts(), gpu.FIGURES)
NCCL_PATHS = _paths(nccl_facts(), nccl.FIGURES)


def _bad_for(rule: figures.Figure, value: Any) -> bool:
    return rule.problem(value) is not None


def test_every_declared_gpu_and_nccl_figure_is_exercised():
    assert len({p for p, _ in GPU_PATHS}) >= 30 and len({p for p, _ in NCCL_PATHS}) >= 7


def _never_passes(module: Any, facts: dict[str, Any], where: tuple[str, list[Any]], value: Any, source: str | None) -> None:
    path, steps = where
    rule = next(r for p, r in module.FIGURES if p == path and isinstance(r, figures.Figure))
    if not _bad_for(rule, value):                  # e.g. a negative temperature can be real: not this property's case
        return
    r = judging.judge(CHECKS[module.__name__.rsplit(".", 1)[-1]], _set(facts, steps, value), Options(), source=source)
    assert r.status == "fail" and r.code == ("FACTS_INVALID" if source else "MEASUREMENT_INVALID"), (path, value, r.summary)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(GPU_PATHS), BAD)
def test_no_implausible_gpu_figure_ever_passes(where, value):
    _never_passes(gpu, gpu_facts(), where, value, None)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(NCCL_PATHS), BAD)
def test_no_implausible_nccl_figure_ever_passes(where, value):
    _never_passes(nccl, nccl_facts(), where, value, "r/nccl.json")


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from([s for s in GPU_PATHS if s[1][-1] in ("max_abs_error", "d2d_GBps", "h2d_GBps", "d2h_GBps",
                                                                 "bf16_TFLOPs")]), MISSING)
def test_a_missing_result_never_reads_as_kernels_correct(where, how):
    """Deleting or nulling a kernel/perf/SDC entry's figure may be unjudged, but never claimed."""
    _, steps = where
    facts = copy.deepcopy(gpu_facts())
    node: Any = facts
    for k in steps[:-1]:
        node = node[k]
    if how == "delete":
        del node[steps[-1]]
    else:
        node[steps[-1]] = None
    r = judging.judge(CHECKS["gpu"], facts, Options())
    if steps[0] == "kernels" and steps[-1] == "max_abs_error":
        # a kernel that ran without an error and whose figure is unknown (DCGM's diag prints none) is not assessed:
        # never counted correct, never the host's fault
        assert "kernels correct on 8" not in r.summary and "not assessed" in r.summary and r.owner != "host", r.summary
    elif steps[0] == "perf":
        assert "within baselines" not in r.summary, r.summary          # a figure not measured is never claimed


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(min_value=0, max_value=7), st.sampled_from(["kernels", "perf"]))
def test_dropping_one_device_s_result_never_passes(index, key):
    facts = copy.deepcopy(gpu_facts())
    facts[key] = [e for e in facts[key] if e["index"] != index]
    r = judging.judge(CHECKS["gpu"], facts, Options())
    assert (r.status, r.code) == ("fail", "MEASUREMENT_INVALID"), r.summary
    assert "kernels correct" not in r.summary
