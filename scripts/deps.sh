#!/usr/bin/env bash
# Installs the Debian packages collbench needs, only the missing ones.
# Called by `make build/run/test`; safe to run again.
set -euo pipefail

# build + unit tests + JSON output; clang for the second compiler in CI
required=(cmake make gcc pkg-config libcmocka-dev libjansson-dev jq)
if [ "${CI:-}" = "true" ] || [ "${COLL_DEPS_ALL:-0}" = 1 ]; then
  required+=(clang)
fi

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
