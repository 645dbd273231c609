"""What no real node or report can show, held once for the fleet report and `make isolate`'s runner (standard
library only: the runner starts inside the allocation with the host's python3)."""
from __future__ import annotations

import re

# GB/s of bus bandwidth above any link (NVLink5: 900 GB/s per GPU): a figure past it is no measurement
BUSBW_MAX_GBPS = 10_000.0
# one host or Slurm node name (a DNS name of at most 253 characters): a hostlist (n[1-4], a,b), a newline, a space or
# a path is none, nor a name a drain line or srun may be given
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")
# verify codes that say the measurement, not the node, went wrong (verify/prolog/verdict.py's UNJUDGED_CODES, which the
# host side does not import: tests/test_fleet_hostile.py keeps the two equal): never a node to drain
UNJUDGED_CODES = frozenset({"MEASUREMENT_INVALID", "FACTS_INVALID", "FACTS_INCOMPLETE", "INTERRUPTED"})
