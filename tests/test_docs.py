"""The documentation is tested against the code it describes (issue 37): every `make` command in README.md and
docs/ names a real target and real variables, every `verify` / `python -m scripts` / prolog flag exists in its
argparse definition, every failure code named exists with the owner the text gives it, the code table is the one
verify/codes.py makes, and every link between the documents resolves. Pure reading: no subprocess."""
from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.docs import BEGIN, END, splice
from tests.helpers import ROOT
from verify.codes import CODES, readme_table
from verify.prolog.verdict import NOT_ASSESSED_CODES

pytestmark = pytest.mark.unit

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAKEFILE = ROOT / "Makefile"

# ---- what the documents say, as commands ----

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")


def command_lines(text: str) -> Iterator[str]:
    """Each line of a fenced block (continuations joined) and each inline code span outside the blocks."""
    for block in FENCE.findall(text):
        yield from block.replace("\\\n", " ").splitlines()
    yield from SPAN.findall(FENCE.sub("", text))


def all_lines() -> Iterator[tuple[str, str]]:
    for path in DOCS:
        for line in command_lines(path.read_text(encoding="utf-8")):
            yield path.relative_to(ROOT).as_posix(), line


# ---- make ----

ASSIGN = r"[A-Z_][A-Z0-9_]*=(?:'[^']*'|\"[^\"]*\"|<[^>]*>|[^\s`,;)]*)"
MAKE = re.compile(rf"((?:{ASSIGN}\s+)*)\bmake((?:\s+(?:{ASSIGN}|[a-z][a-z0-9-]*(?=\s|$)))*)")


def makefile_targets(text: str) -> set[str]:
    return set(re.findall(r"^([a-z0-9-]+):", text, re.M))


def makefile_knobs(text: str) -> set[str]:
    return set(re.findall(r"^([A-Z_]+) \?=", text, re.M))


def make_commands(line: str) -> Iterator[tuple[list[str], list[str]]]:
    """(targets, variables) of every `make ...` in a line; variables before `make` (its environment) count too."""
    for match in MAKE.finditer(line):
        words = re.findall(rf"{ASSIGN}|[a-z][a-z0-9-]*", match.group(2))
        variables = [w.split("=", 1)[0] for w in re.findall(ASSIGN, match.group(1))]
        variables += [w.split("=", 1)[0] for w in words if "=" in w]
        yield [w for w in words if "=" not in w], variables


def _known_variables() -> set[str]:
    from scripts.cli import PATH_FLAGS
    from scripts.settings import KNOBS
    return makefile_knobs(MAKEFILE.read_text()) | set(KNOBS) | set(PATH_FLAGS)


def make_problems(lines: list[tuple[str, str]], targets: set[str], variables: set[str]) -> list[str]:
    problems = []
    for where, line in lines:
        for named, assigned in make_commands(line):
            problems += [f"{where}: `make {t}` is no Makefile target ({line.strip()[:80]})" for t in named
                         if t not in targets]
            problems += [f"{where}: {v}= is no Makefile knob ({line.strip()[:80]})" for v in assigned
                         if v not in variables]
    return problems


def test_every_make_command_names_a_real_target_and_real_variables():
    lines = list(all_lines())
    assert sum(1 for _, line in lines for _ in make_commands(line)) > 100     # the reader found the commands
    text = MAKEFILE.read_text()
    assert make_problems(lines, makefile_targets(text), _known_variables()) == []


def test_a_renamed_knob_or_target_in_a_doc_is_caught():
    targets, variables = makefile_targets(MAKEFILE.read_text()), _known_variables()
    lines = [("x.md", "make slurm NODES=2 GPUS=0"), ("x.md", "SHM_SIZE=64m make verify"),
             ("x.md", "make slurm NODS=2"), ("x.md", "make verfy"), ("x.md", "SHM=64m make verify")]
    assert make_problems(lines, targets, variables) == [
        "x.md: NODS= is no Makefile knob (make slurm NODS=2)", "x.md: `make verfy` is no Makefile target (make verfy)",
        "x.md: SHM= is no Makefile knob (SHM=64m make verify)"]


def test_the_readme_keeps_the_two_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quick.splitlines()] == ["make build verify", "make test"]
    assert len(readme.splitlines()) <= 300


# ---- flags ----

def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def _source_flags(path: Path) -> set[str]:
    """Flags a parser built inside a function adds (verify bench and its advisor): read, never run."""
    return {str(node.args[0].value) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
            and node.args and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("-")}


