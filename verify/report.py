"""Reports: a terminal table, JSON (schema: verify/report.schema.json) and JUnit XML."""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any

from . import REPORT_SCHEMA_VERSION, __version__
from .atomic import write_atomic
from .result import FAIL, PASS, SKIP, WARN, CheckResult, Status

MARK = {PASS: "PASS", FAIL: "FAIL", WARN: "WARN", SKIP: "SKIP"}
COLOR = {PASS: "32", FAIL: "31", WARN: "33", SKIP: "36"}


def overall(results: list[CheckResult], interrupted: str | None = None) -> Status:
    """fail if any check failed or the run was cut off; else warn, else pass; skip when nothing was judged."""
    statuses = {r.status for r in results}
    if FAIL in statuses or interrupted:
        return FAIL
    return WARN if WARN in statuses else PASS if PASS in statuses else SKIP


def build_report(results: list[CheckResult], environment: dict[str, Any], options: dict[str, Any],
                 replay: dict[str, Any] | None = None, interrupted: str | None = None) -> dict[str, Any]:
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": {"name": "verify", "version": __version__},
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": overall(results, interrupted),
        "replay": replay,
        "interrupted": interrupted,
        "environment": environment,
        "options": options,
        "checks": [r.to_dict() for r in results],
    }


def check_writable(path: str) -> str | None:
    """Why a report cannot be written to `path` (None when it can): checked before the first check runs."""
    if os.path.isdir(path):
        return "is a directory"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = stat.S_IFREG         # not there yet (or a link to nowhere): a new file
    if not stat.S_ISREG(mode):
        # `/dev/stdout`, a FIFO: the report is written to a temporary file renamed over the path, which would replace
        # the link or pipe itself (as root, /dev/stdout for every later program) and never reach the stream (hunt86)
        return "is a device or pipe, not a file: give a file path (the report is a file, written whole then renamed)"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return f"folder {parent} does not exist"
    try:
        fd, probe = tempfile.mkstemp(prefix=".verify-write-test-", dir=parent)
    except OSError as exc:
        return f"folder {parent} is not writable ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def write_json(report: dict[str, Any], path: str) -> None:
    write_atomic(path, json.dumps(report, indent=2, default=repr) + "\n")


