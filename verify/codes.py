"""Stable failure codes: every non-passing or skipped result carries one, with who must act (its owner).

The one place codes are defined. docs/codes.md's table "code → meaning → fix" is generated from CODES and a test
keeps the two equal (`python -m verify.codes` prints the table). Codes never change meaning; new ones are added.

Owners: `image` (what is installed in the image), `host` (the node: driver, GPUs, fabric, network),
`job` (the job spec: `--gpus`, `--shm-size`, resources, environment variables, arguments).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

Owner = Literal["image", "host", "job"]
OWNERS: tuple[Owner, ...] = ("image", "host", "job")


@dataclass(frozen=True)
class Code:
    owner: Owner          # the usual owner; a check may name another where the facts say so
    meaning: str
    fix: str


CODES: dict[str, Code] = {
    "GPU_NOT_VISIBLE": Code("job", "No usable GPU: CPU build of torch, no /dev/nvidia* (no --gpus), no libnvidia-ml, "
                            "NVML not initialising, or fewer GPUs than --expect-gpus.",
                            "Start with `docker run --gpus all` (Kubernetes: request nvidia.com/gpu); use a CUDA "
                            "image; the summary names which of these it is."),
    "DRIVER_TOO_OLD": Code("host", "The NVIDIA driver is older than this CUDA build needs (CUDA error 35, "
                           "`unsatisfied condition: cuda>=`, or error 804 on a GPU without forward compatibility).",
                           "Update the host driver, or pick an image built for an older CUDA."),
    "DRIVER_ERROR": Code("host", "The CUDA driver refused to initialise for another reason (802 fabric manager not "
                         "ready, 803/804 forward-compatibility misuse, other driver errors).",
                         "Read the decoded cause: start nvidia-fabricmanager, or remove the cuda-compat libraries."),
    "ARCH_NOT_IN_BUILD": Code("image", "A GPU's compute capability is not in torch.cuda.get_arch_list() (no SASS, no "
                              "usable PTX; CUDA error 222: its PTX newer than the driver can compile).",
                              "Use a torch build that includes this sm_XY (another image tag)."),
    "DEVICE_COUNT_MISMATCH": Code("job", "torch sees a different number of GPUs than NVML.",
                                  "Check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and the device request."),
    "KERNEL_FAILED": Code("host", "A CUDA kernel failed or returned a wrong result on a device.",
                          "Drain the node and run `dcgmi diag -r 3`; check dmesg for Xid errors."),
    "GPU_OUT_OF_MEMORY": Code("job", "A GPU ran out of memory for the program (CUDA error 2, cudaErrorMemoryAllocation: "
                              "torch's `CUDA out of memory. Tried to allocate ...`, NCCL's `Cuda failure 'out of "
                              "memory'`): the job's memory use, not the node's fault.",
                              "Lower the batch size; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; smaller NCCL "
                              "buffers (NCCL_BUFFSIZE); check `nvidia-smi` for other processes on the GPU."),
    "CUDA_KERNEL_FAULT": Code("job", "A CUDA kernel faulted (illegal address 700, misaligned address 716, device-side "
                              "assert 710, illegal instruction 715, unspecified launch failure 719) and no Xid or ECC "
                              "fact shows the GPU at fault: the program's kernel.",
                              "Rerun with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer; an Xid 48/63/64/79/94/95 "
                              "beside it makes it the GPU's (drain)."),
    "ECC_UNCORRECTABLE": Code("host", "Uncorrectable ECC errors on a GPU (volatile: since the last reset; aggregate: "
                              "lifetime), or ECC disabled on a data-centre GPU.",
                              "Drain the node, reset the GPU (nvidia-smi -r) and run DCGM diagnostics; repeated "
                              "errors mean RMA."),
    "RETIREMENT_PENDING": Code("host", "Retired memory pages or row remaps pending: they take effect at the next GPU "
                               "reset.", "Drain the node and reset the GPU (nvidia-smi -r or reboot)."),
    "ROW_REMAP_FAILED": Code("host", "An HBM row remap failed: the GPU has run out of spare rows.",
                             "Take the GPU out of service (RMA)."),
    "THROTTLED": Code("host", "Clocks throttled by hardware: HW slowdown, HW thermal slowdown or power brake (or a "
                      "temperature at its slowdown threshold).",
                      "Check cooling, power supply and the BMC event log; `nvidia-smi -q -d PERFORMANCE`."),
    "PCIE_DOWNGRADED": Code("host", "A GPU's PCIe link runs below its maximum generation or width under load.",
                            "Reseat the GPU or riser, check BIOS PCIe settings; `nvidia-smi -q -d PCI`."),
    "NVLINK_DOWN": Code("host", "NVLink links of a GPU are inactive: some while others are up, or all of them on a SKU "
                        "(or beside peers) that has NVLink; confirmed on re-reads (one transient read warns).",
                        "Check `nvidia-smi nvlink -s`, the fabric manager and the NVSwitch trays."),
    "NVLINK_ERRORS": Code("host", "NVLink CRC, replay or recovery counters grew during the check.",
                          "Check `nvidia-smi nvlink -e`, reseat or replace the cable/tray; drain if they keep growing."),
    "GPU_LOST": Code("host", "A GPU fell off the bus or stopped answering: NVML GPU_IS_LOST or Unknown Error on its "
                     "handle or a query (Xid 79).",
                     "Drain the node; read dmesg for Xid 79/48/63/64/94/95; reset the GPU (`nvidia-smi -r`) or "
                     "reboot; RMA if it recurs."),
    "GPU_RESET_REQUIRED": Code("host", "NVML's recovery action asks for a GPU reset or a node reboot (or a drain).",
                               "Drain the node, then do what the action says: `nvidia-smi -r -i <bus id>` or reboot."),
    "XID_ERROR": Code("host", "The driver raised a critical Xid event on a GPU while verify ran.",
                      "Drain the node; read dmesg for the Xid and follow NVIDIA's Xid catalogue."),
    "ARCH_PTX_JIT": Code("image", "No SASS in this build runs on a GPU: only PTX, JIT-compiled by the driver at start-up.",
                         "Expect minutes of JIT on the first launch (cached in ~/.nv/ComputeCache); use a build with "
                         "SASS for this sm_XY."),
    "NCCL_NET_FALLBACK": Code("host", "InfiniBand/EFA devices are present but NCCL used NET/Socket across nodes.",
                              "Check the HCAs (`ibstat`), that the container gets /dev/infiniband and libibverbs (or "
                              "the aws-ofi-nccl plugin for EFA), and that NCCL_IB_DISABLE is not set."),
    "NCCL_SINGLE_RANK": Code("job", "One rank only: NCCL initialised and the all-reduce returned the right values, but "
                             "nothing crossed a link, so no bandwidth was measured (busbw is 0 by definition).",
                             "Run with two or more GPUs (`--gpus all`) or across nodes (torchrun) to measure NCCL."),
    "FABRIC_NONE": Code("host", "No RDMA device: no adapter in /sys/class/infiniband, no /dev/infiniband/uverbs* and "
                        "none listed by libibverbs. The fabric is not assessed (one node, or a TCP-only cluster).",
                        "Nothing to do on a node without InfiniBand, RoCE or EFA; on one with adapters, check the "
                        "driver (`ibstat`, `lsmod | grep -e mlx5_ib -e efa`)."),
    "FABRIC_NOT_PASSED": Code("job", "The host has RDMA adapters but the container was given no /dev/infiniband/uverbs*.",
                              "Start the container with `--device /dev/infiniband --ulimit memlock=-1 --cap-add "
                              "IPC_LOCK` (Kubernetes: the RDMA device plugin's resource, e.g. rdma/ib: 1)."),
    "FABRIC_USERSPACE_MISSING": Code("image", "The image cannot use the fabric: libibverbs.so.1 or librdmacm.so.1 does "
                                     "not load, the provider for the adapter's driver (mlx5, efa, ...) is missing, or "
                                     "libibverbs lists no device although /dev/infiniband is there.",
                                     "Install `libibverbs1 ibverbs-providers librdmacm1` in the image (this project's "
                                     "CUDA images carry them)."),
    "FABRIC_EFA_PLUGIN_MISSING": Code("image", "An EFA adapter is present but the image lacks a piece NCCL needs for "
                                      "it: libfabric.so.1, the efa provider, or the aws-ofi-nccl net plugin "
                                      "(libnccl-net.so); NCCL falls back to TCP sockets.",
                                      "Add the aws-ofi-nccl plugin and libfabric to the image (the summary names the "
                                      "missing piece) and set NCCL_NET_PLUGIN if its name is not libnccl-net.so."),
    "FABRIC_PORT_DOWN": Code("host", "An RDMA port is not ACTIVE/LinkUp (Down, Polling, Disabled, Init).",
                             "Check the cable, transceiver and switch port (`ibstat`, `ibportstate`); for IB, that a "
                             "subnet manager runs."),
    "FABRIC_ADAPTERS_MISSING": Code("host", "Fewer RDMA adapters than the node's cloud instance type has (a type whose "
                                    "count is published: p4d/p5 EFA interfaces, an Azure ND VM's InfiniBand rails): an "
                                    "EFA interface the instance was launched without, or a GPU's InfiniBand VF missing.",
                                    "Launch the instance with every EFA interface its type takes; on Azure ND, redeploy "
                                    "the VM or report the missing InfiniBand VF."),
    "FABRIC_RATE_DEGRADED": Code("host", "An active RDMA port links below the adapter's maximum: below its peers of "
                                 "the same model on this node, below the model's rated speed, or below every rate "
                                 "the model is sold for (a fall-back speed: failing where no other port is up).",
                                 "Check the cable, transceiver and switch port speed (`ibstat`, `mlxlink`); a lower-"
                                 "rated SKU or switch port explains it too."),
    "FABRIC_MEMLOCK_LOW": Code("job", "The locked-memory limit (RLIMIT_MEMLOCK) is below what RDMA needs to register "
                               "NCCL's buffers.", "Run the container with `--ulimit memlock=-1` (Slurm: "
                               "PropagateResourceLimits, Kubernetes: the runtime's default ulimits)."),
    "FABRIC_NCCL_FORCED_SOCKET": Code("job", "The job's NCCL variables keep NCCL off the fabric: NCCL_IB_DISABLE=1, "
                                      "NCCL_NET=Socket, or an NCCL_IB_HCA that matches no adapter.",
                                      "Unset NCCL_IB_DISABLE / NCCL_NET, or make NCCL_IB_HCA name the adapters "
                                      "(`ls /sys/class/infiniband`)."),
    "FABRIC_MIXED_ADAPTERS": Code("job", "InfiniBand adapters beside Ethernet (RoCE) ones at another rate, and no "
                                  "NCCL_IB_HCA: NCCL uses every verbs device it finds.",
                                  "Set NCCL_IB_HCA in the job to the InfiniBand rails (the remedy names them)."),
    "FABRIC_GDR_OFF": Code("host", "GPUDirect RDMA is not available (fabric: nvidia_peermem is not loaded and dma-buf "
                           "is not possible: proprietary GPU kernel module, or a kernel older than 5.12) or not used "
                           "(nccl: no `via NET/IB` connection carries /GDRDMA); NCCL stages every transfer through host "
                           "memory.",
                           "`modprobe nvidia_peermem` on the host, or use the open GPU kernel module on kernel 5.12+ "
                           "(dma-buf)."),
    "FABRIC_BANDWIDTH_LOW": Code("host", "A multi-node all-reduce's bus bandwidth is far below what the node's RDMA "
                                 "links carry (their count x rate from /sys/class/infiniband): below 0.5x warns, "
                                 "below 0.25x fails.",
                                 "Read the network NCCL used (the nccl check's details); check the links, GDR and "
                                 "NCCL_IB_HCA; compare with `ib_write_bw` between the nodes."),
    "NVLS_NOT_USED": Code("host", "NVLink SHARP (NVLS) is expected on this NVSwitch node but NCCL did not use it.",
                          "Check the fabric manager and multicast support (`nvidia-smi -q | grep -i fabric`), and "
                          "that NCCL_NVLS_ENABLE/NCCL_ALGO do not exclude it."),
    "MEASUREMENT_INVALID": Code("host", "A probe produced a figure that is not finite or not physically possible (a "
                                "negative bandwidth, an impossible count), or no result for a device it ran on.",
                                "Rerun the check; a device that returns nothing or nonsense is broken: drain and run "
                                "`dcgmi diag -r 3`."),
    "FACTS_INVALID": Code("job", "Replayed facts are malformed: a wrong shape, an unknown check, or a figure that is "
                          "not finite or not plausible.",
                          "Fix the facts file named in the summary, or record it again with `--save-facts`."),
    "FACTS_INCOMPLETE": Code("job", "The facts hold nothing this check can judge (every field it reads is null): not "
                             "judged, and never a pass.",
                             "Record the check on the machine (`python -m verify --save-facts DIR`), or translate "
                             "the fields the source has."),
    "HEALTH_NOT_ASSESSED": Code("host", "A GPU answered but none of its health fields (ECC, remap, clock slowdown, "
                                "temperature, PCIe, power, NVLink) was read: not assessed, never called healthy.",
                                "Read the GPU's health where NVML answers (`nvidia-smi -q` on the host); on a replay, "
                                "translate the health fields the source has."),
    "BANDWIDTH_LOW": Code("host", "A copy (device-to-device, host-to-device, device-to-host) or NCCL busbw is below "
                          "0.9x (warn) or 0.75x (fail) of this GPU model's baseline (verify/baselines.json).",
                          "Compare with another node of the same model; check PCIe/NVLink state, clocks and "
                          "other processes on the GPU."),
    "COMPUTE_LOW": Code("host", "The bf16 matmul rate is below 0.9x (warn) or 0.75x (fail) of the baseline.",
                        "Check clocks, throttling, power limits and other processes on the GPU."),
    "SDC_MISMATCH": Code("host", "The same matmul gave different bits on repeat, or across devices of the same model "
                         "(silent data corruption).", "Drain the node and run `dcgmi diag -r 4`; RMA the GPU."),
    "NCCL_TIMEOUT": Code("host", "A collective (or its init) did not finish within the timeout.",
                         "Follow the advice, which depends on what was seen: NCCL_DEBUG=INFO, /dev/shm size, "
                         "NCCL_SOCKET_IFNAME, memlock, P2P/IB."),
    "NCCL_WRONG_RESULT": Code("host", "An all-reduce returned wrong elements.",
                              "Rerun with NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 to find the broken transport; "
                              "drain the node."),
    "NCCL_FAILED": Code("host", "The collective failed with an error (not a timeout).",
                        "Rerun with NCCL_DEBUG=INFO and read the error."),
    "NCCL_NOT_EXERCISED": Code("job", "No GPU visible: NCCL was not exercised (gloo ran the same all-reduce).",
                               "Run on a GPU node (`docker run --gpus all`)."),
    "DISTRIBUTED_UNAVAILABLE": Code("image", "torch.distributed is not available in this build.",
                                    "Use an official torch wheel (built with distributed support)."),
    "SHM_TOO_SMALL": Code("job", "/dev/shm is missing or too small for DataLoader workers or NCCL's SHM transport "
                          "(SIGBUS, ENOSPC).",
                          "`docker run --shm-size=2g` or `--ipc=host`; Kubernetes: an emptyDir medium Memory at "
                          "/dev/shm."),
    "HDF5_BROKEN": Code("image", "h5py does not load its HDF5 library, lacks a filter, or a round trip failed.",
                        "`pip install --force-reinstall h5py` (the wheel bundles HDF5)."),
    "HDF5_MISMATCH": Code("image", "The HDF5 loaded differs from the one h5py was built against.",
                          "Remove the other libhdf5 from LD_LIBRARY_PATH or rebuild h5py against it."),
    "ARROW_COPIED": Code("image", "Arrow data is copied on its way into tensors (zero copy lost).",
                         "Uncompressed IPC files, pa.memory_map, tensors from the column buffers, no nulls."),
    "ARROW_SLOW": Code("host", "Zero copy holds but reads run well below memory bandwidth.",
                       "Keep training data on local NVMe or tmpfs; check the container's CPU limit."),
    "TORCH_IMPORT_FAILED": Code("image", "torch itself does not import.",
                                "Reinstall torch in the image; the summary quotes the import error."),
    "TORCHVISION_IMPORT_FAILED": Code("image", "torchvision is installed but does not import.",
                                      "Reinstall the torchvision release paired with this torch."),
    "TORCHVISION_MISMATCH": Code("image", "torchvision was built for another torch (`operator torchvision::nms does "
                                 "not exist`).", "Pin the torchvision paired with this torch (the remedy names it)."),
    "TORCHVISION_OPS_MISSING": Code("image", "torchvision's compiled ops do not load on a device.",
                                    "Install the torchvision build (CPU/CUDA) that matches torch's."),
    "TORCHVISION_OPS_WRONG": Code("image", "torchvision.ops.nms ran but returned a wrong answer.",
                                  "Reinstall torchvision; report it upstream if it persists."),
    "TORCHVISION_CUDA_MISMATCH": Code("image", "torchvision was built for another CUDA than torch.",
                                      "Install torchvision from the same index (cuXYZ) as torch."),
    "IMAGE_DECODE_FAILED": Code("image", "torchvision.io cannot decode JPEG or PNG.",
                                "Reinstall torchvision (it bundles libjpeg/libpng)."),
    "IMAGE_DECODE_WRONG": Code("image", "torchvision.io decoded an image to the wrong pixels.",
                               "Reinstall torchvision; check for a foreign libjpeg on LD_LIBRARY_PATH."),
    "TRANSFORMS_FAILED": Code("image", "A transforms.v2 augmentation pipeline raised.",
                              "Reinstall the torchvision paired with this torch."),
    "TRANSFORMS_WRONG": Code("image", "A transforms.v2 pipeline produced a wrong shape or dtype.",
                             "Reinstall the torchvision paired with this torch."),
    "LOADER_FAILED": Code("job", "A DataLoader with worker processes failed to deliver batches.",
                          "Read the error; most often /dev/shm (`--shm-size`) or the memory limit."),
    "SHM_TOO_SMALL_FOR_LOADER": Code("job", "/dev/shm cannot hold the batches the recommended DataLoader setting keeps "
                                     "in flight (workers × prefetch × batch).",
                                     "Raise `--shm-size` to the size the summary names, or lower num_workers / "
                                     "prefetch_factor."),
    "PACKAGE_MISSING": Code("image", "A package the check needs is not installed in the image.",
                            "The `pip install` line in the remedy."),
    "TRAIN_FAILED": Code("host", "The training step of the train check failed on a rank (process group, forward, "
                         "backward, all-reduce or optimizer step raised, a rank died or never answered).",
                         "Read the rank, node and phase in the summary; rerun `verify --checks nccl,gpu` on that node "
                         "and check dmesg for Xid errors."),
    "TRAIN_REPLICA_MISMATCH": Code("host", "After a DDP step the replicas differ: a rank's parameter checksum or its "
                                   "all-reduced loss is not the others' (model-level silent data corruption).",
                                   "Drain the node the summary names and run `dcgmi diag -r 4` on it; rerun the "
                                   "gpu check's SDC canary; RMA the GPU if it repeats."),
    "TRAIN_LOSS_NOT_FINITE": Code("host", "The global training loss became NaN or infinite, on a seeded model and data "
                                  "that train cleanly elsewhere.",
                                  "Rerun the gpu check (kernels, SDC canary); drain the node if it repeats."),
    "TRAIN_LOSS_NOT_FALLING": Code("host", "The training loss did not fall by a clear margin over the run, on a seeded "
                                   "model and data that learn elsewhere.",
                                   "Rerun the gpu check (kernels, SDC canary) and compare with another node."),
    "TRAIN_SLOW": Code("host", "The training step's model FLOP utilisation (MFU) is below 0.9x (warn) or 0.75x (fail) "
                       "of this GPU model's floor (verify/baselines.json).",
                       "Check clocks and throttling (gpu check), NVLink (nccl check), other processes on the GPUs, "
                       "and the DataLoader setting."),
    "DISK_FULL": Code("host", "The disk a check writes its scratch files to (TMPDIR, the container's writable layer) is "
                      "full: No space left on device.",
                      "Free disk on the node, or give the container scratch room (`-v /scratch:/tmp`); `df -h` in the "
                      "container names the full filesystem."),
    "CHECK_CRASHED": Code("image", "The check's process crashed (a signal), exited without a result, or raised.",
                          "Read the output kept in the report; SIGBUS means /dev/shm, SIGKILL the OOM killer."),
    "EMULATION_STALLED": Code("job", "Under CPU emulation (qemu-user, another architecture's image) a step stalled in "
                              "every attempt: qemu deadlocks forked workers now and then. Not assessed, never a pass.",
                              "Verify the image on a native machine of its architecture."),
    "CHECK_TIMEOUT": Code("host", "The check did not finish within its timeout and was killed.",
                          "Rerun the check alone with a longer --timeout and read its output."),
    "PREFLIGHT_HUNG": Code("host", "torchimages-prolog: the preflight hung past its budget plus grace on --hang-runs "
                           "(3) runs in a row on this node (a degrading GPU stalls its checker); drained behind the "
                           "breaker.", "Read `nvidia-smi -q` and dmesg for Xids on the node, run `dcgmi diag -r 3`; "
                           "reset the GPU or reboot, then `make undrain NODE=<node>` on it."),
    "INTERRUPTED": Code("job", "verify was interrupted (SIGTERM/SIGINT) while this check ran, or before it ran.",
                        "Rerun verify; give the job enough time (CI timeout, `timeout`)."),
}


# A skip for missing evidence names nobody: nothing shows whose it is (the table's owner is who records the facts).
UNOWNED_SKIPS = frozenset({"FACTS_INCOMPLETE"})


def owner_of(code: str) -> Owner:
    return CODES[code].owner


def readme_table() -> str:
    """The Markdown table docs/codes.md carries (a test compares them)."""
    rows = ["| code | owner | meaning | fix |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {c.owner} | {c.meaning} | {c.fix} |" for name, c in CODES.items()]
    return "\n".join(rows)


if __name__ == "__main__":
    sys.stdout.write(readme_table() + "\n")
