"""Integration fixtures: a real registry (Debian's docker-registry, the CNCF distribution server) on loopback. The disk
hygiene of the multi-GB images these tests build (dropped_when_built_here) is in tests/helpers.py."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.helpers import free_port

REGISTRY_BIN = "/usr/bin/docker-registry"


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

