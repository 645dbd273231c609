"""What the judge tests share: a result as (status, code, owner), the nccl and fabric judges on a few facts, a
corpus entry replayed, `verify explain` of a pasted text, and what the facts contract refuses in a parser's facts."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import ROOT
from verify import explain as ex
from verify import factschema, figures, replay
from verify.checks import CHECKS
from verify.facts import FabricFacts
from verify.judging import judge
from verify.options import Options

CORPUS = ROOT / "tests" / "data" / "real-world"


def raw(slug: str) -> str:
    """A corpus entry's raw excerpt, as a user would paste it into `verify explain`."""
    return (CORPUS / slug / "raw.txt").read_text()


def verdict(r: Any) -> tuple[str, str | None, str | None]:
    return r.status, r.code, r.owner


# docs/codes.md: FACTS_INCOMPLETE is the one code of "nothing to judge" (a skip that names no owner). An entry's
# expected.json that says a skip with no code and no owner says that verdict without its code's name (batch 125's
# translators), so it is read as FACTS_INCOMPLETE: a skip that names a code (FABRIC_NONE, owner host) or an owner is
# held to it as written, and a pass or a warn never meets it.
NOTHING_TO_JUDGE = ("skip", "FACTS_INCOMPLETE", None)


def wanted(verdicts: dict[str, Any]) -> dict[str, tuple[str, str | None, str | None]]:
    """An expected.json's verdicts as (status, code, owner) per check, a code-less skip read as nothing to judge."""
    return {k: NOTHING_TO_JUDGE if (v["status"], v["code"], v["owner"]) == ("skip", None, None)
            else (v["status"], v["code"], v["owner"]) for k, v in verdicts.items()}


def nccl_verdict(**facts: Any) -> tuple[str, str | None, str | None]:
    """The nccl judge's verdict on an NCCL record holding only these facts (no collective figures)."""
    return verdict(judge(CHECKS["nccl"], {"backend": "nccl", "sizes": None, **facts}, Options()))


def explained(text: str, name: str = "job.log") -> Any:
    return ex.explain_text(text, name, Options())


def fabric(**facts: Any) -> Any:
    """The fabric judge's result on a record holding only these facts (every other field unknown)."""
    return judge(CHECKS["fabric"], {**{k: None for k in FabricFacts.__annotations__}, **facts}, Options())


def replayed(slug: str) -> dict[str, tuple[str, str | None, str | None]]:
    """A corpus entry's facts judged again, as `verify --from-facts` does: (status, code, owner) per check."""
    folder = replay.load(str(CORPUS / slug / "facts"), None, {})
    return {r.name: verdict(replay.judge(r, folder.options)) for r in folder.records}


def contract(kind: ex.Kind, facts: dict[str, Any]) -> list[str]:
    """What the facts contract (verify/factschema.py and the check's figures) refuses in a parser's facts, beyond a
    printed figure that is implausible on its own (`DCGM_FI_DEV_GPU_TEMP{...} 4096`): that one is the tool's, and the
    judge makes it unknown and never a pass (verify/judging.py); a shape, a key or a contradiction is the parser's."""
    check = CHECKS[kind.check]
    if kind.check == "gpu":
        ex.once(facts)          # explain reads a GPU repeated in one paste once before judging
    rest, _ = figures.without_implausible(facts, check.figures)
    return (factschema.unknown_keys(facts, check.facts_type) if check.facts_type else []) + figures.problems(
        rest, check.figures)


# ncclras -v, NCCL 2.30.7's example (docs/examples/08_ras/01_fault_detection), trimmed to its last report: one
# process dead (tests/test_judges_batch230.py, tests/test_hunt83_inputs.py)
RAS_DEAD = """NCCL version 2.30.7 compiled with CUDA 12.8
CUDA runtime version 12080, driver version 13000

Communicators... (0.002s)
=============

Group     Comms      Nodes     Ranks     Ranks     Ranks   Status  Errors
    #  in group   per comm  per node  per comm  in group
    0         1          2       3-4         8         7  RUNNING  INCOMPLETE

Errors
======

INCOMPLETE
  Missing communicator data from 1 job process
  Process 3748990 on node node1 managing GPU 3

DEAD
  1 job process is considered dead (unreachable via the RAS network)
  Process 3748990 on node node1 managing GPU 3

Warnings
========
"""


def replayed_report(facts: Path) -> dict[str, Any]:
    """The report verify writes from a facts folder (its replay), as on disk: the replay marker dropped, so that the
    rule reading it, not the replay's refusal, is under test (tests/test_cluster_hunt55.py, hunt84)."""
    from verify.report import build_report
    folder = replay.load(str(facts), None, {})
    results = [replay.judge(r, folder.options) for r in folder.records]
    results += [replay.unknown_result(n) for n in folder.unknown]
    return json.loads(json.dumps(build_report(results, {}, {}, None), default=vars))
