"""A bundle's signature as a standard attestation: an in-toto Statement v1 in a DSSE envelope (issue 32).

The statement's subjects are the bundle's sealed files and MANIFEST.json itself, each with its
sha256, so any in-toto or DSSE tool can check a bundle with nothing but the validator's public key
(tools/dsse-verify is one, built from secure-systems-lab's Go library). Its predicate says what the
files mean: the verdict's summary and the digests of the inputs the run was sealed on.

predicateType is faultkit's own, https://faultkit.dev/verdict/v1: no vetted in-toto predicate says
"a fault was judged by these rules" (SLSA provenance describes builds; the test-result predicate is
a v0.1 draft whose PASSED/WARNED/FAILED cannot tell flaky from aborted, nor carry the rules'
version), and the /v1 lets the predicate change shape as v2 without old bundles meaning something
else.

Envelopes are made and checked with securesystemslib's DSSE Envelope (its PAE, its ed25519 key);
faultkit adds only what the spec leaves to the application: the keyid is faultkit's fingerprint,
and each signature carries its raw public key in an additional field `publicKey` (DSSE: consumers
ignore fields they do not know), because trust lists hold fingerprints, not keys. The keyid is a
hint: the key that verifies is the one whose fingerprint is checked against the trust list.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

if TYPE_CHECKING:
    from securesystemslib.signer import SSlibKey

from faultkit import jsonio
from faultkit.errors import InputError
from faultkit.keys import fingerprint

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://faultkit.dev/verdict/v1"
PUBLIC_KEY = "publicKey"  # the additional field of a signature that holds its raw ed25519 key (base64)
VERDICT_FIELDS = ("fault", "status", "failed_rules", "summary", "window_s", "repeat")
_HEX = re.compile(r"[0-9a-f]{64}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Attested:
    """A verified envelope: the fingerprint of the key whose signature verified, and what it signed."""

    signer: str
    subjects: dict[str, str]  # name -> "sha256:<hex>"
    predicate: dict[str, Any]


def is_envelope(record: Mapping[str, Any]) -> bool:
    return "payloadType" in record


# ------------------------------------------------------------------ making


def predicate(verdict: Mapping[str, Any] | None, inputs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The verdict's summary and the sealed inputs' digests (every digest-shaped value of
    inputs.json, by its dotted path), with the rules' version; None where the bundle has no such file
    (a replay's run record has neither)."""
    summary = {k: verdict[k] for k in VERDICT_FIELDS if k in verdict} if verdict is not None else None
    if inputs is None:
        return {"verdict": summary, "inputs": None}
    sealed = {"digests": dict(sorted(_digests(inputs, ""))),
              "rules_version": inputs.get("rules_version"), "toolkit": inputs.get("toolkit")}
    return {"verdict": summary, "inputs": sealed}


def _digests(value: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)] if _DIGEST.fullmatch(value) else []
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
    return [d for k, v in items for d in _digests(v, f"{path}.{k}" if path else str(k))]


def statement(subjects: Mapping[str, str], pred: Mapping[str, Any]) -> dict[str, Any]:
    """The in-toto Statement v1 over `subjects` ({name: "sha256:<hex>"})."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest.removeprefix("sha256:")}}
                    for name, digest in sorted(subjects.items())],
        "predicateType": PREDICATE_TYPE,
        "predicate": dict(pred),
    }


def envelope(stmt: Mapping[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The DSSE envelope of `stmt` signed with `key` (PAE over the payload type and the payload)."""
    payload = json.dumps(stmt, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # securesystemslib is imported where an envelope is made or opened: its signer package loads every
    # cloud signer whose library is installed (boto3 alone adds about 0.25 s to each command's start)
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    public = key.public_key()
    env = Envelope(payload.encode(), PAYLOAD_TYPE, {})
    env.sign(CryptoSigner(key, _sslib_key(public)))
    data = env.to_dict()
    data["signatures"][0][PUBLIC_KEY] = base64.b64encode(public.public_bytes_raw()).decode()
    return data


def _sslib_key(public: Ed25519PublicKey) -> SSlibKey:
    from securesystemslib.signer import SSlibKey

    return SSlibKey.from_crypto(public, keyid=fingerprint(public))


# ------------------------------------------------------------------ checking


def open_envelope(record: Mapping[str, Any], where: str) -> Attested:
    """Verify the envelope's one signature with the key it carries and return what it signed; any
    flaw is a one-line refusal naming `where`."""
    if record.get("payloadType") != PAYLOAD_TYPE:
        raise InputError(f"{where}: bundle tampered: payloadType is {record.get('payloadType')!r}, "
                         f"not {PAYLOAD_TYPE!r}")
    signatures = record.get("signatures")
    if not isinstance(signatures, list) or len(signatures) != 1 or not isinstance(signatures[0], dict):
        raise InputError(f"{where}: bundle tampered: a bundle's envelope holds exactly one signature")
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import FormatError, VerificationError

    public = _public_key(signatures[0], where)
    if signatures[0].get("keyid") != fingerprint(public):
        raise InputError(f"{where}: bundle tampered: the signature names another key than it holds")
    try:
        env = Envelope.from_dict({"payload": record.get("payload"), "payloadType": PAYLOAD_TYPE,
                                  "signatures": [{"keyid": signatures[0]["keyid"], "sig": signatures[0].get("sig")}]})
        env.verify([_sslib_key(public)], 1)
    except (KeyError, TypeError, ValueError, FormatError):
        raise InputError(f"{where}: bundle tampered: the envelope is not valid DSSE") from None
    except VerificationError:
        raise InputError(f"{where}: bundle tampered: the envelope's signature does not verify") from None
    stmt = _statement(env.payload, where)
    return Attested(fingerprint(public), _subjects(stmt, where), stmt["predicate"])


def _public_key(signature: Mapping[str, Any], where: str) -> Ed25519PublicKey:
    try:
        raw = base64.b64decode(str(signature.get(PUBLIC_KEY)), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise InputError(f"{where}: bundle tampered: the signature carries no valid ed25519 {PUBLIC_KEY}") from None


def _statement(payload: bytes, where: str) -> dict[str, Any]:
    try:
        stmt = jsonio.loads(payload.decode("utf-8"), f"{where}: payload")
    except UnicodeDecodeError:
        raise InputError(f"{where}: bundle tampered: the payload is not UTF-8") from None
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE:
        raise InputError(f"{where}: the payload is not an in-toto Statement v1")
    if stmt.get("predicateType") != PREDICATE_TYPE or not isinstance(stmt.get("predicate"), dict):
        raise InputError(f"{where}: predicateType is {stmt.get('predicateType')!r}; this faultkit reads "
                         f"{PREDICATE_TYPE}")
    return stmt


def _subjects(stmt: Mapping[str, Any], where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    items = stmt.get("subject")
    for item in items if isinstance(items, list) else [None]:
        name = item.get("name") if isinstance(item, dict) else None
        digest = item.get("digest") if isinstance(item, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not isinstance(sha, str) or not _HEX.fullmatch(sha) or name in found:
            raise InputError(f"{where}: the statement's subject {name!r} is not a unique name with a sha256 digest")
        found[name] = "sha256:" + sha
    return found
