"""shm: is /dev/shm large enough for DataLoader workers? Measured by really allocating it.

The room: check.py (probe and judge); what /dev/shm is and how its exhaustion reads is verify/shared/shmem.py
(the dataloader and train checks read it too).
"""
from __future__ import annotations

from .check import judge, probe

__all__ = ["judge", "probe"]
