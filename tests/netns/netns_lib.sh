# Emulated hosts on one machine (sourced by the netns tests and bench/auto_hier.sh):
# one network namespace per host, 10.x addresses inside the namespaces only,
# joined by a veth pair (2 hosts) or veths to a bridge in its own namespace (3+).
# Names carry this shell's pid so parallel runs do not collide; netns_cleanup
# (installed as an EXIT trap by netns_setup) removes everything.
set -u

NETNS_TAG="cb$$"
NETNS_HOSTS=0
NETNS_NET="10.$(($$ % 200 + 20)).$(($$ / 200 % 250)).0"  # /24, namespaces only
NETNS_SKIP=77

# netns_require: exit 77 (ctest SKIP_RETURN_CODE) with a message unless root and ip netns work.
netns_require() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: network namespaces need root (running as uid $(id -u))"
        exit $NETNS_SKIP
    fi
    if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
        echo "SKIP: 'ip netns' is missing (install iproute2)"
        exit $NETNS_SKIP
    fi
    if ! ip netns add "${NETNS_TAG}probe" 2>/dev/null; then
        echo "SKIP: cannot create a network namespace here (container without CAP_SYS_ADMIN?)"
        exit $NETNS_SKIP
    fi
    ip netns del "${NETNS_TAG}probe"
}

netns_name() { echo "${NETNS_TAG}h$1"; }
# Address of host i (0-based): .1, .2, ...
netns_addr() { echo "${NETNS_NET%.0}.$(($1 + 1))"; }

netns_cleanup() {
    local i
    # "|| true": the bridge namespace exists for 3+ hosts only, and a caller
    # under set -e must not fail on its way out.
    for ((i = 0; i < NETNS_HOSTS; i++)); do ip netns del "$(netns_name $i)" 2>/dev/null || true; done
    ip netns del "${NETNS_TAG}br" 2>/dev/null || true
    return 0
}

NETNS_DELAY_OK=1 # 0 once a kernel without sch_netem refused the delay

# tbf's bucket: what a shaped link lets through at once after an idle moment
# (the environment may set another: bench/model_validate.sh wants links that
# shape small messages too).
NETNS_BURST_BYTES=${NETNS_BURST_BYTES:-$((4 * 1024 * 1024))}

# netns_shape DEV NS RATE DELAY: tbf at RATE, then netem DELAY, on DEV's egress.
# Without sch_netem the links keep the rate only (said once): a bandwidth bound
# holds with or without the delay.
netns_shape() {
    local dev=$1 ns=$2 rate=$3 delay=$4
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: tbf rate "$rate" burst "$NETNS_BURST_BYTES" \
        latency 200ms || return 1
    [ -n "$delay" ] && [ "$NETNS_DELAY_OK" -eq 1 ] || return 0
    if ! ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: netem delay "$delay" \
        limit 100000 2>/dev/null; then
        NETNS_DELAY_OK=0
        echo "note: no sch_netem in this kernel: links at $rate without the $delay delay"
    fi
    return 0
}

# netns_setup N [RATE DELAY]: N hosts; with RATE (e.g. 10gbit) and DELAY (1ms)
# every link is shaped in both directions. Returns non-zero when tc cannot shape.
netns_setup() {
    local n=$1 rate=${2:-} delay=${3:-} i ns
    trap netns_cleanup EXIT
    trap 'exit 130' INT TERM
    NETNS_HOSTS=$n
    for ((i = 0; i < n; i++)); do
        ns=$(netns_name $i)
        ip netns add "$ns" || return 1
        ip -n "$ns" link set lo up
    done
    if [ "$n" -eq 2 ]; then
        ip link add "${NETNS_TAG}v0" netns "$(netns_name 0)" type veth peer name "${NETNS_TAG}v1" \
            netns "$(netns_name 1)" || return 1
        for i in 0 1; do
            ns=$(netns_name $i)
            ip -n "$ns" addr add "$(netns_addr $i)/24" dev "${NETNS_TAG}v$i"
            ip -n "$ns" link set "${NETNS_TAG}v$i" up
            if [ -n "$rate" ]; then netns_shape "${NETNS_TAG}v$i" "$ns" "$rate" "$delay" || return 2; fi
        done
        return 0
    fi
    local br="${NETNS_TAG}br"
    ip netns add "$br" || return 1
    ip -n "$br" link add br0 type bridge && ip -n "$br" link set br0 up || return 1
    for ((i = 0; i < n; i++)); do
        ns=$(netns_name $i)
        ip link add "${NETNS_TAG}h$i" netns "$ns" type veth peer name "p$i" netns "$br" || return 1
        ip -n "$br" link set "p$i" master br0
        ip -n "$br" link set "p$i" up
        ip -n "$ns" addr add "$(netns_addr $i)/24" dev "${NETNS_TAG}h$i"
        ip -n "$ns" link set "${NETNS_TAG}h$i" up
        if [ -n "$rate" ]; then
            netns_shape "${NETNS_TAG}h$i" "$ns" "$rate" "$delay" || return 2
            netns_shape "p$i" "$br" "$rate" "$delay" || return 2
        fi
    done
    return 0
}

# Address of host i on the IPv6-only link (netns_ipv6_only): fd00:cb:PID::1, ::2, ...
netns_addr6() { printf 'fd00:cb:%x::%x\n' $(($$ % 65536)) $(($1 + 1)); }

# netns_ipv6_only: after netns_setup 2, the veth pair carries IPv6 only (its
# IPv4 addresses removed; nodad: usable at once). Exit 77 where IPv6 is disabled.
netns_ipv6_only() {
    local i ns
    if [ ! -e /proc/sys/net/ipv6/conf/all/disable_ipv6 ] ||
        [ "$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" != 0 ]; then
        echo "SKIP: IPv6 is disabled here (/proc/sys/net/ipv6/conf/all/disable_ipv6 is not 0)"
        exit $NETNS_SKIP
    fi
    for i in 0 1; do
        ns=$(netns_name $i)
        ip -n "$ns" -4 addr flush dev "${NETNS_TAG}v$i" || return 1
        ip -n "$ns" -6 addr add "$(netns_addr6 $i)/64" dev "${NETNS_TAG}v$i" nodad || return 1
    done
    return 0
}

# netns_run I CMD...: CMD inside host I's namespace.
netns_run() {
    local i=$1
    shift
    ip netns exec "$(netns_name "$i")" "$@"
}

# netns_wait_all PID...: waits for each; RCS gets their exit codes, "rc0 rc1 ...".
netns_wait_all() {
    local p
    RCS=""
    for p in "$@"; do
        wait "$p"
        RCS="$RCS $?"
    done
    RCS=${RCS# }
}
