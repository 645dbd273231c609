# mypy: disable-error-code="arg-type"
# (the judge takes TypedDict facts; these are hand-made dicts, as a JSON record would be)
"""Slurm's MIG support on the cluster side: with MIG, Slurm's gpu gres are MIG devices (Gres=gpu:1g.10gb:7, or
gpu:a100_1g.5gb:7 as AutoDetect=nvml types them) while NVML lists the one physical GPU that holds them. Counted as
physical GPUs such a node had "lost" six: drained by the prolog, never resumed by `make undrain`. The count a record
can prove is used (verify/shared/gpuunits.py); a MIG GPU whose devices cannot be counted is not assessed, never a
pass and never a drain."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.prolog_fakes import PROLOG_ENV, FakeSlurm, _args, _gpu, _report, _verify_writes, history_events, install_fake
from tests.verify_handmade import mig_slice
from verify.checks import gpu
from verify.options import Options
from verify.prolog import cli, history, slurm
from verify.prolog.verdict import EXIT_NOT_ASSESSED, EXIT_PASS
from verify.shared import gpuunits

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    return install_fake(monkeypatch)


def _mig_device(slices: int | None) -> dict[str, Any]:
    dev: dict[str, Any] = {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "mig": [True, True]}
    if slices is not None:
        dev["mig_devices"] = [{"uuid": f"MIG-{i}", "profile": "1g.10gb"} for i in range(slices)]
    return dev


def _mig_gpu(slices: int | None = 7) -> dict[str, Any]:
    return _gpu("pass", 1, data={"devices": [_mig_device(slices)]})


def test_slurm_mig_gres_units_are_mig_devices_whole_gpus_one():
    assert gpuunits.units([_mig_device(7)]) == 7 and gpuunits.units([_mig_device(7), {"index": 1}]) == 8
    assert gpuunits.units([_mig_device(None)]) is None and gpuunits.units([{"index": 0, "mig": [False, True]}]) == 1
    twice = _mig_device(7)
    twice["mig_devices"][1]["uuid"] = twice["mig_devices"][0]["uuid"]          # one MIG device listed twice
    assert gpuunits.units([twice]) is None
    odd = _mig_device(2)
    odd["mig_devices"][0]["uuid"] = ["MIG-x"]                                  # no string: counted, never a crash
    assert gpuunits.units([odd]) == 2
    assert gpuunits.mig_typed("gpu:1g.10gb:7") and gpuunits.mig_typed("gpu:a100_1g.5gb:7(S:0)")
    assert not gpuunits.mig_typed("gpu:h100:8(S:0-1)") and not gpuunits.mig_typed("gpu:8")
    assert slurm.gres_gpus("gpu:a100_1g.5gb:7") == 7


def test_slurm_mig_verify_expect_gpus_counts_mig_devices_not_torch_s_one():
    """CUDA enumerates one MIG device per process (NVIDIA's MIG user guide): on a GPU cut in 7, `--expect-gpus 7`
    (Slurm gave the prolog 7 MIG devices) was GPU_NOT_VISIBLE, which the prolog makes the host's: a drain."""
    facts = mig_slice()
    first = facts["devices"][0]["mig_devices"][0]
    facts["devices"][0]["mig_devices"] = [first] + [dict(first, uuid=f"MIG-handmade-{i}") for i in range(1, 7)]
    assert gpu.judge(facts, Options(expect_gpus=7)).code != "GPU_NOT_VISIBLE"
    assert gpu.judge(facts, Options(expect_gpus=8)).code == "GPU_NOT_VISIBLE"       # 7 is not 8
    facts["devices"][0]["mig_devices"] = None                                       # not read: cannot be counted
    result = gpu.judge(facts, Options(expect_gpus=7))
    assert result.status != "fail" or result.code != "GPU_NOT_VISIBLE"


def test_slurm_mig_a_prolog_given_seven_mig_devices_passes_on_them(tmp_path, fake, monkeypatch):
    """Slurm's prolog semantics on a MIG node: SLURM_GPUS_ON_NODE=7 counts MIG devices; a report whose one GPU holds
    7 passes; one whose MIG devices were not read is not assessed (exit 0 under Prolog=), never drained."""
    _verify_writes(monkeypatch, json.dumps(_report(_mig_gpu(7))).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "7"}) == EXIT_PASS
    _verify_writes(monkeypatch, json.dumps(_report(_mig_gpu(None))).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "7"}) == EXIT_PASS
    _verify_writes(monkeypatch, json.dumps(_report(_mig_gpu(3))).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "7"}) == EXIT_PASS
    assert history_events(tmp_path) == [("pass", None), ("not-assessed", "GPU_COUNT_UNPROVEN"),
                                 ("not-assessed", "GPU_COUNT_UNPROVEN")]
    assert "state=drain" not in " ".join(fake.verbs())


