"""A training process that died at import or start on its own package set (issue 35, batch 185): the image's.

Words that name a library, a native operator or a program the environment should hold, and that no GPU, driver or
node can cause:
- the dynamic linker refusing a library: `libcudnn_ops_infer.so.8: cannot open shared object file`, ctranslate2's
  `Could not load library libX.so`, `libtorch_cuda.so: undefined symbol: ncclMemFree` (two NCCL wheels, the older
  one first), `version `GLIBCXX_3.4.30' not found (required by ...so)`;
- torchvision's C++ ops missing from this torch (a wheel built for another torch): `operator torchvision::nms does
  not exist`, `Couldn't load custom C++ ops`; or built for another CUDA (`... compiled with different CUDA versions`);
- the program the job starts not on PATH (`execve(): torchrun: No such file or directory`, `command not found`).
The driver's own libraries (libcuda, libnvidia-ml) are the host's (the container toolkit mounts them) and are not
read here; a CUDA error the catalog names is judged before this (verify/checks/train/verdict.py)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# a library's name where it starts (after a path's `/`, a quote, a blank): tried from every `lib` of a long run of them
# (`liblib...`, a facts file's hostile message) the search was quadratic
# (or a Python extension module of a package, `h5py/defs.cpython-38-aarch64-linux-gnu.so: undefined symbol: H5Sencode`:
# the package built against another version of the library the image loads first, batch 251)
_LIB = r"(?<![\w.+-])(?:lib[\w.+-]*|[\w+-]+\.(?:cpython-\d+[\w-]*|abi3))\.so[\w.]*"
# the words, one table for both roads (verify/explain/importfail.py finds the line with it)
WORDS = re.compile(
    rf"(?P<lib>{_LIB}): cannot open shared object file"
    rf"|Could not load (?:library|dynamic library) '?(?P<lib2>{_LIB})"
    rf"|(?P<lib3>{_LIB}): undefined symbol: (?P<sym>\w+)"
    rf"|version `[\w.]+' not found \(required by [^)]{{0,4096}}?(?P<lib4>{_LIB})\)"
    r"|operator (?P<op>torchvision::\w+) does not exist"
    # one installed package importing a name another installed package of a different release lacks (torch's
    # inductor and triton: `cannot import name 'triton_key' from 'triton.compiler.compiler' (/usr/local/lib/
    # python3.10/dist-packages/triton/compiler/compiler.py)`, batch 299): both sides under site-/dist-packages, the
    # image's package set; a job's own module (any other path) is not this rule's
    r"|cannot import name '(?P<name>\w+)' from '(?P<mod>[\w.]+)' \([^()\n]{0,300}/(?:site|dist)-packages/[^()\n]{0,300}\)"
    r"|Couldn't load custom C\+\+ ops"
    # torchvision's own start-up check (extension._check_cuda_version): its wheel built for another CUDA than torch's
    # (batch 308: `PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8`), TORCHVISION_CUDA_MISMATCH's
    r"|(?P<tvcuda>PyTorch and torchvision were compiled with different CUDA versions)"
    # the program the job starts, looked up on PATH and not there (no `/`: a path the job names is the job's own):
    # Slurm's `slurmstepd: error: execve(): torchrun: No such file or directory`, a shell's `torchrun: command not
    # found`, an OCI runtime's `exec: "torchrun": executable file not found in $PATH` (batch 259); zsh's `zsh: command
    # not found: torchrun` (before bash's form, which would name zsh), dash's `/bin/sh: 1: torchrun: not found`
    # (LlamaFactory#5216), crun's `executable file `torchrun` not found in $PATH` (containers/crun#1688). The name's
    # class in the look-behind too: a start after a `+` was retried along a run of them (base64: quadratic, hunt86)
    r"|execve\(\): (?P<cmd>[\w.+-]+): No such file or directory"
    r"|\bzsh: command not found: (?P<cmd4>[\w.+-]+)"
    r"|(?<![\w/.+-])(?P<cmd2>[\w.+-]+): command not found"
    r"|: \d+: (?P<cmd5>[\w.+-]+): not found\b"
    r"|exec: \"(?P<cmd3>[\w.+-]+)\": executable file not found in \$PATH"
    r"|executable file [`'](?P<cmd6>[\w.+-]+)[`'] not found in \$PATH"
    # enroot (under pyxis) starting the container: any program it looks up in the image's own tree (batch 267)
    r"|enroot-switchroot: failed to execute: (?P<enroot>(?:/(?:usr/(?:local/)?|opt/(?:[\w.+-]+/){0,3})?s?bin/)?[\w.+-]+): "
    r"No such file or directory")
# the driver's user-space libraries come from the host (nvidia-container-toolkit), never from the image's wheels
_DRIVER_LIBS = re.compile(r"^lib(?:cuda|nvidia-\w+|nvcuvid|nvoptix)\.so")
# the programs a PyTorch image's packages put on PATH to start a job: the interpreter and its launchers (torch's
# torchrun, DeepSpeed's, Accelerate's, Horovod's, Lightning's, Composer's, ColossalAI's, Ray's). Any other program not
# found is not this rule's (hunt86): a probe's tool (`numactl`, `ibstat`, `lspci`, `nvidia-smi`), the environment
# modules' `module`/`ml` (the job's shell or the node's Lmod), the scheduler's: the text does not show it the image's
_IMAGE_PROGRAMS = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|torchrun|deepspeed|accelerate|horovodrun|lightning|"
                             r"composer|colossalai|ray)$")
_PROGRAM_GROUPS = ("cmd", "cmd2", "cmd3", "cmd4", "cmd5", "cmd6")


# a word every match of WORDS holds (a library's `.so`, a missing program's words): a text with none is not searched
# (its alternatives lead with classes the engine retries at every position; hunt97: 0.4 s on a 2 MB log)
_WORDS_LITERALS = (".so", "torchvision::", "Couldn't load custom C++ ops", "execve(): ", "command not found",
                   ": not found", "executable file", "enroot-switchroot", "cannot import name",
                   "torchvision were compiled")


def may_match(text: str) -> bool:
    """Whether WORDS may match anywhere in `text` (False: it cannot)."""
    return any(word in text for word in _WORDS_LITERALS)


def image_fault(failure: Mapping[str, Any]) -> str | None:
    """Why a failure is the image's package set, or None where its words name no library or operator of the image."""
    found = WORDS.search(f"{failure.get('type')}: {failure.get('message')}")
    if not found:
        return None
    if found.group("enroot"):
        return (f"{found.group('enroot')}, the program the container starts (its entrypoint or the command), is not in "
                "the image enroot unpacked: the image's")
    if cmd := next((found.group(g) for g in _PROGRAM_GROUPS if found.group(g)), None):
        if not _IMAGE_PROGRAMS.match(cmd):
            return None
        return (f"{cmd}, the program the job starts, is not installed where it runs (not on PATH): the image's (or "
                "the environment module's) package set")
    lib = found.group("lib") or found.group("lib2") or found.group("lib3") or found.group("lib4")
    if lib and _DRIVER_LIBS.match(lib.rsplit("/", 1)[-1]):
        return None
    if found.group("name"):
        return (f"an installed package imports {found.group('name')} from {found.group('mod')}, which the installed "
                f"{found.group('mod').split('.')[0]} lacks: two packages of releases not made for each other, the "
                "image's package set")
    if found.group("sym"):
        return (f"{lib} needs {found.group('sym')}, which the library the loader found first lacks: two versions of a "
                "library in the environment (pip wheels, the image's own), the image's package set")
    if lib:
        return f"{lib} could not be loaded: a library the image's packages need is missing or of another version"
    if found.group("tvcuda"):
        return ("torch and torchvision were built for different CUDA versions (TORCHVISION_CUDA_MISMATCH's cause): two "
                "wheels not made for each other, the image's package set")
    return ("torchvision's C++ operators are not in this torch: a torchvision built for another torch version "
            "(TORCHVISION_MISMATCH's cause), the image's package set")


REMEDY = ("Fix the image's package set, not the node: install the versions built for each other (torch with its "
          "torchvision, one NCCL wheel, the cuDNN/cuBLAS wheels the framework was built for) and rebuild the image.")
