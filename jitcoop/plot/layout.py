"""Lane layouts: which invocation holds which element of a cooperative matrix on a device profile
(jitcoop.devices, the layouts measured on hardware), as numbers (`lane_map`) and as a picture
(`lane_layout`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import devices
from ..spirv.types import CoopMat, Scalar
from .mpl import pyplot

USES = {"A": 0, "B": 1, "C": 2, "Accumulator": 2}
SCOPES = {"subgroup": 3, "workgroup": 2}


def component(name: str) -> Scalar:
    """A component type by its property-table name: f16, f32, f64, bf16, e4m3, e5m2, s8...u64."""
    if name not in devices.TYPE_NAMES:
        raise ValueError(f"unknown component type {name!r}; one of {', '.join(devices.TYPE_NAMES)}")
    if name[0] in "su":
        return Scalar("int", int(name[1:]), name[0] == "s")
    # floats are signed, as the module reader makes them (the shuffled profile keys on it)
    if name[0] == "f":
        return Scalar("float", int(name[1:]), True)
    return Scalar("float", 16 if name == "bf16" else 8, True, name)


def _profile(device, subgroup_size):
    if isinstance(device, str):
        return devices.profile(device, subgroup_size)
    return device.profile                   # a jitcoop.Device


@dataclass
class LaneMap:
    """Per matrix element (row, col): `lane`, the lowest invocation holding it; `element`, its
    index in that invocation's fragment; `copies`, how many invocations hold it (more than one
    where a profile replicates A or B)."""
    lane: np.ndarray
    element: np.ndarray
    copies: np.ndarray
    invocations: int
    length: int
    title: str
    problem: str | None = None    # why a kernel could not use this type on the profile, if it could not


def lane_map(device, comp: str = "f16", rows: int = 16, cols: int = 16, use: str = "A",
             scope: str = "subgroup", workgroup_size: int | None = None,
             subgroup_size: int | None = None) -> LaneMap:
    """The lane layout of coopmat<comp, scope, rows, cols, use> on `device` (a jitcoop.Device
    or a profile name). Workgroup scope needs the workgroup size. A type missing from the
    profile's property tables still has the profile's layout (the H100 was measured on some of
    them); `problem` says why a kernel could not use it."""
    prof = _profile(device, subgroup_size)
    if use not in USES or scope not in SCOPES:
        raise ValueError(f"use is one of {', '.join(USES)} and scope one of {', '.join(SCOPES)}")
    if scope == "workgroup" and not workgroup_size:
        raise ValueError("a workgroup-scope matrix needs workgroup_size=")
    W = workgroup_size or prof.subgroup_size
    t = CoopMat(component(comp), 0, scope=SCOPES[scope], rows=rows, cols=cols, use=USES[use])
    problem = prof.coopmat_problem(t, W)
    try:
        lay = prof.layout(t, W)
    except ValueError as e:
        raise ValueError(problem or str(e)) from None
    flat = lay.table.reshape(-1)                       # element index of (invocation, e)
    order = np.argsort(flat, kind="stable")            # the lowest invocation first for replicas
    held, at = np.unique(flat[order], return_index=True)
    first = np.full(rows * cols, -1, np.int64)
    first[held] = order[at]
    copies = np.bincount(flat, minlength=rows * cols).reshape(rows, cols)
    lane = np.where(first >= 0, first // lay.length, -1).reshape(rows, cols)
    elem = np.where(first >= 0, first % lay.length, -1).reshape(rows, cols)
    where = "subgroup" if scope == "subgroup" else f"workgroup of {W}"
    title = (f"{prof.name}: coopmat<{comp}, {rows}x{cols}, {use}>, {where} scope, "
             f"{lay.invocations} invocations x {lay.length} elements")
    return LaneMap(lane, elem, copies, lay.invocations, lay.length, title, problem)


def lane_layout(device, comp: str = "f16", rows: int = 16, cols: int = 16, use: str = "A",
                scope: str = "subgroup", workgroup_size: int | None = None,
                subgroup_size: int | None = None, ax=None, labels: bool | None = None):
    """A picture of lane_map(...): each element coloured by the invocation holding it, labelled
    `lane.e` (labels default on for matrices up to 32 x 32); for replicated elements the
    lowest invocation, and the title says how many copies. Returns the Figure (ax.images[0] holds the
    lane numbers)."""
    lm = lane_map(device, comp, rows, cols, use, scope, workgroup_size, subgroup_size)
    plt = pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4.0, cols * 0.42 + 1.5), max(3.0, rows * 0.42 + 1.0)))
    else:
        fig = ax.figure
    cmap = plt.get_cmap("tab20" if lm.invocations <= 20 else "turbo", lm.invocations)
    im = ax.imshow(lm.lane, cmap=cmap, vmin=-0.5, vmax=lm.invocations - 0.5, interpolation="nearest")
    fig.colorbar(im, ax=ax, label="invocation", shrink=0.8)
    if labels is None:
        labels = rows <= 32 and cols <= 32
    if labels:
        size = 7 if max(rows, cols) <= 16 else 5
        for r in range(rows):
            for c in range(cols):
                ax.text(c, r, f"{lm.lane[r, c]}.{lm.element[r, c]}", ha="center", va="center",
                        fontsize=size, color="black")
    extra = f"; each element held {lm.copies.max()} times" if lm.copies.max() > 1 else ""
    note = f"\n({lm.problem})" if lm.problem else ""
    ax.set_title(lm.title + extra + note, fontsize=9)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    return fig
