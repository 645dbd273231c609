"""`torchimages-prolog`: the preflight as a gate before a job; a node drained only on evidence that it is at fault.

One module a job: verdict (what a preflight report says, and who must act), xid (the kernel log's Xid and SXid
lines through NVIDIA's catalog), kernlog (the kernel log read once, held until acted on), slurm (node names, sinfo,
scontrol and the breaker), history (each node's drains, resumes and refusals as JSON lines), statefile (state files
read and written as hostile files), metrics (Prometheus text files), cli (the command: a run, or --revalidate).
"""
