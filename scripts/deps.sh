#!/usr/bin/env bash
# Installs the Debian packages collbench uses, only the missing ones.
# Called by `make build/run/test`; safe to run again.
# Required: the build and the tests. Optional: each turns one feature on, and
# the build goes on without it (CMake says which feature is off and why).
set -euo pipefail

required=(cmake make gcc pkg-config libcmocka-dev jq)
# JSON output; MPI backend; gloo backend (Gloo and the C++ compiler for its
# thin layer); topology/pinning; training math; report plots and the report's
# interactive plots (Chart.js, inlined into index.html); netns tests;
# the torch.distributed backend (bindings/torch) and its pip package (pip pulls
# setuptools and wheel).
optional=(libjansson-dev libopenmpi-dev openmpi-bin libgloo-dev g++ libhwloc-dev
          libopenblas-dev libplplot-dev plplot-driver-cairo libcairo2-dev libjs-chart.js iproute2 procps
          python3-torch libtorch-dev pybind11-dev python3-pip)
# CI: the second compiler, libFuzzer's runtime, valgrind, Chromium (the report
# rendering test runs there rather than skipping), Slurm and munge (the real
# srun/sbatch tests, tests/netns/slurm.sh), debootstrap (scripts/torch_root.sh's
# Debian 13 root with torch 2)
if [ "${CI:-}" = "true" ] || [ "${COLL_DEPS_ALL:-0}" = 1 ]; then
  optional+=(clang clang-format libclang-rt-dev valgrind chromium slurm-wlm munge debootstrap)
fi
# --with-browser: headless Chromium for the report's rendering test
for arg in "$@"; do
  case "$arg" in
    --with-browser) optional+=(chromium) ;;
    *) echo "scripts/deps.sh: unknown option '$arg' (known: --with-browser)" >&2; exit 2 ;;
  esac
done

missing_of() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing_req < <(missing_of "${required[@]}")
mapfile -t missing_opt < <(missing_of "${optional[@]}")
missing=("${missing_req[@]}" "${missing_opt[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "collbench: missing Debian packages: ${missing[*]}" >&2
    echo "collbench: install them as root, then run make again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    # without the optional ones the build goes on, those features off
    [ ${#missing_req[@]} -eq 0 ] && exit 0
    exit 1
  fi
else
  SUDO=
fi
echo "collbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  # one optional package that cannot be had must not cost the others
  [ ${#missing_req[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${missing_req[@]}" >/dev/null
  for p in "${missing_opt[@]}"; do
    $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
      echo "collbench: optional package $p could not be installed; its feature stays off" >&2
  done
fi
