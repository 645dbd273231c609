"""Several hosts' outputs of one kind in one paste (sweep35): two `nvidia-smi` tables, two `ibstat` listings, two
hosts' `ulimit -l`, one after the other. Read as one list they end FACTS_INVALID (a GPU index twice) or, worse, a
pass: the first host's port named `mlx5_0` hides the second's, down. So the paste is cut where a host's output
starts and each host is judged on its own: a fault on either is the file's (verify/explain/__init__.py).

Where a host's output starts, as pastes show it:
- a shell prompt naming its host (`user@node01:~$ ibstat`, `[root@gpu02 ~]# nvidia-smi`);
- a header naming it: clush's and dshbak's box (a name between two dashed rules), Ansible's `node01 | CHANGED | rc=0
  >>`, `tail`'s `==> node01.log <==`, a rule-framed `=== node01 ===`, a markdown heading or bold line (`### node01`,
  `**node01**`) or a label (`Node 1:`, `host: gpu02`): a name with a digit, not a heading's word;
- pdsh's `node01: ` before each line (launchers.hosts strips it for the parsers: here the lines are grouped by it),
  and a central syslog's or journald's host field (`Oct 25 11:35:11 node01 kernel: `);
- with no host named, a tool's banner printed again (`NVIDIA-SMI 550.90.07`, `==NVSMI LOG==`) or an RDMA listing
  that starts over at its first adapter: two runs, which may be two hosts, and a fault in either is not withheld.
One host (one name however often its prompt shows) is no split: its commands are one node's evidence."""
from __future__ import annotations

import re
from typing import Any

from .launchers import prefixes
from .pasted import as_printed

_NAME = r"[A-Za-z0-9][\w-]*(?:\.[\w-]+)*"
# `user@host:path$ `, `user@host path # `, `[user@host path]$ `, a virtualenv's `(venv) ` before it
_PROMPT = re.compile(rf"^[ \t]*(?:\([^()\n]*\)[ \t]*)?\[?[\w.-]+@({_NAME})(?:[: \t][^\n$#%>\]]{{0,200}})?\]?[ \t]?[$#%>]"
                     r"(?:[ \t]|$)")
# `gpu01:~$ ` (a PS1 of `\h:\w\$`: the host, a path from `~` or `/`), and `$ ssh gpu02 ibstat`: a command run on
# the host it names
_HOST_PATH = re.compile(rf"^[ \t]*(?!(?:https?|s?ftp|file):)({_NAME}):[~/][^\s$#%>]*[ \t]?[$#%>](?:[ \t]|$)")
_SSH = re.compile(rf"^[^\n]{{0,200}}?[$#%>][ \t]+ssh[ \t]+(?:(?:-[bcDEeFIiJLlmOopQRSWw][ \t]*\S+|-[46AaCfGgKkMNnqsTtVvXxYy]+)[ \t]+)*"
                  rf"(?:[\w.-]+@)?({_NAME})[ \t]+[^\s-]")
_RULE = re.compile(r"^[ \t]*-{3,}[ \t]*$")
_BOXED = re.compile(rf"^[ \t]*({_NAME}(?:\[[\d,\-]+\])?)(?:[ \t]+\(\d+\))?[ \t]*$")     # clush -b's `node[01-02] (2)`
_ANSIBLE = re.compile(rf"^({_NAME}) \| (?:SUCCESS|CHANGED|FAILED!?|UNREACHABLE!?)\b")
_TAIL = re.compile(r"^==> (?!/sys/|/proc/|/dev/)(\S(?:.*\S)?) <==$")        # a node's files are one host
_FRAMED = re.compile(rf"^[ \t]*[=#*-]{{3,}}[ \t]*({_NAME})[ \t]*[=#*-]{{3,}}[ \t]*$")
# a markdown heading or a bold line naming the host (`### gpu01`, `**node-a2**`), or a label (`Node 1:`, `host: gpu02`)
_HEADING = re.compile(rf"^[ \t]*(?:#{{1,6}}[ \t]+|\*\*)(?=[\w.-]*[A-Za-z])({_NAME})(?:\*\*)?[ \t]*:?[ \t]*$")
_LABEL = re.compile(rf"^[ \t]*(?:node|host|hostname|server)[ \t]*[:=]?[ \t]*({_NAME})[ \t]*:?[ \t]*$", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_PDSH = re.compile(rf"^({_NAME}):(?: |$)")
# syslog's and journald's `<time> host kernel: ` / `host ident[pid]: ` (launchers.PREFIXES), its host taken
_SYSLOG = re.compile(r"^(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d|"
                     r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) "
                     rf"({_NAME}) (?:kernel|[\w./@-]+\[\d+\]): ")
