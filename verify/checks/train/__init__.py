"""train: a training step as a check, the path a job really takes (trainer.py runs it).

A small decoder-only transformer trained with DDP: one process per visible GPU with NCCL (bf16 autocast where the
GPU supports it), 2 processes with gloo on a CPU host, and the launcher's group under torchrun (across nodes). The
judge is pure: the replicas agree bit for bit after every step (the parameters' checksum and the all-reduced loss,
on every rank and node: a difference is model-level silent data corruption, named by step, rank and node), the
loss is finite at every step and falls by a clear margin, tokens/s, and on GPUs the model FLOP utilisation (MFU)
against the SKU's dense BF16 peak and its floor (verify/baselines.json); on a CPU the figures are reported, not
judged. Rank 0's facts hold every rank's record.

The room: probing.py starts the ranks, trainer.py is what each rank runs, verdict.py judges.
"""
from __future__ import annotations

from .probing import probe
from .verdict import FIGURES, judge

__all__ = ["FIGURES", "judge", "probe"]
