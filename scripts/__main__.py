"""`python -m scripts <command>`: the host-side CLI behind the Makefile."""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
