"""Paths and knobs, read once from flags and the environment, validated, frozen, passed down.

Only this module reads `os.environ` (through the mapping `cli.main` hands it). Each command names the knobs it
uses; only those are parsed, so a bad `VERIFY_TIMEOUT` breaks `verify` with one line naming the variable and
never `render`. A flag beats its variable; an empty variable is an error, not a silent default.
"""
from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT
from .durations import parse_duration, parse_skew
from .errors import UserError
from .plan.platforms import PLATFORM_NAME, normalize_platform

# What a person may have meant by a size docker-py refuses (2GiB, 1t, 1.5 TB): only to suggest the spelling it reads.
MEANT_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([kmgtp])(?:i?b)?$", re.IGNORECASE)
POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
# /dev/shm bounds: 0 would be Docker's 64 MB default, not a size; above 16 TiB is no machine's memory.
SHM_MIN, SHM_MAX = 1 << 20, 1 << 44
DEFAULT_SHM = "2g"          # the Makefile's SHM_SIZE default: make verify's container and k8s-verify's pods
# seconds: 1 s to 7 days (a wait beyond that overflows the engine client's and the OS's timers long before)
SECONDS_MIN, SECONDS_MAX = 1.0, 7 * 86400.0
# the largest sensible value of each count; more digits than that are refused before int() (5,000 digits raise)
COUNT_MAX = {"NODES": 10000, "GPUS": 64, "BENCH_RUNS": 1000, "BENCH_ROUNDS": 100}
# GPUS=0: CPU nodes (no GPU requested; the collective runs over gloo, one process per node)
COUNT_MIN = {"GPUS": 0}
# host[:port][/path] as Docker reads a registry prefix; no spaces, no upper case in the path, no trailing '/'.
REGISTRY = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
BUILD_ARG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
TRUE, FALSE = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off"})   # the closed set
CA_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE")

# The names of user choices live here, on the knobs' floor; the writers below (fleet/slurm.py, publish/signing.py)
# import them from here.
LAUNCHERS = ("pyxis", "docker", "oci", "none")     # how make slurm starts the image on each node
KEY_NAME, PUB_NAME = "signing-key.pem", "signing-key.pub"
KEY_TYPES = ("ecdsa", "ed25519")
SQSH_COMPRESSIONS = ("zstd", "gzip", "xz", "lz4", "lzo")     # what mksquashfs writes and enroot's kernels read


