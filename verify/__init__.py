"""In-container verification of a PyTorch environment: `python -m verify` (or `verify` in the images).

Depends only on the standard library at import time; each check imports torch, pyarrow, h5py or pynvml
inside its own process. Never imports the host-side `scripts` package.
"""
__version__ = "2.0.0"
REPORT_SCHEMA_VERSION = 2
