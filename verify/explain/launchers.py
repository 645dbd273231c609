"""The prefixes launchers and log collectors put before each line of a tool's output, each anchored at the line's
start and stripped one after another while any matches (stacked: Ray's `(EngineCore pid=..) (RayWorkerWrapper pid=..,
ip=..)`, `srun -l` under kubectl's stamp): `srun -l`/`--label` (`0: `, ` 3: `), Open MPI's `[1,0]<stdout>:`,
torchrun's `[rank3]:` and `[default0]:`, Ray's `(RayWorker pid=123, ip=10.0.0.1) `, docker compose's `trainer-1  | `,
`kubectl logs --timestamps`' RFC 3339 stamp, the CRI log files under /var/log/pods (containerd's and CRI-O's
`<RFC 3339> stderr F `), Go's `log` package's `2020/10/14 18:04:53 ` (the device plugin's, the
container toolkit's), journald's and syslog's `<time> host ident[pid]: `, dmesg's `[ 1234.567890] ` and `dmesg -T`'s
`[Wed May  1 12:00:00 2024] `; and pdsh's or clush's `node001: ` where it starts most lines."""
from __future__ import annotations

import re

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# journald's and syslog's `host ident[pid]: `: after an ISO stamp only the kernel's or an ident with its pid, so that
# a tool's own `Name value:` line under kubectl's stamp is never taken for one
_IDENT = r"[\w.-]+ (?:kernel|[\w./@-]+\[\d+\]): "
PREFIXES: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"^ {0,4}\d{1,5}:(?: |$)",                                      # srun -l / --label (padded to the widest task id)
    r"^\[\d+,\d+\]<(?:stdout|stderr)>: ?",                      # mpirun --tag-output
    r"^\[(?:rank|default)\d+\]: ?",                             # torchrun --tee / torch's rank-prefixed logs
    r"^\((?:[\w.-]+ )?pid=\d+(?:, ip=[\d.:a-fA-F]+)?\) ",          # Ray
    r"^[\w.-]+-\d+ +\| ",                                       # docker compose `service-1  | `
    rf"^{_MONTH} [ \d]\d \d\d:\d\d:\d\d (?:[\w.-]+ [^\s:]+: )?",   # syslog (RFC 3164), journalctl's default
    rf"^{_ISO} (?:stdout|stderr) [FP] ",                       # CRI log files (kubelet's /var/log/pods/...)
    rf"^{_ISO} (?:{_IDENT})?",                                  # kubectl --timestamps, journald short-iso
    r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})? ",           # Go's log package (device plugin, toolkit)
    r"^\[ *\d+\.\d+\] ",                                        # dmesg
    rf"^\[\w{{3}} {_MONTH} [ \d]\d \d\d:\d\d:\d\d \d{{4}}\] ",     # dmesg -T
))


_ANY = re.compile("|".join(f"(?:{p.pattern})" for p in PREFIXES))
# a test harness or CI log indents what it quotes (Go's `t.Log`, a YAML block): the distinctive prefixes (Open MPI's,
# torchrun's, Ray's) are read after an indent too; an indent alone is kept (nvidia-smi -q's tree is made of them)
_INDENTED = re.compile(r"^[ \t]+(?=\[\d+,\d+\]<(?:stdout|stderr)>:|\[(?:rank|default)\d+\]:|\((?:[\w.-]+ )?pid=\d+)")


def prefixes(line: str) -> str:
    """The line without the launchers' prefixes before it (any number, in any order)."""
    line = _INDENTED.sub("", line, count=1)
    for _ in range(16):         # each takes a character off at least: 16 deep, a hostile line stays linear
        found = _ANY.match(line)
        if not found:
            break
        line = line[found.end():]
    return line


# pdsh's and clush's `node001: ` before each line of a host's output: a host name (a digit, dot or dash in it, unlike
# `NVRM:` or `hca_id:`), read as one only where it starts most lines (a lone `nvidia-nvswitch1: SXid` is the kernel's)
_HOST = re.compile(r"^([A-Za-z0-9][\w.-]*):(?: |$)")      # its name holds a digit, dot or dash after its first
_HOST_MARK = re.compile(r"[\d.-]")                           # character (two overlapping `[\w.-]*`: quadratic)


def hosts(lines: list[str]) -> list[str]:
    """The lines without pdsh's host names, where most lines start with one."""
    found = [m.end() if (m := _HOST.match(line)) and _HOST_MARK.search(m.group(1), 1) else 0 for line in lines]
    if sum(1 for n in found if n) * 2 < max(3, len(lines)):
        return lines
    return [prefixes(line[n:]) if n else line for line, n in zip(lines, found, strict=True)]
