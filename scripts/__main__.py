"""`python -m scripts <command>`: the host-side CLI behind the Makefile."""
from __future__ import annotations

import sys

# jsonschema imports rfc3987_syntax where it is installed (kubernetes-validate's format extra), which builds a lark
# grammar as it loads: 0.8 s of every command. No schema of ours checks an IRI's format, so this process never loads
# it (jsonschema leaves that format unchecked on the ImportError). Measured here, 3 runs each: `python -m scripts
# render` 1.55-1.74 s -> 0.57-0.65 s, `fleet-report` of an empty folder 0.96-1.01 s -> 0.13-0.16 s.
if "rfc3987_syntax" not in sys.modules:
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
