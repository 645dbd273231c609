"""Which locked package goes to which install step (one layer each) of templates/partials/builder.j2.

A node that holds an image of the family pulls only the layers whose bytes changed, so the venv is cut where versions
change apart (issue 38, item 5): the CUDA wheels go in several layers, the ones that change least lowest (a layer's
place matters too: a runtime reuses an unpacked layer only over the same layers below it):

- cusparselt: one version (0.8.1) across CUDA 13.0 and 13.2;
- cuda: the CUDA toolkit's libraries (cuBLAS, cuFFT, the runtime, NVSHMEM, ...), changed by a CUDA minor bump;
- nccl: NCCL, bumped by some torch releases (2.13.0 -> 2.14.1), not by others (2.14.1 -> 2.15.0);
- cudnn: cuDNN, bumped by every torch release of the matrix;
then torch (torch, torchvision, triton: every torch bump) and the rest (numpy, nvidia-ml-py, ...).

Each part is a condition on a lock line (`name==version \\`), written once here: the template's awk runs it at build
time (`awk '/^[^[:space:]#]/ { keep = (<condition>) } keep'`) and `part_of` reads it the same way (a unit test checks
that every package of every lock lands in exactly one part). The regular expressions are plain POSIX EREs, which awk
and Python's re read alike.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    """One install step: the lines whose package name matches `include` and none of `exclude` (EREs over the name)."""

    name: str
    include: str
    exclude: tuple[str, ...] = ()
    cuda: bool = False          # installed with --target /opt/venv/cuda (no Python version in any path, no bytecode)

    def awk(self) -> str:
        """The condition as the template's awk reads it ($0: the lock line)."""
        cond = f"$0 ~ /^({self.include})==/"
        return cond + "".join(f" && $0 !~ /^({e})==/" for e in self.exclude)

    def matches(self, line: str) -> bool:
        """The same condition in Python (what the awk above keeps)."""
        return re.search(f"^({self.include})==", line) is not None and \
            not any(re.search(f"^({e})==", line) for e in self.exclude)


CUSPARSELT = r"nvidia-cusparselt-[a-z0-9]+"
NCCL = r"nvidia-nccl-[a-z0-9]+"
CUDNN = r"nvidia-cudnn-[a-z0-9]+"
NVML = r"nvidia-ml-py"          # NVML's Python bindings: not a CUDA library, goes with the rest
CUDA = r"nvidia-[a-z0-9-]+|cuda-toolkit"
TORCH = r"torch|torchvision|triton"

# Install order, lowest layer first. The CUDA parts exist in CUDA images only.
PARTS = (
    Part("cusparselt", CUSPARSELT, cuda=True),
    Part("cuda", CUDA, (NVML, CUSPARSELT, NCCL, CUDNN), cuda=True),
    Part("nccl", NCCL, cuda=True),
    Part("cudnn", CUDNN, cuda=True),
    Part("torch", TORCH),
)
# The rest: every line no part above takes, nvidia-ml-py included (written as before the split, so a CPU image's
# Dockerfile did not change with it).
REST_AWK = "$0 !~ /^(torch|torchvision|triton|cuda-toolkit)==/ && ($0 !~ /^nvidia-/ || $0 ~ /^nvidia-ml-py==/)"


def rest_matches(line: str) -> bool:
    """REST_AWK in Python."""
    return re.search(r"^(torch|torchvision|triton|cuda-toolkit)==", line) is None and \
        (re.search(r"^nvidia-", line) is None or re.search(r"^nvidia-ml-py==", line) is not None)


def part_of(line: str, cuda: bool = True) -> list[str]:
    """The parts that take a package line of a lock (`name==version \\`): exactly one, by the same conditions the
    template's awk runs. In a CPU image (`cuda` false) the CUDA parts are not rendered."""
    names = [p.name for p in PARTS if (cuda or not p.cuda) and p.matches(line)]
    return names + (["rest"] if rest_matches(line) else [])


def cuda_parts() -> list[tuple[str, str]]:
    """(name, awk condition) of each CUDA part, lowest first: the template's loop."""
    return [(p.name, p.awk()) for p in PARTS if p.cuda]


def conditions() -> dict[str, str]:
    """name -> awk condition of the torch part and the rest, for the template."""
    return {**{p.name: p.awk() for p in PARTS if not p.cuda}, "rest": REST_AWK}
