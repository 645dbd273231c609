"""A job's step: the dynamic loader's path and Slurm's config are the job's to set, never the node's judge.

As a job's first step (`srun torchimages-prolog`) the prolog runs with the job's environment. Its LD_LIBRARY_PATH is
searched before the system's by every program the prolog starts (verify and its checks: a libnvidia-ml.so of the
job's says what NVML sees; sinfo and scontrol: a libslurm of the job's answers the breaker's count) and by the
prolog's own Python (a libpython or libz of the job's runs inside it); its SLURM_CONF points sinfo and scontrol at a
slurm.conf of the job's making (another controller's counts, another cluster's node). Slurm's own are what only root
can write: slurmd's SLURM_CONF (its configless cache, /run/slurm/conf, or <prefix>/etc), the loader paths a container
runtime gives a step (Apptainer's --nv: /.singularity.d/libs; the CUDA toolkit's folder). So in a job's step the
prolog keeps of LD_LIBRARY_PATH only folders root (or the owner of the prolog's own package: owners) owns and no group
or other can write, and SLURM_CONF only where they alone can write the file and its folder; what it drops is said in
one line. The wrapper (verify/bin) starts the
prolog's Python without the job's LD_LIBRARY_PATH and hands it over in STEP_LIBS, so that even its own interpreter
never loads a job's library; under Prolog= (slurmd's environment, the operator's) nothing changes.
"""
from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping

STEP_LIBS = "TORCHIMAGES_STEP_LD_LIBRARY_PATH"     # the wrapper's hand-over of a step's LD_LIBRARY_PATH


def owners() -> set[int]:
    """Whose folders are trusted: root's, and the owner's of this prolog's own package (inside a container a user
    unpacked, as enroot does, every folder is the user's, this prolog's too: a library there is no more the job's
    than the prolog is, and dropping every folder would leave verify without the image's own)."""
    from .verifyrun import PACKAGE_ROOT
    try:
        return {0, os.stat(PACKAGE_ROOT).st_uid}
    except OSError:
        return {0}


def root_only(path: str, trusted: set[int] | None = None) -> bool:
    """`path` (a file or folder, links followed) and the folder holding it are root's (or `trusted`'s) and no group
    or other may write either: a job's user, who owns its own folders, could have put nothing there."""
    trusted = {0} if trusted is None else trusted
    try:
        for place in (path, os.path.dirname(os.path.abspath(path)) or "/"):
            info = os.stat(place)
            if info.st_uid not in trusted or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return False
    except OSError:
        return False
    return True


def confine(environ: MutableMapping[str, str], job: bool) -> list[str]:
    """In a job's step, environ's LD_LIBRARY_PATH and SLURM_CONF cut to what only root can write (above); notes.
    The wrapper's hand-over is restored first (a step) or dropped (elsewhere: no wrapper of ours set it there)."""
    handed = environ.pop(STEP_LIBS, None)
    if not job:
        return []
    if handed is not None:
        environ["LD_LIBRARY_PATH"] = handed
    notes, trusted = [], owners()
    if "LD_LIBRARY_PATH" in environ:
        given = [p for p in environ["LD_LIBRARY_PATH"].split(os.pathsep) if p]
        kept = [p for p in given if os.path.isabs(p) and os.path.isdir(p) and root_only(p, trusted)]
        if dropped := [p for p in given if p not in kept]:
            notes.append(f"LD_LIBRARY_PATH of a job's step: {', '.join(dropped)[:200]} dropped (a folder root does not "
                         "own alone: the job's, whose libraries would answer for the node's); kept: "
                         f"{', '.join(kept)[:200] or 'none'}")
        if kept:
            environ["LD_LIBRARY_PATH"] = os.pathsep.join(kept)
        else:
            del environ["LD_LIBRARY_PATH"]
    conf = environ.get("SLURM_CONF")
    if conf is not None and not (os.path.isabs(conf) and os.path.isfile(conf) and root_only(conf, trusted)):
        del environ["SLURM_CONF"]
        notes.append(f"SLURM_CONF={conf[:120]!r} of a job's step is no file root alone can write (slurmd's is): "
                     "dropped; Slurm's commands read Slurm's own configuration")
    return notes
