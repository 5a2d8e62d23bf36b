"""pip install ./bindings/torch: collbench_torch, the torch.distributed backend
"coll" (docs/TORCH.md), built against the installed torch with
torch.utils.cpp_extension; libcoll's C sources (two directories up) are
compiled into it as a static library. Nothing is downloaded: run pip with
--no-build-isolation (torch must be importable by the build)."""
import glob
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))


def rel(*parts):
    return os.path.relpath(os.path.join(TOP, *parts), HERE)


def libcoll_sources():
    """The sources of libcoll without the optional MPI and Gloo backends
    (CMakeLists.txt's coll_base + coll_objects lists)."""
    pats = ["src/core/*.c", "src/bootstrap/*.c", "src/algo/*.c", "src/transport/*/*.c",
            "src/backend/*.c", "src/backend/shm/*.c", "src/comm/*.c"]
    found = sorted(f for p in pats for f in glob.glob(os.path.join(TOP, p)))
    keep = [f for f in found if not (f.endswith("_mpi.c") or os.path.basename(f) in ("mpi.c", "gloo.c"))]
    if not keep:
        raise SystemExit(f"collbench_torch: no libcoll sources under {TOP}/src (build from the "
                         "collbench source tree: pip install ./bindings/torch)")
    return keep  # absolute: "../../src/x.c" would put its object outside the build directory


libcoll = ("coll", {
    "sources": libcoll_sources(),
    "include_dirs": [rel("include"), rel("src")],
    "macros": [("_GNU_SOURCE", None)],
    "cflags": ["-std=c11", "-O3", "-fPIC", "-fvisibility=hidden"],
})

setup(
    name="collbench_torch",
    version="0.1.0",
    description="torch.distributed backend 'coll' over libcoll (collbench)",
    libraries=[libcoll],
    ext_modules=[CppExtension(
        "collbench_torch", ["ProcessGroupColl.cpp"],
        include_dirs=[rel("include")],
        extra_compile_args=["-fvisibility=hidden"],
        libraries=["rt", "dl", "m"],
    )],
    cmdclass={"build_ext": BuildExtension},
)
