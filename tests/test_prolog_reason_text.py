"""Slurm's node record read by `make undrain` (issue 36, class 3): Reason=, Comment= and Extra= are free text that
someone wrote with `scontrol update`; only the record's own fields are Slurm's facts of the node."""
from __future__ import annotations

import pytest

from verify.prolog import slurm

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("reason", [
    "GPU swapped, was Gres=gpu:1 [root@2026-11-20T10:00:00]",
    "moved NodeHostName=elsewhere NodeName=n9 Gres=gpu:2 [ops@2026-11-20T10:00:00]",
    "torchimages: by hand, Gres=gpu:0 [ops@2026-11-20T10:00:00]",
])
def test_slurm_s_record_an_operator_s_reason_is_text_not_fields(monkeypatch, reason):
    """Slurm's node record: Reason= (and Comment=, Extra=) are free text an operator wrote with scontrol update.
    `Gres=` or `NodeHostName=` inside one made `make undrain` refuse ("names Gres 2 times") or read the operator's
    words as the node's facts; only the record's own fields before it are Slurm's."""
    answer = f"NodeName=n1 Arch=x86_64 Gres=gpu:8 NodeAddr=n1 NodeHostName=n1 State=IDLE+DRAIN Reason={reason}\n"
    monkeypatch.setattr(slurm, "run", lambda argv, dry_run=False, quiet=False: (0, answer))
    info, why = slurm.node_info("n1")
    assert info is not None and why == "" and (info["NodeHostName"], info["Gres"], info["NodeName"]) == ("n1", "gpu:8", "n1")
    assert slurm.gres_gpus(info["Gres"]) == 8


def test_slurm_s_record_two_records_still_prove_nothing(monkeypatch):
    """A record cut at its reason still names its own fields once: two records of the node prove nothing."""
    answer = "NodeName=n1 NodeHostName=a Reason=x Gres=gpu:1\nNodeName=n1 NodeHostName=n1 Gres=gpu:8 Reason=y\n"
    monkeypatch.setattr(slurm, "run", lambda argv, dry_run=False, quiet=False: (0, answer))
    info, why = slurm.node_info("n1")
    assert info is None and "times: not one node's record" in why
