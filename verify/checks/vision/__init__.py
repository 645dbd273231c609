"""vision: torchvision as users break it.
"""
from __future__ import annotations

from .check import judge, probe

__all__ = ["judge", "probe"]
