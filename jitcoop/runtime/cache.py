"""The disk cache of compiled kernels, kernel-library variants and the dispatch driver.

Where: `JITCOOP_CACHE_DIR`, else the user cache folder (`$XDG_CACHE_HOME/jitcoop` or
`~/.cache/jitcoop`). Keep this folder between CI runs (cache it like pip's) and kernels load from
it in milliseconds instead of compiling.

Each entry is one file (runtime/cache_entry.py: a checked header, JSON metadata, the object):

    k_<key>.entry              a kernel (runtime/compile.py)
    lib-<source hash>/<symbol>.entry   a kernel-library variant (runtime/library.py)
    drive_<key>.entry          the dispatch driver (runtime/driver.py)
    stats                      hit and miss counts, a line per process (`jitcoop cache info`)

Many processes, on one machine or several sharing the folder, may read and write it at once: an
entry is written under a temporary name (`.tmp-...`) in the same folder, flushed to disk and renamed
into place, so a reader sees a whole entry or none. Two processes that miss the same kernel both
compile it and the last rename wins (the two entries are alike); nothing depends on locks, which
network file systems may lack. An entry that fails its checks is compiled again and replaced, with
a CacheWarning; a folder that cannot be written keeps kernels in memory, with one CacheWarning.

Size: `JITCOOP_CACHE_MAX` ("500M", "2G", "0" for no limit; default 1G). Each hit sets the entry's
modification time to now, and a process that writes entries prunes the folder to the limit (least
recently used first) after its first write and then every PRUNE_EVERY writes or PRUNE_BYTES bytes,
so a full scan is never made per write.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CacheWarning

try:
    import fcntl
except ImportError:                     # not POSIX: no locks, each process compiles on its own
    fcntl = None
from . import cache_entry
from .cache_entry import EntryError

DEFAULT_MAX = "1G"
PRUNE_EVERY = 64              # entries written between two checks of the folder's size ...
PRUNE_BYTES = 64 << 20        # ... or bytes written, whichever comes first
STALE_TMP_S = 600             # a temporary file this old belongs to a process that died
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_ENTRY_NAME = re.compile(r"^(k_|drive_)[0-9a-f]+\.entry$")
# the earlier two-file entries (an object file beside a pickle)
_OLD_NAME = re.compile(r"^(k_[0-9a-f]+\.(o|meta)|drive_[0-9a-f]+\.o)$")
_OLD_LIB_NAME = re.compile(r"^jcl\..*\.(o|json)$")
_TMP_NAME = re.compile(r"^\.tmp-")


def cache_dir() -> Path:
    """The cache folder, made if missing (one CacheWarning when it cannot be: kernels then stay in memory)."""
    d = os.environ.get("JITCOOP_CACHE_DIR")
    if d:
        p = Path(d)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        p = Path(base) / "jitcoop"
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _unwritable(p, e)
    return p


def parse_size(text: str) -> int:
    """Bytes of "500M", "2G", "1.5G", "200000" (K, M, G, T are powers of 1024)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"{text!r} is not a size (examples: 500M, 2G, 0)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def size_limit() -> int:
    """JITCOOP_CACHE_MAX in bytes (0: no limit); a value that is not a size warns and means the default."""
    text = os.environ.get("JITCOOP_CACHE_MAX", DEFAULT_MAX)
    try:
        return parse_size(text)
    except ValueError as e:
        _warn_once("limit", f"JITCOOP_CACHE_MAX: {e}; using {DEFAULT_MAX}")
        return parse_size(DEFAULT_MAX)


# -- per-process state ---------------------------------------------------------------------------

@dataclass
class Counters:
    """This process's use of the cache (the `stats` file sums every process's)."""
    hits: int = 0
    misses: int = 0
    damaged: int = 0
    written: int = 0
    written_bytes: int = 0
    since_prune: list = field(default_factory=lambda: [0, 0])   # entries, bytes written since the last check
    pruned_once: bool = False


counters = Counters()
_lock = threading.Lock()
_warned: set = set()


_PACKAGE = str(Path(__file__).resolve().parents[1])


def warn(message: str):
    """A CacheWarning, attributed to the first caller outside jitcoop (the user's `kernel()` or
    `dispatch()` line), so the one line Python prints points where the user called jitcoop."""
    frame, level = sys._getframe(1), 2           # stacklevel 2: the frame that called warn()
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, CacheWarning, stacklevel=level)


def child_state(since=None):
    """What this process's cache counted and warned about (a compile's child process sends the
    parent what changed `since` its start: runtime/limit.py)."""
    now = ({f: getattr(counters, f) for f in STATS_FIELDS}, set(_warned))
    if since is None:
        return now
    return {f: now[0][f] - since[0][f] for f in STATS_FIELDS}, now[1] - since[1]


