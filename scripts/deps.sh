#!/usr/bin/env bash
# Installs the Debian packages collbench needs, only the missing ones.
# Called by `make build/run/test`; safe to run again.
set -euo pipefail

# build + unit tests + JSON output; then one package per optional feature:
# MPI backend, gloo backend (Gloo and the C++ compiler for its thin layer),
# topology/pinning, training math, report plots, netns tests.
required=(cmake make gcc pkg-config libcmocka-dev libjansson-dev jq
          libopenmpi-dev openmpi-bin libgloo-dev g++ libhwloc-dev libopenblas-dev
          libplplot-dev plplot-driver-cairo libcairo2-dev iproute2 procps)
# CI: the second compiler, libFuzzer's runtime, valgrind, Chromium (the report
# rendering test runs there rather than skipping)
if [ "${CI:-}" = "true" ] || [ "${COLL_DEPS_ALL:-0}" = 1 ]; then
  required+=(clang libclang-rt-dev valgrind chromium)
fi
# --with-browser: headless Chromium for the report's rendering test
for arg in "$@"; do
  case "$arg" in
    --with-browser) required+=(chromium) ;;
    *) echo "scripts/deps.sh: unknown option '$arg' (known: --with-browser)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${required[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "collbench: missing Debian packages: ${missing[*]}" >&2
    echo "collbench: install them as root, then run make again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
else
  SUDO=
fi
echo "collbench: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