@pytest.mark.parametrize("gres", ["gpu:1g.10gb:7", "gpu:a100_1g.5gb:7(S:0)"])
def test_slurm_mig_undrain_proves_the_mig_devices_not_seven_physical_gpus(tmp_path, fake, monkeypatch, capsys, gres):
    """NVSentinel's return to service on a MIG node: Gres=gpu:1g.10gb:7 is 7 MIG devices. A preflight whose one GPU
    shows 7 resumes it; a report with one GPU and no MIG device proves neither count: not assessed (exit 3), named."""
    fake.info = {"NodeHostName": "n1", "Gres": gres}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "ECC_UNCORRECTABLE", "x", now=1000.0)
    args = [*_args(tmp_path), "--revalidate", "--node", "n1"]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 1))).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_NOT_ASSESSED
    assert "GPU_COUNT_UNPROVEN" in "".join(capsys.readouterr()) and fake.nodes["n1"][0] == "drained"
    _verify_writes(monkeypatch, json.dumps(_report(_mig_gpu(7))).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_PASS and fake.nodes["n1"][0] == "idle"


def test_slurm_mig_a_mig_gres_is_not_proven_by_physical_gpus():
    """Gres=gpu:1g.10gb:7 is 7 MIG devices: 7 physical GPUs with no MIG device listed prove another node's count."""
    from verify.prolog import revalidate
    assert "MIG devices are not proven" in str(revalidate.gpu_problem(_report(_gpu("pass", 7)), 7, mig_gres=True))
    assert revalidate.gpu_problem(_report(_mig_gpu(7)), 7, mig_gres=True) is None
    assert "cannot be counted" in str(revalidate.gpu_problem(_report(_mig_gpu(None)), 7, mig_gres=True))



@pytest.mark.parametrize("devices, said", [
    ([{"index": 0, "uuid": "GPU-a"}, {"index": 1, "uuid": "GPU-A"}], "listed twice"),     # one GPU, two names
    ([{"index": 0, "uuid": "GPU-a"}, {"index": 1, "uuid": " GPU-a\n"}], "listed twice"),  # spaces around it
    ([{"index": 0, "uuid": "GPU-a"}], "1 NVML device(s) listed"),                          # 2 counted, 1 listed
])
def test_impossible_facts_a_pass_on_nvml_devices_no_nvml_gives_is_refused(tmp_path, fake, monkeypatch, devices, said):
    """A report no verify writes: a gpu pass whose NVML devices list one GPU twice, or another number than it
    counted. Not a pass on Slurm's 2 GPUs (REPORT_INVALID, not assessed), and never a drain."""
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 2, data={"devices": devices}))).encode())
    assert cli.main(_args(tmp_path), {**PROLOG_ENV, "SLURM_GPUS_ON_NODE": "2"}) == EXIT_PASS
    assert history_events(tmp_path) == [("not-assessed", "REPORT_INVALID")]
    assert said in history.read(str(tmp_path / "state"), "n1").events[0]["detail"]


