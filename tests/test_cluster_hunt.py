"""Issue 36, a fourth hunt (round 50) through the public interfaces: what rounds 48 and 49 left. Each test names the
practice it holds the cluster tooling to (Slurm's prolog semantics, NVSentinel's breaker and return-to-service
rules, NVIDIA's Xid catalog, DNS's one host however it is spelt)."""
from __future__ import annotations

import pytest

from tests.test_isolate_runner import _isolate


@pytest.mark.host
@pytest.mark.parametrize("hosts", [["n1", "N1", "n2"], ["n1", "n1.", "n2", "n3"]])
def test_make_isolate_never_pairs_a_host_with_itself_however_it_is_spelt(tmp_path, hosts):
    """Class 7 (DNS names are case-insensitive, RFC 4343; the trailing dot is the root's): n1 and N1 are one host.
    The runner took them as two nodes, paired the host with itself (an all-reduce over its own links, which passes
    a NIC fault), and that pass made it the known-good reference that cleared its partners: exit 0, 'no node at
    fault'. Now one line (exit 2), as a node named twice is."""
    status, lines = _isolate(tmp_path, hosts, {})
    assert status == 2 and len(lines) == 1 and "named twice" in lines[0] and hosts[1] in lines[0], lines
