import os
import sys

from .stops import hold, ignore

hold()              # first: a stop while the prolog loads is recorded and acted on, never Python's exit 143

try:
    from ..shared.closedpipe import guarded
    from .cli import _as_prolog, main
except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - a broken install is not the node's fault
    # Slurm's prolog semantics: a traceback (exit 1) under Prolog= would drain the node for our own breakage
    # as cli._as_prolog reads it: slurmd's Prolog= drains on non-zero whatever the options say
    # (context.by_slurmd: a step's SLURM_STEP_ID outweighs a SLURM_SCRIPT_CONTEXT it exported)
    step = bool(os.environ.get("SLURM_STEP_ID", "").strip())
    prolog = (os.environ.get("SLURM_SCRIPT_CONTEXT", "").startswith(("prolog", "epilog")) and not step) or (
        "--revalidate" not in sys.argv and not step)
    print(f"torchimages-prolog: NOT ASSESSED: cannot load: {type(exc).__name__}: {exc} (PROLOG_CRASHED: the node "
          "stays in service, ungated)", file=sys.stderr)
    sys.exit(0 if prolog else 3)

# a stdout closed by its reader is no fault of the node: under Prolog= the run ends not assessed (exit 0), never 141
status = guarded(main, 0 if _as_prolog(sys.argv[1:], dict(os.environ)) else 141)
ignore()            # main restored the handlers it found (ours): a stop now is after the verdict
sys.exit(status)
