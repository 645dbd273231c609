"""Keys, in-toto Statements (v1) and DSSE envelopes, through the field's libraries: `in-toto-attestation` checks a
Statement's shape, `securesystemslib` signs and verifies (DSSE, pyca/cryptography underneath). No crypto here.

Keys: ECDSA P-256 (`ecdsa-sha2-nistp256`) or Ed25519, PEM. `make keygen` writes the private key (PKCS#8, mode 0600,
its folder 0700) and the public key beside it, outside the repository; `SIGNING_KEY=<file>` signs with it,
`TRUST=<public key files or folders>` is what a reader believes. A private key's bytes are never printed, logged or
copied: errors name the file only.
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ROOT
from ..errors import UserError
from ..fsutil import atomic_write
from ..settings import KEY_NAME, KEY_TYPES, PUB_NAME

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"         # DSSE payloadType of an in-toto Statement
DSSE_TYPE = "application/vnd.dsse.envelope.v1+json"    # the artifact's layer media type


def inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def keygen(folder: Path, kind: str = "ecdsa", force: bool = False) -> tuple[Path, Path, str]:
    """Write a new key pair into `folder` (never inside the repository): (private, public, keyid)."""
    from securesystemslib.signer import CryptoSigner  # type: ignore[attr-defined]
    if kind not in KEY_TYPES:
        raise UserError(f"KEY_TYPE={kind!r}: write ecdsa (P-256) or ed25519")
    if inside(folder, ROOT):
        raise UserError(f"KEY_DIR={folder} is inside the repository ({ROOT}): a private key never enters it; "
                        f"use the default (~/.config/torchimages) or another folder outside")
    private, public = folder / KEY_NAME, folder / PUB_NAME
    if private.exists() and not force:
        raise UserError(f"{private} exists: FORCE=1 replaces it (attestations it signed then need the old public key)")
    signer = CryptoSigner.generate_ecdsa() if kind == "ecdsa" else CryptoSigner.generate_ed25519()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    atomic_write(private, signer.private_bytes, mode=0o600)
    atomic_write(public, public_pem(signer.public_key), mode=0o644)
    return private, public, signer.public_key.keyid


def public_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    data: bytes = key._crypto_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    return data


def _check_curve(public: Any, where: str) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    if isinstance(public, ed25519.Ed25519PublicKey):
        return
    if isinstance(public, ec.EllipticCurvePublicKey) and isinstance(public.curve, ec.SECP256R1):
        return
    raise UserError(f"{where}: not an ECDSA P-256 or Ed25519 key ({type(public).__name__.lstrip('_')}): "
                    f"make keygen writes one")


def load_signer(path: Path) -> Any:
    """A securesystemslib CryptoSigner from a PEM private key file that only its owner can read."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.signer import CryptoSigner  # type: ignore[attr-defined]
    where = f"SIGNING_KEY={path}"
    try:
        info = path.stat()
    except OSError as exc:
        raise UserError(f"{where}: cannot read it ({exc.strerror}); make keygen writes one") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{where} is not a file")
    if info.st_mode & 0o077:
        raise UserError(f"{where} can be read by others (mode {stat.S_IMODE(info.st_mode):04o}): chmod 600 it")
    if info.st_size > 64 << 10:
        raise UserError(f"{where} is {info.st_size} bytes: not a PEM private key")
    try:
        private = load_pem_private_key(path.read_bytes(), None)
    except (ValueError, TypeError):
        # the message names the file only: the key's bytes never reach a terminal or a log
        raise UserError(f"{where} is not an unencrypted PEM private key (PKCS#8); make keygen writes one") from None
    _check_curve(private.public_key(), where)
    return CryptoSigner(private)


def _public_key(pem: bytes, where: str) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.signer import SSlibKey  # type: ignore[attr-defined]
    try:
        public = load_pem_public_key(pem)
    except (ValueError, TypeError):
        raise UserError(f"{where} is not a PEM public key (the .pub file make keygen writes)") from None
    _check_curve(public, where)
    return SSlibKey.from_crypto(public)


@dataclass(frozen=True)
class Trusted:
    """A public key a reader believes, and the file it came from (to say who signed)."""

    key: Any            # securesystemslib SSlibKey
    source: str

    @property
    def keyid(self) -> str:
        return str(self.key.keyid)


