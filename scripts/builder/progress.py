"""What the terminal shows of a BuildKit build: one line per finished step, never every line a RUN prints.

BuildKit's `--progress plain` names a step once (`#7 [builder 3/9] RUN ...`) and ends it with `#7 DONE 12.3s`,
`#7 CACHED` or `#7 ERROR: ...`; the whole output goes to the log file, whose name the last line says."""
from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Callable

STEP = re.compile(r"#(\d+) \[([^\]]+)\] (.*)")
END = re.compile(r"#(\d+) (DONE [0-9.]+s|CACHED|ERROR.*)")
HIDDEN = ("internal", "auth")           # BuildKit's own bookkeeping: loading the definition, the context, tokens
WIDTH = 100


class StepLines:
    """Feed it every line of the build's output; `line()` returns what the terminal gets (None: nothing)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def line(self, text: str) -> str | None:
        text = text.rstrip()
        step = STEP.match(text)
        if step:
            if step.group(2).split()[0] not in HIDDEN:
                self.names.setdefault(step.group(1), f"[{step.group(2)}] {step.group(3)}")
            return None
        end = END.match(text)
        if end and end.group(1) in self.names:
            name = self.names.pop(end.group(1))
            name = name if len(name) <= WIDTH else name[:WIDTH - 3] + "..."
            return f"{name}  {end.group(2).lower() if not end.group(2).startswith('ERROR') else end.group(2)}"
        if text.startswith("ERROR") or re.match(r"#\d+ ERROR", text):
            return text
        return None


def index_answers(url: str, timeout: float = 8.0) -> bool:
    """Whether a package index answers at all (any HTTP status counts: it is reachable); proxies as urllib sees
    them. A build that needs the index and cannot reach it fails after minutes with a hash or network error."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url.rstrip("/") + "/", method="HEAD"), timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def torch_source_problem(tag: str, torch_requirement: str, index: str | None, local_torch: bool,
                         folders: list[str], answers: Callable[[str], bool] = index_answers) -> str | None:
    """One line naming WHEELS= when the build would have no torch wheel: none in the wheel folders, and the index the
    lock resolves torch from does not answer. None when either holds (PyPI's torch: pip's own network errors)."""
    if local_torch or not index or answers(index):
        return None
    where = ", ".join(folders) if folders else "no wheel folder given"
    return (f"{tag}: no wheel for {torch_requirement} in the wheel folders ({where}) and {index} does not answer "
            f"from here: give WHEELS=<folder holding the torch wheel> (or PIP_FIND_LINKS), or build where that index "
            f"is reachable")
