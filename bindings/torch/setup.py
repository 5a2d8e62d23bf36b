"""pip install --no-build-isolation ./bindings/torch: collbench_torch, the
torch.distributed backend "coll" (docs/TORCH.md), as a Python package.

libcoll is built from this source tree by the project's own CMake (target
coll_static, the self-contained libcoll.a that `cmake --install` installs) and
linked statically into the module, with the libraries its coll.pc names.
--no-build-isolation: the build needs the installed torch (and setuptools);
an isolated build environment would try to download them.

Environment: COLL_TORCH_BUILD_BASE, where the build goes (default ./build;
the ctest points it at a temporary folder); COLL_CMAKE_ARGS, more arguments
for libcoll's cmake configure (e.g. -DCOLL_MPI=off); JOBS, its build jobs;
COLL_TORCH_OPT, the module's optimization flag (default -O2; the install test
builds at -O0: torch's templates compile faster unoptimized).
"""
import os
import re
import shlex
import subprocess
import sys

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the collbench source tree
# the module's C++ (CMakeLists.txt lists the same files); ProcessGroupColl.hpp
# holds the declarations they share
SOURCES = ["module.cpp", "ProcessGroupColl.cpp", "work.cpp", "collectives.cpp",
           "collectives_gather.cpp", "p2p.cpp", "allocator.cpp", "trace.cpp"]
BUILD_BASE = os.path.abspath(os.environ.get("COLL_TORCH_BUILD_BASE", os.path.join(HERE, "build")))
LIBCOLL_BUILD = os.path.join(BUILD_BASE, "libcoll")
UNITY_BATCH = 4  # files per compile, as the CMake target's UNITY_BUILD_BATCH_SIZE


def project_version():
    """collbench's version, from the top CMakeLists.txt's project()."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(collbench VERSION ([0-9.]+)", f.read())
    if not m:
        sys.exit(f"setup.py: no project(collbench VERSION ...) in {ROOT}/CMakeLists.txt")
    return m.group(1)


def libs_private(pc_file):
    """The Libs.private line of the coll.pc that configure wrote."""
    with open(pc_file) as f:
        for line in f:
            if line.startswith("Libs.private:"):
                return shlex.split(line.split(":", 1)[1])
    sys.exit(f"setup.py: no Libs.private in {pc_file}")


def run(cmd):
    print("setup.py:", " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        sys.exit(f"setup.py: failed: {' '.join(cmd)}")


class BuildWithLibcoll(BuildExtension):
    """Builds libcoll.a with CMake first, then the module against it."""

    def run(self):
        # Release: -O3 without -g; no torch module, no sanitizers in this one
        run(["cmake", "-S", ROOT, "-B", LIBCOLL_BUILD, "-DCMAKE_BUILD_TYPE=Release",
             "-DCOLL_TORCH=OFF", "-DCOLL_SANITIZE="] +
            shlex.split(os.environ.get("COLL_CMAKE_ARGS", "")))
        run(["cmake", "--build", LIBCOLL_BUILD, "--target", "coll_static",
             "-j", os.environ.get("JOBS", str(os.cpu_count() or 1))])
        for ext in self.extensions:
            ext.extra_objects.append(os.path.join(LIBCOLL_BUILD, "installed-static", "libcoll.a"))
            ext.extra_link_args += libs_private(os.path.join(LIBCOLL_BUILD, "coll.pc"))
        super().run()


def unity_sources():
    """SOURCES in batches of UNITY_BATCH, one generated file per batch that
    includes them: torch's headers are most of each file's compile time, so
    each batch parses them once (the CMake target's UNITY_BUILD does the same)."""
    out = []
    for i in range(0, len(SOURCES), UNITY_BATCH):
        path = os.path.join(BUILD_BASE, f"unity_{i // UNITY_BATCH}.cpp")
        text = "".join(f'#include "{os.path.join(HERE, f)}"\n' for f in SOURCES[i:i + UNITY_BATCH])
        # rewritten only when it changes, so a rebuild compiles only what changed
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        out.append(path)
    return out


os.makedirs(BUILD_BASE, exist_ok=True)
setup(
    name="collbench_torch",
    version=project_version(),
    description="torch.distributed backend 'coll' on libcoll (collbench)",
    ext_modules=[CppExtension(
        "collbench_torch", unity_sources(),
        include_dirs=[os.path.join(ROOT, "include")],
        depends=[os.path.relpath(os.path.join(HERE, f)) for f in SOURCES + ["ProcessGroupColl.hpp"]],
        # the flags the CMake target builds it with (hidden: export only the module init;
        # line tables only, -g1 after Python's -g: backtraces name lines, the build is
        # a third faster)
        extra_compile_args=["-std=c++17", os.environ.get("COLL_TORCH_OPT", "-O2"),
                            "-fvisibility=hidden", "-g1"])],
    cmdclass={"build_ext": BuildWithLibcoll},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
