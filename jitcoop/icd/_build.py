"""Build time: the driver's shared library (cffi embedding mode), for setup.py's cffi_modules.

The library `libjitcoop_vulkan.so` is what the Vulkan loader opens. Its three exported
functions (the loader-ICD interface) are small C wrappers; every Vulkan command is an
`extern "Python"` function implemented in `jitcoop.icd` and handed to the loader as a function
pointer by vkGetInstanceProcAddr / vkGetDeviceProcAddr.

The first call starts Python inside the application (cffi's embedding mode). The application
is not a Python program, so Python would look for its standard library next to the
application; the wrapper starts it as the interpreter that built the library
(`sys.executable` at build time: a virtual environment's interpreter finds its packages too),
unless the process already runs Python. The init code then puts the package folder holding
the library first on sys.path, so the library always runs the jitcoop beside it.

Runs inside pip's isolated build environment: standard library and cffi only.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import sysconfig
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
MODULE = "jitcoop.icd._vulkan"          # the name cffi gives the module inside the process
LIBRARY = "libjitcoop_vulkan.so"        # the file name (the manifest's library_path)


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_jitcoop_icd_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


_cdef = _load("_cdef")
_ext = _load("extensions")

_PFN = re.compile(r"typedef\s+(.*?)\(\s*\*\s*PFN_(vk\w+)\s*\)\s*\((.*)\)\s*;", re.S)

HEADER = _cdef.Header()
COMMANDS = {}                           # name -> the section (extension or version) declaring it
for _s in _ext.SECTIONS:
    for _c in HEADER.sections[_s].commands:
        COMMANDS.setdefault(_c, _s)
TYPES = HEADER.cdef(_ext.SECTIONS, extra_types=[f"PFN_{c}" for c in COMMANDS])
EXTERNS = []
for _c in COMMANDS:
    _m = _PFN.match(HEADER.decls[f"PFN_{_c}"].text)
    EXTERNS.append(f'extern "Python" {_m.group(1).strip()} jc_{_c}({_m.group(3)});')
VERSIONS = [(n, HEADER.sections[n].spec_version) for n in _ext.INSTANCE + _ext.DEVICE + _ext.PROFILE_DEVICE]

CDEF = TYPES + """
typedef struct { uintptr_t loader_data; } jc_dispatchable;
struct jc_extension { const char *name; uint32_t spec_version; };
struct jc_command { const char *name; const char *section; };
static const struct jc_extension jc_extensions[%d];
static const struct jc_command jc_commands[%d];
const char *jc_library_path(void);
void jc_python_ready(void);
int jc_owns_python(void);
extern "Python" VkResult jc_icd_negotiate(uint32_t *pVersion);
extern "Python" PFN_vkVoidFunction jc_icd_get_instance_proc_addr(VkInstance instance, const char *pName);
extern "Python" PFN_vkVoidFunction jc_icd_get_physical_device_proc_addr(VkInstance instance, const char *pName);
""" % (len(VERSIONS), len(COMMANDS)) + "\n".join(EXTERNS)

SOURCE = r"""
#define VK_NO_PROTOTYPES
#include "vulkan/vulkan.h"
#include "vulkan/vk_icd.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The first word of a dispatchable handle belongs to the loader (its dispatch table). */
typedef struct { uintptr_t loader_data; } jc_dispatchable;
struct jc_extension { const char *name; uint32_t spec_version; };
static const struct jc_extension jc_extensions[] = { %(versions)s };
/* every command the library declares, with the extension (or VK_VERSION_1_x) that defines it */
struct jc_command { const char *name; const char *section; };
static const struct jc_command jc_commands[] = { %(commands)s };

static const char *jc_library_path(void) {
    Dl_info info;
    if (dladdr((void *)&jc_library_path, &info) && info.dli_fname) return info.dli_fname;
    return "";
}

/* Set by the init code once every command is registered: until then the wrappers refuse. */
static volatile int jc_ready;
static void jc_python_ready(void) { jc_ready = 1; }

static pthread_once_t jc_once = PTHREAD_ONCE_INIT;
static int jc_started;
static int jc_own;                    /* the driver started Python: the application is not a Python program */
static int jc_owns_python(void) { return jc_own; }

