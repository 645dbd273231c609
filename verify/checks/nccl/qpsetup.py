"""Where NCCL could not set up its connection over the adapter, whose that is: the RoCE GID (gid.py), a queue pair
whose netdev the rank's namespace lacks (nodev.py) or whose pinned GID index is empty (nogid.py), NCCL's GIN over GDAKI (gin.py). Never the host's. Pure."""
from __future__ import annotations

from ...codes import Owner
from ...facts import NcclFacts
from .gid import gid_cause
from .gin import gin_cause
from .nodev import nodev_cause
from .nogid import nogid_cause


def set_up_cause(facts: NcclFacts, said: str) -> tuple[str, str, Owner] | None:
    """(why, remedy, owner) of a connection NCCL could not set up over the adapter, or None."""
    return gid_cause(facts, said) or nodev_cause(facts, said) or nogid_cause(facts, said) or gin_cause(facts, said)
