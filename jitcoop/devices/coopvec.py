"""Cooperative vectors per device profile: the VkCooperativeVectorPropertiesNV table, the optimal
matrix layouts, and the host conversion of vkConvertCooperativeVectorMatrixNV.

Property tables (a combination is (input type, inputInterpretation, matrixInterpretation,
biasInterpretation, result type, transpose); bias None for OpCooperativeVectorMatrixMulNV):

    generic   every combination SPV_NV_cooperative_vector allows: any numeric input type, any
              interpretation (Packed ones for the input only, with a 32-bit integer input), a
              32-bit integer or a 16/32-bit float result, transpose everywhere.
    nvidia    the 16 entries measured on an H100 (data/props-h100.txt).

Optimal layouts (InferencingOptimal = 2, TrainingOptimal = 3), an R x C matrix (R = numRows, the
rows of the matrix as stored, i.e. K x M when the MatMul transposes):

    generic   both are row-major, tightly packed (row stride C * element size). 8-bit floats are
              stored as one byte.
    nvidia    16 x 16 tiles of 256 elements, tiles in row-major order over the zero-padded matrix;
              inside a tile, offset bits o0..o7 select (row, col) steps (0,1) (0,8) (8,0) (0,2)
              (0,4) (1,0) (2,0) (4,0) (measured). TrainingOptimal puts 256 zero elements after
              every tile but the last (measured at 32x64). E4M3/E5M2 matrices are stored as
              float16 values rounded to the 8-bit format (measured). The tile order for matrices
              larger than 16 x 16 and the 8-bit integer layouts were not measured: they use the
              same scheme.
"""
from __future__ import annotations

import numpy as np

from ..kernels import codes as CV
from .coopvec_table import coopvec_properties

INTERPS = CV.INTERP_NAMES
LAYOUTS = {"row_major": 0, "column_major": 1, "inferencing_optimal": 2, "training_optimal": 3,
           "rowmajor": 0, "columnmajor": 1, "inferencingoptimal": 2, "trainingoptimal": 3}
_NUMERIC = ("f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")


def optimal_kind(profile_name: str) -> int:
    """0: generic (row-major optimal layouts), 1: nvidia (measured tile permutation)."""
    return 1 if profile_name == "nvidia" else 0


def _generic_ok(combo) -> bool:
    inp, ii, mi, bi, res, _tr = combo
    if inp not in _NUMERIC and inp not in ("e4m3", "e5m2", "bf16"):
        return False
    if ii not in INTERPS or mi not in INTERPS or (bi is not None and bi not in INTERPS):
        return False
    if mi.endswith("packed") or (bi or "").endswith("packed"):
        return False
    if ii.endswith("packed") and inp not in ("u32", "s32"):
        return False
    return res in ("f16", "f32", "s32", "u32")


def coopvec_supported(profile_name: str, combo) -> bool:
    """Whether a profile supports a MatrixMul[Add] combination (input, inputInterpretation,
    matrixInterpretation, biasInterpretation or None, result, transpose)."""
    inp, ii, mi, bi, res, tr = combo
    table = coopvec_properties(profile_name)
    if table is None:
        return _generic_ok(combo)
    for t in table:
        if (t[0], t[1], t[2], t[4]) == (inp, ii, mi, res) and (bi is None or bi == t[3]) \
                and (t[5] or not tr):
            return True
    return False


def coopvec_uses(module, spec=None) -> list:
    """The MatrixMul[Add] combinations a module uses (each once, in module order), as tuples
    (input, inputInterpretation, matrixInterpretation, biasInterpretation or None, result,
    transpose). `spec`: a Specialization or a dict of spec constant values."""
    from ..spirv.specialize import Specialization
    from ..spirv.types import Vector
    from . import type_name
    if spec is None or isinstance(spec, dict):
        spec = Specialization(module, spec or {})

    def interp(x):
        return INTERPS[CV.SPIRV_COMPONENT_TYPES[int(spec.scalar_const(x))]]
    out = []
    for f in module.functions.values():
        for b in f.blocks:
            for ins in b.instrs:
                if ins.opname not in ("OpCooperativeVectorMatrixMulNV",
                                      "OpCooperativeVectorMatrixMulAddNV"):
                    continue
                o = ins.operands
                add = ins.opname.endswith("AddNV")
                it = spec.type(module.all_defs[o[0]].result_type)
                rt = spec.type(ins.result_type)
                tr = o[11] if add else o[8]
                combo = (type_name(it.elem if isinstance(it, Vector) else it), interp(o[1]),
                         interp(o[4]), interp(o[7]) if add else None,
                         type_name(rt.elem if isinstance(rt, Vector) else rt),
                         bool(spec.scalar_const(tr)))
                if combo not in out:
                    out.append(combo)
    return out


