"""Signed attestations and the node gate, pure logic and a tiny local HTTP server: keys, DSSE envelopes, the
verify-report checks, REQUIRE, the driver floor, the push record, the image constraints, and a registry that
drips, fails or substitutes content."""
from __future__ import annotations

import base64
import json
import os
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scripts.errors import UserError
from scripts.fleet.gate import (
    DRIVER_LABEL,
    driver_fits,
    fitting_tag,
    floor_problem,
    gate_line,
    host_driver,
    parse_require,
    unmet,
)
from scripts.plan.spec import ImageSpec
from scripts.publish import signing
from scripts.publish.constraints import constraints
from scripts.publish.pushed import pinned
from scripts.publish.registry import Registry, parse_ref
from scripts.publish.report import Attestation, Summary, check_verify_report, clean, format_report, host_facts
from scripts.run_verify import report_schemas
from tests.helpers import ROOT
from tests.verify_handmade import make_report

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32


@pytest.fixture(scope="module")
def key():
    from securesystemslib.signer import CryptoSigner  # type: ignore[attr-defined]
    return CryptoSigner.generate_ecdsa()


def trusted(signer, name="release.pub"):
    return signing.Trusted(signer.public_key, f"/keys/{name}")


# ---- keys ----

def test_keygen_writes_a_0600_private_key_and_a_public_key_outside_the_repo(tmp_path):
    private, public, keyid = signing.keygen(tmp_path / "keys")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and stat.S_IMODE(private.parent.stat().st_mode) == 0o700
    assert b"PRIVATE KEY" in private.read_bytes() and b"PUBLIC KEY" in public.read_bytes()
    signer = signing.load_signer(private)
    assert signer.public_key.keyid == keyid == signing.load_trust([public])[0].keyid
    with pytest.raises(UserError, match="FORCE=1"):
        signing.keygen(tmp_path / "keys")
    assert signing.keygen(tmp_path / "keys", "ed25519", force=True)[2] != keyid


def test_keygen_refuses_a_folder_inside_the_repository():
    with pytest.raises(UserError, match="inside the repository"):
        signing.keygen(ROOT / "build" / "keys")
    assert not (ROOT / "build" / "keys").exists()


def test_a_readable_or_foreign_private_key_is_refused_naming_the_file_only(tmp_path):
    private, public, _ = signing.keygen(tmp_path / "k")
    os.chmod(private, 0o644)
    with pytest.raises(UserError, match="chmod 600") as info:
        signing.load_signer(private)
    assert "PRIVATE" not in str(info.value)
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
    p384 = tmp_path / "p384.pem"
    p384.write_bytes(ec.generate_private_key(ec.SECP384R1()).private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                                                           NoEncryption()))
    os.chmod(p384, 0o600)
    with pytest.raises(UserError, match="not an ECDSA P-256 or Ed25519"):
        signing.load_signer(p384)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN PRIVATE KEY-----\nsecretbytes\n-----END PRIVATE KEY-----\n")
    os.chmod(garbage, 0o600)
    with pytest.raises(UserError) as info:
        signing.load_signer(garbage)
    assert "secretbytes" not in str(info.value)
    with pytest.raises(UserError, match="not a PEM public key"):
        signing.load_trust([private])           # a private key is no TRUST entry
    with pytest.raises(UserError, match="no such file"):
        signing.load_trust([tmp_path / "absent.pub"])
    assert [t.keyid for t in signing.load_trust([public.parent])] == [signing.load_trust([public])[0].keyid]


# ---- envelopes ----

def _envelope(signer, subject=DIGEST, predicate_type=None, predicate=None) -> bytes:
    from scripts.publish.attest import PREDICATE_VERIFY
    doc = signing.statement([("127.0.0.1:5000/team/img", subject)], predicate_type or PREDICATE_VERIFY,
                            predicate or {"report": make_report(), "attested": {"node": "n1", "time": "t"}})
    return signing.sign(doc, signer)