def engine_bytes(text: str) -> int | None:
    """The bytes docker-py sends the engine for a size (`docker.utils.parse_bytes`, its own rules: units b, k, m, g,
    binary, an optional trailing b; a bare number is bytes; the product truncated to a whole number), or None where
    docker-py refuses it or fails on it (nan, inf)."""
    from docker.errors import DockerException
    from docker.utils import parse_bytes
    try:
        value = parse_bytes(text)
    except (DockerException, ValueError, OverflowError, TypeError, IndexError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _meant(text: str) -> str:
    """The spelling docker-py reads for a size it refuses, where the intent is clear: 2GiB → 2g, 1t → 1024g."""
    match = MEANT_SIZE.match(text)
    if not match:
        return ""
    number, power = float(match.group(1)), POWERS[match.group(2).lower()]
    for unit, exponent in (("g", 3), ("m", 2), ("k", 1)):
        value = number * 1024 ** (power - exponent)
        if math.isfinite(value) and 1 <= value <= SHM_MAX and value == int(value):
            return f" (write {int(value)}{unit})"
    return ""


def human_bytes(value: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value} B"


def parse_size(text: str, name: str) -> str:
    """A Docker size (2g, 512m, 1073741824) exactly as docker-py will read it, within SHM_MIN..SHM_MAX; returned
    (stripped) for the engine, which parses that same text with the same function."""
    value = text.strip()
    # docker-py reads its digits with int(), which also takes '١' (Arabic-Indic), '１' (full width) and '1_0': a size
    # is written in ASCII digits, and the pods' sizeLimit and srun's text must say what the engine reads
    found = engine_bytes(value) if value and value.isascii() and "_" not in value else None
    if found is None or found < 0:
        raise UserError(f"{name}={text!r} is not a size Docker reads: write a number in ASCII digits with b, k, m or g "
                        f"(binary units), e.g. 2g or 512m, or a number of bytes{_meant(value)}")
    if not SHM_MIN <= found <= SHM_MAX:
        raise UserError(f"{name}={text!r} is {human_bytes(found)} as Docker reads it: give a size from 1m to 16384g "
                        f"(0 would silently mean Docker's 64 MB default), e.g. 2g")
    return value


def parse_bool(text: str, name: str) -> bool:
    """One of a closed set of words (empty: not given, false); anything else is refused, never read as no."""
    value = text.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE or value == "":
        return False
    raise UserError(f"{name}={text!r} is not a yes/no word: write 1/true/yes/on or 0/false/no/off")


# a number of seconds as a knob is written: ASCII digits, a point, an exponent (float() also reads '١٠٠', '１００' and
# '1_000', which no one types and a terminal shows as something else)
SECONDS = re.compile(r"\s*\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?\s*", re.ASCII)


def parse_seconds(text: str, name: str) -> float:
    try:
        value = float(text) if SECONDS.fullmatch(text) else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not SECONDS_MIN <= value <= SECONDS_MAX:
        raise UserError(f"{name}={text!r} is not a number of seconds: give a number from {SECONDS_MIN:.0f} to "
                        f"{SECONDS_MAX:.0f} (7 days), e.g. 900")
    return value


def parse_age(text: str, name: str) -> float:
    return parse_duration(text, name)


def parse_count(text: str, name: str, maximum: int | None = None) -> int:
    top, bottom = maximum or COUNT_MAX.get(name, 10000), COUNT_MIN.get(name, 1)
    value = text.strip()
    # ASCII digits only (isdigit() also passes '²', which int() refuses), and few enough for int() (5,000 raise)
    if not re.fullmatch(r"[0-9]{1,9}", value) or not bottom <= int(value) <= top:
        raise UserError(f"{name}={text!r}: must be a whole number, {bottom} or more (at most {top})")
    return int(value)


def parse_args_list(text: str, name: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UserError(f"{name}={text!r} cannot be split into arguments ({exc}): balance its quotes") from None


def parse_registry(text: str, name: str) -> str:
    value = text.strip()
    if value and not REGISTRY.match(value):
        raise UserError(f"{name}={text!r} is not a registry prefix: write host[:port][/path] in lower case, "
                        f"e.g. ghcr.io/acme, with no spaces and no trailing '/'")
    return value


def parse_build_args(text: str, name: str) -> tuple[str, ...]:
    """KEY=VALUE words (shell quoting allowed) for `--build-arg`."""
    words = parse_args_list(text, name)
    bad = [w for w in words if not BUILD_ARG.match(w)]
    if bad:
        raise UserError(f"{name}: {bad[0]!r} is not KEY=VALUE; give build arguments like COLD=1 OFFLINE=1")
    return words


def parse_platform(text: str, name: str) -> str:
    # Docker reads platforms case-insensitively (linux/ARM64) and by other spellings (linux/arm64/v8, linux/x86_64)
    value = normalize_platform(text.strip().lower())
    if value != "all" and not PLATFORM_NAME.fullmatch(value):
        raise UserError(f"{name}={text!r} is not a platform: write linux/<arch>, e.g. linux/amd64 or linux/arm64 "
                        f"(or all, for make build)")
    return value


def parse_file(text: str, name: str) -> str:
    if not Path(text).is_file():
        raise UserError(f"{name}={text} is not a file; point it at the proxy's CA bundle (PEM)")
    return text


def parse_dir(text: str, name: str) -> Path:
    path = Path(text.strip()).absolute()
    if not path.is_dir():
        raise UserError(f"{name}={text!r} is not a folder: give the folder the job wrote its verify reports into "
                        f"(the job's $TORCHIMAGES_REPORTS: by default reports-<job id> in the folder it was submitted from)")
    return path


def parse_folders(text: str, name: str) -> tuple[Path, ...]:
    folders = []
    for item in text.split():
        path = Path(item.removeprefix("file://"))
        if not path.is_dir():
            raise UserError(f"{name}: {item} is not a folder; give folder(s) holding the wheels, separated by spaces")
        folders.append(path)
    return tuple(folders)


def local_folders(text: str) -> tuple[Path, ...]:
    """The local directories among pip's find-links (URLs and missing folders are pip's business)."""
    return tuple(Path(i.removeprefix("file://")) for i in text.split()
                 if "://" not in i.removeprefix("file://") and Path(i.removeprefix("file://")).is_dir())


def parse_text(text: str, name: str) -> str:
    return text


# a Kubernetes extended resource name: [<DNS subdomain>/]<name>, e.g. rdma/rdma_shared_device_a, nvidia.com/hostdev
RESOURCE_NAME = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


# resources a pod of make k8s-verify requests already, or that are a GPU: an RDMA request must not replace them.
# Any case: nvidia.com/GPU is the GPU request misspelt (no device plugin advertises it: the pods pend forever)
GPU_RESOURCE = re.compile(r"nvidia\.com/(gpu|gpu\.shared|mig-.+)|amd\.com/gpu|gpu\.intel\.com/.+", re.IGNORECASE)


def parse_rdma_resource(text: str, name: str) -> str:
    """The RDMA device plugin's resource name (an extended resource: domain/name, outside kubernetes.io); empty or
    `none`: the pods request none (the default: a cluster without the plugin would leave them pending)."""
    value = text.strip()
    if value.lower() in ("none", ""):
        return ""
    if not RESOURCE_NAME.fullmatch(value):
        raise UserError(f"{name}={text!r} is not a Kubernetes resource name ([domain/]name, e.g. "
                        f"rdma/rdma_shared_device_a); give the one your RDMA device plugin advertises, or none")
    domain = value.partition("/")[0] if "/" in value else ""
    if not domain or domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        raise UserError(f"{name}={text!r} is not a device plugin's resource (cpu, memory and the kubernetes.io names "
                        f"are Kubernetes' own): give the domain/name your RDMA device plugin advertises "
                        f"(e.g. rdma/rdma_shared_device_a), or none")
    if GPU_RESOURCE.fullmatch(value):
        raise UserError(f"{name}={text!r} is the pod's GPU request, not an RDMA device: it would replace GPUS; give "
                        f"the resource your RDMA device plugin advertises (e.g. rdma/rdma_shared_device_a), or none")
    return value


def parse_optional(text: str, name: str) -> str | None:
    return text.strip() or None


def parse_user_path(text: str, name: str) -> Path:
    return Path(text.strip()).expanduser().absolute()


def parse_user_paths(text: str, name: str) -> tuple[Path, ...]:
    return tuple(Path(v).expanduser().absolute() for v in parse_args_list(text, name))


def parse_key_type(text: str, name: str) -> str:
    kind = text.strip().lower()
    if kind not in KEY_TYPES:
        raise UserError(f"{name}={text!r}: write ecdsa (P-256) or ed25519")
    return kind


def parse_driver(text: str, name: str) -> str:
    driver = text.strip()
    if not re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,4}){0,2}", driver):
        raise UserError(f"{name}={text!r} is not a driver version, e.g. 580.65.06")
    return driver


