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
                "TARGETARCH", "BUILD_", "FACTS_")
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
