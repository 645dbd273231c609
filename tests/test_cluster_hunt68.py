"""Issue 36, a sixty-eighth hunt through the public interfaces (`python -m verify.prolog`, make targets, files).

Found:
- Class 1, a setting of ours is never the node's fault (high: a healthy node drained, every job of the cluster failed).
  SLURM_SCRIPT_CONTEXT has eight values (SchedMD's Prolog and Epilog Guide): prolog_slurmd and epilog_slurmd (Prolog=,
  Epilog=: slurmd, on the job's nodes), but also prolog_slurmctld and epilog_slurmctld (PrologSlurmctld=,
  EpilogSlurmctld=: slurmctld, on the controller's host, once per job of the whole cluster). The prolog took every
  `prolog*`/`epilog*` context for slurmd's: the prolog line put on slurm.conf's PrologSlurmctld= (a slip of one word)
  gated the controller's host as if it were the job's node, named by its own host name. On a head node that is a
  compute node too, a job given GPUs on other nodes drained it (its GPUs "allocated but not visible" are the host's
  under Prolog=) and exited 1, which slurmctld answers by requeueing or killing the job. Now a slurmctld context is
  refused as the setting it is (CONFIG_ERROR, one line naming Prolog=, exit 0: nothing judged, nothing drained).
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.prolog_fakes import _args, _report, _verify_writes, history_events, install_fake
from verify.prolog import cli

pytestmark = pytest.mark.unit


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    return install_fake(monkeypatch)


# ---- class 1: PrologSlurmctld= is no Prolog= (Slurm's prolog semantics: slurmctld runs it on the controller)

NO_GPU = {"name": "gpu", "status": "fail", "code": "GPU_NOT_VISIBLE", "owner": "job", "summary": "no GPU visible",
          "metrics": {"nvml_devices": {"value": 0, "unit": "count"}}}


@pytest.mark.parametrize("where", ["prolog_slurmctld", "epilog_slurmctld"])
def test_slurm_prolog_semantics_prolog_slurmctld_gates_no_node(tmp_path, fake, monkeypatch, capsys, where):
    """slurmctld's environment for a job given GPUs elsewhere, on a controller whose host is also node n1."""
    seen: list[Any] = []
    _verify_writes(monkeypatch, json.dumps(_report(NO_GPU)).encode(), seen)
    env = {"SLURM_SCRIPT_CONTEXT": where, "SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "0,1", "SLURM_JOB_PARTITION": "gpu"}
    assert cli.main(_args(tmp_path), env) == 0           # a non-zero exit there requeues or kills the job
    said = capsys.readouterr().err
    assert "CONFIG_ERROR" in said and "Prolog=" in said and where in said, said
    assert fake.nodes["n1"] == ("idle", "none") and not any(c[0] == "update" for c in fake.calls)
    assert not seen                                      # nothing judged on the controller's host
    assert history_events(tmp_path) == [("not-assessed", "CONFIG_ERROR")]     # the setting's trace, never a fault


@pytest.mark.parametrize("where", ["prolog_slurmd", "epilog_slurmd"])
def test_slurmd_s_own_contexts_still_gate_the_node(tmp_path, fake, monkeypatch, where):
    _verify_writes(monkeypatch, json.dumps(_report(NO_GPU)).encode())
    env = {"SLURM_SCRIPT_CONTEXT": where, "SLURMD_NODENAME": "n1", "SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "0,1"}
    assert cli.main(_args(tmp_path), env) == 1 and fake.nodes["n1"][1].startswith("torchimages:GPU_NOT_VISIBLE")
