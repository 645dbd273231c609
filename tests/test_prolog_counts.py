"""The GPU count the prolog reads from verify's report, and passes no verify could write (issue 36, a third hunt).

verify writes every metric as a float (verify/result.py: Metric.value, `round(float(value), 6)`), so a healthy
8-GPU node's report says `"nvml_devices": {"value": 8.0}`. Slurm's prolog semantics: a node Slurm gave 8 GPUs
passes the gate on that report, and NVSentinel's return to service resumes a repaired node on it; a count that is
no whole number of 1 or more (NaN, 0, 8.5, true), or a passing check standing on a figure that is not finite, is a
report no verify writes: not assessed (REPORT_INVALID), never a pass, whether or not Slurm allocated GPUs."""
from __future__ import annotations

import json
import math

import pytest

from tests.prolog_fakes import PROLOG_ENV, STEP_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, install_fake
from verify.prolog import cli, history, slurm
from verify.prolog.notes import _report_gpus
from verify.prolog.verdict import PASS, decide, whole_count

pytestmark = pytest.mark.unit



@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


@pytest.mark.parametrize(("value", "count"), [(8, 8), (8.0, 8), (1.0, 1), (0, None), (0.0, None), (-1.0, None),
                                              (8.5, None), (math.nan, None), (math.inf, None), (True, None),
                                              ("8", None), (None, None)])
def test_a_count_verify_wrote_is_whole_finite_and_positive(value, count):
    assert whole_count(value) == count
    assert _report_gpus(_report(_gpu(devices=value))) == count


@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["prolog", "step"])
def test_slurm_s_gres_a_real_report_s_float_count_passes_the_gate(tmp_path, fake, monkeypatch, env):
    """verify's own report of 8 healthy GPUs (8.0) on a node Slurm gave 8 GPUs passes: it was GPU_COUNT_UNPROVEN."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=8.0))).encode())   # type: ignore[arg-type]
    assert cli.main(_args(tmp_path, "--budget", "10"), {**env, "SLURM_GPUS_ON_NODE": "8"}) == 0
    events = history.read(str(tmp_path / "state"), "n1").events
    assert [e["event"] for e in events] == ["pass"]


def test_nvsentinel_return_to_service_a_real_report_s_float_count_resumes_the_repaired_node(tmp_path, fake,
                                                                                         monkeypatch):
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "GPU_LOST", "gpu 3 lost", 1795635600))
    history.record(str(tmp_path / "state"), "n1", "drain", "GPU_LOST", "x", now=1795635600.0,
                   extra={"gpus": 8, "check": "gpu", "boot_id": "an-earlier-boot", "action": "reboot"})
    _verify_writes(monkeypatch, json.dumps(_report(_gpu(devices=8.0))).encode())   # type: ignore[arg-type]
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {}) == 0
    assert fake.nodes["n1"][0] == "idle"


@pytest.mark.parametrize(("metrics", "said"), [
    ({"nvml_devices": math.nan}, "nvml_devices = nan"), ({"nvml_devices": 0.0}, "nvml_devices = 0.0"),
    ({"nvml_devices": -1}, "nvml_devices = -1"), ({"nvml_devices": 8.5}, "nvml_devices = 8.5"),
    ({"nvml_devices": 8.0, "torch_devices": 0.0}, "torch_devices = 0.0"),
    ({"nvml_devices": 8.0, "d2d_GBps_dev0": math.inf}, "d2d_GBps_dev0 = inf"),
], ids=["nan", "zero", "negative", "fraction", "no-torch-device", "inf-figure"])
def test_slurm_s_prolog_semantics_a_pass_no_verify_writes_is_not_assessed_without_slurm_gpus(metrics, said):
    """A first step on a node Slurm gave no GPU (nothing to compare the count with) passed on a NaN NVML count."""
    gpu = {"name": "gpu", "status": "pass", "summary": "gpu",
           "metrics": {k: {"value": v, "unit": "count"} for k, v in metrics.items()}}
    v = decide(_report(gpu))
    assert v.kind != PASS and v.code == "REPORT_INVALID" and said in v.summary, v


@pytest.mark.parametrize("env", [PROLOG_ENV, STEP_ENV], ids=["prolog", "step"])
def test_a_nan_count_through_the_command_is_not_assessed_and_never_drains(tmp_path, fake, monkeypatch, env, capsys):
    body = json.dumps(_report(_gpu(devices=math.nan)), allow_nan=True).encode()   # type: ignore[arg-type]
    _verify_writes(monkeypatch, body)
    status = cli.main(_args(tmp_path, "--budget", "10"), env)
    assert status == (0 if env is PROLOG_ENV else 3) and "REPORT_INVALID" in capsys.readouterr().out
    assert fake.nodes["n1"][0] == "idle"
