import os
import sys

try:
    from .cli import main
except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - a broken install is not the node's fault
    # Slurm's prolog semantics: a traceback (exit 1) under Prolog= would drain the node for our own breakage
    prolog = "--revalidate" not in sys.argv and (os.environ.get("SLURM_SCRIPT_CONTEXT", "").startswith("prolog")
                                                 or not os.environ.get("SLURM_STEP_ID"))
    print(f"torchimages-prolog: NOT ASSESSED: cannot load: {type(exc).__name__}: {exc} (PROLOG_CRASHED: the node "
          "stays in service, ungated)", file=sys.stderr)
    sys.exit(0 if prolog else 3)

sys.exit(main())
