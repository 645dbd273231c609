"""fabric: can this container use the node's RDMA fabric (InfiniBand, RoCE, EFA), and who must act if not.

The room: check.py (probe and judge); the host's adapters are read by verify/shared/rdma.py, which nccl reads too.
"""
from __future__ import annotations

from .check import FIGURES, judge, probe

__all__ = ["FIGURES", "judge", "probe"]