# a tool's banner, once per run; an RDMA listing's adapter line
_BANNERS = (re.compile(r"^\|? *NVIDIA-SMI \d+\.\d+"), re.compile(r"^=+NVSMI LOG=+$"),
            # `nvidia-smi --query-gpu=... --format=csv`'s header line
            re.compile(r"^(?:index|name|uuid|pci\.bus_id|timestamp|driver_version)(?:, [\w.\[\] %/]+)+$"))
# an adapter's (or, in `rdma link`, a port's) first line, up to what names it: a state that differs is the same port
_ADAPTER = re.compile(r"^(?:CA '[^']+'|Infiniband device '[^']+' port \d+ status:|hca_id:\s*\S+|"
                      r"(?:\d+/\d+: )?link \S+/\d+)")
# what goes with a table's banner above it: its date line and its top border
_ABOVE = re.compile(r"^(?:\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*|\+[-=+]+\+)$")


def _short(name: str) -> str:
    """A host as one name: `node01.cluster.local` and `node01` are one host."""
    return name.split(".")[0].lower() if not re.fullmatch(r"[\d.]+", name) else name


def ran_on(text: str) -> set[str]:
    """The hosts the paste's shell prompts (and `ssh host cmd`) name: where its commands ran, as one name each."""
    return {_short(m.group(1)) for line in text.splitlines()
            if len(line) < 400 and (m := _SSH.match(line) or _PROMPT.match(line) or _HOST_PATH.match(line))}


def _marker(lines: list[str], n: int) -> str | None:
    """The host whose output line n starts, where it names one."""
    line = lines[n]
    if m := _SSH.match(line) or _PROMPT.match(line) or _HOST_PATH.match(line) or _ANSIBLE.match(line):
        return _short(m.group(1))
    if (m := _TAIL.match(line)) or ((m := _FRAMED.match(line) or _HEADING.match(line) or _LABEL.match(line))
                                     and _DIGIT.search(m.group(1))):
        return m.group(1)
    if 0 < n < len(lines) - 1 and _RULE.match(lines[n - 1]) and _RULE.match(lines[n + 1]) and (m := _BOXED.match(line)):
        return m.group(1)
    return None


def _by_marker(lines: list[str]) -> list[tuple[str, str]] | None:
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    for n, line in enumerate(lines):
        host = _marker(lines, n)
        if host is not None and host != parts[-1][0]:
            if parts[-1][1] and _RULE.match(parts[-1][1][-1]) and _BOXED.match(line):
                parts[-1][1].pop()          # clush's upper rule is the new host's
            parts.append((host, []))
        parts[-1][1].append(line)
    return _grouped(parts)


def _grouped(parts: list[tuple[str | None, list[str]]]) -> list[tuple[str, str]] | None:
    """Each named host's lines together (A, B, A: A's two parts are one host's), in the order first seen; what came
    before the first name kept as its own part. None unless two hosts are named."""
    named: dict[str, list[str]] = {}
    for host, lines in parts:
        if host is not None:
            named.setdefault(host, []).extend(lines)
    if len(named) < 2:
        return None
    head = parts[0][1] if parts[0][0] is None and any(line.strip() for line in parts[0][1]) else []
    return ([("before the first host", "\n".join(head))] if head else []) + [(h, "\n".join(ls)) for h, ls in named.items()]


def _line_host(line: str) -> tuple[str | None, str]:
    """The host a line names before its text, and the text as a parser reads it: pdsh's `node01: ` taken off (a name
    with a digit, dot or dash after its first character, unlike `NVRM:`), syslog's and journald's host kept (a kernel
    log's stamp is its event's time)."""
    if (m := _PDSH.match(line)) and re.search(r"[\d.-]", m.group(1)[1:]):
        return m.group(1), line[m.end():]
    if m := _SYSLOG.match(line):
        return _short(m.group(1)), line
    return None, line


