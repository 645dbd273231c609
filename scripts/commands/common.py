"""What the command handlers share: how they speak (out, err), the images a command selects, one platform, where a
cluster finds an image, and the registry credentials."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plan.spec import ImageSpec
    from ..publish.registry import Credentials

import os
import sys
from pathlib import Path

from ..errors import UserError
from ..settings import Settings

OCI_INDEX_TYPE = "application/vnd.oci.image.index.v1+json"


def out(text: str = "") -> None:
    print(text, flush=True)


def err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def selected(settings: Settings) -> list[ImageSpec]:
    from ..render import load_rendered, select
    return select(load_rendered(settings.images), settings.image)


def one_platform(settings: Settings, command: str) -> str | None:
    if settings.platform == "all":
        raise UserError(f"PLATFORM=all is for make build (one multi-platform buildx build); make {command} takes one "
                        f"platform, e.g. PLATFORM=linux/arm64")
    return settings.platform


def registry_image(settings: Settings, image: str) -> str:
    return f"{settings.registry}/{image}" if settings.registry else image


def cluster_image(settings: Settings, spec: ImageSpec, launcher: str | None = None) -> str:
    """What the nodes run: the digest `make push` recorded for the tag (what was verified and attested). A tag make
    push did not record in REGISTRY is refused in one line naming `make push`, unless UNPINNED=1 asks for the registry
    tag (or the launcher pulls nothing); with no REGISTRY, the local name only with LOCAL_IMAGE=1."""
    from ..publish.pushed import pinned, read_record
    record_path = settings.push_dir / "pushed.json"
    tagged = registry_image(settings, spec.image)
    record = read_record(record_path) if record_path.is_file() else {}
    launcher = launcher or settings.launcher
    reference = pinned(record, spec.tag) if spec.tag in record else None
    if reference and (not settings.registry or reference.startswith(settings.registry.rstrip("/") + "/")):
        out(f"  image: {reference} (the digest make push recorded for {spec.tag})")
        return reference
    if not settings.registry:
        return _local_name(settings, tagged, launcher)
    from ..fleet.cluster import unpushed_refusal
    problem = unpushed_refusal(spec.tag, tagged, settings.registry, reference, shown(settings, record_path),
                               settings.unpinned, launcher)
    if problem:
        raise UserError(problem)
    if settings.unpinned:
        out(f"  image: {tagged} (UNPINNED=1: the tag, no digest; make push recorded none in REGISTRY={settings.registry})")
    return tagged


def _local_name(settings: Settings, tagged: str, launcher: str) -> str:
    """The tag itself, when the local name is asked for (LOCAL_IMAGE=1, or a launcher that never pulls: none runs a
    venv, oci a bundle); otherwise a job no node could pull, refused in one line."""
    from ..fleet.cluster import local_name_refusal
    problem = local_name_refusal(tagged, settings.registry, settings.local_image, launcher)
    if problem:
        raise UserError(problem)
    return tagged


def shown(settings: Settings, path: Path) -> str:
    return os.path.relpath(path, settings.root) if path.is_relative_to(settings.root) else str(path)


def node_platform(settings: Settings, spec: ImageSpec) -> str | None:
    """PLATFORM picks the nodes of that architecture (it must be one of the image's); None: any of the image's."""
    platform = one_platform(settings, "k8s-verify/slurm")
    return spec.targets(platform)[0].platform if platform else None


def creds(settings: Settings) -> Credentials:
    from ..publish.registry import Credentials
    return Credentials(settings.registry_user, settings.registry_password, settings.registry_insecure)


def digest_ref(settings: Settings, text: str, command: str) -> str:
    """IMAGE as a digest reference: given as one, or a tag pinned from the push record."""
    from ..publish.pushed import pinned
    if "@sha256:" in text:
        return text
    if text and "/" not in text and ":" not in text:
        return pinned(settings.push_dir / "pushed.json", text, settings.platform)
    raise UserError(f"IMAGE={text or '(empty)'} is not a digest reference: make {command} "
                    f"IMAGE=host:port/repo@sha256:... (or a tag make push recorded)")
