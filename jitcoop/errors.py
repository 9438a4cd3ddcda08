"""The three errors a user of jitcoop meets, each naming where the problem is, and its warnings."""
from __future__ import annotations


class JitcoopError(Exception):
    """Base class of every error jitcoop raises on purpose."""


def _located(message: str, *parts) -> str:
    where = " ".join(p for p in parts if p)
    return f"{where}: {message}" if where else message


class SpirvError(JitcoopError):
    """A module that is malformed, or uses something jitcoop does not run.

    `offset` is the byte offset of the instruction in the module, `opname` its opcode name,
    `result_id` its result id (when it has one).
    """

    def __init__(self, message: str, offset: int | None = None, opname: str | None = None,
                 result_id: int | None = None):
        self.detail = message
        self.offset = offset
        self.opname = opname
        self.result_id = result_id
        super().__init__(_located(message, result_id is not None and f"%{result_id}", opname,
                                  offset is not None and f"at byte {offset}"))


class JitcoopWarning(UserWarning):
    """Base class of every warning jitcoop gives (`warnings.simplefilter("error", JitcoopWarning)`
    turns them into exceptions)."""


class BindingError(JitcoopError):
    """A dispatch whose bindings, push constants or specialization constants do not fit the shader."""


class ExecutionError(JitcoopError):
    """Something went wrong while the shader ran (an out-of-bounds access, a divergent barrier...).

    Names the instruction (result id, opcode name, byte offset), the workgroup and the lane.
    """

    def __init__(self, message: str, offset: int | None = None, opname: str | None = None,
                 result_id: int | None = None, workgroup: tuple | None = None, lane: int | None = None):
        self.detail = message
        self.offset = offset
        self.opname = opname
        self.result_id = result_id
        self.workgroup = workgroup
        self.lane = lane
        super().__init__(_located(message, result_id is not None and f"%{result_id}", opname,
                                  offset is not None and f"at byte {offset}",
                                  workgroup is not None and f"workgroup {tuple(workgroup)}",
                                  lane is not None and f"lane {lane}"))


class CacheWarning(JitcoopWarning):
    """A disk cache entry that could not be used (damaged, from another version, for another key)
    and was compiled again, or a cache folder that cannot be written (kernels stay in memory)."""