def tool_flags() -> dict[str, set[str]]:
    from scripts.cli import build_parser
    from verify.cli import _parser as verify_parser
    from verify.prolog.config import _parser as prolog_parser
    scripts = build_parser()
    sub = next(a for a in scripts._actions if isinstance(a, argparse._SubParsersAction))
    scripts_flags = _flags(scripts).union(*(_flags(p) for p in sub.choices.values()))
    tools = ROOT / "verify" / "tools"
    return {"verify": _flags(verify_parser()),
            "verify bench": _source_flags(tools / "bench.py") | _source_flags(tools / "advisor.py") | {"-h", "--help"},
            "prolog": _flags(prolog_parser()), "metrics": _source_flags(ROOT / "verify" / "prolog" / "metrics.py"),
            "scripts": scripts_flags}


INVOCATION = re.compile(r"(python3? -m verify\.prolog\.metrics|python3? -m verify\.prolog|torchimages-prolog"
                        r"|python3? -m scripts|(?<![\w/.-])verify(?: bench)?)(?=\s|$)")
STOP = re.compile(r"\s(?:&&|\|\||;|\||&|>|#|\)|\\)")


def invocations(line: str) -> Iterator[tuple[str, list[str]]]:
    """(tool, flags) of each verify / prolog / scripts command in a line, up to the next shell operator."""
    for match in INVOCATION.finditer(line):
        if line[:match.start()].rstrip().endswith("make"):
            continue                                    # `make verify` is a target, not the tool
        rest = STOP.split(line[match.end():], 1)[0]
        name = match.group(1)
        tool = ("metrics" if name.endswith("metrics") else "prolog" if "prolog" in name
                else "scripts" if name.endswith("scripts") else "verify bench" if name.endswith("bench") else "verify")
        yield tool, [w.split("=", 1)[0] for w in re.findall(r"(?<![^\s\[])--?[a-zA-Z][\w-]*(?:=\S*)?", rest)]


def flag_problems(lines: list[tuple[str, str]], known: dict[str, set[str]]) -> list[str]:
    return [f"{where}: {tool} has no flag {flag} ({line.strip()[:90]})" for where, line in lines
            for tool, flags in invocations(line) for flag in flags if flag not in known[tool]]


def test_every_documented_flag_exists_in_its_tool():
    lines = list(all_lines())
    assert sum(1 for _, line in lines for _, flags in invocations(line) if flags) > 20
    assert flag_problems(lines, tool_flags()) == []


def test_a_flag_the_tool_lacks_is_caught():
    known = tool_flags()
    lines = [("x.md", "verify --checks gpu --expect-gpu 2"), ("x.md", "verify --preflight [--budjet 30]"), ("x.md", "make verify VERIFY_ARGS=1"),
             ("x.md", "torchimages-prolog --revalidate --node n2 --brekaer 0.1"),
             ("x.md", "python -m scripts gate --image x --trust k")]
    assert flag_problems(lines, known) == [
        "x.md: verify has no flag --expect-gpu (verify --checks gpu --expect-gpu 2)",
        "x.md: verify has no flag --budjet (verify --preflight [--budjet 30])",
        "x.md: prolog has no flag --brekaer (torchimages-prolog --revalidate --node n2 --brekaer 0.1)"]


# ---- codes ----

