"""hdf5: does h5py load its HDF5 library, with the filters and the multi-worker reads training needs?
"""
from __future__ import annotations

from .check import judge, probe

__all__ = ["judge", "probe"]
