"""Paths only the submission knows, refused before any node starts a container (make slurm, make isolate).

`docker run --volume SRC:DST[:OPTS]` splits on ':': a reports folder holding one (a job submitted from
/scratch/run:2, or TORCHIMAGES_REPORTS= naming one) made every node's step fail with docker's "invalid volume
specification", or mount another folder, after the job had waited for its nodes. pyxis' own guard is
slurm.pyxis_path_guard.
"""
from __future__ import annotations


def docker_path_guard() -> list[str]:
    return [
        "# docker's --volume syntax: ':' separates a mount's source, target and options",
        'case "$TORCHIMAGES_REPORTS" in *:*) echo "torchimages: REFUSED: the reports folder $TORCHIMAGES_REPORTS holds '
        "':', which docker run --volume splits on: submit from a folder without it, or give "
        'TORCHIMAGES_REPORTS=<a folder without it>" >&2; exit 2;; esac',
    ]
