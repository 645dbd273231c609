"""OCI and Docker image manifests, as the registry (publish) and the cold-start benchmark (builder) both read them."""
from __future__ import annotations

import json

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"


def layers_of(raw: bytes) -> list[tuple[str, int]]:
    """(digest, compressed size) of each layer of one image manifest's bytes, oldest first."""
    return [(str(layer["digest"]), int(layer["size"])) for layer in json.loads(raw).get("layers", [])]
