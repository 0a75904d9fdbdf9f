"""Sealed positions: a position encrypted and authenticated by the server for one seat, so a
frontend can hold it (and send it back with every request) without being able to read what
that seat may not see.

A sealed blob is AES-256-GCM (``cryptography``'s AEAD) over the position's game name, its
``State.encode()`` bytes and the seat it is sealed for (its *audience*):

    version (1 byte, 1) | key id length (1 byte) | key id (ASCII) | nonce (12 bytes) | ciphertext + tag

The associated data binds the format version and the key id (``AAD_LABEL`` + those header
bytes), so neither can be swapped without the tag failing; the audience seat is inside the
ciphertext, so a client cannot re-address a blob to another seat either. Nonces are random
(96 bits, fresh per blob): the same key may seal about 2**32 blobs before a collision becomes
a concern (NIST SP 800-38D, 8.3); rotate keys well before that (``hortus seal-keygen``).

The encoded state of a game has a fixed size per seat count, so the blob's length tells no
more than the game and its seats (no compression: it would let lengths depend on content).

Keys live in a text file, one ``ID BASE64KEY`` per line (``#`` comments, blank lines allowed);
the *last* key seals, every key opens. Rotation: append a new key (``hortus seal-keygen FILE``)
and restart the workers; drop the old line once the blobs it sealed no longer matter. Every
process and replica that reads the same file opens the others' blobs.

``cryptography`` is imported only when a key is loaded: a server without a key never needs
it (the ``seal`` extra).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
import struct
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "AAD_LABEL",
    "FORMAT_VERSION",
    "KEY_BYTES",
    "SealError",
    "SealKeyError",
    "Sealed",
    "Sealer",
    "append_new_key",
    "load_sealer",
    "parse_keys",
]

FORMAT_VERSION = 1
KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12  # GCM's 96-bit nonce
TAG_BYTES = 16
AAD_LABEL = b"hortus.v1 sealed position"
FIELD = "position.sealed"
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_PLAIN = struct.Struct("<BB")  # audience seat, game name length; then the name and the encoded bytes


class SealError(ValueError):
    """A sealed blob this server cannot open (``field`` is the request field it came in)."""

    def __init__(self, reason: str, field: str = FIELD) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class SealKeyError(ValueError):
    """A key file that is not one (says which line and why)."""


@dataclass(frozen=True)
class Sealed:
    """The contents of an opened blob."""

    game: str
    encoded: bytes
    seat: int  # the audience: the seat the blob was sealed for
    key_id: str


def parse_keys(text: str, source: str = "key file") -> list[tuple[str, bytes]]:
    """The ``(id, key)`` pairs of a key file's text, in file order (the last one seals)."""
    keys: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise SealKeyError(f"{source} line {number}: expected 'ID BASE64KEY'")
        key_id, encoded = parts
        if not _KEY_ID.fullmatch(key_id):
            raise SealKeyError(f"{source} line {number}: key id {key_id!r} must be 1-64 of A-Z a-z 0-9 . _ -")
        if key_id in seen:
            raise SealKeyError(f"{source} line {number}: key id {key_id!r} appears twice")
        try:
            key = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise SealKeyError(f"{source} line {number}: key {key_id!r} is not base64") from exc
        if len(key) != KEY_BYTES:
            raise SealKeyError(f"{source} line {number}: key {key_id!r} has {len(key)} bytes, not {KEY_BYTES} (AES-256)")
        seen.add(key_id)
        keys.append((key_id, key))
    if not keys:
        raise SealKeyError(f"{source}: no key (make one with: hortus seal-keygen FILE)")
    return keys


