"""arrow: Arrow IPC memory-mapped into torch tensors with zero copy, at memory speed.

The room: check.py (probe and judge), arrowpath.py the memory-mapped Arrow IPC path it measures.
"""
from __future__ import annotations

from .check import judge, probe

__all__ = ["judge", "probe"]
