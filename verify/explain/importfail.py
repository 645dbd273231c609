"""A program that died at import or start on its own package set, as Python or the dynamic linker prints it (issue 35,
batch 185):

    ImportError: .../torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree
    RuntimeError: operator torchvision::nms does not exist
    Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: ...

Into the train facts' one failure (phase `init`, no rank or node shown): the judge's TRAIN_FAILED, owner image
(verify/checks/train/imagefault.py reads the same words). The driver's own libraries (libcuda, libnvidia-ml) are
not this kind (the host's, read by the NVML and CUDA kinds); a line that quotes the words in prose
(verify/explain/said.py) is none."""
from __future__ import annotations

import re
from typing import Any

from ..checks.train.imagefault import WORDS, image_fault, may_match
from .said import printed

_TYPE = re.compile(r"(\w+(?:Error|Exception))\s*: ")
# what a program dies of starts its line: Python's exception (`ImportError: `, `OSError: `), or a C++ library's
# fatal `Could not load library` (CTranslate2, TensorFlow) before the abort; a launcher that could not start the
# program (slurmstepd's `error: execve()` or pyxis's enroot-switchroot, an OCI runtime's line naming it not found: runc's `exec: "..."`, crun's
# `executable file `...``); a shell's, led by the shell's or the script's name and ending the line, as bash (`-bash`
# at a login), zsh and dash print it: a page's `Fix: torchrun: command not found` or `... command not found error
# fix` is a title quoting it (hunt86)
_SHELL = r"(?:-?(?:[\w.-]*/)*(?:ba|z|da|k)?sh|/[\w/.-]+|[\w/.-]+\.sh)"
_DIED = re.compile(r"(?:\w+(?:Error|Exception)\s*: |Could not load (?:dynamic )?library |slurmstepd[\w.-]*: error: (?:execve|pyxis:\s+enroot-switchroot)|"
                   rf"{_SHELL}: (?:line \d+: )?[\w.+-]+: command not found\s*$|zsh: command not found: [\w.+-]+\s*$|"
                   rf"{_SHELL}: \d+: [\w.+-]+: not found\s*$|"
                   r".{0,400}?\b(?:exec: \"|executable file [`']))")
# the environment modules' own command not found (`slurm_script: line 4: ml: command not found`, envmodules/modules#339;
# Snakemake's `/usr/bin/bash: line 1: module: command not found`, snakemake/snakemake#2802): the job's shell never set
# up the module system, so a program the module would put on PATH is missing for that reason, not the image's
_NO_MODULES = re.compile(r"(?<![\w/.+-])(?:module|ml): command not found|execve\(\): (?:module|ml): No such file")
# `\b` first: a bare `\w*Warning` is tried from every letter of a long word (quadratic, 20,000 letters took 3 s)
_WARNING = re.compile(r"\b\w*Warning\b|\bW\d{4} |\bwarn(?:ing)?:", re.IGNORECASE)


def _failure(text: str) -> dict[str, Any] | None:
    if printed(_NO_MODULES, text):
        return None
    for line in (raw.strip() for raw in text.splitlines()):
        if failure := _died_of(line):
            return failure
    return None


def _died_of(line: str) -> dict[str, Any] | None:
    found = printed(WORDS, line)
    if not found or not _DIED.match(line) or _WARNING.search(line[:found.start()]):
        # a line that is not what the program died of: NCCL's INFO on its optional plugin or verbs provider
        # (`Plugin load returned 2 : libnccl-net.so: cannot open ...`), libibverbs' warning, torch's cuDNN fallback
        return None
    named = _TYPE.match(line)
    kind, message = (named.group(1), line[named.end():]) if named else ("Error", line)
    failure = {"rank": None, "node": None, "phase": "init", "type": kind, "message": message[:400]}
    return failure if image_fault(failure) else None


def detect(text: str) -> bool:
    return may_match(text) and bool(WORDS.search(text)) and _failure(text) is not None


def parse(text: str) -> dict[str, Any]:
    failure = _failure(text)
    return {"failures": [failure] if failure else []}
