"""What two or more checks' rooms share, kept out of every room so that no room reaches into another: the Xid
catalog (the gpu check and the Slurm prolog), NVLink state (gpu, nccl)."""
