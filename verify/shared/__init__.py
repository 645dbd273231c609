"""What two or more checks' rooms share, kept here so that no room reaches into another (and nothing climbs back up):
the Xid catalog (the gpu check and the Slurm prolog), NVLink state (gpu, nccl), the host's RDMA adapters (fabric,
nccl, `verify explain`), the process group (nccl, train), /dev/shm (shm, dataloader, train), the DataLoader sweep and
its plot (dataloader, train, the advisor)."""
