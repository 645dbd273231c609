"""A program's CUDA kernel fault beside the kernel log's application Xid (13, 31, 43, ...) for it: one fault, told twice.
The Xid is the driver's own account of it (which engine, which SM, which process), so it names the verdict; both
are the job's. Alone, an application Xid ranks below every host finding (HANDLED), and a program's kernel fault
keeps its own rank (verify/findings.py)."""
from __future__ import annotations

from ...findings import HANDLED, RANK, Findings
from ...result import WARN


def xid_tells_the_kernel_fault(found: Findings) -> None:
    """Where a warned CUDA_KERNEL_FAULT (the job's) stands beside an application Xid warned to the job, the Xid takes
    the kernel fault's rank and the kernel fault the next one: the same place among the other findings, the Xid
    named first."""
    faults = [f for f in found.items if f.code == "CUDA_KERNEL_FAULT" and f.severity == WARN and f.owner == "job"]
    xids = [f for f in found.items if f.code == "XID_ERROR" and f.severity == WARN and f.owner == "job"
            and f.rank == HANDLED]
    if not faults or not xids:
        return
    for f in xids:
        f.rank = RANK["CUDA_KERNEL_FAULT"]
    for f in faults:
        f.rank = RANK["CUDA_KERNEL_FAULT"] + 1
