"""Release path pure logic: references, fallback tags, the SBOM document, the report summary."""
from __future__ import annotations

import json

import pytest

from scripts.errors import UserError
from scripts.oci import DOCKER_MANIFEST, OCI_INDEX, OCI_MANIFEST
from scripts.publish.push import (
    PlatformManifest,
    config_platform,
    index_document,
    split_repository,
    target_repository,
)
from scripts.publish.referrers import fallback_tag
from scripts.publish.registry import parse_ref, sha256
from scripts.publish.report import Attestation, Summary, format_report, host_facts
from scripts.publish.sbom import build_sbom, dpkg_packages, lock_hashes, venv_costs, venv_packages
from scripts.publish.sbom import main as sbom_main

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "ab" * 32


def test_parse_ref():
    ref = parse_ref(f"127.0.0.1:5000/team/torchimages@{DIGEST}")
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == ("127.0.0.1:5000", "team/torchimages", None, DIGEST)
    assert parse_ref("ghcr.io/acme/torchimages:2.13.0-cpu-debian12").tag == "2.13.0-cpu-debian12"


@pytest.mark.parametrize("bad", ["torchimages:latest", "127.0.0.1:5000/x@sha256:12", "", "http://h:1/x"])
def test_parse_ref_rejects_with_one_line(bad):
    with pytest.raises(UserError, match="host:port/repository@sha256"):
        parse_ref(bad)


def test_fallback_tags_follow_the_referrers_tag_schema():
    assert fallback_tag(DIGEST) == "sha256-" + "ab" * 32
    assert fallback_tag(DIGEST, "verify") == "sha256-" + "ab" * 32 + ".verify"


@pytest.mark.parametrize("bad", ["", "http://127.0.0.1:5000", "a b"])
def test_target_repository_rejects_bad_registries(bad):
    with pytest.raises(UserError, match="REGISTRY="):
        target_repository(bad, None)  # type: ignore[arg-type]


def _fake_image(tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for name, version in (("numpy", "2.4.6"), ("torch", "2.13.0+cpu"), ("pip", "23.0.1")):
        d = site / f"{name}-{version}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody: x\n")
    status = tmp_path / "status"
    status.write_text("Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.36-9+deb12u10\n"
                      "Description: x\n multi\n\nPackage: gone\nStatus: deinstall ok config-files\nVersion: 1\n")
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"numpy==2.4.6 \\\n    --hash=sha256:{'1' * 64}\ntorch==2.13.0+cpu \\\n    --hash=sha256:{'2' * 64}\n")
    return tmp_path / "venv", status, lock


def test_sbom_lists_venv_packages_with_locked_hashes_and_installed_debs(tmp_path):
    venv, status, lock = _fake_image(tmp_path)
    doc = build_sbom("img:tag", venv_packages(venv), lock_hashes(lock.read_text()), dpkg_packages(status), "debian",
                     "2026-01-01T00:00:00Z")
    by = {c["name"]: c for c in doc["components"]}
    assert by["torch"]["purl"] == "pkg:pypi/torch@2.13.0%2Bcpu" and by["torch"]["hashes"][0]["content"] == "2" * 64
    assert "hashes" not in by["pip"]                     # not from the lock: no hash claimed
    assert by["libc6"]["purl"] == "pkg:deb/debian/libc6@2.36-9%2Bdeb12u10?arch=amd64"
    assert "gone" not in by


