"""Host-side tooling: matrix validation, rendering, building and verifying images.

Never imported by `verify/` (which runs inside images), and never imports it.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