class Sealer:
    """Seals with the newest key (the last one given), opens with any of them."""

    def __init__(self, keys: list[tuple[str, bytes]]) -> None:
        if not keys:
            raise SealKeyError("no key")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # the seal extra

        self._ciphers: dict[str, AESGCM] = {key_id: AESGCM(key) for key_id, key in keys}
        self._keys = dict(keys)
        self.sealing_id = keys[-1][0]
        self.key_ids = tuple(key_id for key_id, _ in keys)

    @staticmethod
    def _header(key_id: str) -> bytes:
        raw = key_id.encode("ascii")
        return bytes((FORMAT_VERSION, len(raw))) + raw

    def seal(self, game: str, encoded: bytes, seat: int) -> bytes:
        """A blob of `encoded` (a ``State.encode()`` of `game`) for `seat` alone."""
        if not 0 <= seat < 256:
            raise ValueError(f"seat {seat} is not in 0..255")
        name = game.encode()
        plain = _PLAIN.pack(seat, len(name)) + name + encoded
        header = self._header(self.sealing_id)
        nonce = os.urandom(NONCE_BYTES)
        sealed: bytes = self._ciphers[self.sealing_id].encrypt(nonce, plain, AAD_LABEL + header)
        return header + nonce + sealed

    def derive_seed(self, purpose: bytes, data: bytes, key_id: str | None = None) -> int:
        """A 64-bit seed from `data` keyed with a key (default: the sealing one): HMAC-SHA256
        under a label naming `purpose`. Deterministic for the key, unpredictable without it,
        so a client that chose the seed of a deal or a draw cannot work out its outcome."""
        key = self._keys[key_id or self.sealing_id]
        digest = hmac.new(key, b"hortus.v1 " + purpose + b"\0" + data, hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "little")

    def open(self, blob: bytes, field: str = FIELD) -> Sealed:
        """The contents of `blob`; ``SealError`` naming `field` when it is not a blob this
        server sealed (unknown version or key id, or any byte changed)."""
        from cryptography.exceptions import InvalidTag

        if len(blob) < 2:
            raise SealError("too short to be a sealed position", field)
        version, id_len = blob[0], blob[1]
        if version != FORMAT_VERSION:
            raise SealError(f"sealed format version {version} is not {FORMAT_VERSION}", field)
        start = 2 + id_len
        if id_len == 0 or len(blob) < start + NONCE_BYTES + TAG_BYTES:
            raise SealError("truncated: shorter than its header, nonce and tag", field)
        try:
            key_id = blob[2:start].decode("ascii")
        except UnicodeDecodeError as exc:
            raise SealError("its key id is not ASCII", field) from exc
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise SealError(f"sealed with key id {key_id!r}, which this server does not hold", field)
        nonce = blob[start : start + NONCE_BYTES]
        try:
            plain = cipher.decrypt(nonce, blob[start + NONCE_BYTES :], AAD_LABEL + blob[:start])
        except InvalidTag as exc:
            raise SealError("does not authenticate: the blob was changed or sealed by another server", field) from exc
        seat, name_len = _PLAIN.unpack_from(plain)
        name_end = _PLAIN.size + name_len
        return Sealed(plain[_PLAIN.size : name_end].decode(), plain[name_end:], seat, key_id)


def load_sealer(path: str | os.PathLike[str]) -> Sealer:
    """The sealer of a key file (``SealKeyError`` / ``OSError`` saying what is wrong)."""
    text = Path(path).read_text(encoding="ascii", errors="strict")
    return Sealer(parse_keys(text, str(path)))


def append_new_key(path: str | os.PathLike[str], key_id: str | None = None) -> str:
    """Append a fresh random key to the key file at `path` (created readable by its owner
    only), which then seals; returns its id (default: ``sUTCDATETIME``, so ids sort by age)."""
    key_id = key_id or time.strftime("s%Y%m%dT%H%M%SZ", time.gmtime())
    if not _KEY_ID.fullmatch(key_id):
        raise SealKeyError(f"key id {key_id!r} must be 1-64 of A-Z a-z 0-9 . _ -")
    target = Path(path)
    existing = target.read_text(encoding="ascii") if target.exists() else ""
    if existing.strip():
        if key_id in {k for k, _ in parse_keys(existing, str(path))}:
            raise SealKeyError(f"{path}: key id {key_id!r} is already there")
    line = f"{key_id} {base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()}\n"
    header = "" if existing else "# hortus sealing keys: 'ID BASE64KEY' per line; the last one seals, every one opens\n"
    if existing and not existing.endswith("\n"):
        header = "\n"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="ascii") as out:
        out.write(header + line)
    return key_id
