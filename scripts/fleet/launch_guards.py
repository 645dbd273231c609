"""Paths only the submission knows, refused before any node starts a container (make slurm, make isolate).

`docker run --volume SRC:DST[:OPTS]` splits on ':': a reports folder holding one (a job submitted from
/scratch/run:2, or TORCHIMAGES_REPORTS= naming one) made every node's step fail with docker's "invalid volume
specification", or mount another folder, after the job had waited for its nodes. pyxis' own guard is
slurm.pyxis_path_guard. And VERIFY_ARGS, added to every node's verify, may not give an option the launcher gives
itself (make slurm refuses it in one line, no job written).
"""
from __future__ import annotations


def docker_path_guard() -> list[str]:
    return [
        "# docker's --volume syntax: ':' separates a mount's source, target and options",
        'case "$TORCHIMAGES_REPORTS" in *:*) echo "torchimages: REFUSED: the reports folder $TORCHIMAGES_REPORTS holds '
        "':', which docker run --volume splits on: submit from a folder without it, or give "
        'TORCHIMAGES_REPORTS=<a folder without it>" >&2; exit 2;; esac',
    ]


# verify's options the launcher gives each node itself (verify's parser takes exact names only: allow_abbrev=False),
# and why VERIFY_ARGS may not give them again: argparse keeps the last, so they replaced the launcher's without a word
OWN_OPTIONS = {
    "--json": "the launcher writes each node's report where make fleet-report reads it; another place loses it",
    "--junit": "the launcher writes each node's JUnit file beside its report",
    "--expect-gpus": "GPUS= sets it, the GPUs each node's step is given (a smaller count let a node that lost a GPU "
                     "pass)",
    "--list": "it lists the checks and runs none: every node would exit 0 with no report",
    "--from-facts": "it judges recorded facts, not the node: a replay is no evidence of a node",
}


def verify_args_problem(args: tuple[str, ...] | list[str]) -> str | None:
    """Why VERIFY_ARGS may not be passed to every node's verify (one line), or None."""
    for word in args:
        name = word.split("=", 1)[0]
        if name in OWN_OPTIONS:
            return f"VERIFY_ARGS gives {name}, which make slurm's job may not take from it: {OWN_OPTIONS[name]}"
    return None
