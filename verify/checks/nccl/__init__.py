"""nccl: an all-reduce whose result is checked, with algbw/busbw per size as nccl-tests reports them.

One process per visible GPU with NCCL. With fewer than one GPU the same code runs across processes with
gloo, and the result says so. Started by torchrun (RANK, WORLD_SIZE, MASTER_ADDR set), it joins the
launcher's group instead, so it spans nodes; rank 0's result is the report.

probing.py records what a GPU engineer reads first: the NCCL version, the NCCL_* environment, the network and
interface NCCL chose (from its own INFO log), /dev/shm size and the memlock limit. verdict.py is pure
(bandwidth.py the figures, transport.py the transport NCCL used); spawn.py starts the ranks and sweeps; ncclog.py
reads NCCL's INFO log.
"""
from __future__ import annotations

from .probing import probe
from .verdict import FIGURES, judge

__all__ = ["FIGURES", "judge", "probe"]