def parse_launcher(text: str, name: str = "LAUNCHER") -> str:
    value = text.strip().lower()
    if value not in LAUNCHERS:
        raise UserError(f"{name}={text!r} is not a launcher: write one of {', '.join(LAUNCHERS)} (pyxis: enroot/pyxis, "
                        f"docker: srun docker run, oci: Slurm's native containers, none: a venv on the hosts)")
    return value


def parse_sqsh_comp(text: str, name: str) -> str:
    value = text.strip().lower()
    if value not in SQSH_COMPRESSIONS:
        raise UserError(f"{name}={text!r} is not a squashfs compression: write one of {', '.join(SQSH_COMPRESSIONS)}")
    return value


# pyxis splits its arguments on these: --container-mounts=SRC:DST[:FLAGS][,...] and --container-image's list; a path
# holding one reaches enroot cut in two (seen as "sidecar not found", a missing file, a wrong mount)
PYXIS_SEPARATORS = {",": "a comma", ":": "a colon"}


def parse_sqsh(text: str, name: str) -> str:
    """The squashfs every node reads, by the absolute path they share (pyxis mounts that path)."""
    value = text.strip()
    if not value.startswith("/") or not value.endswith(".sqsh") or any(c.isspace() or c in "\\'\"$`" for c in value):
        raise UserError(f"{name}={text!r} is not an absolute path to a .sqsh file without spaces or quotes, e.g. "
                        f"{name}=/shared/images/2.13.0-cpu-debian12.sqsh (the path every node sees)")
    separator = next((c for c in value if c in PYXIS_SEPARATORS), None)
    if separator:
        raise UserError(f"{name}={text!r} holds {PYXIS_SEPARATORS[separator]} ({separator!r}), which pyxis splits "
                        f"--container-image and --container-mounts on: rename or move the .sqsh (and its .json "
                        f"sidecar) to a path without ',' or ':', e.g. {name}=/shared/images/<tag>.sqsh")
    return value