# XML 1.0 allows tab, newline and carriage return among the control characters, and no surrogates.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def one_line(text: object) -> str:
    """`text` as one printable line: a control or line-separator character a user typed (e.g. \x1e) is escaped,
    so an error message stays the one line it promises."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def xml_text(text: str | None) -> str:
    return _XML_BAD.sub("", text or "")


def write_junit(results: list[CheckResult], path: str, suite: str = "verify", interrupted: str | None = None) -> None:
    """A testcase per check; an interrupted run adds an `interrupted` testcase in error, so CI never reads it as green."""
    failures = sum(r.status == FAIL for r in results)
    skipped = sum(r.status == SKIP for r in results)
    testsuite = ET.Element("testsuite", name=suite, tests=str(len(results)), failures=str(failures),
                           errors="1" if interrupted else "0", skipped=str(skipped),
                           time=f"{sum(r.duration_s for r in results):.3f}")
    if interrupted:
        case = ET.SubElement(testsuite, "testcase", classname=suite, name="interrupted", time="0.000")
        ET.SubElement(case, "error", message=xml_text(f"verify was interrupted by {interrupted}"), type="INTERRUPTED")
    for r in results:
        case = ET.SubElement(testsuite, "testcase", classname=suite, name=xml_text(r.name), time=f"{r.duration_s:.3f}")
        code = [f"code: {r.code} (owner: {r.owner})"] if r.code else []
        body = xml_text("\n".join(r.details + ([f"remedy: {r.remedy}"] if r.remedy else []) + code
                                   + ([r.output] if r.output else [])))
        if r.status == FAIL:
            ET.SubElement(case, "failure", message=xml_text(r.summary), type=r.code or "fail").text = body
        elif r.status == SKIP:
            ET.SubElement(case, "skipped", message=xml_text(r.summary))
        ET.SubElement(case, "system-out").text = xml_text(f"[{r.status}] {r.summary}\n") + body
    tree = ET.ElementTree(testsuite)
    ET.indent(tree)
    write_atomic(path, ET.tostring(testsuite, encoding="unicode", xml_declaration=True) + "\n")


def _paint(status: Status, text: str) -> str:
    if os.environ.get("NO_COLOR") or not os.isatty(1):
        return text
    return f"\033[{COLOR[status]}m{text}\033[0m"


def _known(env: dict[str, Any], *fields: tuple[str, str, object]) -> str:
    """`label value` per field, three spaces apart. A key the environment holds with no value prints `-` (probed:
    absent); a key it does not hold is left out (not known: a replay or `verify explain`), never printed as None."""
    return "   ".join(f"{label} {value if value not in (None, '') else '-'}" for label, key, value in fields
                       if key in env)


def environment_lines(env: dict[str, Any]) -> list[str]:
    if "error" in env:
        return [f"environment: {env['error']}"]
    torch = f"{env.get('torch')} ({env.get('torch_build')} build)" if env.get("torch") else f"not importable: {env.get('torch_error')}"
    mem = env.get("memory_bytes")
    lines = [
        _known(env, ("python", "python", env.get("python")), ("torch", "torch" if "torch" in env else "torch_error", torch), ("CUDA", "cuda", env.get("cuda")),
               ("cuDNN", "cudnn", env.get("cudnn")), ("NCCL", "nccl", env.get("nccl"))),
        _known(env, ("torchvision", "torchvision", env.get("torchvision")), ("torchdata", "torchdata", env.get("torchdata")),
               ("pyarrow", "pyarrow", env.get("pyarrow")),
               ("h5py", "h5py", f"{env.get('h5py') or '-'} (HDF5 {env.get('hdf5') or '-'})"),
               ("numpy", "numpy", env.get("numpy"))),
        _known(env, ("driver", "driver", env.get("driver")), ("container", "container", env.get("container") or "no"),
               ("cgroup CPUs", "cpus", env.get("cpus") or "unlimited"),
               ("memory limit", "memory_bytes", f"{mem / 2**30:.1f} GiB" if mem else "unlimited"),
               ("host CPUs", "cpu_count", env.get("cpu_count"))),
    ] + ([f"machine {env['machine']}" + (f"   EMULATED ({env.get('emulation_evidence')}): throughput is reported, not judged"
                                        if env.get("emulated") else "   native")] if env.get("machine") else [])
    return [line for line in lines if line]


def render_table(results: list[CheckResult], env: dict[str, Any], width: int | None = None,
                 replay: dict[str, Any] | None = None, interrupted: str | None = None) -> str:
    width = width or min(shutil.get_terminal_size((120, 20)).columns, 140)
    lines = []
    if replay and replay.get("recorded_by") == "verify explain":   # no host, no time: the files are all it knows
        lines.append(f"EXPLAIN of {replay.get('facts_dir')} (a row per file, in this order): judged with today's "
                     "thresholds, nothing probed")
    elif replay:
        lines.append(f"REPLAY of facts recorded on {replay.get('host')} at {replay.get('recorded')} "
                     f"({replay.get('facts_dir')}): judged again with today's thresholds, nothing probed")
    lines += environment_lines(env) + [""]
    name_w = max([7, *(len(r.name) for r in results)])     # CHECK column: 7 wide, or the longest name
    pad = " " * (name_w + 16)                                 # name, status, time: where a summary line starts
    text_w = max(40, width - name_w - 17)
    lines.append(f"{'CHECK':<{name_w}} {'STATUS':<6} {'TIME':>6}  SUMMARY")
    for r in results:
        summary = textwrap.wrap(r.summary, text_w) or [""]
        lines.append(f"{r.name:<{name_w}} {_paint(r.status, MARK[r.status]):<6} {r.duration_s:>5.1f}s  {summary[0]}")
        lines += [f"{pad}{s}" for s in summary[1:]]
        if r.status in (FAIL, WARN) and r.remedy:
            lines += [f"{pad}{s}" for s in textwrap.wrap("remedy: " + r.remedy, text_w)]
        if r.status in (FAIL, WARN) and r.code:
            lines.append(f"{pad}code: {r.code} (owner: {r.owner})")
        if r.status == FAIL and r.output:
            lines += [f"{pad}| {s}" for s in r.output.splitlines()[-8:]]
    verdict = overall(results, interrupted)
    counts = ", ".join(f"{sum(r.status == s for r in results)} {s}" for s in (PASS, WARN, SKIP, FAIL))
    why = f"; interrupted by {interrupted}" if interrupted else "; nothing was judged" if verdict == SKIP else ""
    lines += ["", f"verdict: {_paint(verdict, MARK[verdict])} ({counts}{why})"]
    return "\n".join(lines)
