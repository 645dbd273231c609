"""How the readers of hostile text grow with their input: `python -m verify.explain.bench`. Each reader that once took
super-linear time on a crafted input (hunt78, fuzz70, batch 230's RAS JSON) runs on that input at n and at 4n, side by
side in one run; the ratio is the figure (linear about 4, quadratic about 16). Printed, never asserted: the tests hold
what the readers return on those inputs, this holds how long they take."""
from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ..checks.nccl import ncclog, plugreg
from ..checks.train.imagefault import image_fault
from . import (
    aznhc,
    dupgpu,
    fiinfo,
    fmstatus,
    fragment,
    gpudfabric,
    ibcounters,
    ibdiagnet,
    iblinkinfo,
    importfail,
    ncclras,
    once,
    peermem,
    shellimit,
    xidrelay,
)

_PREFIX = "h:1:1 [0] NCCL INFO "
RUNS = 3

# (name, the reader, the input at size n)
CASES: tuple[tuple[str, Callable[[Any], Any], Callable[[int], Any]], ...] = (
    ("dupgpu: joined NCCL lines", dupgpu.duplicate, lambda n: (_PREFIX + "Bootstrap : Using eth0 ") * n + "\n"),
    ("plugreg: a long line beside a plugin", plugreg.warned_failure,
     lambda n: _PREFIX + "NET/Foo " + "Invalid argument " * (4 * n) + "\n"),
    ("gpudfabric: a pipe row of blanks", gpudfabric.detect, lambda n: "|" + " " * (4 * n) + "|\n"),
    ("xidrelay: a long Xid list", xidrelay.events, lambda n: "Found XID errors: " + "79 " * (2 * n) + "\n"),
    ("ncclog: a cut HCA list", ncclog.lines, lambda n: _PREFIX + "NET/IB : Using [0]mlx5_0:1/IB [1]ml\n" + "x\n" * (4 * n)),
    ("importfail: a long word", importfail.detect, lambda n: "ImportError: " + "a" * (8 * n) + ": undefined symbol: x\n"),
    ("imagefault: a run of lib", lambda m: image_fault({"type": "ImportError", "message": m}),
     lambda n: "lib" * (8 * n) + ": undefined symbol: x"),
    # hunt86: a program's name tried again after each `+` of a run (a base64 blob's line)
    ("importfail: a run of `a+` (base64)", importfail.detect, lambda n: "a+" * (4 * n) + "\n"),
    ("once: each GPU once", once, lambda n: {"devices": [{"index": i, "uuid": f"GPU-{i}"} for i in range(4 * n)]}),
    ("blank lines (fmstatus, peermem, fi_info)",
     lambda t: (fmstatus.detect(t), peermem.detect(t), fiinfo.parse(t), peermem.parse(t)), lambda n: "\n" * (8 * n) + "x\n"),
    ("ncclras: JSON-like lines", ncclras.detect,
     lambda n: ('{"nccl_version": "x", ' + '"communicators": [1],' * 10 + "}\n") * n),
    # hunt83: blank lines and repeated headers in the RAS and -q -x fragment readers, prompts, a long space run
    ("ncclras: blank lines", ncclras.parse, lambda n: "\n" * (40 * n) + "x"),
    ("ncclras: repeated Errors headers", ncclras.parse, lambda n: "Errors\n======\n" * (8 * n)),
    ("fragment: blank lines", fragment.FRAGMENT.search, lambda n: "\n" * (40 * n) + "x"),
    ("shellimit: many prompts", shellimit.memlock, lambda n: "$ ncclras -v\n" * (4 * n)),
    ("shellimit: a prompt before a long space run", shellimit.memlock, lambda n: "user@h:~$ ls" + " " * (4 * n) + "x\n"),
    # issue 35: the fabric-wide tools, a whole fabric's listing of CAs and counters, and lines of one long link string
    ("iblinkinfo: many CA blocks", lambda t: (iblinkinfo.parse(t), iblinkinfo.unread(t), iblinkinfo.said(t)),
     lambda n: "".join(f"CA: n{i} mlx5_0:\n      0x{i:016x} {i % 60000:6d}    1[  ] ==( 4X 53.125 Gbps Active/  LinkUp)"
                       f"==>  1 {i % 40:4d}[  ] \"sw\" ( )\n" for i in range(n // 4))),
    ("iblinkinfo: lines of brackets", iblinkinfo.detect, lambda n: "CA: x:\n" + "==(" * 100 + "\n" * n),
    ("ibcounters: many counter lines", lambda t: (ibcounters.parse(t), ibcounters.said(t)),
     lambda n: 'Errors for "n1 HCA-1"\n' + "   GUID 0x1 port 1: [SymbolErrorCounter == 1]\n" * (n // 4)),
    ("ibdiagnet: banners", lambda t: (ibdiagnet.detect(t), ibdiagnet.said(t)), lambda n: "-I-" + "-" * 60 + "\n" * n),
    # Azure NHC's lines: check names and fault codes repeated on a line, many hosts' lines
    ("aznhc: repeated check names and codes", lambda t: (aznhc.unread_gpu(t), aznhc.trouble_fabric(t)),
     lambda n: ("h-1 | ERROR: nhc: Health check failed: " + "check_x " * 40 + "FaultCode: " * 40 + "\n") * n),
)


def _seconds(fn: Callable[[Any], Any], make: Callable[[int], Any], n: int) -> float:
    times = []
    for _ in range(RUNS):
        data = make(n)                  # afresh: `once` edits its facts
        start = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(n: int = 5_000) -> int:
    print(f"{'reader':44} {'n s':>9} {'4n s':>9} {'ratio':>6}")
    for name, fn, make in CASES:
        small, large = _seconds(fn, make, n), _seconds(fn, make, 4 * n)
        print(f"{name:44} {small:9.4f} {large:9.4f} {large / small if small else float('inf'):6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5_000))
