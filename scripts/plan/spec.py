"""The resolved spec of one image: computed once from matrix.yaml + compat.yaml, passed to every later step."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from ..errors import UserError
from . import access as access_kinds
from .platforms import NATIVE_NAME, PLATFORM_NAME, arch_of, base_tag, lock_name, select_platforms

Flavor = Literal["runtime", "devel", "cpu"]
FLAVORS: tuple[str, ...] = get_args(Flavor)
# Docker's tag grammar: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
TAG_GRAMMAR = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
DRIVER_ENV = "TORCHIMAGES_DRIVER_MIN"   # the driver floor, baked into CUDA images; verify's gpu check reads it
LABEL_PREFIX = "io.torchimages"
SOURCE_URL = "https://github.com/torchimages/torchimages"
# The distro's RDMA userspace, in every CUDA image (NCCL's IB/RoCE transport and libfabric for EFA plugins); the same
# names in Debian 12 and Ubuntu 22.04/24.04, amd64 and arm64. CPU images have no NCCL: they leave them out.
FABRIC_PACKAGES = ("libibverbs1", "ibverbs-providers", "librdmacm1", "libfabric1")
# Debian's 64-bit time_t transition renamed librdmacm1 to librdmacm1t64 (Debian 13, Ubuntu 24.04 and later; noble's
# libfabric1 depends on librdmacm1t64): only the releases before it keep the old name.
PRE_T64_CODENAMES = frozenset({"bullseye", "bookworm", "focal", "jammy"})
# Where a site's NCCL net plugin (matrix `net_plugin`) lands; NCCL_NET_PLUGIN=site makes NCCL open it by this name
# (libnccl-net-<NCCL_NET_PLUGIN>.so, which every NCCL release from 2.12 to 2.30 tries).
NET_PLUGIN_NAME = "site"
NET_PLUGIN_LINK = f"/usr/local/lib/libnccl-net-{NET_PLUGIN_NAME}.so"


@dataclass(frozen=True)
class ImageSpec:
    tag: str
    repository: str
    default: bool
    flavor: Flavor
    torch: str
    torch_requirement: str          # pip requirement, e.g. torch==2.13.0+cpu
    torch_index_url: str | None     # None: PyPI
    cuda: str | None                # X.Y, None for CPU images
    cuda_toolkit: str | None
    cudnn: str | None
    nccl: str | None
    driver_min: str | None
    distro: str
    distro_name: str
    codename: str
    mirror: str
    python: str
    base_image: str                 # FROM default; overridable with the BASE_IMAGE build argument
    bootstrap_base: str | None      # local tag `make base` creates when the registry is unreachable
    torchvision: str | None
    packages: dict[str, str] = field(default_factory=dict)
    access: tuple[str, ...] = ()    # jupyter and/or ssh (scripts/plan/access.py); the tag ends in -jupyter, -ssh, -jupyter-ssh
    access_packages: dict[str, str] = field(default_factory=dict)   # what the access kinds pip-install (jupyterlab)
    platforms: list[str] = field(default_factory=lambda: ["linux/amd64"])   # linux/amd64, linux/arm64
    platform_mirrors: dict[str, str] = field(default_factory=dict)   # platform → distro mirror where it differs
    net_plugin: str | None = None   # a site's NCCL net plugin (.deb or .so file name in WHEELS), e.g. aws-ofi-nccl

    def __post_init__(self) -> None:
        object.__setattr__(self, "access", access_kinds.normalize(self.access))   # a list from spec.json → tuple

    @property
    def image(self) -> str:
        return f"{self.repository}:{self.tag}"

    @property
    def locks(self) -> list[tuple[str, str]]:
        """(arch, lock file name) per platform, in the image's platform order: what the Dockerfile mounts."""
        return [(t.arch, t.lock_name) for t in self.every_target]

    @property
    def every_target(self) -> tuple[Target, ...]:
        """The image on each of its platforms, in its platform order (push, stage-wheels, make base)."""
        return tuple(Target(self, p) for p in self.platforms)

    def targets(self, requested: str | None) -> tuple[Target, ...]:
        """What one build/verify of this image is for: PLATFORM when given (a UserError unless it is one of the
        image's), else the image's first platform left to the engine's default (plain names, no --platform)."""
        if requested is None:
            return (Target(self, self.platforms[0], explicit=False),)
        return tuple(Target(self, p) for p in select_platforms(list(self.platforms), requested, self.tag))

    @property
    def build_args(self) -> dict[str, str]:
        return {"BASE_IMAGE": self.base_image, "TORCH_INDEX_URL": self.torch_index_url or ""}

    @property
    def labels(self) -> dict[str, str]:
        labels = {
            "org.opencontainers.image.title": f"{self.repository}",
            "org.opencontainers.image.description": self.description,
            "org.opencontainers.image.version": self.tag,
            "org.opencontainers.image.source": SOURCE_URL,
            "org.opencontainers.image.licenses": "BSD-3-Clause",
            "org.opencontainers.image.base.name": self.base_image,
            f"{LABEL_PREFIX}.torch": self.torch,
            f"{LABEL_PREFIX}.python": self.python,
            f"{LABEL_PREFIX}.flavor": self.flavor,
            f"{LABEL_PREFIX}.distro": self.distro,
            f"{LABEL_PREFIX}.cuda": self.cuda or "none",
            f"{LABEL_PREFIX}.cudnn": self.cudnn or "none",
            f"{LABEL_PREFIX}.nccl": self.nccl or "none",
            f"{LABEL_PREFIX}.torchvision": self.torchvision or "none",
            # the driver floor, read from the registry by `make gate` before any container starts
            **({f"{LABEL_PREFIX}.cuda.driver-min": self.driver_min} if self.driver_min else {}),
            **access_kinds.labels(self.access),
        }
        return labels

    @property
    def description(self) -> str:
        accel = f"CUDA {self.cuda_toolkit}, cuDNN {self.cudnn}, NCCL {self.nccl}" if self.cuda else "CPU only"
        access = f", with {' and '.join(access_kinds.NAMES[k] for k in self.access)}" if self.access else ""
        return f"PyTorch {self.torch} ({accel}), Python {self.python}, {self.distro_name}, {self.flavor}{access}"

    @property
    def fabric_packages(self) -> tuple[str, ...]:
        """The distro packages that let NCCL reach InfiniBand, RoCE and EFA: CUDA images only."""
        if not self.cuda:
            return ()
        t64 = self.codename not in PRE_T64_CODENAMES
        return tuple(f"{p}t64" if t64 and p == "librdmacm1" else p for p in FABRIC_PACKAGES)

    @property
    def env(self) -> dict[str, str]:
        """NVIDIA container-toolkit variables; set here since runtime images are not based on nvidia/cuda."""
        if not self.cuda:
            return {}
        major = self.cuda.split(".")[0]
        return {
            "NVIDIA_VISIBLE_DEVICES": "all",
            "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            # Minor-version compatibility: any driver of the CUDA major runs the build (580+ for 13.x).
            "NVIDIA_REQUIRE_CUDA": f"cuda>={major}.0",
            **({DRIVER_ENV: self.driver_min} if self.driver_min else {}),
            **({"NCCL_NET_PLUGIN": NET_PLUGIN_NAME} if self.net_plugin else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(image=self.image, build_args=self.build_args, labels=self.labels, env=self.env)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageSpec:
        names = cls.__dataclass_fields__.keys()
        missing = [n for n in names if n not in data and n not in ("packages", "access", "access_packages", "platforms", "platform_mirrors", "net_plugin")]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        platforms = data.get("platforms", ["linux/amd64"])
        if not isinstance(platforms, list) or not platforms or len(set(map(str, platforms))) != len(platforms) \
                or not all(isinstance(p, str) and PLATFORM_NAME.fullmatch(p) for p in platforms):
            raise ValueError(f"platforms {platforms!r} is not a list of distinct linux/<arch> names")
        spec = cls(**{k: v for k, v in data.items() if k in names})
        if spec.flavor not in FLAVORS:
            raise ValueError(f"flavor {spec.flavor!r} is not one of {', '.join(FLAVORS)}")
        return spec

    @classmethod
    def load(cls, path: Path) -> ImageSpec:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Target:
    """An image on one platform: every name a stage derives from the pair is made here, and nowhere else.

    `explicit`: PLATFORM named it (the build passes --platform). Local names keep the plain tag for linux/amd64
    and for a build left to the engine's default platform, and get -<arch> otherwise, so an arm64 build does not
    replace the amd64 one in a local engine (in a registry both are one tag: an image index)."""

    spec: ImageSpec
    platform: str                   # linux/amd64, linux/arm64
    explicit: bool = True

    @property
    def arch(self) -> str:          # arm64
        return arch_of(self.platform)

    @property
    def per_arch(self) -> bool:
        """Local names carry -<arch>, and it gets its own distro base."""
        return self.explicit and self.platform != NATIVE_NAME

    @property
    def local_tag(self) -> str:     # repository:tag[-<arch>] in the engine
        return f"{self.spec.image}-{self.arch}" if self.per_arch else self.spec.image

    @property
    def report_name(self) -> str:   # reports/<tag>[-<arch>].json
        return f"{self.spec.tag}-{self.arch}" if self.per_arch else self.spec.tag

    @property
    def arch_tag(self) -> str:      # <tag>-<arch>: the per-arch registry tag
        return f"{self.spec.tag}-{self.arch}"

    @property
    def lock_name(self) -> str:     # requirements[.<arch>].lock
        return lock_name(self.platform)

    @property
    def lock_label(self) -> str:    # images/<tag>/<lock>, as messages say
        return f"images/{self.spec.tag}/{self.lock_name}"

    @property
    def base_tag(self) -> str:      # the local distro base make base creates
        return base_tag(self.spec.distro, self.platform)

    @property
    def mirror(self) -> str:        # the distro mirror serving this platform (Ubuntu's ports archive for arm64)
        return self.spec.platform_mirrors.get(self.platform, self.spec.mirror)

    def lock_path(self, images: Path) -> Path:
        return images / self.spec.tag / self.lock_name

    def emulated(self, host: str) -> bool:
        """Its binaries run under qemu-user on a `host` platform (linux/amd64 on an x86_64 host: native)."""
        return self.platform != host


@dataclass(frozen=True)
class Release:
    """One multi-platform build (PLATFORM=all): every platform of one image in one buildx run, into an OCI
    image index; none of them becomes an engine image."""

    spec: ImageSpec
    targets: tuple[Target, ...]

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(t.platform for t in self.targets)


Build = Target | Release    # what one `make build` row is


def builds(specs: list[ImageSpec], requested: str | None) -> list[Build]:
    """The builds of `make build` (PLATFORM already checked by Settings): each image's target (the engine's
    default platform, or PLATFORM, which every selected image must have), or for `all` one Release per image,
    the images sharing one platform list."""
    if requested == "all":
        lists = {tuple(s.platforms) for s in specs}
        if len(lists) != 1:
            raise UserError("PLATFORM=all builds images with the same platforms together; the selected images differ: "
                            + "; ".join(f"{s.tag}: {', '.join(s.platforms)}" for s in specs)
                            + " (build them one IMAGE at a time)")
        return [Release(s, s.every_target) for s in specs]
    return [s.targets(requested)[0] for s in specs]


def make_tag(torch: str, cuda: str | None, cudnn: str | None, flavor: str, distro: str,
             access: tuple[str, ...] = ()) -> str:
    """2.15.0-cuda13.2-cudnn9-runtime-debian12, or 2.13.0-cpu-debian12; access adds -jupyter, -ssh, -jupyter-ssh."""
    if cuda is None:
        return f"{torch}-cpu-{distro}" + access_kinds.tag_suffix(access)
    if not cudnn:
        raise ValueError(f"torch {torch} CUDA {cuda}: no cuDNN version, so no tag")
    cudnn_major = cudnn.split(".")[0]
    return f"{torch}-cuda{cuda}-cudnn{cudnn_major}-{flavor}-{distro}" + access_kinds.tag_suffix(access)