def default_wheels(env: Mapping[str, str]) -> tuple[Path, ...]:
    return local_folders(env.get("PIP_FIND_LINKS", ""))


def default_ca_cert(env: Mapping[str, str]) -> str | None:
    return next((env[v] for v in CA_VARIABLES if Path(env.get(v) or "/nonexistent").is_file()), None)


@dataclass(frozen=True)
class Knob:
    """One knob: its variable (the Makefile's and the environment's name), flag, help, the `Settings` field it
    sets, and the parser that checks a given value (the variable named in every message)."""

    variable: str
    flag: str
    help: str
    field: str
    parse: Callable[[str, str], object]
    # a knob with a non-empty default: an empty value was given on purpose, and is an error rather than the default
    empty_is_error: bool = False
    switch: bool = False            # its flag takes no value
    # the value when neither flag nor variable gives one, from the environment (else the field's default)
    fallback: Callable[[Mapping[str, str]], object] | None = None

    def read(self, value: str) -> object:
        """The field's value for a given `value`; a UserError naming the variable when it is none."""
        if self.empty_is_error and not value.strip():
            raise UserError(f"{self.variable} is empty: unset it for the default, or give a value ({self.help})")
        return self.parse(value, self.variable)


KNOB_ROWS: tuple[Knob, ...] = (
    Knob("IMAGE", "--image", "image tag, comma-separated tags, or 'all' (default: the matrix's default image)",
         "image", parse_text),
    Knob("KEEP_GOING", "--keep-going", "build the rest after a failure: 1/true/yes or 0/false/no",
         "keep_going", parse_bool, switch=True),
    Knob("CA_CERT", "--ca-cert", "proxy CA bundle passed as a build secret", "ca_cert", parse_file,
         fallback=default_ca_cert),
    Knob("WHEELS", "--wheels", "local wheel folder(s) (default: the local folders in PIP_FIND_LINKS)",
         "wheels", parse_folders, fallback=default_wheels),
    Knob("BASE_IMAGE", "--base-image", "build FROM this image instead", "base_image", parse_optional),
    Knob("BUILD_NETWORK", "--build-network", "network of the build (default: host when the engine has no bridge)",
         "build_network", parse_optional),
    Knob("SHM_SIZE", "--shm-size", "/dev/shm (default 2g): make verify's container (--shm-size), each k8s-verify pod's "
         "(its emptyDir's sizeLimit); slurm and isolate check it and say the node's own /dev/shm is used",
         "shm_size", parse_size, empty_is_error=True),
    Knob("VERIFY_TIMEOUT", "--timeout", "kill the verify container after this many seconds (default 900)",
         "verify_timeout", parse_seconds, empty_is_error=True),
    Knob("BUILD_TIMEOUT", "--build-timeout", "stop a build after this many seconds (default: none natively, 2700 "
         "for a build under emulation, where a hung step once ran 37 min)", "build_timeout", parse_seconds),
    Knob("RDMA_RESOURCE", "--rdma-resource", "k8s-verify: the RDMA device plugin's resource each pod of a multi-node "
         "GPU job requests, e.g. rdma/rdma_shared_device_a (default none: opt in only where the plugin runs, or the "
         "pods pend)", "rdma_resource", parse_rdma_resource),
    Knob("VERIFY_ARGS", "--verify-args", "extra arguments for verify inside the container",
         "verify_args", parse_args_list),
    Knob("REGISTRY", "--registry", "registry prefix (host[:port][/path]) of pushed images and manifests, "
         "e.g. ghcr.io/acme", "registry", parse_registry),
    Knob("EXTRA_BUILD_ARGS", "--extra-build-args", "more KEY=VALUE build arguments, space-separated (e.g. COLD=1)",
         "extra_build_args", parse_build_args),
    Knob("BENCH_RUNS", "--runs", "runs of `import torch` per image, the two images taking turns; the median counts "
         "(default 15)", "bench_runs", parse_count, empty_is_error=True),
    Knob("BENCH_ROUNDS", "--rounds", "cold builds of each Dockerfile, in rotating order; the median counts "
         "(default 2)", "bench_rounds", parse_count, empty_is_error=True),
    Knob("BENCH_AFTER", "--after", "bench-start: a local image of the family the node holds already (e.g. another "
         "image with the same CUDA wheels): what pulling IMAGE after it moves", "bench_after", parse_optional),
    Knob("NODES", "--nodes", "nodes (default 1)", "nodes", parse_count, empty_is_error=True),
    Knob("GPUS", "--gpus", "GPUs per node (default: from the image, 0 for a CPU image, 1 for a CUDA one)", "gpus",
         parse_count),
    Knob("LOCAL_IMAGE", "--local-image", "slurm, isolate, k8s-verify: write the job with the image's local name, "
         "which no registry holds (nodes that hold it, or a squashfs) (1/0)", "local_image", parse_bool, switch=True),
    Knob("UNPINNED", "--unpinned", "slurm, isolate, k8s-verify: run REGISTRY's tag, which make push did not record "
         "(pushed another way: CI, bake), with no digest pinned (1/0)", "unpinned", parse_bool, switch=True),
    Knob("PLATFORM", "--platform", "one platform of the image, e.g. linux/arm64 (emulated on another host); "
         "build also takes 'all' (one multi-platform buildx build)", "platform", parse_platform),
    Knob("FORCE", "--force", "base: bootstrap again even when present; lock: resolve again even when current (1/0)",
         "force", parse_bool, switch=True),
    Knob("INDEX_ONLY", "--index-only", "push: push nothing from the engine; PUT the tag's image index over the "
         "per-arch tags <tag>-<arch> already in REGISTRY (CI's merge job) (1/0)", "index_only", parse_bool, switch=True),
    Knob("REGISTRY_INSECURE", "--registry-insecure", "talk plain HTTP to REGISTRY (a local test registry) (1/0)",
         "registry_insecure", parse_bool, switch=True),
    Knob("LAUNCHER", "--launcher", "how make slurm starts the image on each node: pyxis (enroot/pyxis, default), "
         "docker (srun docker run), oci (Slurm's native containers, runc) or none (a venv on the hosts)",
         "launcher", parse_launcher),
    Knob("SQSH", "--sqsh", "slurm, isolate (pyxis): the squashfs every node mounts, an absolute path on shared storage "
         "(make sqsh's file, its .json sidecar beside it); default: the image from the registry", "sqsh", parse_sqsh),
    Knob("SQSH_COMP", "--sqsh-comp", "sqsh: the squashfs compression (zstd, gzip, xz, lz4, lzo; default zstd)",
         "sqsh_comp", parse_sqsh_comp, empty_is_error=True),
    Knob("PREFLIGHT", "--preflight", "slurm: a job that runs only `verify --preflight` on each node (1/0)",
         "preflight", parse_bool, switch=True),
    Knob("DIR", "--dir", "the folder a job wrote its verify reports into (searched recursively)",
         "fleet_dir", parse_dir),
    Knob("STATE_DIR", "--state-dir", "fleet-report: the prolog's state folder (its --state-dir); its history/ is read "
         "for each node's drains, resumes and hardware inspections (default: not read)", "state_dir", parse_user_path),
    Knob("METRICS_DIR", "--metrics-dir", "fleet-report: write Prometheus text-file metrics, one "
         "torchimages_fleet_<node>.prom a node, into this folder (node_exporter's textfile collector; default: not "
         "written)", "metrics_dir", parse_user_path),
    Knob("SIGNING_KEY", "--signing-key", "attest: the private key (PEM, ECDSA P-256 or Ed25519, mode 0600) that "
         "signs (default ~/.config/torchimages/signing-key.pem, as make keygen writes it)",
         "signing_key", parse_user_path),
    Knob("TRUST", "--trust", "report/gate: public key file(s) or folder(s), space-separated, whose signatures are "
         "believed (default ~/.config/torchimages/signing-key.pub when present)", "trust", parse_user_paths),
    Knob("REQUIRE", "--require", "report/gate: what a trusted attestation must show, e.g. \"verdict=pass gpu=H100 "
         "driver>=570\"", "require", parse_text),
    Knob("MAX_AGE", "--max-age", "report/gate/fleet-report: the oldest verification believed, e.g. 7d, 12h (s, m, h, d, w); older "
         "evidence is not believed (as REQUIRE's age<=7d)", "max_age", parse_age),
    Knob("CLOCK_SKEW", "--clock-skew", "report/gate/fleet-report/isolate: how far in the future a signed or recorded time "
         "may lie and still be believed (clocks differ), e.g. 5m (default 5m; s, m, h, d, w; 0 to 1d); later: not evidence",
         "clock_skew", parse_skew),      # durations.parse_skew: one parser of CLOCK_SKEW and TORCHIMAGES_CLOCK_SKEW
    Knob("KEY_DIR", "--key-dir", "keygen: the folder the key pair is written to, outside the repository "
         "(default ~/.config/torchimages)", "key_dir", parse_user_path),
    Knob("KEY_TYPE", "--key-type", "keygen: ecdsa (P-256, default) or ed25519", "key_type", parse_key_type),
    Knob("HOST_DRIVER", "--host-driver", "gate: this host's NVIDIA driver version (default: read with nvidia-smi)",
         "host_driver", parse_driver),
    Knob("REPORT_TIMEOUT", "--report-timeout", "report/gate: seconds for all registry reads together (default 120)",
         "report_timeout", parse_seconds),
)
KNOBS: dict[str, Knob] = {knob.variable: knob for knob in KNOB_ROWS}
# a variable the Makefile sets or reads (`NAME ?= ...`, `NAME := ...`, `NAME = ...`)
_MAKE_VARIABLE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?|::?|\+|!)?=", re.MULTILINE)
# make's command-line assignments as it hands them to a recipe (MAKEFLAGS after " -- ": spaces in a value escaped)
_MAKEFLAGS_WORD = re.compile(r"(?:\\.|[^ \\])+")