def _by_line(lines: list[str]) -> list[tuple[str, str]] | None:
    """Lines grouped by the host each names (pdsh, a central syslog), where most lines name one and two hosts are
    named."""
    found = [_line_host(line) for line in lines]
    shown = [line for line in lines if line.strip()]
    tagged = [host for host, _ in found if host is not None]
    if len(tagged) * 2 < max(3, len(shown)):
        return None
    if len(set(tagged)) < 2:
        return None
    return _grouped([(host, [rest]) for host, rest in found if host is not None])


def _by_banner(lines: list[str]) -> list[tuple[str, str]] | None:
    """A tool's run printed again with no host named: each run a part (`run 1`, `run 2`)."""
    bare = [prefixes(line).strip() for line in lines]
    starts: list[int] = []
    for banner in _BANNERS:
        starts = [n for n, line in enumerate(bare) if banner.match(line)]
        if len(starts) >= 2:
            break
    else:
        # the listing's first adapter named again, in the same words (`ibstat` then `ibstatus` of one host is one
        # listing in two formats, read together; `ibv_devinfo` then `ibv_devinfo -d mlx4_1 -v` is one adapter read
        # again, cx3-two-dual-port-hcas-...)
        names = [m.group(0) if (m := _ADAPTER.match(line)) else None for line in bare]
        first = next((n for n, name in enumerate(names) if name), None)
        if first is None:
            return None
        starts = [first] + [n for n in range(first + 1, len(bare)) if names[n] == names[first]]
        listed = [{name for name in names[a:b] if name} for a, b in zip(starts, starts[1:] + [len(bare)], strict=True)]
        # a run of one adapter beside a longer one is that adapter read again (`-d mlx4_1 -v`); a second host's
        # listing lists two or more, or the same adapters as the first (one adapter each)
        if len(starts) < 2 or not (all(len(names) >= 2 for names in listed) or all(n == listed[0] for n in listed)):
            return None
    cuts = []
    for start in starts:
        while start > 0 and _ABOVE.match(bare[start - 1]):
            start -= 1
        cuts.append(start)
    cuts[0] = 0
    return [(f"run {i + 1}", "\n".join(lines[a:b])) for i, (a, b) in enumerate(zip(cuts, cuts[1:] + [len(lines)],
                                                                                 strict=True))]


def sections(text: str) -> list[tuple[str, str]] | None:
    """(host, its text) for each host whose output the paste holds, or None where it shows one host (or none named
    and no tool run twice)."""
    lines = as_printed(text).split("\n")
    return _by_marker(lines) or _by_line(lines) or _by_banner(lines)


# The file's verdict over its hosts': a fault on any host is the file's (the first host's on a tie), and the whole
# text read as one stays a candidate for a fault that one host's part shows only with another's. With no fault, the
# whole text's verdict stands (a host's part may be a piece of an interleaved paste: pdsh prints lines as they come),
# except where reading the hosts as one list made FACTS_INVALID: then a pass only where every host passed, one
# host's "nothing to judge" or unread health being no all-clear for the paste.
_RANK = {"fail": 4, "warn": 3, "skip": 1, "pass": 0}
UNREAD = frozenset({"HEALTH_NOT_ASSESSED"})


def _rank(result: Any) -> float:
    return 2 if result.code == "FACTS_INVALID" else _RANK.get(result.status, 0)


def _fault(result: Any) -> bool:
    return (result.status == "fail" and result.code != "FACTS_INVALID") or (
        result.status == "warn" and result.code not in UNREAD)


def per_host(judged: list[tuple[str, Any]], whole: Any) -> Any:
    """The file's result from each host's (host, result) and the whole text's, its host named."""
    candidates: list[tuple[str | None, Any]] = [*judged, (None, whole)]
    faults = [c for c in candidates if _fault(c[1])]
    if faults:
        host, chosen = max(faults, key=lambda c: _rank(c[1]))
    elif whole.code != "FACTS_INVALID":
        host, chosen = None, whole
    else:
        host, chosen = max(judged, key=lambda c: _rank(c[1]))
    said = "; ".join(f"{h}: {r.status}{' ' + r.code if r.code else ''}" for h, r in judged)
    if chosen.status == "pass" and host is not None:
        chosen.summary = f"each of the {len(judged)} hosts passes; {host}: {chosen.summary}"
    elif host is not None:
        chosen.summary = f"{host}: {chosen.summary}"
    chosen.details[:0] = [f"read host by host ({len(judged)} in the paste), each judged on its own: {said}"]
    return chosen
