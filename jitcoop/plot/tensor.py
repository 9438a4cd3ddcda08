"""Tensor addressing (SPV_NV_tensor_addressing): which tensor element each element of a tile
reads, written with numpy from the seed's matrixCoordToTensorElement[WithView] pseudo-code
(SPV_NV_cooperative_matrix2), with the clamp modes and the view's clip region; as numbers
(`tensor_addresses`) and as a picture (`tensor_load`).

The layout and view are given as their state, the values the OpTensorLayout* / OpTensorView*
instructions leave: `TensorLayout(dimension=(H, W), offset=(r0, c0), span=(16, 16),
clamp="ClampToEdge")` is createTensorLayoutNV + setTensorLayoutDimensionNV(H, W) +
sliceTensorLayoutNV(r0, 16, c0, 16). Unset fields take the values those instructions give:
strides packed from the dimensions and block sizes (rounded up), offsets 0, spans the whole
dimension. RepeatMirrored follows SPV_NV_tensor_addressing's table (c mod (2D-2), then 2D-2-c
past the end; D = 1 gives 0), as the kernels do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mpl import pyplot

U32 = 0xFFFFFFFF
CLAMP_MODES = ("Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored")
# What an element of the tile does
READ, CLIPPED, CLAMP_VALUE, CLAMPED, UNDEFINED = range(5)
STATUS_NAMES = ("read", "clipped by the view (keeps Object)", "clamp value (Constant; a store drops it)",
                "coordinate clamped (edge, repeat, mirror)", "outside with Undefined clamping")
_COLORS = ("#4c9be8", "#d0d0d0", "#f2b134", "#59b36b", "#e0474c")


def _tuple(x, n, default, what):
    if x is None:
        return tuple(default)
    t = tuple(int(v) for v in x)
    if len(t) != n:
        raise ValueError(f"{what} needs {n} values (one per dimension), got {len(t)}")
    return t


@dataclass
class TensorLayout:
    dimension: tuple
    block: tuple | None = None
    stride: tuple | None = None
    offset: tuple | None = None
    span: tuple | None = None
    clamp: str = "Undefined"
    clamp_value: int = 0

    def __post_init__(self):
        self.dimension = tuple(int(d) for d in self.dimension)
        D = len(self.dimension)
        if not 1 <= D <= 5:
            raise ValueError("a tensor layout has 1 to 5 dimensions")
        self.block = _tuple(self.block, D, [1] * D, "block")
        if self.stride is None:                  # OpTensorLayoutSetDimensionNV's packing
            st = [1] * D
            for i in range(D - 2, -1, -1):
                st[i] = st[i + 1] * -(-self.dimension[i + 1] // self.block[i + 1]) & U32
            self.stride = tuple(st)
        self.stride = _tuple(self.stride, D, (), "stride")
        self.offset = _tuple(self.offset, D, [0] * D, "offset")
        self.span = _tuple(self.span, D, self.dimension, "span")
        if self.clamp not in CLAMP_MODES:
            raise ValueError(f"clamp is one of {', '.join(CLAMP_MODES)}, not {self.clamp!r}")


@dataclass
class TensorView:
    """A tensor view: `dimension` None means hasDimensions false (the layout's spans serve);
    `stride` defaults to the packing of OpTensorViewSetDimensionNV; `clip` is (row offset, row
    span, column offset, column span)."""
    dimension: tuple | None = None
    stride: tuple | None = None
    permutation: tuple | None = None
    clip: tuple = (0, U32, 0, U32)


@dataclass
class TensorAddresses:
    """Per tile element (row, col): `status` (READ, CLIPPED, CLAMP_VALUE, CLAMPED, UNDEFINED),
    `index` the element index from the Pointer (in components, or decode blocks where the
    block sizes exceed 1; -1 where nothing is read), `coord` the tensor coordinate per
    dimension after clamping (-1 where nothing is read)."""
    status: np.ndarray
    index: np.ndarray
    coord: np.ndarray
    layout: TensorLayout
    view: TensorView | None


def _i32(x):
    return ((x + 0x80000000) & U32) - 0x80000000


def tensor_addresses(rows: int, cols: int, layout: TensorLayout, view: TensorView | None = None,
                     store: bool = False) -> TensorAddresses:
    """matrixCoordToTensorElement[WithView] for every element of a rows x cols tile (a store
    treats every clamp mode but Undefined as Constant: the element is dropped)."""
    t = layout
    D = len(t.dimension)
    r, c = np.meshgrid(np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64), indexing="ij")
    status = np.full((rows, cols), READ, np.int8)
    if view is not None:
        ro, rs, co, cs = view.clip
        status[(r < ro) | (r >= ro + rs) | (c < co) | (c >= co + cs)] = CLIPPED
        rr, cc = r - ro, c - co
        lin = (rr * min(cols, cs) + cc) & U32
        dims = view.dimension if view.dimension is not None else t.span
        V = len(dims)
        perm = view.permutation if view.permutation is not None else tuple(range(V))
        vc = [None] * V
        for d in range(V - 1, -1, -1):
            i = perm[d]
            vc[i] = lin % dims[i] if dims[i] else np.zeros_like(lin)
            lin = lin // dims[i] if dims[i] else lin
        if view.dimension is not None:
            stride = view.stride if view.stride is not None else \
                tuple(int(np.prod(view.dimension[i + 1:])) & U32 for i in range(V))
        else:
            stride = [1] * V
            for d in range(V - 2, -1, -1):
                stride[d] = stride[d + 1] * t.span[d + 1]
        lin = sum(vc[d] * stride[d] for d in range(V)) & U32
    else:
        lin = (r * cols + c) & U32
    span = [None] * D
    for d in range(D - 1, -1, -1):
        span[d] = lin % t.span[d] if t.span[d] else np.zeros_like(lin)
        lin = lin // t.span[d] if t.span[d] else lin
    mode = "Constant" if store and t.clamp != "Undefined" else t.clamp
    coord = np.zeros((rows, cols, D), np.int64)
    index = np.zeros((rows, cols), np.int64)
    # a zero dimension or block size divides by zero; nothing lies inside it anyway
    with np.errstate(divide="ignore", invalid="ignore"):
        for d in range(D):
            x = _i32(span[d] + t.offset[d])
            n = t.dimension[d]
            out = (x < 0) | (x >= n)
            live = status == READ
            if mode == "Undefined":
                status[out & live] = UNDEFINED
            elif mode == "Constant":
                status[out & live] = CLAMP_VALUE
            else:
                status[out & live] = CLAMPED
                if mode == "ClampToEdge":
                    x = np.clip(x, 0, n - 1)
                elif mode == "Repeat":
                    x = np.where(out, x % n, x)
                elif n == 1:
                    x = np.zeros_like(x)
                else:
                    m = x % (2 * n - 2)
                    x = np.where(out, np.where(m >= n, 2 * n - 2 - m, m), x)
            coord[..., d] = x
            index += (x // t.block[d]) * t.stride[d]
    index &= U32
    none = (status != READ) & (status != CLAMPED)
    index[none] = -1
    coord[none] = -1
    return TensorAddresses(status, index, coord, t, view)


def tensor_load(rows: int, cols: int, layout: TensorLayout, view: TensorView | None = None,
                store: bool = False, labels: bool | None = None):
    """A picture of tensor_addresses(...). For a 2-D layout, left: the tensor, each element
    coloured by how many tile elements read it (clamping reads edges again), the slice's
    span outlined; right: the tile, each element coloured by what it does and labelled with
    the tensor coordinate it reads. Other dimension counts show the tile with element indices.
    Returns the Figure (the tensor panel's image holds the read counts, the tile panel's the
    status codes)."""
    a = tensor_addresses(rows, cols, layout, view, store)
    plt = pyplot()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle
    two_d = len(layout.dimension) == 2
    fig, axes = plt.subplots(1, 2 if two_d else 1, figsize=(11 if two_d else 6, 5), squeeze=False)
    if two_d:
        ax = axes[0, 0]
        H, W = layout.dimension
        counts = np.zeros((H, W), np.int64)
        ok = a.coord[..., 0] >= 0
        np.add.at(counts, (a.coord[..., 0][ok], a.coord[..., 1][ok]), 1)
        im = ax.imshow(counts, cmap="Blues", interpolation="nearest", vmin=0)
        fig.colorbar(im, ax=ax, label="tile elements reading it", shrink=0.8)
        (r0, c0), (rs, cs) = layout.offset, layout.span
        ax.add_patch(Rectangle((-0.5, -0.5), W, H, fill=False, edgecolor="black", lw=1, label="tensor"))
        ax.add_patch(Rectangle((c0 - 0.5, r0 - 0.5), cs, rs, fill=False, edgecolor="#e0474c", lw=1.5,
                               linestyle="--", label="slice (offset, span)"))
        ax.set_xlim(min(-0.5, c0 - 0.5) - 0.5, max(W - 0.5, c0 + cs - 0.5) + 0.5)
        ax.set_ylim(max(H - 0.5, r0 + rs - 0.5) + 0.5, min(-0.5, r0 - 0.5) - 0.5)
        ax.set_title(f"tensor {H} x {W}, clamp {layout.clamp}", fontsize=9)
        ax.set_xlabel("dimension 1")
        ax.set_ylabel("dimension 0")
        ax.legend(loc="upper right", fontsize=7)
    ax = axes[0, -1]
    ax.imshow(a.status, cmap=ListedColormap(_COLORS), vmin=-0.5, vmax=len(_COLORS) - 0.5,
              interpolation="nearest")
    if labels is None:
        labels = rows * cols <= 256
    if labels:
        for r in range(rows):
            for c in range(cols):
                if a.index[r, c] < 0:
                    continue
                text = ",".join(map(str, a.coord[r, c])) if two_d else str(a.index[r, c])
                ax.text(c, r, text, ha="center", va="center", fontsize=5 if two_d else 6)
    present = sorted(set(a.status.reshape(-1).tolist()))
    ax.legend(handles=[Patch(color=_COLORS[s], label=STATUS_NAMES[s]) for s in present],
              loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=7, ncol=1)
    ax.set_title(f"{'store' if store else 'load'} of a {rows} x {cols} tile"
                 + (" through a view" if view is not None else ""), fontsize=9)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    fig.tight_layout()
    return fig