def make_variables(makefile: Path | None = None) -> frozenset[str]:
    """Every variable the Makefile sets or reads, and every knob; empty when the Makefile cannot be read."""
    try:
        text = (makefile or ROOT / "Makefile").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(_MAKE_VARIABLE.findall(text)) | frozenset(KNOBS) | frozenset(PATH_VARIABLES)


def command_line_variables(env: Mapping[str, str]) -> list[str]:
    """The names of the variables given on make's command line (`make fleet-report MAXAGE=7d`), from MAKEFLAGS."""
    flags = env.get("MAKEFLAGS", "")
    _, dashes, assigned = flags.partition(" -- ")
    if not dashes and flags.startswith("-- "):
        assigned = flags[3:]
    names = []
    for word in _MAKEFLAGS_WORD.findall(assigned):
        name = re.sub(r"\\(.)", r"\1", word).partition("=")[0].rstrip(":+?!")
        if name and "=" in word:
            names.append(name)
    return names


def misspelt_variables(env: Mapping[str, str], known: frozenset[str] | None = None) -> list[str]:
    """One line for each variable given on make's command line that no part of the Makefile reads but that is close
    to one that does (another case, a letter dropped, an underscore lost: `make fleet-report MAXAGE=7d` or
    `max_age=7d` believed reports of any age without a word, make's variables being case-sensitive). A name close to
    none (DOCKER_BUILDKIT=1, handed to a tool in the environment) is no typo of ours and is not said."""
    import difflib
    known = make_variables() if known is None else known
    lines = []
    for name in dict.fromkeys(command_line_variables(env)):
        if name in known or name.upper().startswith("TORCH"):     # TORCHIMAGES_*: fleet/job_knobs.misspelt's
            continue
        near = difflib.get_close_matches(name.upper().replace("-", "_"), sorted(known), n=1, cutoff=0.8)
        if near:
            lines.append(f"{name} is no variable of the Makefile: did you mean {near[0]}? (ignored; its default "
                         "holds)")
    return lines


