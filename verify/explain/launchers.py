"""The prefixes launchers and log collectors put before each line of a tool's output, each anchored at the line's
start and stripped one after another while any matches (stacked: Ray's `(EngineCore pid=..) (RayWorkerWrapper pid=..,
ip=..)`, `srun -l` under kubectl's stamp): `srun -l`/`--label` (`0: `, ` 3: `), Open MPI's output tags (below),
torchrun's `[rank3]:` and `[default0]:`, Ray's `(RayWorker pid=123, ip=10.0.0.1) `, docker compose's `trainer-1  | `,
`kubectl logs --timestamps`' RFC 3339 stamp, the CRI log files under /var/log/pods (containerd's and CRI-O's
`<RFC 3339> stderr F `), Go's `log` package's `2020/10/14 18:04:53 ` (the device plugin's, the
container toolkit's), journald's and syslog's `<time> host ident[pid]: `, dmesg's `[ 1234.567890] ` and `dmesg -T`'s
`[Wed May  1 12:00:00 2024] `; and pdsh's or clush's `node001: ` where it starts most lines.

Open MPI tags each piece of a rank's output it forwards (4.x: orte/mca/iof/base/iof_base_output.c; 5.x through PMIx:
src/common/pmix_iof.c): `--tag-output`'s `[1,0]<stdout>:` (5.x `[1,0]<stdout>: `, `--output tag-detailed`'s
`[1,0][host:1234]<stdout>: `, `tag-fullname`'s `[prterun-host-1234@1,0]<stdout>: `, `rank`'s `[0]<stdout>: `) and
`--timestamp-output`'s ctime before it (4.x `Mon Jan  1 12:00:00 2024[1,0]<stdout>:` or, untagged, `Mon Jan  1
12:00:00 2024<stdout>:`; 5.x the same in brackets). 4.x tags a piece that ends inside a line again where the next
piece goes on: an nccl-tests row flushed in halves reads `  8  2  float  sum  -1[1,0]<stdout>:    85.70 ...`, so on a
line that starts with a tag, the tags inside it go too (`untagged`). MPICH's and Intel MPI's `-prepend-rank` (`-l`)
`[0] ` is taken off only before what it is read for, NCCL's own lines (`host:pid:tid [0] NCCL INFO ...`, `NCCL
version 2.29.7`) and nccl-tests' (its `#` lines by their words, a row by its size, count and type): before anything
else `[1] ` is a citation's or a list's."""
from __future__ import annotations

import re

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
# journald's and syslog's `host ident[pid]: `: after an ISO stamp only the kernel's or an ident with its pid, so that
# a tool's own `Name value:` line under kubectl's stamp is never taken for one
_IDENT = r"[\w.-]+ (?:kernel|[\w./@-]+\[\d+\]): "
# Open MPI's tags (the module's docstring): a ctime, bare (4.x) or in brackets (5.x), and/or [jobid,rank] (5.x: its
# namespace before `@` with tag-fullname, `[host:pid]` after it with tag-detailed, `[rank]` alone with `rank`)
_CTIME = rf"\w{{3}} {_MONTH} [ \d]\d \d\d:\d\d:\d\d \d{{4}}"
_RANKED = r"\[(?:[\w.-]+@)?\d+,\d+\](?:\[[\w.-]+:\w+\])?|\[\d+\]"
_OMPI = rf"(?:(?:{_CTIME}|\[{_CTIME}\])(?:{_RANKED})?|{_RANKED})<std(?:out|err)>: ?"
# what MPICH's `-prepend-rank` `[0] ` is taken off before: NCCL's lines, nccl-tests' `#` lines by their words and its
# rows by size, count and a type it names
_NCCL_OWN = (r"[\w.-]+:\d+:\d+ \[\d+\] NCCL |NCCL version \d|[\w.-]+: Test (?:NCCL|CUDA) failure|"
             r"#(?:$|\s+(?:$|nThread\b|nccl-tests version|Collective test|Using devices|Rank\s+\d|size\s|\(B\)|"
             r"out-of-place|Out of bounds|Avg bus|Blocking|Per-Iteration|Parallel Init|Reducing maxBytes|"
             r"GPU memory usage|error:))|")
_ROW = r" *\d+ +\d+ +(?:u?int\d+|char|half|float\d*|double|bfloat16|f8e\dm\d) "
PREFIXES: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"^ {0,4}\d{1,5}:(?: |$)",                                      # srun -l / --label (padded to the widest task id)
    rf"^{_OMPI}",                                               # mpirun --tag-output, --timestamp-output
    rf"^\[\d{{1,5}}\] (?=(?:{_NCCL_OWN}{_ROW}))",                   # MPICH / Intel MPI -prepend-rank (-l)
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
_INDENTED = re.compile(rf"^[ \t]+(?={_OMPI}|\[(?:rank|default)\d+\]:|\((?:[\w.-]+ )?pid=\d+)")
# Open MPI's tag where 4.x tagged the next piece of a line again, and MPICH's `[0] ` so inside an nccl-tests row
# (after a figure: `-1[0]     85.70`)
_OMPI_INSIDE = re.compile(_OMPI)
_ROW_START = re.compile(_ROW)
_PREPENDED = re.compile(r"\[\d{1,5}\] ")


def _stripped(line: str) -> tuple[str, str | None]:
    """The line without its prefixes, and how a launcher tagged the pieces of it: `ompi`, the rank MPICH prepended
    (`[0] `), or None."""
    line = _INDENTED.sub("", line, count=1)
    tag = None
    for _ in range(16):         # each takes a character off at least: 16 deep, a hostile line stays linear
        found = _ANY.match(line)
        if not found:
            break
        prefix = found.group()
        tag = "ompi" if "<std" in prefix else prefix if _PREPENDED.fullmatch(prefix) else tag
        line = line[found.end():]
    return line, tag


def prefixes(line: str) -> str:
    """The line without the launchers' prefixes before it (any number, in any order)."""
    return _stripped(line)[0]


def untagged(line: str) -> str:
    """The line without its prefixes and without the tags a launcher put inside it where it forwarded the line in
    pieces (Open MPI 4.x's `[1,0]<stdout>:` before each piece; MPICH's `[0] ` inside an nccl-tests row): the tool's
    line whole. A line that starts with no such tag keeps whatever it holds."""
    line, tag = _stripped(line)
    if tag == "ompi" and "<std" in line:
        return _OMPI_INSIDE.sub("", line)
    if tag and tag != "ompi" and tag in line and _ROW_START.match(line):
        return re.sub(rf"(?<=\S){re.escape(tag)}", "", line)
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
    return [untagged(line[n:]) if n else line for line, n in zip(lines, found, strict=True)]