def merge_child_state(state):
    counts, warned = state
    for f, n in counts.items():
        setattr(counters, f, getattr(counters, f) + n)
    with _lock:
        _warned.update(warned)


def _warn_once(what, message: str):
    with _lock:
        if what in _warned:
            return
        _warned.add(what)
    warn(message)


def _unwritable(d: Path, e: OSError):
    if d.name.startswith("lib-"):
        d = d.parent                    # one warning for the cache, its library folder included
    _warn_once(("unwritable", str(d)), f"jitcoop cache folder {d} cannot be written ({e.strerror or e}): "
                                       "compiled kernels are kept in this process's memory only")


# -- reading and writing entries -----------------------------------------------------------------

def read_entry(path: Path, kind: str, key: str, decode=None):
    """(metadata, object) of the entry at path, or None: missing, or unusable (then a CacheWarning
    names the file and the reason, and the caller compiles again and writes a good entry).
    decode(JSON value) -> metadata raises ValueError for metadata of the wrong form."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        counters.misses += 1
        return None
    except OSError as e:
        counters.misses += 1
        _warn_once(("read", str(path)),
                   f"jitcoop cache entry {path} cannot be read ({e.strerror or e}): compiling again")
        return None
    try:
        meta, obj = cache_entry.unpack(data, kind, key)
        if decode is not None:
            try:
                meta = decode(meta)
            except ValueError as e:
                raise EntryError(f"metadata of an unknown form ({e})") from None
    except EntryError as e:
        set_aside(path, str(e))
        return None
    counters.hits += 1
    touch(path)
    return meta, obj


def set_aside(path: Path, why: str):
    """An entry that failed its checks: warned about; the new entry the caller compiles replaces it
    (a process reads an entry once: its memory keeps what it loaded)."""
    counters.damaged += 1
    counters.misses += 1
    warn(f"jitcoop cache entry {path} is unusable ({why}): compiling again")


def touch(path: Path):
    """Mark an entry used now (the size limit removes the least recently used first)."""
    try:
        os.utime(path)
    except OSError:
        pass                                # a read-only folder: the order stays the writes'


def write_entry(path: Path, kind: str, key: str, meta, obj: bytes) -> bool:
    """Store an entry (whole or not at all); False when the folder cannot be written."""
    ok = write_atomically(path, cache_entry.pack(kind, key, meta, obj))
    if ok:
        _after_write(len(obj))
    return ok


def write_atomically(path: Path, data: bytes) -> bool:
    """Write a cache file so that no process ever reads part of it: a temporary file beside it
    (same folder, so the rename stays on one file system), flushed to disk, then renamed over it.
    False, with one CacheWarning per process, when the folder cannot be written."""
    tmp = path.parent / f".tmp-{path.name}-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as e:
        _unwritable(path.parent, e)
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return True
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(e, FileNotFoundError):            # a `jitcoop cache clear` meanwhile: nothing lost
            _unwritable(path.parent, e)
        return False


def identity(path: Path):
    """What tells one file at `path` from the next (each entry is written under a new inode, and
    renamed into place), or None where there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size


@contextlib.contextmanager
def compiling(path: Path, limit: float = 0):
    """Held while this process compiles the entry at `path`, so that other processes missing the
    same entry wait for it and read it rather than compile it too: an exclusive flock on
    `.tmp-<name>.lock`, removed when the compile ends. Yields whether it waited for another
    process (the caller then reads the entry again). Only an economy: where locks are missing
    (a network folder without them, a read-only folder, no fcntl) or a wait passes `limit` + 10
    seconds (600 s without a limit), each process compiles on its own, which is correct too."""
    lock = path.parent / f".tmp-{path.name}.lock"
    fd = _locked(lock, (limit or 590) + 10) if fcntl is not None else None
    if fd is None:
        yield False
        return
    fd, waited = fd
    try:
        yield waited
    finally:
        try:
            os.unlink(lock)             # a process that opened it meanwhile finds the entry written
        except OSError:
            pass
        os.close(fd)


