#!/usr/bin/env bash
# A Debian 13 root with torch 2.x (python3-torch, libtorch-dev), to build and
# test the torch.distributed backend against torch 2 on a Debian 12 host
# (whose torch is 1.13). docs/TORCH.md, "torch 2.x".
#
#   scripts/torch_root.sh create     build the root (root user, debootstrap; ~1-2 min)
#   scripts/torch_root.sh status     print the root's path and torch version; 1 when absent
#   scripts/torch_root.sh run CMD..  run CMD in the root, in this source tree
#   scripts/torch_root.sh test DIR [CTEST_ARG..]
#                                    configure DIR in the root (torch 2), build
#                                    collbench_torch, run `ctest -L torch` there;
#                                    exit 77 when there is no root
#
# The root lives outside the tree so that CI reuses it: $COLL_TORCH_ROOT, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/collbench/debian13-torch. The Debian mirror
# is the one this machine's apt uses (read from its configuration).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
root=${COLL_TORCH_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/collbench/debian13-torch}
suite=trixie
# libopenblas0: without it torch's CPU math falls back to reference BLAS (10x slower)
packages=(python3-torch libtorch-dev pybind11-dev python3-setuptools python3-pip
          cmake make gcc g++ pkg-config libcmocka-dev libopenblas0 procps)

die() { echo "torch_root.sh: $*" >&2; exit 1; }

# The first Debian archive URI of apt's configuration (deb822 or one-line form),
# skipping the security archive, whose layout differs.
mirror() {
  local f uri=""
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
               /^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f" |
          grep -v -- '-security' | head -1) || true
    [ -n "$uri" ] && break
  done
  [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list{,.d} (set COLL_DEBIAN_MIRROR)"
  echo "$uri"
}

create() {
  [ "$(id -u)" -eq 0 ] || die "create needs root (debootstrap, chroot)"
  if [ -x "$root/usr/bin/python3" ]; then echo "torch root already at $root"; return 0; fi
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null ||
    die "debootstrap missing (apt-get install debootstrap)"
  local m=${COLL_DEBIAN_MIRROR:-$(mirror)} tmp="$root.partial"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$root")"
  echo "torch_root.sh: debootstrap $suite from $m into $tmp"
  debootstrap --variant=minbase "$suite" "$tmp" "$m" >"$tmp.log" 2>&1 ||
    { tail -20 "$tmp.log" >&2; die "debootstrap failed (log: $tmp.log)"; }
  echo "deb $m $suite main" >"$tmp/etc/apt/sources.list"
  in_root "$tmp" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends ${packages[*]} >/dev/null && apt-get clean" ||
    die "installing ${packages[*]} in $tmp failed"
  rm -f "$tmp.log"
  mv "$tmp" "$root"   # only a complete root gets the name status looks for
  status
}

# Runs "$@" chrooted in $1 with /proc, /sys, /dev (with /dev/shm), the source
# tree and $extra (a build directory; both at their own paths) mounted, in a
# private mount namespace: the mounts vanish with the command whatever way it
# ends, nothing to unmount on the host. USE_LIBUV=0: Debian 13's torch is built
# without libuv, which its TCPStore otherwise asks for; no bytecode written into
# the source tree.
extra=
in_root() {
  local r=$1; shift
  [ "$(id -u)" -eq 0 ] || die "run needs root (chroot)"
  unshare --mount --propagation private -- /bin/sh -ec '
    r=$1; src=$2; extra=$3; shift 3
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    for d in "$src" $extra; do
      mkdir -p "$r$d"
      mount --bind "$d" "$r$d"
    done
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    exec chroot "$r" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
      HOME=/root LANG=C.UTF-8 USE_LIBUV=0 PYTHONDONTWRITEBYTECODE=1 ${TERM:+TERM=$TERM} \
      ${TORCH2_LONG:+TORCH2_LONG=$TORCH2_LONG} \
      /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$src" "$@"
  ' in_root "$r" "$src" "$extra" "$@"
}

# The torch tests against the root's torch, in build directory $1.
torch_tests() {
  local dir=${1:-}; shift || true
  [ -n "$dir" ] || die "test needs a build directory"
  if [ ! -x "$root/usr/bin/python3" ]; then
    echo "SKIP: no Debian 13 torch root at $root (create it: sudo scripts/torch_root.sh create)"
    exit 77
  fi
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: the torch root needs root (chroot)"; exit 77; }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  case "$dir/" in "$src"/*) ;; *) extra=$dir ;; esac
  # the tests, not speed: C at -O1, the module's C++ at -O0 (46 s to build
  # here, 77 at RelWithDebInfo); the module alone (the rest of the tree is the
  # host's job)
  in_root "$root" sh -ec '
    d=$1; shift
    cmake -S . -B "$d" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O1 -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
      -DCOLL_TORCH_PYTHON=/usr/bin/python3 >"$d/configure.log" ||
      { cat "$d/configure.log"; exit 1; }
    grep "torch backend" "$d/configure.log" || true
    cmake --build "$d" --target collbench_torch -j "${JOBS:-2}"
    # torch/pip_install builds libcoll and the module once more (minutes) and
    # torch/group_lifetime_1000 is a 6-minute soak of the same C++ teardown
    # that group_lifetime (40 groups) checks here: the host'"'"'s torch runs
    # both; here they run with TORCH2_LONG=1.
    # The bench scripts'"'"' smokes (their tables and CSVs, the same Python on
    # either torch) run on the host'"'"'s torch alone, also with TORCH2_LONG=1.
    skip="^torch2/|^torch/(bench_smoke|bench_smoke_alloc|ddp_step_smoke|latency_smoke)\$"
    [ "${TORCH2_LONG:-0}" = 1 ] || skip="$skip|^torch/pip_install\$|^torch/group_lifetime_1000\$"
    # two at a time, as on the host (torch2/tests itself runs beside the rest of the long tier)
    cd "$d" && ctest -j "${JOBS:-2}" -L torch -E "$skip" --output-on-failure "$@"
  ' torch_tests "$dir" "$@"
}

status() {
  [ -x "$root/usr/bin/python3" ] || { echo "no torch root at $root (create it: sudo scripts/torch_root.sh create)"; return 1; }
  echo "torch root $root: torch $(in_root "$root" python3 -c 'import torch; print(torch.__version__)')"
}

case "${1:-}" in
  create) create ;;
  status) status ;;
  run)
    shift
    [ $# -gt 0 ] || die "run needs a command"
    [ -x "$root/usr/bin/python3" ] || die "no torch root at $root (create it: sudo scripts/torch_root.sh create)"
    in_root "$root" "$@" ;;
  test) shift; torch_tests "$@" ;;
  *) die "usage: torch_root.sh create | status | run CMD [ARG...] | test DIR [CTEST_ARG...]" ;;
esac