static void jc_start(void) {
    if (Py_IsInitialized()) {        /* a Python program loaded the driver: use its interpreter */
        jc_started = 1;
        return;
    }
    /* Python extension modules (numpy's...) expect libpython's symbols to be global; the loader
     * opened this library RTLD_LOCAL, so libpython came in local too: make it global. */
    Dl_info info;
    if (dladdr((void *)&Py_InitializeFromConfig, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;   /* the application owns its signals */
    config.parse_argv = 0;
    PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, "%(python)s");
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        fprintf(stderr, "jitcoop Vulkan driver: cannot start Python (%(python)s): %%s\n",
                st.err_msg ? st.err_msg : "unknown error");
        return;
    }
    PyEval_SaveThread();              /* cffi takes the GIL on each call */
    jc_own = 1;
    jc_started = 1;
}

static int jc_python(void) {
    pthread_once(&jc_once, jc_start);
    return jc_started;
}

static VkResult jc_icd_negotiate(uint32_t *pVersion);
static PFN_vkVoidFunction jc_icd_get_instance_proc_addr(VkInstance instance, const char *pName);
static PFN_vkVoidFunction jc_icd_get_physical_device_proc_addr(VkInstance instance, const char *pName);

__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vk_icdNegotiateLoaderICDInterfaceVersion(uint32_t *pVersion) {
    if (!jc_python()) return VK_ERROR_INCOMPATIBLE_DRIVER;
    VkResult r = jc_icd_negotiate(pVersion);
    return jc_ready ? r : VK_ERROR_INCOMPATIBLE_DRIVER;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vk_icdGetInstanceProcAddr(VkInstance instance, const char *pName) {
    if (!jc_python()) return NULL;
    PFN_vkVoidFunction f = jc_icd_get_instance_proc_addr(instance, pName);
    return jc_ready ? f : NULL;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vk_icdGetPhysicalDeviceProcAddr(VkInstance instance, const char *pName) {
    if (!jc_python()) return NULL;
    PFN_vkVoidFunction f = jc_icd_get_physical_device_proc_addr(instance, pName);
    return jc_ready ? f : NULL;
}
""" % dict(
    versions=", ".join(f'{{"{n}", {v}}}' for n, v in VERSIONS),
    commands=", ".join(f'{{"{c}", "{s}"}}' for c, s in COMMANDS.items()),
    python=sys.executable.replace("\\", "\\\\").replace('"', '\\"'))

INIT = f"""
import sys
from pathlib import Path
_mod = sys.modules[{MODULE!r}]
# the package folder that holds this library goes first: the library runs the jitcoop beside it
_root = str(Path(_mod.ffi.string(_mod.lib.jc_library_path()).decode()).resolve().parents[2])
if _root not in sys.path:
    sys.path.insert(0, _root)
if _mod.lib.jc_owns_python():
    # Importing signal gives SIGINT Python's handler where the application had none (whatever
    # install_signal_handlers says); the handler only sets a flag for the main thread's next
    # Python code, so Ctrl-C would no longer end the application: SIGINT goes back to its default.
    import signal
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    # numpy's OpenBLAS starts a thread per core as it loads, and each spins a while waiting for
    # work the driver never gives it (it does no BLAS): on a 2-core CI machine that spin takes a
    # core from the application's own threads. One thread, for numpy's import only: an OpenBLAS
    # of the application's, loaded later, still sees the environment as it was.
    import os
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        try:
            import numpy
        finally:
            del os.environ["OPENBLAS_NUM_THREADS"]
from jitcoop.icd import entry
entry.install(_mod.ffi, _mod.lib)
_mod.lib.jc_python_ready()
"""

_libdir = sysconfig.get_config_var("LIBDIR") or ""
ffibuilder = cffi.FFI()
ffibuilder.cdef(CDEF)
ffibuilder.embedding_init_code(INIT)
ffibuilder.set_source(
    MODULE, SOURCE,
    include_dirs=[str(HERE / "include")],
    extra_compile_args=["-O1", "-Wno-unused-function", "-Wno-unused-variable"],
    libraries=[f"python{sysconfig.get_config_var('LDVERSION')}", "dl", "pthread"],
    library_dirs=[_libdir] if _libdir else [],
    runtime_library_dirs=[_libdir] if _libdir else [],
    py_limited_api=False,
    optional=True,           # without a compiler or libpython jitcoop installs, without the driver
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=sys.argv[1] if len(sys.argv) > 1 else ".", target=LIBRARY, verbose=True)