def _locked(lock: Path, wait: float):
    """(descriptor holding an exclusive flock on `lock`, whether it had to wait), or None."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd, False
    except BlockingIOError:
        pass
    except OSError:                     # ENOLCK: no locks here
        os.close(fd)
        return None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.02)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, True
        except BlockingIOError:
            continue
        except OSError:
            break
    os.close(fd)
    return None


def _after_write(nbytes: int):
    counters.written += 1
    counters.written_bytes += nbytes
    s = counters.since_prune
    s[0] += 1
    s[1] += nbytes
    if counters.pruned_once and s[0] < PRUNE_EVERY and s[1] < PRUNE_BYTES:
        return
    limit = size_limit()
    counters.pruned_once = True
    s[0] = s[1] = 0
    if limit:
        try:
            prune(cache_dir(), limit)
        except OSError:
            pass


# -- the folder as a whole: `jitcoop cache` --------------------------------------------------------

@dataclass
class FileInfo:
    path: Path
    size: int
    used: float              # last use (modification time: set on each hit)
    kind: str                # "kernel", "library", "driver", "old" (an earlier format), "tmp"


def scan(d: Path) -> list:
    """The cache's files: entries, earlier formats' files, temporary files (nothing else the
    folder may hold)."""
    out = []

    def add(p: Path, kind: str):
        try:
            st = p.stat()
        except OSError:
            return                          # removed meanwhile
        out.append(FileInfo(p, st.st_size, st.st_mtime, kind))

    try:
        top = list(os.scandir(d))
    except FileNotFoundError:
        return out
    for e in top:
        name = e.name
        if e.is_dir(follow_symlinks=False) and name.startswith("lib-"):
            for f in os.scandir(e.path):
                if f.name.endswith(cache_entry.SUFFIX) and not f.name.startswith("."):
                    add(Path(f.path), "library")
                elif _TMP_NAME.match(f.name):
                    add(Path(f.path), "tmp")
                elif _OLD_LIB_NAME.match(f.name):
                    add(Path(f.path), "old")
        elif not e.is_file(follow_symlinks=False):
            continue
        elif _ENTRY_NAME.match(name):
            add(Path(e.path), "kernel" if name.startswith("k_") else "driver")
        elif _TMP_NAME.match(name):
            add(Path(e.path), "tmp")
        elif _OLD_NAME.match(name):
            add(Path(e.path), "old")
    return out


def _remove(p: Path) -> bool:
    try:
        p.unlink()
        return True
    except FileNotFoundError:
        return False


def _remove_empty_lib_folders(d: Path):
    for e in d.glob("lib-*"):
        try:
            e.rmdir()
        except OSError:
            pass                            # not empty, or not ours to remove


def prune(d: Path, limit: int) -> tuple[int, int]:
    """Remove the least recently used entries until the folder holds at most `limit` bytes, and
    every earlier format's file and stale temporary file; (files removed, bytes freed)."""
    files = scan(d)
    now = time.time()
    gone = [f for f in files if f.kind == "old" or (f.kind == "tmp" and now - f.used > STALE_TMP_S)]
    keep = sorted((f for f in files if f.kind not in ("old", "tmp")), key=lambda f: f.used, reverse=True)
    total = 0
    for f in keep:
        total += f.size
        if total > limit:
            gone.append(f)
    n = freed = 0
    for f in gone:
        if _remove(f.path):
            n += 1
            freed += f.size
    _remove_empty_lib_folders(d)
    _compact_stats(d)
    return n, freed


def clear(d: Path) -> tuple[int, int]:
    """Remove every entry, earlier format's file, temporary file older than a minute, and the
    stats; (files removed, bytes freed)."""
    now = time.time()
    n = freed = 0
    for f in scan(d):
        if f.kind == "tmp" and now - f.used < 60:
            continue                        # another process is writing it
        if _remove(f.path):
            n += 1
            freed += f.size
    _remove(d / "stats")
    _remove_empty_lib_folders(d)
    return n, freed


# -- hit counts: a line per process in `stats` ----------------------------------------------------

STATS_FIELDS = ("hits", "misses", "damaged", "written")
STATS_COMPACT = 64 << 10        # bytes of stats file (some 4,000 processes' lines) that prune sums into one line


def _record_stats():
    """At exit: this process's counts, one line appended to the stats file (O_APPEND: a line
    each, whole on a local file system; a line that a network file system garbled is skipped
    when read). A process that is killed records nothing."""
    c = counters
    if not (c.hits or c.misses):
        return
    line = " ".join(str(getattr(c, f)) for f in STATS_FIELDS) + "\n"
    try:
        fd = os.open(cache_dir() / "stats", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass


atexit.register(_record_stats)


def _compact_stats(d: Path, most: int = STATS_COMPACT):
    """The stats file past `most` bytes becomes one line of its sums (a line another process
    appends meanwhile may be lost: the counts are a guide, not a ledger)."""
    try:
        if (d / "stats").stat().st_size <= most:
            return
    except OSError:
        return
    st = read_stats(d)
    write_atomically(d / "stats", (" ".join(str(st[f]) for f in (*STATS_FIELDS, "processes")) + "\n").encode())


def read_stats(d: Path) -> dict:
    """The sums of the stats file's lines (and how many processes wrote them). A line is a
    process's "hits misses damaged written", or prune's sum of many with their number after."""
    out = dict.fromkeys(STATS_FIELDS, 0)
    out["processes"] = 0
    try:
        text = (d / "stats").read_text("ascii", "replace")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) in (len(STATS_FIELDS), len(STATS_FIELDS) + 1) and all(p.isdigit() for p in parts):
            for f, p in zip((*STATS_FIELDS, "processes"), parts + ["1"]):       # a sum's line says how many
                out[f] += int(p)
    return out