# path variable → the Settings field it replaces (always read; an empty one is an error)
PATH_VARIABLES = {"BUILD_DIR": "build_dir", "MATRIX": "matrix", "COMPAT": "compat", "TEMPLATES": "templates",
                  "IMAGES_DIR": "images", "REPORTS_DIR": "reports"}


@dataclass(frozen=True)
class Settings:
    """Everything a command needs from outside: paths, knobs and the environment for child processes. The defaults
    here are the project's only ones (the paths' defaults included)."""

    root: Path = ROOT
    matrix: Path = ROOT / "matrix.yaml"
    compat: Path = ROOT / "compat.yaml"
    templates: Path = ROOT / "templates"
    images: Path = ROOT / "images"
    build_dir: Path = ROOT / "build"
    reports: Path = ROOT / "reports"
    image: str = ""
    keep_going: bool = False
    ca_cert: str | None = None
    wheels: tuple[Path, ...] = ()
    base_image: str | None = None
    build_network: str | None = None
    shm_size: str = DEFAULT_SHM
    verify_timeout: float = 900.0
    build_timeout: float | None = None      # None: scripts/builder/emulation.py's limit for emulated builds only
    rdma_resource: str = ""         # "" (none, the default): not requested; fleet/cluster.py RDMA_RESOURCE: the example
    verify_args: tuple[str, ...] = ()
    registry: str = ""
    nodes: int = 1
    gpus: int | None = None        # None: from the image (fleet/cluster.py default_gpus)
    local_image: bool = False
    unpinned: bool = False          # slurm, isolate, k8s-verify: REGISTRY's tag without a push record's digest
    platform: str | None = None     # None: each image's first platform (linux/amd64 unless the matrix says)
    force: bool = False
    index_only: bool = False
    extra_build_args: tuple[str, ...] = ()
    bench_runs: int = 15
    bench_rounds: int = 2
    bench_after: str | None = None
    docker_cli: str | None = None
    uv: str | None = None
    registry_user: str | None = None
    registry_password: str | None = field(default=None, repr=False)
    registry_insecure: bool = False
    launcher: str = "pyxis"
    preflight: bool = False
    sqsh: str = ""                  # slurm: "" the registry image; else the squashfs path the nodes mount
    sqsh_comp: str = "zstd"
    fleet_dir: Path | None = None
    state_dir: Path | None = None       # fleet-report: None: the drain history is not read
    metrics_dir: Path | None = None     # fleet-report: None: no metrics written
    signing_key: Path | None = None
    trust: tuple[Path, ...] = ()
    require: str = ""
    key_dir: Path | None = None
    key_type: str = "ecdsa"
    host_driver: str | None = None
    report_timeout: float = 120.0
    max_age: float | None = None    # seconds; None: evidence of any age is believed
    clock_skew: float = 300.0       # seconds a time may lie in the future and still be believed (CLOCK_SKEW)
    child_env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def logs(self) -> Path:
        return self.build_dir / "logs"

    @property
    def wheels_stage(self) -> Path:
        """Where the pinned wheels are staged: the build context admits build/wheels (see .dockerignore)."""
        return self.root / "build" / "wheels"

    @property
    def uv_cache(self) -> Path:
        """Where a uv wheel is downloaded once when no wheel folder holds it."""
        return self.build_dir / "cache" / "uv"

    @property
    def push_dir(self) -> Path:
        """pushed.json: what `make push` pushed (tag → digest reference), read by `make attest`."""
        return self.reports / "push"

    @property
    def bench_json(self) -> Path:
        return self.build_dir / "bench-build.json"

    @property
    def bench_start_json(self) -> Path:
        return self.build_dir / "bench-start.json"

    @property
    def sqsh_dir(self) -> Path:
        return self.build_dir / "sqsh"

    @property
    def k8s_dir(self) -> Path:
        return self.build_dir / "k8s"

    @property
    def slurm_dir(self) -> Path:
        return self.build_dir / "slurm"

    @property
    def bake_file(self) -> Path:
        return self.build_dir / "docker-bake.json"

    @classmethod
    def load(cls, env: Mapping[str, str], flags: Mapping[str, str | None], knobs: Iterable[str] = ()) -> Settings:
        """Paths from MATRIX, COMPAT, TEMPLATES, IMAGES_DIR, BUILD_DIR, REPORTS_DIR (or flags); the named knobs
        from their flag, else their variable; every value checked here, with the variable in the message."""
        def raw(name: str) -> str | None:
            flag = flags.get(name)
            return flag if flag is not None else env.get(name)

        values: dict[str, object] = {
            **{attr: _path(var, raw(var), getattr(cls, attr)) for var, attr in PATH_VARIABLES.items()},
            "child_env": dict(env), "docker_cli": env.get("DOCKER_CLI") or None, "uv": env.get("UV") or None,
            # registry credentials: from the environment only (CI secrets), never a flag
            "registry_user": env.get("REGISTRY_USER") or None, "registry_password": env.get("REGISTRY_PASSWORD") or None,
            **_key_defaults(env),
        }
        for row in (KNOBS[name] for name in knobs):
            value = raw(row.variable)
            if value is not None and not value.strip() and not row.empty_is_error:
                value = None        # the Makefile exports every variable it knows; empty = not given
            if value is not None:
                values[row.field] = row.read(value)
            elif row.fallback is not None:
                values[row.field] = row.fallback(env)
        return cls(**values)  # type: ignore[arg-type]


def _path(name: str, value: str | None, default: Path) -> Path:
    if value is None:
        return default
    if not value.strip():
        raise UserError(f"{name} is empty: unset it or give a path")
    return Path(value).absolute()


def key_dir(env: Mapping[str, str]) -> Path:
    """$XDG_CONFIG_HOME/torchimages, else ~/.config/torchimages: where make keygen writes, outside any checkout."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or str(Path.home())) / ".config")
    return Path(base).absolute() / "torchimages"


def _key_defaults(env: Mapping[str, str]) -> dict[str, object]:
    """The key folder, the signing key in it, and its public key as the trusted one where make keygen wrote it."""
    keys = key_dir(env)
    public = keys / PUB_NAME
    return {"key_dir": keys, "signing_key": keys / KEY_NAME, "trust": (public,) if public.is_file() else ()}

