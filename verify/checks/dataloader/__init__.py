"""dataloader: the short form of the DataLoader advisor (`verify bench --dataloader` is the long one).

The room: check.py (probe and judge); the sweep and its advice are verify/shared/dataloader.py, which the train
check and the advisor (verify/tools/advisor.py) use too.
"""
from __future__ import annotations

from .check import judge, probe

__all__ = ["judge", "probe"]
