"""What the code generator knows about pointers, failure sites and the compiled kernel."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..spirv.reader import Instruction
from ..spirv.types import Type


@dataclass
class Ptr:
    """What the generator knows about a pointer value."""
    kind: str                 # "mem": an address; "var": part of a promoted variable; "res": a
                              # matrix variable in slot rows, "res_elem": one of its components;
                              # "builtin": an input built-in
    pointee: Type
    storage: str
    addr: str = ""            # for "mem": the i64 operand of the address; for "res_elem": of the
                              # component's index
    root: tuple | None = None  # for "mem": (base operand, size operand or int) of its object
    var: int = 0              # for "var"/"res"/"builtin": the variable id
    leaf: int = 0             # first leaf within the variable
    member: object = None     # the struct Member it points at (matrix layout), when known
    static_off: int | None = None   # offset from the root when every index is a constant
    root_min: int | None = None     # bytes the root is known to have (checked at dispatch)
    elem_stride: int | None = None  # a column of a row-major matrix: stride between its elements
    root_name: str = ""       # words for the root object in error messages
    descriptor: bool = False  # rooted in a binding (where robust buffer access applies)
    scale: int = 1            # for "mem" in an interleaved frame: the workgroup's lanes, by which
                              # the object's byte offsets and size are multiplied (analysis/variables.py)


@dataclass
class Site:
    """A place in the generated code that can fail, for the error message."""
    ins: Instruction
    message: object           # a str, or {case: str} for a site that fails in several ways
    kind: str = "lane"        # "lane": names workgroup and lane; "group": workgroup only;
                              # "diagnostic": a rule run as the hardware runs it (jitcoop.diagnostics)
    rule: object = None       # a diagnostic's rule name, or {case: rule name}


@dataclass
class ProfileLayout:
    """Counters of a profiled kernel (option profile=True): groups of int64 words in the per-thread
    `err` array after the failure record, each described for the report (jitcoop.profile)."""
    groups: list = field(default_factory=list)
    size: int = 0

    def words(self, n: int) -> int:
        """n words of the per-thread array for a record of the generated code's own (a
        diagnostic's), not part of the report."""
        base = 8 + self.size
        self.size += n
        return base

    def slots(self, kind: str, names, **info) -> int:
        base = 8 + self.size
        self.groups.append(dict(kind=kind, base=base, names=tuple(names), **info))
        self.size += len(names)
        return base


@dataclass
class KernelMeta:
    """What the runtime needs to call a compiled kernel."""
    entry: str
    local_size: tuple
    subgroup_size: int
    bindings: list = field(default_factory=list)
    push_size: int = 0
    shared_size: int = 0
    private_frame: int = 0
    work_size: int = 0            # bytes of per-thread scratch (lane states, slot rows, operands)
    sites: list = field(default_factory=list)
    diagnostics: list = field(default_factory=list)   # (site number, first word of its record per thread)
    has_collectives: bool = False
    lanes_run: int = 0            # invocations whose code runs per workgroup (1: lane-invariant)
    varying: str | None = None    # why the invocations may differ (analysis/invariance.py), or None
    lane_group: int = 0           # invocations the lane code runs together in vector code (codegen/lanevec.py)
    lane_group_why: str | None = None   # why it does not (lane_group 0)
    uses_physical: bool = False
    writes_physical: bool = False
    has_atomics: bool = False
    profile: ProfileLayout | None = None
    library: list = field(default_factory=list)   # kernel-library variants the code calls (dicts)

    def to_json(self):
        """A JSON-encodable form of this metadata (codegen/meta_json.py), for the disk cache."""
        from .meta_json import encode
        return encode(self)

    @staticmethod
    def from_json(data) -> "KernelMeta":
        """The metadata to_json wrote; meta_json.MetaFormatError for anything else."""
        from .meta_json import MetaFormatError, decode
        meta = decode(data)
        if not isinstance(meta, KernelMeta):
            raise MetaFormatError(f"a {type(meta).__name__}, not a kernel's metadata")
        return meta