# -- host conversion ---------------------------------------------------------------------------------

def _layout(v) -> int:
    if isinstance(v, str):
        k = v.lower().replace("-", "_")
        if k not in LAYOUTS:
            raise ValueError(f"unknown layout {v!r}")
        return LAYOUTS[k]
    if int(v) not in (0, 1, 2, 3):
        raise ValueError(f"unknown layout {v!r}")
    return int(v)


def _type(v) -> str:
    if isinstance(v, str):
        k = v.lower().replace("float", "f").replace("sint", "s").replace("uint", "u")
        k = {"fe4m3": "e4m3", "fe5m2": "e5m2", "float16": "f16", "float32": "f32"}.get(k, k)
        if k not in INTERPS or k.endswith("packed"):
            raise ValueError(f"unknown component type {v!r}")
        return k
    return INTERPS[CV.SPIRV_COMPONENT_TYPES[int(v)]]


def _opt_index_np(r, c, R, C, layout, prof):
    if prof == 0:
        return r * C + c
    t = (r >> 4) * ((C + 15) >> 4) + (c >> 4)
    a, b = r & 15, c & 15
    o = ((b & 1) | (((b >> 3) & 1) << 1) | (((a >> 3) & 1) << 2) | (((b >> 1) & 1) << 3)
         | (((b >> 2) & 1) << 4) | ((a & 1) << 5) | (((a >> 1) & 1) << 6) | (((a >> 2) & 1) << 7))
    if layout == 3:
        t = t * 2
    return t * 256 + o


def _storage(tname, layout, prof):
    """(element size, storage type name) of a matrix element as it sits in memory."""
    if prof == 1 and layout >= 2 and tname in ("e4m3", "e5m2"):
        return 2, "f16"
    return CV.SIZES[INTERPS.index(tname)], tname


def coopvec_matrix_size(rows, cols, dst_type, dst_layout, dst_stride=0, profile="generic") -> int:
    """Bytes a rows x cols matrix needs (vkConvertCooperativeVectorMatrixNV's size query)."""
    layout, tname = _layout(dst_layout), _type(dst_type)
    prof = optimal_kind(profile)
    esz, _ = _storage(tname, layout, prof)
    if layout == 0:
        return (rows - 1) * dst_stride + cols * esz
    if layout == 1:
        return (cols - 1) * dst_stride + rows * esz
    n = rows * cols if prof == 0 else ((rows + 15) // 16) * ((cols + 15) // 16)
    if prof == 0:
        return n * esz
    return ((2 * n - 1) if layout == 3 else n) * 256 * esz


def _offsets(rows, cols, layout, stride, esz, prof):
    r, c = np.meshgrid(np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64), indexing="ij")
    if layout == 0:
        return r * stride + c * esz
    if layout == 1:
        return c * stride + r * esz
    return _opt_index_np(r, c, rows, cols, layout, prof) * esz


_NP = {"f32": np.float32, "f64": np.float64, "s8": np.int8, "s16": np.int16, "s32": np.int32,
       "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
       "f16": np.uint16, "e4m3": np.uint8, "e5m2": np.uint8}


def _decode(raw, tname):
    """Elements of storage type tname (raw: [n, size] bytes) as float64 or integers."""
    a = np.ascontiguousarray(raw).view(_NP[tname]).reshape(-1)
    if tname == "f16":
        return _formats().from_f16_bits(a).astype(np.float64)
    if tname == "e4m3":
        return _formats().from_e4m3_bits(a).astype(np.float64)
    if tname == "e5m2":
        return _formats().from_e5m2_bits(a).astype(np.float64)
    return a


