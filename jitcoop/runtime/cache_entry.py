"""The format of one disk cache entry: a fixed binary header, the key, JSON metadata, the object.

Every entry (a kernel, a kernel-library variant, the dispatch driver) is one file, so that its
object and its metadata can never disagree, written whole under a temporary name and renamed into
place (jitcoop.runtime.cache). Nothing in it executes when it is read: the header is fixed
fields, the metadata is JSON, and the object file goes to LLVM only after everything below has
been checked.

    offset  size  field
    0       8     magic b"JITCOOP\\x1a"
    8       4     format version (u32, FORMAT)
    12      16    jitcoop's version (ASCII, NUL-padded)
    28      12    kind: "kernel", "library", "driver" (ASCII, NUL-padded)
    40      4     key size in bytes (u32)
    44      8     metadata size in bytes (u64)
    52      8     object size in bytes (u64)
    60      32    SHA-256 of the metadata
    92      32    SHA-256 of the object
    124     4     zero
    128           the key (ASCII), the metadata (UTF-8 JSON), the object (ELF/Mach-O/COFF bytes)

An entry is valid when every header field is what the reader expects (the same bytes, padding
included), the sizes add up to the file's size exactly, and both hashes match: a truncated file, a
flipped bit anywhere, an entry of another key or version all fail one of these. The hashes guard
against damage, not against someone who writes entries on purpose: a cache folder holds machine
code that jitcoop runs, and is to be trusted like the jitcoop installation itself.
"""
from __future__ import annotations

import hashlib
import json
import struct

from .. import __version__ as _jitcoop_version

MAGIC = b"JITCOOP\x1a"
FORMAT = 1
KINDS = ("kernel", "library", "driver")
_HEADER = struct.Struct("<8sI16s12sIQQ32s32s4x")
HEADER_SIZE = _HEADER.size
SUFFIX = ".entry"
assert HEADER_SIZE == 128


class EntryError(Exception):
    """Why an entry cannot be used (one line, for the warning)."""


def _field(text: str, size: int, what: str) -> bytes:
    raw = text.encode("ascii")
    if len(raw) > size:
        raise ValueError(f"{what} {text!r} is longer than {size} bytes")
    return raw.ljust(size, b"\0")


def pack(kind: str, key: str, meta, obj: bytes, version: str = _jitcoop_version) -> bytes:
    """The bytes of an entry: `meta` is any JSON-encodable value."""
    if kind not in KINDS:
        raise ValueError(f"unknown cache entry kind {kind!r}")
    k = key.encode("ascii")
    m = json.dumps(meta, separators=(",", ":"), allow_nan=False).encode()
    head = _HEADER.pack(MAGIC, FORMAT, _field(version, 16, "version"), _field(kind, 12, "kind"), len(k),
                        len(m), len(obj), hashlib.sha256(m).digest(), hashlib.sha256(obj).digest())
    return b"".join((head, k, m, obj))


def unpack(data: bytes, kind: str, key: str, version: str = _jitcoop_version) -> tuple[object, bytes]:
    """(metadata, object) of an entry read back, or EntryError saying what is wrong with it."""
    if len(data) < HEADER_SIZE:
        raise EntryError(f"truncated: {len(data)} bytes, shorter than the {HEADER_SIZE}-byte header")
    magic, fmt, ver, knd, klen, mlen, olen, msha, osha = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise EntryError("not a jitcoop cache entry (bad magic number)")
    if fmt != FORMAT:
        raise EntryError(f"entry format {fmt}, this jitcoop reads format {FORMAT}")
    if ver != _field(version, 16, "version"):
        raise EntryError(f"written by jitcoop {_text(ver)}, this is {version}")
    if knd != _field(kind, 12, "kind"):
        raise EntryError(f"a {_text(knd)} entry where a {kind} entry was expected")
    want = HEADER_SIZE + klen + mlen + olen
    if want != len(data):
        raise EntryError(f"{'truncated' if len(data) < want else 'wrong size'}: {len(data)} bytes, "
                         f"its header says {want}")
    k = data[HEADER_SIZE:HEADER_SIZE + klen]
    if k != key.encode("ascii"):
        raise EntryError(f"the entry of another key ({_text(k)[:64]})")
    m = data[HEADER_SIZE + klen:HEADER_SIZE + klen + mlen]
    obj = data[HEADER_SIZE + klen + mlen:]
    if hashlib.sha256(m).digest() != msha:
        raise EntryError("damaged metadata (SHA-256 mismatch)")
    if hashlib.sha256(obj).digest() != osha:
        raise EntryError("damaged object (SHA-256 mismatch)")
    try:
        meta = json.loads(m)
    except (ValueError, RecursionError) as e:
        raise EntryError(f"metadata is not JSON ({e})") from None
    return meta, obj


def header(data: bytes) -> dict | None:
    """The header's fields of an entry, for `jitcoop cache info` (None: not an entry)."""
    if len(data) < HEADER_SIZE or data[:8] != MAGIC:
        return None
    magic, fmt, ver, knd, klen, mlen, olen, _, _ = _HEADER.unpack_from(data)
    return dict(format=fmt, version=_text(ver), kind=_text(knd), key=_text(data[HEADER_SIZE:HEADER_SIZE + klen]),
                meta_size=mlen, object_size=olen)


def _text(raw: bytes) -> str:
    return raw.rstrip(b"\0").decode("ascii", "replace")