def load_trust(items: Iterable[Path]) -> list[Trusted]:
    """The public keys in TRUST: files, or folders (their *.pub and *.pem files that are public keys)."""
    found: list[Trusted] = []
    for item in items:
        if item.is_dir():
            files = sorted(p for p in item.iterdir() if p.suffix in (".pub", ".pem") and p.is_file())
            keys = []
            for path in files:
                # at most a key's size read: a large file in the folder (a log, an image named .pem) was read whole
                # before it was cut, its size in memory; one past it is no public key
                try:
                    with path.open("rb") as handle:
                        data = handle.read((64 << 10) + 1)
                except OSError as exc:
                    raise UserError(f"TRUST: {path} cannot be read ({exc.strerror or exc})") from None
                if len(data) <= 64 << 10 and b"PUBLIC KEY-----" in data:
                    keys.append(Trusted(_public_key(data, f"TRUST: {path}"), str(path)))
            if not keys:
                raise UserError(f"TRUST={item}: no public key (*.pub, *.pem) in this folder")
            found += keys
        elif item.is_file():
            if item.stat().st_size > 64 << 10:
                raise UserError(f"TRUST={item} is too large for a public key")
            found.append(Trusted(_public_key(item.read_bytes(), f"TRUST={item}"), str(item)))
        else:
            raise UserError(f"TRUST={item}: no such file or folder; give the public key(s) attestations are "
                            f"signed with (make keygen writes ~/.config/torchimages/{PUB_NAME})")
    return found


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def statement(subjects: list[tuple[str, str]], predicate_type: str, predicate: dict[str, Any]) -> dict[str, Any]:
    """An in-toto Statement v1 over (name, sha256:hex) subjects, checked by in-toto-attestation."""
    doc = {"_type": STATEMENT_TYPE,
           "subject": [{"name": name, "digest": {"sha256": digest.removeprefix("sha256:")}} for name, digest in subjects],
           "predicateType": predicate_type, "predicate": predicate}
    problem = statement_problem(doc)
    if problem:
        raise UserError(f"cannot make an in-toto statement: {problem}")
    return doc


def statement_problem(doc: Any) -> str | None:
    """Why `doc` is not an in-toto Statement v1 (in-toto-attestation's own checks), or None."""
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement
    if not isinstance(doc, dict):
        return "the payload is not a JSON object"
    try:
        pb = json_format.ParseDict(doc, statement_pb2.Statement())
        Statement.copy_from_pb(pb).validate()
    except (json_format.ParseError, ValueError, TypeError) as exc:
        return f"not an in-toto Statement v1 ({str(exc).splitlines()[0][:160]})"
    return None


def sign(doc: dict[str, Any], signer: Any) -> bytes:
    """The DSSE envelope (JSON) of a Statement, signed with `signer`."""
    from securesystemslib.dsse import Envelope
    envelope = Envelope(canonical(doc), PAYLOAD_TYPE, {})
    envelope.sign(signer)
    return canonical(envelope.to_dict())


@dataclass(frozen=True)
class Opened:
    """A DSSE envelope whose signature verified: its Statement and who signed it."""

    statement: dict[str, Any]
    signer: Trusted


class Untrusted(Exception):
    """Why an envelope is not believed: unsigned, unknown key, a signature that does not match, not a Statement."""


def open_envelope(raw: bytes, trust: list[Trusted]) -> Opened:
    """Verify a DSSE envelope against the trusted keys; the Statement inside, or Untrusted with the reason."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import FormatError, VerificationError
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise Untrusted("not a DSSE envelope (not JSON)") from None
    if not isinstance(data, dict) or not isinstance(data.get("signatures"), list):
        raise Untrusted("not a DSSE envelope (no signatures list)")
    if not data["signatures"]:
        raise Untrusted("unsigned (a DSSE envelope without a signature)")
    try:
        envelope = Envelope.from_dict(data)
    except (KeyError, TypeError, ValueError, FormatError, AttributeError):
        raise Untrusted("not a DSSE envelope (malformed payload or signatures)") from None
    if envelope.payload_type != PAYLOAD_TYPE:
        raise Untrusted(f"payload type {envelope.payload_type[:80]!r} is not an in-toto statement")
    ids = {t.keyid: t for t in trust}
    known = [k for k in envelope.signatures if k in ids]
    if not known:
        shown = ", ".join(k[:16] for k in envelope.signatures)
        raise Untrusted(f"signed by a key not in TRUST (keyid {shown[:80]})")
    try:
        verified = envelope.verify([ids[k].key for k in known], 1)
    except VerificationError:
        raise Untrusted(f"the signature of trusted key {known[0][:16]} does not match the payload (changed after "
                        f"signing)") from None
    signer = ids[next(iter(verified))]
    try:
        doc = json.loads(envelope.payload)
    except (ValueError, UnicodeDecodeError):
        raise Untrusted("the signed payload is not JSON") from None
    problem = statement_problem(doc)
    if problem:
        raise Untrusted(problem)
    return Opened(doc, signer)


def subject_digests(doc: dict[str, Any]) -> list[str]:
    return [f"sha256:{s['digest']['sha256']}" for s in doc.get("subject", [])
            if isinstance(s, dict) and isinstance(s.get("digest"), dict) and isinstance(s["digest"].get("sha256"), str)]
