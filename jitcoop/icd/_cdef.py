"""Build time: the cffi declarations of the driver, cut out of the Khronos header.

cffi needs C declarations for every type the driver touches (`ffibuilder.cdef`). Writing them
by hand would copy hundreds of structures and risk a wrong layout; instead this reads the
vendored `include/vulkan/vulkan_core.h` and keeps, in header order, the declarations of the
sections the driver implements (core 1.0 to 1.3 and its extensions) and every type they
depend on. The result is plain C that pycparser reads: handles become struct pointers,
array sizes numbers, `static const` 64-bit flag values `#define`s; prototypes are dropped (the
driver is built with VK_NO_PROTOTYPES). The compiler checks every layout against the real
header when cffi builds the library, so a declaration cut wrongly cannot go unnoticed.

Runs inside pip's isolated build environment: standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

HEADER = Path(__file__).resolve().parent / "include" / "vulkan" / "vulkan_core.h"

_IDENT = re.compile(r"\b(?:Vk|PFN_vk|Std)\w*")
_SECTION = re.compile(r"^#define (VK_VERSION_\d_\d|VK_[A-Z]+_[a-z0-9_]+) 1\s*$")   # a version or extension
_NUMBER = re.compile(r"^#define (VK_[A-Z0-9_]+)\s+(\d+)U?\s*$")
_SPEC_VERSION = re.compile(r"^#define (VK_\w+)_SPEC_VERSION\s+(\d+)")


@dataclass
class Decl:
    name: str
    text: str
    section: str
    deps: set = field(default_factory=set)


@dataclass
class Section:
    name: str                    # VK_VERSION_1_2, VK_KHR_cooperative_matrix, ...
    spec_version: int = 0
    commands: list = field(default_factory=list)      # vkXxx names, from the prototypes


def _statements(lines):
    """(section, statement text) for each top-level typedef / handle / static const / preprocessor
    line of the header; of the prototype blocks (#ifndef VK_NO_PROTOTYPES) only "#command vkName"."""
    section = ""
    skip = 0
    buf: list[str] = []
    depth = 0
    beta = False
    for line in lines:
        s = line.strip()
        if skip:
            if s.startswith("#if"):
                skip += 1
            elif s.startswith("#endif"):
                skip -= 1
            else:
                m = re.search(r"VKAPI_CALL (vk\w+)\(", s)
                if m:
                    yield section, "#command " + m.group(1)
            continue
        if s.startswith("#ifndef VK_NO_PROTOTYPES"):
            skip = 1
            continue
        if not buf:
            m = _SECTION.match(s)
            if m:
                section = m.group(1)
                yield section, "#section"
                continue
            if s.startswith("#"):
                yield section, s
                continue
            if s.startswith(("VK_DEFINE_HANDLE(", "VK_DEFINE_NON_DISPATCHABLE_HANDLE(")):
                yield section, s
                continue
            if not s.startswith(("typedef", "static const")):
                continue
        if s.startswith("#"):          # inside an enum: only beta-extension values are guarded
            beta = s.startswith("#ifdef VK_ENABLE_BETA_EXTENSIONS")
            continue
        if not beta:
            buf.append(line.rstrip())
        depth += line.count("{") - line.count("}")
        if depth == 0 and s.endswith(";"):
            yield section, "\n".join(buf)
            buf = []


class Header:
    """The declarations of vulkan_core.h by name (header order), and its sections by name."""

    def __init__(self, path: Path = HEADER):
        self.path = path
        self.decls: dict[str, Decl] = {}
        self.sections: dict[str, Section] = {}     # by guard: the extension's name or VK_VERSION_1_x
        numbers: dict[str, str] = {}
        for sec, st in _statements(path.read_text().splitlines()):
            if st == "#section":
                self.sections[sec] = Section(sec)
            elif st.startswith("#command "):
                self.sections[sec].commands.append(st.split()[1])
            elif st.startswith("#"):
                m = _NUMBER.match(st)
                if m:
                    numbers[m.group(1)] = m.group(2)
                m = _SPEC_VERSION.match(st)
                if m and sec in self.sections:
                    self.sections[sec].spec_version = int(m.group(2))
            else:
                d = _declaration(sec, st, numbers)
                if d is not None:
                    self.decls[d.name] = d

    def cdef(self, section_names, extra_types=()) -> str:
        """The declarations of these sections and of every type they use, in header order."""
        missing = [s for s in section_names if s not in self.sections]
        if missing:
            raise SystemExit(f"the Vulkan header {self.path} lacks {', '.join(missing)}")
        keep, todo = set(), [d.name for d in self.decls.values() if d.section in section_names]
        todo += list(extra_types)
        while todo:
            n = todo.pop()
            if n in keep or n not in self.decls:
                continue
            keep.add(n)
            todo.extend(self.decls[n].deps)
        return "\n".join(d.text for d in self.decls.values() if d.name in keep)


def _declaration(sec, st, numbers):
    m = re.match(r"VK_DEFINE(_NON_DISPATCHABLE)?_HANDLE\((\w+)\)", st)
    if m:
        name = m.group(2)
        return Decl(name, f"typedef struct {name}_T *{name};", sec)
    if st.startswith("static const"):
        m = re.match(r"static const \w+ (\w+) = ([0-9A-Fa-fxX]+)ULL;", st)
        return Decl(m.group(1), f"#define {m.group(1)} {m.group(2)}", sec) if m else None
    st = st.replace("VKAPI_PTR ", "").replace("VKAPI_PTR", "")
    m = re.search(r"\(\s*\*\s*(PFN_\w+)\s*\)", st) or re.search(r"(\w+)\s*;\s*$", st)
    if not m:
        return None
    name = m.group(1)
    for k, v in numbers.items():
        if k in st:
            st = re.sub(rf"\b{k}\b", v, st)
    return Decl(name, st, sec, set(_IDENT.findall(st)) - {name})
