#!/bin/sh
# Prints the exports that point collbench at a CUDA runtime and NCCL where the
# loader would not find them: inside a Python environment's packages (the
# nvidia-* wheels PyTorch installs, or torch/lib) or a CUDA toolkit in
# /usr/local/cuda*. Nothing is printed for a library the loader finds already.
#
#   eval "$(scripts/cuda_env.sh [PYTHON])"     (PYTHON: default python3)
#
# collbench reads COLL_CUDART_PATH and COLL_NCCL_PATH (docs/GPU.md).
py=${1:-python3}
found() { # found SONAME: true when the dynamic loader resolves it
    ldconfig -p 2>/dev/null | grep -q "[[:space:]]$1 " ||
        { [ -n "${LD_LIBRARY_PATH:-}" ] && for d in $(echo "$LD_LIBRARY_PATH" | tr : ' '); do
            [ -e "$d/$1" ] && return 0
        done; return 1; }
}
roots=$("$py" - 2>/dev/null <<'PY'
import importlib.util
for mod in ("nvidia", "torch"):
    spec = importlib.util.find_spec(mod)
    if spec and spec.submodule_search_locations:
        print("\n".join(spec.submodule_search_locations))
PY
)
search() { # search GLOB: the first match, the Python packages before the CUDA toolkits
    # (the runtime and NCCL torch itself loads, so both agree with the driver)
    for d in $roots /usr/local/cuda*/lib64 /usr/local/cuda*/lib /usr/local/cuda*/targets/*/lib; do
        [ -d "$d" ] && find "$d" -name "$1" \( -type f -o -type l \) 2>/dev/null
    done | head -n 1
}
if ! found libcudart.so && ! found libcudart.so.13 && ! found libcudart.so.12; then
    lib=$(search 'libcudart.so.[0-9]*')
    [ -n "$lib" ] && echo "export COLL_CUDART_PATH=$lib" || echo "# no libcudart found (docs/GPU.md)" >&2
fi
if ! found libnccl.so.2; then
    lib=$(search 'libnccl.so.2*')
    [ -n "$lib" ] && echo "export COLL_NCCL_PATH=$lib" || echo "# no libnccl found (docs/GPU.md)" >&2
fi
exit 0