def test_an_envelope_opens_only_with_its_key_and_unchanged(key):
    from securesystemslib.signer import CryptoSigner  # type: ignore[attr-defined]
    env = _envelope(key)
    opened = signing.open_envelope(env, [trusted(key)])
    assert opened.signer.source == "/keys/release.pub" and signing.subject_digests(opened.statement) == [DIGEST]
    other = CryptoSigner.generate_ed25519()
    with pytest.raises(signing.Untrusted, match="not in TRUST"):
        signing.open_envelope(env, [trusted(other)])
    data = json.loads(env)
    payload = json.loads(base64.b64decode(data["payload"]))
    payload["predicate"]["report"]["status"] = "pass"
    payload["predicate"]["attested"]["node"] = "elsewhere"
    data["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    with pytest.raises(signing.Untrusted, match="does not match the payload"):
        signing.open_envelope(json.dumps(data).encode(), [trusted(key)])
    data["signatures"] = []
    with pytest.raises(signing.Untrusted, match="unsigned"):
        signing.open_envelope(json.dumps(data).encode(), [trusted(key)])
    for junk in (b"not json", b"[]", b'{"signatures": [{"keyid": "x"}]}'):
        with pytest.raises(signing.Untrusted):
            signing.open_envelope(junk, [trusted(key)])


def test_a_signed_payload_that_is_no_statement_is_untrusted(key):
    from securesystemslib.dsse import Envelope
    envelope = Envelope(b'{"_type": "https://example.com/other"}', signing.PAYLOAD_TYPE, {})
    envelope.sign(key)
    with pytest.raises(signing.Untrusted, match="not an in-toto Statement"):
        signing.open_envelope(signing.canonical(envelope.to_dict()), [trusted(key)])
    wrong_type = Envelope(b"{}", "text/plain", {})
    wrong_type.sign(key)
    with pytest.raises(signing.Untrusted, match="not an in-toto statement"):
        signing.open_envelope(signing.canonical(wrong_type.to_dict()), [trusted(key)])


# ---- the verify report: schema and recomputed status ----

def test_the_report_status_is_recomputed_and_the_schema_checked():
    schemas = report_schemas()
    assert check_verify_report(make_report(), schemas) == (None, "pass")
    failed = {"name": "shm", "status": "fail", "summary": "64 MiB", "details": [], "metrics": {}, "remedy": "more",
              "code": "SHM_SMALL", "owner": "job", "duration_s": 0.1}
    problem, status = check_verify_report(make_report("pass", [failed]), schemas)
    assert status == "fail" and "says pass but its checks say fail" in (problem or "")
    problem, _ = check_verify_report({**make_report(), "schema_version": 99}, schemas)
    assert "does not match verify's report schema" in (problem or "")
    assert check_verify_report(make_report("skip", []), schemas)[0] == "the report has no checks"
    assert check_verify_report("pass", schemas)[0] == "the report is not a JSON object"
    assert check_verify_report(make_report(interrupted="SIGTERM"), schemas)[1] == "fail"


def test_control_characters_never_reach_the_terminal(key):
    assert clean("ok\x1b[2J\x1b]0;pwned\x07\r\nx\u202e") == "ok\\x1b[2J\\x1b]0;pwned\\x07\\x0d\\x0ax\\u202e"
    assert len(clean("a" * 1000, 50)) == 50
    report = make_report()
    report["checks"][0]["summary"] = "fine\x1b[31m\rverified: yes"
    att = Attestation("sha256:" + "1" * 64, trusted(key), "2026", report, "pass", None, host_facts(report, {}))
    text = format_report(Summary("r@" + DIGEST, True, found_via="tag x", attestations=[att]))
    assert "\x1b" not in text and "\r" not in text and "\\x1b[31m" in text


def test_host_facts_name_models_driver_and_the_attesting_node():
    facts = host_facts(make_report(), {"node": "gpu-node-7"})
    assert facts["gpus"] == ["NVIDIA H100 80GB HBM3"] and facts["gpu_count"] == 1
    assert (facts["driver"], facts["node"], facts["torch"]) == ("580.65.06", "gpu-node-7", "2.15.0")
    assert host_facts({"environment": "junk", "checks": [1]}, {})["node"] == "unknown"


# ---- references ----

@pytest.mark.parametrize("bad", [f"127.0.0.1:5000/repo/../other@{DIGEST}", f"127.0.0.1:5000/a//b@{DIGEST}",
                                 f"127.0.0.1:5000/-a/b@{DIGEST}", f"127.0.0.1:5000/a./b@{DIGEST}",
                                 f"127.0.0.1:5000/./b@{DIGEST}", f"ex ample.com:5000/a@{DIGEST}"])
def test_a_repository_with_dot_dot_or_empty_components_is_refused(bad):
    with pytest.raises(UserError):
        parse_ref(bad)


def test_good_repositories_still_parse():
    assert parse_ref(f"127.0.0.1:5000/team/torch-images__x/a.b@{DIGEST}").repository == "team/torch-images__x/a.b"


# ---- REQUIRE and the gate ----

FACTS = {"verdict": "pass", "gpus": ["NVIDIA H100 80GB HBM3"] * 8, "gpu_count": 8, "driver": "580.65.06",
         "node": "n7", "torch": "2.15.0", "cuda": "13.2", "signer": "/keys/release.pub", "keyid": "abcdef0123"}


def test_require_is_met_or_names_what_is_missing():
    assert unmet(parse_require("verdict=pass gpu=H100 driver>=570 gpus>=8 cuda>=13.0 torch=2.15.0 "
                               "signer=release.pub node=n7"), FACTS) == []
    assert unmet(parse_require("gpu=B200"), FACTS) == ["gpu=B200 (found NVIDIA H100 80GB HBM3)"]
    assert unmet(parse_require("driver>=590"), FACTS) == ["driver>=590 (found 580.65.06)"]
    assert unmet(parse_require("verdict=pass,warn"), {**FACTS, "verdict": "warn"}) == []
    assert unmet(parse_require("verdict=pass"), {**FACTS, "verdict": "warn"}) == ["verdict=pass (found warn)"]
    assert unmet(parse_require("gpu=H100"), {**FACTS, "gpus": []}) == ["gpu=H100 (found no GPU)"]
    assert unmet(parse_require("gpu=H100"), {**FACTS, "gpus": ["NVIDIA H100", "NVIDIA A100"]})   # mixed: not all
    assert unmet(parse_require("driver>=570"), {**FACTS, "driver": None}) == ["driver>=570 (found none)"]
    assert unmet(parse_require("signer=abcdef"), FACTS) == []
    assert unmet(parse_require('gpu="H100 80GB"'), FACTS) == []


def test_require_node_names_one_host_however_it_is_spelt():
    """DNS names are case-insensitive (RFC 4343): node=N7 selects n7's attestations. Compared as written, a newer
    failing attestation of N7 was left out of REQUIRE=node=n7's choice, and an older pass of n7 decided."""
    assert unmet(parse_require("node=N7"), FACTS) == [] and unmet(parse_require("node=n7."), FACTS) == []
    assert unmet(parse_require("node=n8"), FACTS) == ["node=n8 (found n7)"]


@pytest.mark.parametrize("bad", ["gpu", "colour=red", "gpu>=H100", "driver>=abc", "gpus>=x", "verdict=good", "'",
                                 "gpus>=\u00b2", "gpus>=\u0668"])
def test_a_bad_require_is_one_line(bad):
    with pytest.raises(UserError, match="REQUIRE"):
        parse_require(bad)


def _spec(tag: str, cuda: str | None, driver: str | None, torch: str = "2.15.0", flavor: str = "runtime",
          distro: str = "debian12") -> ImageSpec:
    return ImageSpec(tag=tag, repository="torchimages", default=False, flavor=flavor, torch=torch,  # type: ignore[arg-type]
                     torch_requirement=f"torch=={torch}", torch_index_url=None, cuda=cuda, cuda_toolkit=cuda,
                     cudnn="9" if cuda else None, nccl=None, driver_min=driver, distro=distro, distro_name="Debian",
                     codename="bookworm", mirror="", python="3.11", base_image="debian:12", bootstrap_base=None,
                     torchvision=None)


SPECS = [_spec("2.15.0-cuda13.2-cudnn9-runtime-debian12", "13.2", "580.65.06"),
         _spec("2.10.0-cuda12.8-cudnn9-runtime-ubuntu22.04", "12.8", "525.60.13", "2.10.0", distro="ubuntu22.04"),
         _spec("2.10.0-cuda12.8-cudnn9-devel-ubuntu22.04", "12.8", "525.60.13", "2.10.0", "devel", "ubuntu22.04"),
         _spec("2.13.0-cpu-debian12", None, None, "2.13.0", "cpu")]
LABELS = {DRIVER_LABEL: "580.65.06", "io.torchimages.flavor": "runtime", "io.torchimages.distro": "debian12",
          "io.torchimages.torch": "2.15.0", "io.torchimages.cuda": "13.2"}


def test_the_driver_floor_is_compared_as_numbers():
    assert driver_fits("580.65.06", "580.65.06") and driver_fits("580.65.06", "580.82") and driver_fits(None, None)
    assert not driver_fits("580.65.06", "580.9") and not driver_fits("580.65.06", "575.100.1")
    assert not driver_fits("580.65.06", None) and not driver_fits("580.65.06", "garbage")
    assert driver_fits("525.60.13", "1000.0")


def test_a_host_below_the_floor_is_told_the_tag_that_fits():
    assert floor_problem(LABELS, "590.1", SPECS) is None
    assert floor_problem({"io.torchimages.flavor": "cpu", "io.torchimages.cuda": "none"}, None, SPECS) is None
    problem = floor_problem(LABELS, "535.104.05", SPECS)
    assert problem is not None and "needs NVIDIA driver >= 580.65.06" in problem and "driver 535.104.05" in problem
    assert "2.10.0-cuda12.8-cudnn9-runtime-ubuntu22.04 fits this driver" in problem     # runtime, not devel
    assert fitting_tag(SPECS, {**LABELS, "io.torchimages.flavor": "devel"}, "535.0") == \
        "2.10.0-cuda12.8-cudnn9-devel-ubuntu22.04"
    assert "no image of the matrix fits it" in (floor_problem(LABELS, "470.0", SPECS) or "")
    assert "no NVIDIA driver" in (floor_problem(LABELS, None, SPECS) or "")


def test_the_gate_says_one_line():
    assert gate_line("r@x", [], "verdict=pass") == "gate: ok r@x: verdict=pass"
    line = gate_line("r@x", ["no trusted attestation meets gpu=H100 (found A100)", "driver"], "")
    assert line.startswith("gate: refused r@x: no trusted attestation meets gpu=H100") and "\n" not in line


def test_host_driver_reads_nvidia_smi_and_says_none_without_it():
    class Proc:
        returncode, stdout = 0, "580.65.06\n580.65.06\n"
    assert host_driver(lambda *a, **k: Proc()) == "580.65.06"

    def missing(*a, **k):
        raise FileNotFoundError("nvidia-smi")
    found = host_driver(missing)
    assert found is None or found[0].isdigit()      # /proc/driver/nvidia/version on a GPU host


# ---- the push record ----

def test_pinned_gives_the_digest_reference_of_a_pushed_tag(tmp_path):
    record = {"t": {"reference": f"127.0.0.1:5000/torchimages@{DIGEST}",
                    "platforms": {"linux/arm64": {"reference": f"127.0.0.1:5000/torchimages@{OTHER}"}}},
              "bad": {"reference": "127.0.0.1:5000/torchimages:t"}}
    path = tmp_path / "pushed.json"
    path.write_text(json.dumps(record))
    assert pinned(path, "t") == f"127.0.0.1:5000/torchimages@{DIGEST}"
    assert pinned(path, "t", "linux/arm64") == f"127.0.0.1:5000/torchimages@{OTHER}"
    for tag, platform, needle in (("x", None, "not in the push record"), ("bad", None, "no digest reference"),
                                  ("t", "linux/ppc64le", "linux/ppc64le is not in the push record")):
        with pytest.raises(UserError, match=needle):
            pinned(path, tag, platform)
    with pytest.raises(UserError, match="make push"):
        pinned(tmp_path / "none.json", "t")


# ---- the image's constraints ----

def test_constraints_pin_torch_and_the_cuda_wheels_from_the_lock():
    lock = (ROOT / "images" / "2.15.0-cuda13.2-cudnn9-runtime-debian12" / "requirements.lock").read_text()
    lines = constraints(lock)
    names = {line.split("==")[0] for line in lines}
    assert {"torch", "triton", "nvidia-nccl-cu13", "nvidia-cudnn-cu13"} <= names
    assert not names & {"numpy", "nvidia-ml-py", "requests", "pyarrow"}
    assert "torch==2.15.0" in lines
    cpu = constraints((ROOT / "images" / "2.13.0-cpu-debian12" / "requirements.lock").read_text())
    assert cpu == ["torch==2.13.0+cpu"]
    assert constraints("TorchVision==0.1 ; platform_machine == 'x86_64' \\\n    --hash=sha256:00\n") == \
        ["torchvision==0.1 ; platform_machine == 'x86_64'"]


# ---- a tiny local registry that misbehaves ----

class _Server:
    """A ThreadingHTTPServer on loopback answering with `handler(path) -> (status, headers, body or a generator)`."""

    def __init__(self, answer):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _go(self):
                status, headers, body = answer(self.path)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command == "HEAD":
                    return
                try:
                    if isinstance(body, bytes):
                        self.wfile.write(body)
                    else:
                        for piece in body:
                            if outer.stopped.is_set():
                                return
                            self.wfile.write(piece)
                            self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_HEAD = _go

        self.stopped = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.stopped.set()
        self.server.shutdown()
        self.server.server_close()


def _drip():
    for _ in range(1000):
        yield b" "
        time.sleep(5)


def test_a_registry_dripping_one_byte_every_5_s_is_cut_off_at_the_deadline():
    server = _Server(lambda path: (200, {"Content-Type": "application/vnd.oci.image.manifest.v1+json",
                                         "Content-Length": "100000"}, _drip()))
    try:
        reg = Registry(server.host, deadline=time.monotonic() + 3)
        start = time.monotonic()
        with pytest.raises(UserError, match=r"cut off|out of time"):
            reg.get_manifest("team/img", DIGEST)
        assert time.monotonic() - start < 6
        with pytest.raises(UserError, match="out of time"):       # the deadline is for all requests together
            time.sleep(max(0.0, (reg.deadline or 0.0) - time.monotonic()) + 0.1)
            reg.get_manifest("team/img", DIGEST)
    finally:
        server.close()


def test_a_fetch_is_bounded_in_size_and_checked_against_its_digest():
    big = b"x" * (5 << 20)
    answers = {"/v2/team/img/manifests/" + DIGEST: (200, {"Content-Type": "x"}, big),
               "/v2/team/img/blobs/" + OTHER: (200, {}, b"substituted")}
    server = _Server(lambda path: answers.get(path, (404, {}, b"")))
    try:
        reg = Registry(server.host, deadline=time.monotonic() + 30)
        with pytest.raises(UserError, match="more than the"):
            reg.get_manifest("team/img", DIGEST)
        with pytest.raises(UserError, match="other content"):
            reg.get_blob("team/img", OTHER)
    finally:
        server.close()


def test_a_registry_answering_500_is_an_error_never_no_report(key, tmp_path):
    from scripts.publish.report import fetch_report
    manifest = json.dumps({"schemaVersion": 2, "config": {"digest": OTHER}, "layers": []}).encode()
    from scripts.publish.registry import sha256
    digest = sha256(manifest)

    def answer(path):
        if path.endswith(f"/manifests/{digest}"):
            return 200, {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, manifest
        return 500, {}, b"internal error"
    server = _Server(answer)
    try:
        with pytest.raises(UserError, match="HTTP 500"):
            fetch_report(f"{server.host}/team/img@{digest}", [trusted(key)], deadline_s=20)
    finally:
        server.close()


def test_a_missing_driver_floor_label_is_never_admitted():
    """The gate admitted an image whose driver-floor label was missing: only a CPU image (io.torchimages.cuda=none)
    has no floor; a CUDA image without one, or an image without the project's labels, has an unknown floor."""
    cuda = {k: v for k, v in LABELS.items() if k != DRIVER_LABEL} | {"io.torchimages.cuda": "13.2"}
    problem = floor_problem(cuda, "590.1", SPECS)
    assert problem is not None and DRIVER_LABEL in problem and "CUDA 13.2" in problem
    assert floor_problem({**cuda, DRIVER_LABEL: "none"}, "590.1", SPECS) is not None
    assert "no io.torchimages.cuda label" in (floor_problem({}, "590.1", SPECS) or "")
    assert floor_problem({"io.torchimages.flavor": "cpu", "io.torchimages.cuda": "none"}, None, SPECS) is None
    assert floor_problem({**LABELS, "io.torchimages.cuda": "13.2"}, "590.1", SPECS) is None