CODE = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`")
# backticked names that are variables, not codes: the environment a job, a launcher or the image reads
ENV_PREFIXES = ("NCCL_", "SLURM_", "SLURMD_", "TORCHIMAGES_", "CUDA_", "NVIDIA_", "PIP_", "UV_", "REGISTRY_",
                "JUPYTER_", "SSH_", "VERIFY_", "GLOO_", "TORCH_", "MELLANOX_", "HYPOTHESIS_", "REQUIRE_", "SSL_",
                "REQUESTS_", "XDG_", "LD_", "RLIMIT_", "CAP_", "IPC_", "NODE_", "LOCAL_", "WORLD_", "BENCH_", "KEY_",
                "GPU_RUNNER_", "NVML_", "NET_", "XID_HISTORY", "XID_REPEATED", "RDZV_TIMEOUT", "O_APPEND",
                "TARGETARCH", "BUILD_", "FACTS_", "SOURCE_DATE_EPOCH")
# owners a check names instead of the code's usual one, where its facts say so (verify/checks/gpu/node.py why_no_gpu:
# a CPU build of torch is the image's, a missing libnvidia-ml or NVML failing the host's)
OTHER_OWNERS = {"GPU_NOT_VISIBLE": ("image", "host")}
OWNED = re.compile(r"`([A-Z][A-Z0-9_]+)`(?:,| \(|: | is)\s*(?:owner |the )?(image|host|job)\b")


def named_codes(text: str, variables: set[str]) -> set[str]:
    return {c for c in CODE.findall(text) if c not in variables and not c.startswith(ENV_PREFIXES)}


def code_problems(texts: dict[str, str], variables: set[str]) -> list[str]:
    problems = [f"{where}: `{c}` is no code in verify/codes.py" for where, text in texts.items()
                for c in sorted(named_codes(text, variables)) if c not in CODES and c not in NOT_ASSESSED_CODES]
    problems += [f"{where}: `{c}` is owned by {CODES[c].owner} in verify/codes.py, the text says {owner}"
                 for where, text in texts.items() for c, owner in OWNED.findall(text)
                 if c in CODES and owner not in {CODES[c].owner, *OTHER_OWNERS.get(c, ())}]
    return problems


def _texts() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in DOCS}


def test_every_code_named_exists_with_the_owner_the_docs_give():
    texts = _texts()
    assert len(set().union(*(named_codes(t, _known_variables()) for t in texts.values()))) > 40
    assert code_problems(texts, _known_variables()) == []


def test_a_wrong_code_or_owner_is_caught():
    texts = {"x.md": "`GPU_LOST`, `SHM_TO_SMALL` and `SHM_TOO_SMALL` (host: its size) `NCCL_IB_DISABLE`"}
    assert code_problems(texts, set()) == ["x.md: `SHM_TO_SMALL` is no code in verify/codes.py",
                                           "x.md: `SHM_TOO_SMALL` is owned by job in verify/codes.py, the text says host"]


def test_the_code_table_is_the_one_verify_codes_makes():
    text = (ROOT / "docs" / "codes.md").read_text()
    assert splice(text, readme_table()) == text, "docs/codes.md differs: run `.venv/bin/python -m scripts docs-codes`"
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    gpu_row = next(line for line in text.splitlines() if line.startswith("| `GPU_NOT_VISIBLE`"))
    assert gpu_row.split(" | ")[1] == CODES["GPU_NOT_VISIBLE"].owner


# ---- links ----

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    slugs = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), re.M):
        slugs.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return slugs


def link_problems(path: Path, text: str) -> list[str]:
    problems = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue                                    # http(s), mailto: outside the repository
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            problems.append(f"{path.name}: link to {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            problems.append(f"{path.name}: link to {target}: no such heading")
    return problems


def test_every_link_between_the_documents_resolves():
    found = [p for path in DOCS for p in link_problems(path, path.read_text(encoding="utf-8"))]
    assert found == []
    assert sum(len(LINK.findall(p.read_text())) for p in DOCS) > 20


def test_a_broken_link_is_caught(tmp_path):
    (tmp_path / "a.md").write_text("# Title here\n")
    page = tmp_path / "b.md"
    text = "[ok](a.md#title-here) [gone](c.md) [anchor](a.md#nope) [web](https://example.org)"
    assert link_problems(page, text) == ["b.md: link to c.md: no such file", "b.md: link to a.md#nope: no such heading"]


def test_every_doc_is_reachable_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert {p.name for p in (ROOT / "docs").glob("*.md")} <= set(re.findall(r"\(docs/([\w-]+\.md)", readme))


# ---- the README's samples of verify's output ----

ROW = re.compile(r"^(?P<name>[a-z][a-z0-9]*) +(?P<status>PASS|WARN|SKIP|FAIL) +(?P<time>\d+\.\d)s  (?P<summary>.*)$")
PROGRESS = re.compile(r"^\[(?P<i>\d+)/(?P<n>\d+)\] (?P<name>[a-z][a-z0-9]*): (?:running \.\.\.|(?P<status>[a-z]+) "
                      r"\((?P<time>\d+\.\d) s\))$")
START = "verify: collecting the environment ..."
Row = tuple[str, list[str], dict[str, Any]]


def verify_samples(text: str) -> list[list[str]]:
    """The fenced blocks that show rows of verify's table."""
    return [block.splitlines() for block in FENCE.findall(text) if any(ROW.match(line) for line in block.splitlines())]


def verify_checks() -> list[str]:
    from verify.checks import CHECKS
    return list(CHECKS)


def parse_rows(lines: list[str]) -> list[Row]:
    """Each table row: (name, its printed lines, what it shows: status, time, summary, remedy, code, owner)."""
    rows: list[Row] = []
    for line in lines:
        match = ROW.match(line)
        if match:
            rows.append((match["name"], [line], {"status": match["status"].lower(), "duration_s": float(match["time"]),
                                                 "summary": match["summary"], "remedy": None}))
        elif rows and line.startswith(" ") and line.strip():
            _, printed, shown = rows[-1]
            printed.append(line)
            part = line.strip()
            code = re.fullmatch(r"code: (\w+) \(owner: (\w+)\)", part)
            if code:
                shown["code"], shown["owner"] = code.groups()
            elif part.startswith("remedy: "):
                shown["remedy"] = part[len("remedy: "):]
            else:
                key = "remedy" if shown["remedy"] is not None else "summary"
                shown[key] = f"{shown[key]} {part}"
    return rows


def rendered_table(rows: list[Row], suite: list[str]) -> list[str]:
    """verify/report.py's table of these rows, every other check of the suite a placeholder (the widths)."""
    from verify.report import render_table
    from verify.result import CheckResult
    shown = {name: info for name, _, info in rows}
    results = [CheckResult(name, shown[name]["status"], shown[name]["summary"], remedy=shown[name]["remedy"],
                           code=shown[name].get("code"), owner=shown[name].get("owner"),
                           duration_s=shown[name]["duration_s"]) if name in shown else CheckResult(name, "skip", "-")
               for name in suite]
    return render_table(results, {}, width=120).splitlines()


def table_problems(lines: list[str], rows: list[Row], suite: list[str]) -> list[str]:
    """The rows, header and verdict line as verify prints them; rows left out only behind a '...' line."""
    table = rendered_table(rows, suite)
    header = next(line for line in table if line.startswith("CHECK"))
    problems = [] if header in lines or not any(line.startswith("CHECK") for line in lines) else [
        f"the header is not verify's: {header!r}"]
    printed: dict[str, list[str]] = {}
    for line in table[table.index(header) + 1:]:
        if ROW.match(line):
            printed[line.split()[0]] = [line]
        elif line.startswith(" ") and printed:
            printed[list(printed)[-1]].append(line)
    problems += [f"{name}: verify prints {printed[name]}, the README {shown}" for name, shown, _ in rows
                 if printed[name] != shown]
    verdict = next((line for line in lines if line.startswith("verdict: ")), None)
    end = lines.index(verdict) if verdict else len(lines)
    if len(rows) != len(suite) and "..." not in lines[lines.index(header) + 1 if header in lines else 0:end]:
        problems.append(f"{len(suite) - len(rows)} row(s) left out of the table without a '...' line")
    if verdict is None:
        return problems + ["no verdict line (verify ends its table with one)"]
    if len(rows) == len(suite) and verdict != table[-1]:
        problems.append(f"the verdict line is not verify's for these rows: {table[-1]!r}")
    counts = re.fullmatch(r"verdict: (PASS|WARN|SKIP|FAIL) \((\d+) pass, (\d+) warn, (\d+) skip, (\d+) fail\)", verdict)
    if not counts or sum(int(n) for n in counts.groups()[1:]) != len(suite):
        problems.append(f"the verdict line does not count the {len(suite)} checks: {verdict!r}")
    return problems


def progress_problems(lines: list[str], rows: list[Row], suite: list[str]) -> list[str]:
    """`[i/N] check: ...` in the suite's order, each result line agreeing with its row of the table."""
    shown = {name: info for name, _, info in rows}
    problems = []
    for line in (line for line in lines if line.startswith("[")):
        match = PROGRESS.match(line)
        if not match:
            problems.append(f"not a progress line of verify's: {line!r}")
        elif int(match["n"]) != len(suite) or suite[int(match["i"]) - 1] != match["name"]:
            problems.append(f"progress {line!r}: the suite's check {match['i']} of {len(suite)} is another")
        elif match["status"] and match["name"] in shown and (
                (match["status"], float(match["time"])) != (shown[match["name"]]["status"],
                                                            shown[match["name"]]["duration_s"])):
            problems.append(f"progress {line!r} disagrees with the table's row")
    return problems


def environment_labels() -> list[list[str]]:
    """The labels of each line of verify's environment block: what two renderings share before their values."""
    from verify.report import environment_lines
    keys = ("python", "torch", "torch_build", "cuda", "cudnn", "nccl", "torchvision", "torchdata", "pyarrow", "h5py",
            "hdf5", "numpy", "driver", "container", "cpus", "cpu_count", "machine")
    one, two = (environment_lines({**{key: str(n) for key in keys}, "memory_bytes": n * 2**30}) for n in (1, 2))
    return [[_shared(f, g).strip() for f, g in zip(a.split("   "), b.split("   "), strict=True)]
            for a, b in zip(one, two, strict=True)]


def _shared(a: str, b: str) -> str:
    """The longest common start of two strings."""
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a[:n]


def start_problems(lines: list[str]) -> list[str]:
    """A whole run's sample (it shows the header) starts as verify does, or with a '...' line that says it is
    trimmed: the environment line, progress, the environment block (every line, its fields), a blank line."""
    if not any(line.startswith("CHECK") for line in lines):
        return []
    head = lines[:next(i for i, line in enumerate(lines) if line.startswith("CHECK"))]
    if not head or head[0] not in (START, "..."):
        return [f"a whole run's sample starts with {START!r}, as verify does (or '...')"]
    block = [line for line in head[1:] if line and line != "..." and not line.startswith("[")]
    labels = environment_labels()
    if [line.split(" ", 1)[0] for line in block] != [fields[0].split(" ", 1)[0] for fields in labels]:
        return [f"the environment block is {len(labels)} lines, as verify prints it: {[f[0] for f in labels]}"]
    problems = [f"environment line {line!r}: verify prints the fields {fields}" for line, fields in zip(block, labels, strict=True)
                if len(line.split("   ")) != len(fields) or any(
                    f != label and not f.startswith(label + " ") for f, label in zip(line.split("   "), fields, strict=False))]
    return problems + ([] if head[-1] == "" else ["no blank line before the header"])


def sample_problems(lines: list[str]) -> list[str]:
    """How a README sample of verify's output differs from what verify prints for the same results."""
    suite = verify_checks()
    rows = parse_rows(lines)
    names = [name for name, _, _ in rows]
    if any(name not in suite for name in names) or [n for n in suite if n in names] != names:
        return [f"rows {names}: not the suite's checks in its order ({', '.join(suite)})"]
    return table_problems(lines, rows, suite) + progress_problems(lines, rows, suite) + start_problems(lines)


@pytest.mark.parametrize("doc", ["README.md", "docs/checks.md"])
def test_the_samples_of_verify_are_what_verify_prints(doc):
    samples = verify_samples((ROOT / doc).read_text(encoding="utf-8"))
    assert len(samples) >= 2                                        # the whole run and the shm failure
    assert any(len(parse_rows(s)) == len(verify_checks()) for s in samples)
    assert [p for s in samples for p in sample_problems(s)] == []
    if doc == "README.md":
        assert any(s[0] == START for s in samples)                 # the README shows where verify begins


def test_a_sample_that_drifts_from_verify_is_caught():
    good = next(s for s in verify_samples((ROOT / "README.md").read_text(encoding="utf-8"))
                if len(parse_rows(s)) == len(verify_checks()))
    assert sample_problems(good) == []
    row = next(i for i, line in enumerate(good) if line.startswith("shm "))
    narrow = [*good[:row], good[row].replace("shm        ", "shm     "), *good[row + 1:]]
    assert any(p.startswith("shm: verify prints") for p in sample_problems(narrow))
    dropped = [line for line in good if not line.startswith("arrow ")]
    assert "1 row(s) left out of the table without a '...' line" in sample_problems(dropped)
    recount = [line.replace("verdict: PASS (5 pass", "verdict: PASS (4 pass") for line in good]
    assert any("verdict line" in p for p in sample_problems(recount))
    assert any("progress" in p for p in sample_problems([line.replace("[9/9] train", "[9/10] train") for line in good]))
    assert any(p.startswith("environment line") for p in sample_problems([line.replace("cgroup CPUs", "CPUs")
                                                                          for line in good]))
    table_only = good[good.index(next(line for line in good if line.startswith("CHECK"))):]
    assert sample_problems(table_only) == [f"a whole run's sample starts with {START!r}, as verify does (or '...')"]
    assert "no verdict line (verify ends its table with one)" in sample_problems(["...", good[row], "..."])
