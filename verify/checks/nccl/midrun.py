"""A collective that failed for a reason on the job's side, named by the words of the failure itself: a peer process
that went away in an orderly way, ranks that called different collectives, an algorithm the job forced that has no
implementation for the collective (batch 310), or a CUDA the rank's process had already
used refusing NCCL as uninitialised. Pure: the nccl judge asks it
after the host's own evidence (a work completion's error, an adapter's event) has had its say."""
from __future__ import annotations

import re

# NCCL's socket layer when the peer closed the connection in order (misc/socket.cc: `socketProgress: Connection closed
# by remote peer <addr>`), under torch's `remote process exited or there was a network error` (ncclRemoteError), and
# gloo's `Connection closed by peer [10.0.0.2]:22617` alike. A connection closed in order is the peer's kernel closing
# the sockets of a process that exited (killed, crashed, or done), and the network delivering that close: the rank of
# another node that died first leaves every other rank this line. A link that fails, or a node that dies, resets or
# times out instead, and is not read here.
PEER_CLOSED = re.compile(r"Connection closed by (?:remote )?peer[^|\n]{0,80}", re.IGNORECASE)
# the bootstrap, where an early close is the group never forming (a stray connection, a rank not started): not mid-run
_FORMING = re.compile(r"\bbootstrap|^init: ", re.IGNORECASE)
# torch's check of the ranks' collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL, ProcessGroupWrapper): `Detected mismatch
# between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(...), but Rank 2 is running ...`,
# `Collectives differ in the following aspects`: the program asked its ranks for different collectives, shapes or
# dtypes, found before any byte crossed a link
MISMATCH = re.compile(r"Detected mismatch between collectives on ranks|Collectives differ in the following aspects")

# NCCL's own CUDACHECK (`Cuda failure 'initialization error'`; `Cuda failure 3 'initialization error'` where it prints
# the number), under ncclUnhandledCudaError: cudaErrorInitializationError met by a CUDA call inside NCCL. A program
# selects its GPU and allocates the buffers NCCL reduces before it calls NCCL (torch, nccl-tests), so CUDA already
# answered that process: a node whose driver cannot bring the GPU up fails that first call, outside NCCL (cuInit,
# cudaGetDeviceCount: cuda_errors.NOT_INITIALISED). Inside NCCL it is the process's own CUDA state: forked after CUDA
# started, or started by a launcher without the CUDA environment the image sets. nccl-tests' `Test CUDA failure` is
# the program's own call, not read here.
CUDA_NOT_INITIALISED = re.compile(r"(?<![Tt]est )Cuda failure (?:3 )?'initiali[sz]ation error'")
# NCCL's enqueue when the algorithms and protocols it may use (NCCL_ALGO, NCCL_PROTO: it names the one set) hold none
# for the collective and datatype (`Error : no algorithm/protocol available for function ReduceScatter with datatype
# ncclFloat32. NCCL_ALGO was set to nvls.`): the job's setting, before any byte moved, never the node
FORCED_ALGO = re.compile(r"no algorithm/protocol available for function (\w+)[^|\n]{0,80}?\b(NCCL_(?:ALGO|PROTO)) was set "
                         r"to ([^\s|.]{1,80})")

def job_side(said: str) -> tuple[str, str] | None:
    """(why, remedy) where the failure's own words (its error first, then NCCL's lines kept as proof) put it on the
    job's side, or None."""
    if MISMATCH.search(said):
        return ("torch found the ranks running different collectives (their operation, shape or dtype differ): the "
                "program's, before NCCL moved anything", "Make every rank issue the same collectives with the same "
                "shapes and dtypes in the same order: pad a dimension the ranks split unevenly (or gather with "
                "per-rank sizes), and check branches that only some ranks take.")
    if cuda := CUDA_NOT_INITIALISED.search(said):
        return (f"NCCL's own CUDA call found CUDA uninitialised ({cuda.group(0)}) in a process whose CUDA had already "
                "run (a program selects its GPU before NCCL): that process's CUDA state, not the node's driver",
                "Start the ranks with the spawn start method (no process forked after CUDA started: "
                "torch.multiprocessing 'spawn'), and have the launcher pass every worker the CUDA environment the "
                "image sets (PATH, LD_LIBRARY_PATH, CUDA_*: DeepSpeed's .deepspeed_env, mpirun -x); a node at fault "
                "fails CUDA's first call too: run `nvidia-smi` and `verify --checks gpu` there.")
    if forced := FORCED_ALGO.search(said):
        name, value = forced.group(2), forced.group(3)
        return (f"the job's {name}={value} leaves NCCL no algorithm or protocol for {forced.group(1)} (NCCL's "
                "enqueue refused the call before any byte moved): the job's setting, not the node",
                f"Unset {name} (NCCL picks per collective and size) or add an algorithm every collective has "
                f"(`{name}={value},ring` style lists; NCCL's environment documentation).")
    closed = PEER_CLOSED.search(said)
    if closed and not _FORMING.search(said):
        return (f"a peer rank's process closed its connection mid-run ({closed.group(0).strip()}): it exited, and the "
                "network delivered its close; nothing recorded shows this node at fault", "Read the log of the rank "
                "behind that address for why it exited (an exception, out of memory, a kill, a restart of an elastic "
                "agent) and that node's kernel log for an Xid or the OOM killer; run `verify` there if it shows one.")
    return None