def _encode(vals, tname, src_is_float):
    if tname == "f16":
        return _formats().to_f16_bits(vals).view(np.uint8).reshape(-1, 2)
    if tname == "e4m3":
        return _formats().to_e4m3_bits(vals, saturate=False).reshape(-1, 1)
    if tname == "e5m2":
        return _formats().to_e5m2_bits(vals, saturate=False).reshape(-1, 1)
    if tname in ("f32", "f64"):
        return np.asarray(vals, _NP[tname]).view(np.uint8).reshape(-1, CV.SIZES[INTERPS.index(tname)])
    return np.asarray(vals).astype(_NP[tname]).view(np.uint8).reshape(-1, CV.SIZES[INTERPS.index(tname)])


_FLOATS = ("f16", "f32", "f64", "e4m3", "e5m2")


def _formats():
    """The exact format conversions (numba functions, imported when a conversion needs them)."""
    from ..kernels import formats
    return formats


def convert_coopvec_matrix(src, rows: int, cols: int, src_type, dst_type, src_layout, dst_layout,
                           src_stride: int = 0, dst_stride: int = 0, profile: str = "generic",
                           dst=None) -> np.ndarray:
    """The host side of vkConvertCooperativeVectorMatrixNV: a rows x cols matrix from `src` (raw
    little-endian bytes: a numpy array of any dtype, or bytes) in (src_type, src_layout,
    src_stride) to a new uint8 array in (dst_type, dst_layout, dst_stride) for the device
    `profile`. Types are component type names ("f16", "f32", "e4m3", "s8", ...) or VkComponentTypeKHR
    values; layouts are 0..3 or "row_major", "column_major", "inferencing_optimal",
    "training_optimal". Strides (bytes) matter for row/column-major only. Float types convert to
    each other with round-to-nearest-even (8-bit floats without saturation: E4M3 overflow gives
    NaN, E5M2 overflow inf, as the H100 driver does); other types must match. `dst`, when given,
    is a writable uint8 array to write into (it must be large enough; padding is zeroed)."""
    st, dt = _type(src_type), _type(dst_type)
    sl, dl = _layout(src_layout), _layout(dst_layout)
    prof = optimal_kind(profile)
    if st != dt and not (st in _FLOATS and dt in _FLOATS):
        raise ValueError(f"no conversion from {st} to {dt} (only between float types)")
    if rows < 1 or cols < 1:
        raise ValueError(f"a {rows} x {cols} matrix")
    ssz, sstore = _storage(st, sl, prof)
    dsz, dstore = _storage(dt, dl, prof)
    for lay, stride, sz, which in ((sl, src_stride, ssz, "source"), (dl, dst_stride, dsz, "destination")):
        if lay < 2:
            line = (cols if lay == 0 else rows) * sz
            if stride < line or stride % sz:
                raise ValueError(f"the {which} stride {stride} must be at least {line} bytes and a "
                                 f"multiple of {sz}")
    buf = np.frombuffer(bytes(src) if isinstance(src, (bytes, bytearray, memoryview)) else
                        np.ascontiguousarray(src).tobytes(), np.uint8)
    need = coopvec_matrix_size(rows, cols, st, sl, src_stride, profile)
    if buf.size < need:
        raise ValueError(f"the source has {buf.size} bytes; the matrix needs {need}")
    so = _offsets(rows, cols, sl, src_stride, ssz, prof).reshape(-1)
    raw = buf[so[:, None] + np.arange(ssz)]
    vals = _decode(raw, sstore)
    out_size = coopvec_matrix_size(rows, cols, dt, dl, dst_stride, profile)
    if dst is None:
        out = np.zeros(out_size, np.uint8)
    else:
        out = dst
        if out.dtype != np.uint8 or out.size < out_size:
            raise ValueError(f"dst must be a uint8 array of at least {out_size} bytes")
        out[:out_size] = 0
    if dstore in ("f16",) and dt in ("e4m3", "e5m2"):
        q = _encode(vals, dt, True).reshape(-1)
        vals = (_formats().from_e4m3_bits(q) if dt == "e4m3" else _formats().from_e5m2_bits(q)).astype(np.float64)
    enc = _encode(vals, dstore, st in _FLOATS)
    do = _offsets(rows, cols, dl, dst_stride, dsz, prof).reshape(-1)
    out[do[:, None] + np.arange(dsz)] = enc
    return out