def test_sbom_says_what_each_package_costs_and_in_which_venv_layer(tmp_path):
    """The CUDA wheels under <venv>/cuda (their own layer), torch's layer, the rest: bytes from RECORD + bytecode."""
    venv, status, lock = _fake_image(tmp_path)
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_bytes(b"x" * 100)
    (site / "torch" / "__pycache__").mkdir()
    (site / "torch" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"y" * 30)
    (site / "torch" / "__pycache__" / "__init__.pyc").write_bytes(b"n" * 7)          # not <stem>.<tag>.pyc
    (site / "torch" / "__pycache__" / "__init___x.cpython-311.pyc").write_bytes(b"n" * 7)   # another module's
    (site / "torch" / "lib.so").symlink_to("__init__.py")                            # a link costs nothing
    (site / "torch-2.13.0+cpu.dist-info" / "RECORD").write_text("torch/__init__.py,sha256=x,100\n"
                                                                "torch/lib.so,,\ntorch/gone.py,,\n"
                                                                "torch-2.13.0+cpu.dist-info/RECORD,,\n")
    cuda = venv / "cuda" / "nvidia_cublas-13.4.1.3.dist-info"
    cuda.mkdir(parents=True)
    (cuda / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cublas\nVersion: 13.4.1.3\n\n")
    (venv / "cuda" / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    (venv / "cuda" / "nvidia" / "cu13" / "lib" / "libcublas.so.13").write_bytes(b"z" * 1000)
    (cuda / "RECORD").write_text("nvidia/cu13/lib/libcublas.so.13,sha256=z,1000\n")
    costs = venv_costs(venv)
    record = (site / "torch-2.13.0+cpu.dist-info" / "RECORD").stat().st_size
    assert costs["torch"] == ("torch", 100 + 30 + record) and costs["nvidia-cublas"] == ("cuda", 1000)
    assert costs["numpy"] == ("rest", 0)                  # no RECORD: nothing claimed
    doc = build_sbom("img:tag", venv_packages(venv), lock_hashes(lock.read_text()), dpkg_packages(status), "debian",
                     "2026-01-01T00:00:00Z", costs)
    layers = {p["name"]: p["value"] for p in doc["metadata"]["component"]["properties"]}
    assert layers["torchimages:layer:cuda:unpacked-bytes"] == "1000"
    cublas = next(c for c in doc["components"] if c["name"] == "nvidia-cublas")
    assert {"name": "torchimages:layer", "value": "cuda"} in cublas["properties"]


def test_sbom_validates_against_the_cyclonedx_schema(tmp_path):
    validation = pytest.importorskip("cyclonedx.validation.json")
    from cyclonedx.schema import SchemaVersion
    venv, status, lock = _fake_image(tmp_path)
    out = tmp_path / "sbom.json"
    assert sbom_main(["--venv", str(venv), "--lock", str(lock), "--dpkg-status", str(status), "--name", "i:t",
                      "--out", str(out)]) == 0
    validator = validation.JsonStrictValidator(SchemaVersion.V1_5)
    assert validator.validate_str(out.read_text()) is None
    broken = json.loads(out.read_text())
    broken["components"][0]["hashes"] = [{"alg": "SHA-256", "content": "nothex"}]
    assert validator.validate_str(json.dumps(broken)) is not None


def test_attest_signs_only_an_sbom_that_cyclonedx_python_lib_validates(tmp_path):
    from scripts.publish.attest import check_sbom
    venv, status, lock = _fake_image(tmp_path)
    out = tmp_path / "sbom.json"
    assert sbom_main(["--venv", str(venv), "--lock", str(lock), "--dpkg-status", str(status), "--name", "i:t",
                      "--out", str(out)]) == 0
    check_sbom(out.read_bytes(), "i:t")                  # what sbom.py writes in the image passes
    broken = json.loads(out.read_text())
    del broken["components"][0]["type"]
    with pytest.raises(UserError, match=r"i:t: its SBOM .* is not valid CycloneDX 1\.5 \('type' is a required"):
        check_sbom(json.dumps(broken).encode(), "i:t")
    broken = {**json.loads(out.read_text()), "extra": 1}
    with pytest.raises(UserError, match="not signed"):  # strict: a field the schema does not know
        check_sbom(json.dumps(broken).encode(), "i:t")


def test_sbom_without_a_lock_is_one_line(tmp_path, capsys):
    assert sbom_main(["--lock", str(tmp_path / "none"), "--name", "x", "--out", str(tmp_path / "o")]) == 2
    assert "error: lock" in capsys.readouterr().err


def test_report_summary_names_signer_host_verdict_and_checks():
    from scripts.publish.signing import Trusted
    report = {"created": "2026-01-01T00:00:00Z", "environment": {"hostname": "c0ffee", "driver": "580.65",
                                                                 "torch": "2.15.0", "cuda": "13.2"},
              "checks": [{"name": "gpu", "status": "pass", "summary": "ok", "data": {"devices": [{"name": "NVIDIA H100"}]}},
                         {"name": "shm", "status": "pass", "summary": "2.0 GiB"}]}
    host = host_facts(report, {"node": "node7"})
    assert host["gpus"] == ["NVIDIA H100"] and host["node"] == "node7" and host["driver"] == "580.65"
    signer = Trusted(None, "/keys/release.pub")
    object.__setattr__(signer, "key", type("K", (), {"keyid": "f" * 64})())
    att = Attestation("sha256:" + "1" * 64, signer, "2026-01-02T00:00:00Z", report, "pass", None, host)
    text = format_report(Summary("r@" + DIGEST, True, found_via="tag x", attestations=[att]))
    assert "verified: yes (verdict PASS" in text and "node node7, GPU NVIDIA H100 (x1), driver 580.65" in text
    assert "signer:   release.pub (key ffffffffffffffff)" in text and "PASS  shm" in text
    assert "verified: NO (no report)" in format_report(Summary("r@" + DIGEST, False, reason="no report"))


AMD = PlatformManifest("linux/amd64", DOCKER_MANIFEST, "sha256:" + "a" * 64, 1234, "sha256:" + "c" * 64)
ARM = PlatformManifest("linux/arm64", OCI_MANIFEST, "sha256:" + "b" * 64, 987, "sha256:" + "d" * 64)


def test_index_document_lists_one_descriptor_per_platform_manifest():
    data = index_document([AMD, ARM])
    doc = json.loads(data)
    assert doc["schemaVersion"] == 2 and doc["mediaType"] == OCI_INDEX
    assert doc["manifests"] == [
        {"mediaType": DOCKER_MANIFEST, "digest": AMD.digest, "size": 1234,
         "platform": {"architecture": "amd64", "os": "linux"}},
        {"mediaType": OCI_MANIFEST, "digest": ARM.digest, "size": 987,
         "platform": {"architecture": "arm64", "os": "linux"}},
    ]
    # canonical bytes: the same manifests give the same index digest (index-only mode re-PUTs the same index)
    assert sha256(index_document([AMD, ARM])) == sha256(data) != sha256(index_document([ARM, AMD]))


def test_index_document_keeps_a_platform_variant():
    v8 = PlatformManifest("linux/arm64/v8", OCI_MANIFEST, ARM.digest, 5, ARM.config_digest)
    assert json.loads(index_document([v8]))["manifests"][0]["platform"] == {"architecture": "arm64", "os": "linux",
                                                                              "variant": "v8"}


@pytest.mark.parametrize("manifests, needle", [
    ([], "at least one platform"),
    ([AMD, AMD], "two manifests for linux/amd64"),
    ([PlatformManifest("linux/arm64", OCI_MANIFEST, "sha256:short", 5, "")], "not a manifest descriptor"),
    ([PlatformManifest("linux/arm64", OCI_INDEX, ARM.digest, 5, "")], "itself an index"),
])
def test_index_document_rejects_what_is_not_one_manifest_per_platform(manifests, needle):
    with pytest.raises(UserError, match=needle):
        index_document(manifests)


def test_per_arch_tags_and_config_platforms(test_specs):
    import dataclasses

    from scripts.plan.spec import Target
    spec = dataclasses.replace(test_specs[0], tag="2.15.0-cpu-debian12")
    assert Target(spec, "linux/arm64").arch_tag == "2.15.0-cpu-debian12-arm64"
    assert Target(dataclasses.replace(spec, tag="t"), "linux/amd64").arch_tag == "t-amd64"
    assert config_platform({"os": "linux", "architecture": "arm64", "variant": "v8"}) == "linux/arm64/v8"
    assert config_platform({"os": "linux", "architecture": "amd64"}) == "linux/amd64"
    assert split_repository("ghcr.io/acme/torchimages") == ("ghcr.io", "acme/torchimages")
    assert split_repository("127.0.0.1:5000/torchimages") == ("127.0.0.1:5000", "torchimages")


def test_durations_and_the_age_of_evidence():
    from datetime import datetime, timezone

    from scripts.durations import parse_duration, shown
    from scripts.errors import UserError
    from scripts.publish.report import expire
    assert [parse_duration(t, "MAX_AGE") for t in ("7d", "12h", "30m", "90", "1w")] == [604800, 43200, 1800, 90, 604800]
    for bad in ("", "0", "-1d", "7 days", "1y", "nan"):
        with pytest.raises(UserError, match="is not a duration"):
            parse_duration(bad, "MAX_AGE")
    assert [shown(s) for s in (17, 2520, 18720, 788400)] == ["17s", "42m", "5h 12m", "9d 3h"]
    now = datetime(2026, 11, 25, 12, tzinfo=timezone.utc)
    from scripts.publish.signing import Trusted
    signer = Trusted(None, "/keys/release.pub")

    def summary(when: str) -> Summary:
        att = Attestation("sha256:" + "1" * 64, signer, when, {"checks": []}, "pass", None, {})
        return Summary("r@" + DIGEST, True, attestations=[att])
    fresh, old, future, undated = (summary(w) for w in ("2026-11-25T11:00:00Z", "2026-11-16T09:00:00Z",
                                                        "2026-11-26T12:00:00Z", "yesterday"))
    for s in (fresh, old, future, undated):
        expire(s, 7 * 86400, now)
    assert fresh.verified and not old.verified and not future.verified and not undated.verified
    assert "is 9d 3h old (2026-11-16T09:00:00Z), older than the maximum age 7d" in old.reason
    assert "in the future" in future.reason and "no readable time" in undated.reason
