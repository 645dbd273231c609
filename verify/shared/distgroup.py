"""Forming a torch.distributed process group, the same way for every check that needs one (nccl, train).

Under torchrun the elastic agent's store outlives each check's processes: a group formed there under the default
keys can read the addresses another check's group (in another process, a moment before) left behind and connect to
a closed port (gloo: `Connection refused`). Each check's group therefore takes keys of its own on that store.
"""
from __future__ import annotations

import os
from datetime import timedelta


def init_group(backend: str, rank: int, world: int, init_method: str, timeout_s: float, keys: str) -> None:
    """init_process_group; on torchrun's agent store (env:// with TORCHELASTIC_USE_AGENT_STORE), under `keys`."""
    import torch.distributed as dist
    timeout = timedelta(seconds=timeout_s)
    if init_method != "env://" or os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world, timeout=timeout)
        return
    # torch's stubs do not re-export the stores from torch.distributed (they are there at run time)
    from torch.distributed import PrefixStore, TCPStore  # type: ignore[attr-defined]
    store = TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, is_master=False, timeout=timeout)
    prefix = f"torchimages-{keys}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    dist.init_process_group(backend, store=PrefixStore(prefix, store), rank=rank, world_size=world, timeout=timeout)
