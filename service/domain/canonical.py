"""Canonical JSON and the hash chain (spec: docs/AUDIT.md).

Standard library only: the offline verifier imports this module and nothing
else of ours, so an organiser can check a bundle without installing us.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

GENESIS = "0" * 64
SALT_LABEL = b"quarterdeck-event-salt-v1"


#: One encoder for every call: ``json.dumps`` with options builds a new one each
#: time, a quarter of a small object's encoding (the events of an intent are
#: encoded about nine times: data, link and meta).  It holds no state between calls.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical(obj: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8 (docs/AUDIT.md).

    Engines emit integers, strings, booleans, null, lists and objects only:
    a float's text form is not portable across languages, so none is used."""
    return _ENCODER.encode(obj).encode("utf-8")


def event_salt(seed: bytes, seq: int) -> bytes:
    """Per-event salt derived from the game's secret seed.  Digests of hidden
    data are salted so nobody can confirm a guess (which of 7 crew cards?) by
    hashing candidates; the salt becomes computable when the seed is revealed."""
    return hmac.digest(seed, SALT_LABEL + seq.to_bytes(8, "big"), "sha256")


def digest(salt: bytes, obj: Any) -> str:
    return hashlib.sha256(salt + canonical(obj)).hexdigest()


def link_hash(
    game_id: str,
    seq: int,
    type_: str,
    schema_version: int,
    data_digest: str,
    meta_digest: str,
    prev_hash: str,
) -> str:
    """The chained hash of one event.  It covers the digests rather than the
    data itself, so a feed that redacts hidden data (but shows its digest)
    still lets anyone check every link."""
    body = {
        "data_digest": data_digest,
        "game_id": game_id,
        "meta_digest": meta_digest,
        "prev_hash": prev_hash,
        "schema_version": schema_version,
        "seq": seq,
        "type": type_,
    }
    return hashlib.sha256(canonical(body)).hexdigest()


def seal(
    seed: bytes,
    game_id: str,
    seq: int,
    type_: str,
    schema_version: int,
    data: Any,
    meta: Any,
    prev_hash: str,
) -> tuple[str, str, str]:
    """``(data_digest, meta_digest, hash)`` for one event."""
    return seal_text(seed, game_id, seq, type_, schema_version, data, canonical(meta), prev_hash)


def seal_text(
    seed: bytes,
    game_id: str,
    seq: int,
    type_: str,
    schema_version: int,
    data: Any,
    meta_text: bytes,
    prev_hash: str,
) -> tuple[str, str, str]:
    """:func:`seal` with the meta already in canonical form: the events of one decision share
    their meta (and its clock), so it is serialised once per decision, not once per event."""
    dd, md = digests_text(seed, seq, data, meta_text)
    return dd, md, link_hash(game_id, seq, type_, schema_version, dd, md, prev_hash)


def digests_text(seed: bytes, seq: int, data: Any, meta_text: bytes) -> tuple[str, str]:
    """``(data_digest, meta_digest)`` of event ``seq``, the meta already in canonical
    form: what :func:`seal_text` seals, and what the store derives again on every read
    (it keeps only the hash: migration 0009)."""
    salt = event_salt(seed, seq)
    return digest(salt, data), hashlib.sha256(salt + meta_text).hexdigest()
