"""The memlock limit a shell transcript shows: a prompt's `ulimit -l` and the figure printed under it (KiB, or
`unlimited`), the way sites check it by hand. What a job sees is what a launcher's step prints (`srun`, `mpirun`,
`qsub`/`sbatch`'s output), not the login shell's: where a launcher's command prints the limit, the lowest figure it
printed (one per task or node) is the job's and the shell's own `ulimit -l` beside it is not taken; only where no
launcher printed one is the shell's read. A launcher prints the limit where its command line says `ulimit -l`
(`srun bash -c 'ulimit -l'`) or runs a script whose body the transcript shows (`$ cat x.sh`) to be `ulimit -l`."""
from __future__ import annotations

import itertools
import re

# a prompt (`$ `, `# `, `user@host:~$ `, `[user@host ~]$ `, under a conda or virtualenv's `(base) `; oh-my-zsh's
# `➜  ~ `) and its command
_PROMPT = re.compile(r"^\s*(?:\([\w.@/:-]{1,80}\)\s*)?(?:\S*[$#%>]|\[[^\]]*\][$#]|➜\s+\S+)\s+(\S(?:.*\S)?)\s*$")
_FIGURE = re.compile(r"^\s*(?:\d+:\s*)?(\d+|unlimited)\s*$")        # srun -l's `0: ` label before a task's figure
_LAUNCHER = re.compile(r"^(?:srun|mpirun|mpiexec|prun|aprun|jsrun|pdsh|clush)\b")
# `ulimit -l` (or `-Sl`, `-S -l`, `-lS`: the soft limit, the one RLIMIT_MEMLOCK enforces) printing the limit; `ulimit
# -l unlimited` sets it and prints nothing; `-H` asks for the hard limit (the ceiling, not what the job runs under)
_LIMIT = re.compile(r"\bulimit\s+(?:-S\s+-l|-S?l|-lS)\b(?!\s+(?:\d|unlimited))")
_SHEBANG = re.compile(r"^#!")


def _commands(lines: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """Each prompt's command, the figure lines printed right under it, and all its output lines (a `cat`'s body)."""
    found = []
    for n, line in enumerate(lines):
        prompt = _PROMPT.match(line)
        if not prompt or _SHEBANG.match(line.strip()):
            continue
        out = []
        for m in range(n + 1, len(lines)):       # by index: a slice of the rest per prompt is quadratic in prompts
            after = lines[m]
            if not after.strip() or (_PROMPT.match(after) and not _SHEBANG.match(after.strip())):
                break
            out.append(after)
        # the figures right under the command: a transcript that runs on into the next tool's output with no prompt
        # between (`ulimit -l; ibstat`, a paste that dropped the next prompt) keeps the limit it printed first
        figures = [m.group(1) for m in itertools.takewhile(bool, map(_FIGURE.match, out)) if m]
        found.append((prompt.group(1), figures, out))
    return found


def _scripts(commands: list[tuple[str, list[str], list[str]]]) -> set[str]:
    """The scripts a `cat` shows whose only command is `ulimit -l`."""
    shown = set()
    for command, _, out in commands:
        named = re.match(r"cat\s+(\S+)$", command)
        body = [line.strip() for line in out if line.strip() and not line.strip().startswith("#")]
        if named and body == ["ulimit -l"]:
            shown.add(named.group(1).rsplit("/", 1)[-1])
    return shown


def _limit(command: str, scripts: set[str]) -> bool:
    return bool(_LIMIT.search(command)) or any(word.rsplit("/", 1)[-1] in scripts for word in command.split()[1:])


def _bytes(figure: str) -> int | str:
    return "unlimited" if figure == "unlimited" else int(figure) * 1024


def memlock(text: str) -> int | str | None:
    """The limit the transcript shows the job has (bytes, or "unlimited"), or None where it shows none."""
    commands = _commands(text.splitlines())
    scripts = _scripts(commands)
    printed = [(bool(_LAUNCHER.match(c)), f) for c, f, _ in commands if f and _limit(c, scripts)]
    chosen = [f for launched, f in printed if launched] or [f for _, f in printed]
    values = [_bytes(v) for figures in chosen for v in figures]
    numbers = [v for v in values if isinstance(v, int)]
    return min(numbers) if numbers else values[0] if values else None
