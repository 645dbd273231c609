"""Integration fixtures: a real registry (Debian's docker-registry, the CNCF distribution server) on loopback, and
the disk hygiene of the multi-GB images these tests build."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from scripts.builder.engine import image_exists

REGISTRY_BIN = "/usr/bin/docker-registry"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """host:port of a docker-registry serving from a temporary folder; stopped after the module."""
    if not Path(REGISTRY_BIN).exists():
        pytest.skip("Debian's docker-registry is not installed (apt-get install docker-registry)")
    root = tmp_path_factory.mktemp("registry")
    port = free_port()
    config = root / "config.yml"
    config.write_text(f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
                      f"  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: test-only\n")
    with open(root / "registry.log", "w") as log:
        proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        else:
            pytest.fail(f"docker-registry did not answer; log: {(root / 'registry.log').read_text()[-2000:]}")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@contextmanager
def dropped_when_built_here(client, image: str, *folders: Path) -> Iterator[None]:
    """Around a test that builds a multi-GB image: when the image was absent before (a fresh CI machine), remove it
    after, with BuildKit's cache mounts (the uv caches, GBs of wheels) and the given download folders. A CI machine's
    disk is shared and finite: the suite's peak must not be the sum of every image it ever built."""
    from docker.errors import ImageNotFound
    present = image_exists(client, image)
    try:
        yield
    finally:
        if not present:
            try:
                client.images.remove(image, force=True)
            except ImageNotFound:
                pass
            client.api.prune_builds(filters={"type": "exec.cachemount"})
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
