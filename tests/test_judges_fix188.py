"""Issue 35, batches 188 and 189 (fix188), fixed for the class:
- NCCL's shared memory refused: the errno decides the owner. `shm_open ... Permission denied` (EACCES, 13) is the
  node's /dev/shm mount mode, the host's; `No space left on device` (28) is the container's size, the job's
  (verify/checks/nccl/shmperm.py, verify/explain/nccl.py);
- CUDA 217 (peer access not supported) in NCCL's P2P/IPC path (`transport/p2p.cc ... failed to open CUDA IPC handle :
  217`) is NCCL's, the image's, whether or not the recorded error carries NCCL's name (checks/nccl/peeraccess.py).
Real lines from the entries named by slug (each source.md gives its URL)."""
from __future__ import annotations

import pytest

from tests.judging import explained, nccl_verdict, raw, replayed, verdict

pytestmark = pytest.mark.unit

SHM_EACCES = "node08-four-gpus-pytorch-1.2-nccl-shm-open-permission-denied-dev-shm-mode-fixed-by-chmod-777-host"
P2P_IPC = "z-pc-workstation-ray-lightning-two-gpus-nccl-2.7.8-p2p-ipc-cuda-ipc-handle-217-peer-access-not-supported"
SEGMENT = "Error while creating shared memory segment nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)"


def test_shm_refused_with_permission_denied_is_the_node_s_dev_shm_mode():
    line = "include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied"
    assert line in raw(SHM_EACCES)
    assert replayed(SHM_EACCES) == {"nccl": ("fail", "NCCL_FAILED", "host")}
    assert verdict(explained(raw(SHM_EACCES))) == ("fail", "NCCL_FAILED", "host")
    # NCCL 2.12+ says the errno on the creating line itself
    newer = ("init: misc/shmutils.cc:93 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Ab12Cd "
             "(size 9637888), error: Permission denied (13)")
    assert nccl_verdict(error=newer) == ("fail", "NCCL_FAILED", "host")


def test_shm_out_of_space_stays_the_container_s_size():
    # the same segment line after ENOSPC (or alone, pre-2.12, no errno) is /dev/shm's size: the job's
    full = "init: include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device; " + SEGMENT
    assert nccl_verdict(error=full) == ("fail", "SHM_TOO_SMALL", "job")
    assert nccl_verdict(error="init: unhandled system error", nccl_log={"proof": [SEGMENT]}) == (
        "fail", "SHM_TOO_SMALL", "job")
    assert verdict(explained(f"node08:1:2 [0] include/shm.h:48 NCCL WARN {SEGMENT}\n"))[1:] == ("SHM_TOO_SMALL", "job")


def test_cuda_217_in_nccl_s_p2p_ipc_path_is_the_image_s():
    line = "transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported"
    assert line in raw(P2P_IPC)
    assert replayed(P2P_IPC) == {"nccl": ("fail", "NCCL_FAILED", "image")}
    assert verdict(explained(raw(P2P_IPC))) == ("fail", "NCCL_FAILED", "image")
    # the record's error as a translation quotes it: torch's class and the WARN's words, NCCL's name not among them
    bare = ("init: unhandled cuda error; failed to open CUDA IPC handle : 217 peer access is not supported between "
            "these two devices")
    assert nccl_verdict(backend="nccl", error=bare) == ("fail", "NCCL_FAILED", "image")
    # torch's own peer copy under an NCCL group names neither NCCL nor its P2P transport: not this rule
    own = "RuntimeError: CUDA error: peer access is not supported between these two devices"
    assert nccl_verdict(backend="nccl", error=own)[2] != "image"
