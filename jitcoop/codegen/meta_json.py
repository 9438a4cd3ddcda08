"""A kernel's metadata (KernelMeta and what it holds) to JSON and back, for the disk cache.

KernelMeta holds dataclasses of the code generator (bindings with their SPIR-V types, failure
sites with their instructions, the profile's counter layout, cooperative matrix lane layouts
with numpy tables), shared and sometimes cyclic (a physical pointer's struct that points to
itself). JSON has no such values, so each one is written with a tag:

    [1, 2]                                   a list (as JSON)
    {"$": "tuple", "v": [...]}               a tuple; "set" and "frozenset" likewise
    {"$": "dict", "v": [[key, value], ...]}  a dict (keys of any type)
    {"$": "bytes", "v": "<base64>"}          bytes
    {"$": "float", "v": "nan"}               a float JSON cannot write (nan, inf, -inf)
    {"$": "array", "dtype": "<i4", "shape": [...], "v": "<base64>"}   a numeric numpy array
    {"$": "obj", "c": "Scalar", "id": 3, "f": {...}}   an object of one of the CLASSES, its
                                                       attributes; later references to it are
    {"$": "ref", "id": 3}

Reading builds only the CLASSES named here, by setting their attributes (no constructor, no
import by name), so a metadata file can hold nothing that runs; anything else is a MetaFormatError.
"""
from __future__ import annotations

import base64
import dataclasses
import math

import numpy as np


class MetaFormatError(ValueError):
    """Metadata that is not what `encode` writes."""


def _classes() -> dict:
    from ..analysis.variables import Binding
    from ..devices.layouts import Layout
    from ..spirv import types
    from ..spirv.reader import Instruction
    from . import meta
    out = {c.__name__: c for c in (meta.KernelMeta, meta.Site, meta.ProfileLayout, meta.Ptr, Binding, Layout,
                                   Instruction)}
    out.update({c.__name__: c for c in vars(types).values()
                if isinstance(c, type) and issubclass(c, types.Type) or c is types.Member})
    return out


_CLASSES: dict = {}
_DTYPES = {"?", "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"}


def classes() -> dict:
    if not _CLASSES:
        _CLASSES.update(_classes())
    return _CLASSES


def encode(value):
    """A JSON-encodable form of value (see the module docstring)."""
    ids: dict = {}
    known = classes()

    def enc(v):
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, np.integer)):
            return int(v)
        if isinstance(v, (float, np.floating)):
            v = float(v)
            return v if math.isfinite(v) else {"$": "float", "v": repr(v)}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if isinstance(v, (tuple, set, frozenset)):
            return {"$": type(v).__name__, "v": [enc(x) for x in v]}
        if isinstance(v, dict):
            return {"$": "dict", "v": [[enc(k), enc(x)] for k, x in v.items()]}
        if isinstance(v, (bytes, bytearray)):
            return {"$": "bytes", "v": base64.b64encode(bytes(v)).decode()}
        if isinstance(v, np.ndarray):
            if v.dtype.str not in _DTYPES:
                raise TypeError(f"kernel metadata: a numpy array of {v.dtype} cannot be stored")
            return {"$": "array", "dtype": v.dtype.str, "shape": list(v.shape),
                    "v": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode()}
        cls = type(v)
        if known.get(cls.__name__) is cls:
            if id(v) in ids:
                return {"$": "ref", "id": ids[id(v)][0]}
            ids[id(v)] = (len(ids), v)             # v kept alive: its id() is not reused meanwhile
            n = ids[id(v)][0]
            return {"$": "obj", "c": cls.__name__, "id": n, "f": {k: enc(x) for k, x in vars(v).items()}}
        raise TypeError(f"kernel metadata: a {cls.__module__}.{cls.__qualname__} cannot be stored")

    return enc(value)


def decode(data):
    """The value `encode` wrote; MetaFormatError for anything else."""
    objs: dict = {}
    known = classes()

    def dec(v, depth=0):
        if depth > 200:
            raise MetaFormatError("nested too deeply")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if not isinstance(v, dict) or not isinstance(v.get("$"), str):
            raise MetaFormatError(f"unexpected {type(v).__name__} value")
        tag = v["$"]
        if tag == "obj":
            cls, n, fields = known.get(v.get("c")), v.get("id"), v.get("f")
            if cls is None or not isinstance(n, int) or n in objs or not isinstance(fields, dict):
                raise MetaFormatError(f"bad object {str(v.get('c'))[:40]!r}")
            o = objs[n] = cls.__new__(cls)
            for k, x in fields.items():
                if not isinstance(k, str) or not k.isidentifier():
                    raise MetaFormatError("bad attribute name")
                o.__dict__[k] = dec(x, depth + 1)
            missing = [f.name for f in dataclasses.fields(cls) if f.name not in o.__dict__] \
                if dataclasses.is_dataclass(cls) else []
            if missing:
                raise MetaFormatError(f"{cls.__name__} without {', '.join(missing)}")
            return o
        if tag == "ref":
            if v.get("id") not in objs:
                raise MetaFormatError("reference to an unknown object")
            return objs[v["id"]]
        x = v.get("v")
        if tag in ("tuple", "set", "frozenset", "dict") and not isinstance(x, list):
            raise MetaFormatError(f"bad {tag}")
        if tag == "tuple":
            return tuple(dec(e, depth + 1) for e in x)
        if tag in ("set", "frozenset"):
            return (set if tag == "set" else frozenset)(dec(e, depth + 1) for e in x)
        if tag == "dict":
            if not all(isinstance(p, list) and len(p) == 2 for p in x):
                raise MetaFormatError("bad dict")
            return {dec(k, depth + 1): dec(e, depth + 1) for k, e in x}
        if tag == "bytes" and isinstance(x, str):
            return _b64(x)
        if tag == "float" and x in ("nan", "inf", "-inf"):
            return float(x)
        if tag == "array" and isinstance(x, str) and v.get("dtype") in _DTYPES:
            shape = v.get("shape")
            if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise MetaFormatError("bad array shape")
            raw = _b64(x)
            dt = np.dtype(v["dtype"])
            if len(raw) != dt.itemsize * math.prod(shape):
                raise MetaFormatError("array size does not match its shape")
            return np.frombuffer(raw, dt).reshape(shape).copy()
        raise MetaFormatError(f"bad value tagged {str(tag)[:20]!r}")

    try:
        return dec(data)
    except (TypeError, KeyError, AttributeError) as e:      # unhashable dict keys and the like
        raise MetaFormatError(str(e)) from None


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise MetaFormatError("bad base64") from None