@pytest.mark.parametrize("second", ["MIG-{i}", "mig-{i} "])
def test_slurm_mig_one_mig_device_on_two_gpus_is_no_count(tmp_path, fake, monkeypatch, second):
    """NVIDIA's MIG: each MIG device has one UUID, on one GPU. A report listing the same 7 on two GPUs (however the
    UUIDs are spelt) counted 14: `make undrain` resumed a node whose Gres=gpu:1g.10gb:14 it never proved. Now no
    count: not assessed (exit 3), the node stays drained."""
    a = _mig_device(7)
    b = dict(_mig_device(7), index=1, mig_devices=[{"uuid": second.format(i=i), "profile": "1g.10gb"} for i in range(7)])
    assert gpuunits.units([a, b]) is None
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:1g.10gb:14"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "ECC_UNCORRECTABLE", "x", now=1000.0)
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 2, data={"devices": [a, b]}))).encode())
    assert cli.main([*_args(tmp_path), "--revalidate", "--node", "n1"], {"SLURMD_NODENAME": "n1"}) == EXIT_NOT_ASSESSED
    assert fake.nodes["n1"][0] == "drained"


@pytest.mark.parametrize("gres, count, mig", [
    ("gpu:a100:4,gpu:1g.10gb:7", 11, True),                    # whole GPUs beside one cut in seven
    ("gpu:a100:4(S:0),gpu:1g.10gb:7(S:1)", 11, True),
    ("gpu:a100:4(S:0-1),shard:8,gpu:1g.10gb:7(S:0,1)", 11, True),
    ("gpu:h100:8(S:0-1),gres/gpu:9", 8, False),                # a TRES spelling is no Gres item
])
def test_slurm_mig_gres_of_several_types_counts_each(gres, count, mig):
    assert slurm.gres_gpus(gres) == count and gpuunits.mig_typed(gres) is mig


def test_slurm_mig_a_node_record_s_tres_and_reason_are_no_gres():
    """scontrol show node -o: CfgTRES and AllocTRES name gres/gpu=N, an operator's Reason may name Gres=: neither is
    the node's Gres (Slurm prints Gres= first, the reason after every field of its own)."""
    fields = slurm.node_fields("NodeName=n1 Gres=gpu:a100:4,gpu:1g.10gb:7 NodeHostName=n1 CfgTRES=cpu=64,"
                               "gres/gpu=11 AllocTRES=gres/gpu=2 Reason=was Gres=gpu:2 [root@2026-11-29T10:00:00]")
    assert fields["Gres"] == "gpu:a100:4,gpu:1g.10gb:7" and slurm.gres_gpus(fields["Gres"]) == 11


def test_slurm_mig_whole_gpus_beside_a_mig_gpu_resume_only_with_every_unit(tmp_path, fake, monkeypatch):
    """Return to service on a node of 4 whole A100s and one cut in 7 (Gres 11): the 4 and 7 prove it; a reboot that
    left the MIG GPU without its instances (4 + 0) does not."""
    fake.info = {"NodeHostName": "n1", "Gres": "gpu:a100:4,gpu:1g.10gb:7"}
    fake.nodes["n1"] = ("drained", slurm.reason("n1", "ECC_UNCORRECTABLE", "x", 1000))
    history.record(str(tmp_path / "state"), "n1", "drain", "ECC_UNCORRECTABLE", "x", now=1000.0)
    whole = [{"index": i, "uuid": f"GPU-{i}", "mig": [False, False]} for i in range(1, 5)]
    args = [*_args(tmp_path), "--revalidate", "--node", "n1"]
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 5, data={"devices": [_mig_device(0), *whole]}))).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_NOT_ASSESSED and fake.nodes["n1"][0] == "drained"
    _verify_writes(monkeypatch, json.dumps(_report(_gpu("pass", 5, data={"devices": [_mig_device(7), *whole]}))).encode())
    assert cli.main(args, {"SLURMD_NODENAME": "n1"}) == EXIT_PASS and fake.nodes["n1"][0] == "idle"
