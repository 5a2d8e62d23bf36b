#!/bin/bash
# Ranks started the way other launchers start them, across two emulated hosts
# (network namespaces joined by a veth pair), one collbench process per rank:
#
#   launchers.sh COLLBENCH torchrun   RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
#                                     GROUP_RANK MASTER_ADDR MASTER_PORT
#   launchers.sh COLLBENCH torchrun6  as torchrun, over an IPv6-only link (fd00:: addresses,
#                                     no IPv4 on the veths): the matrix, the killed rank,
#                                     COLL_SOCKET_IFNAME and tcp://[addr]:port
#   launchers.sh COLLBENCH srun       SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NODEID
#                                     SLURM_NNODES SLURM_LAUNCH_NODE_IPADDR (no MASTER_ADDR)
#
# 2 hosts x 1 and x 2 ranks, backends tcp and auto, results checked (-c 1):
# every rank exits 0, the CSV says 2 hosts with 0 wrong, and auto says it runs
# shm inside a host and tcp between. A rank killed on host 1: the survivors on
# both hosts exit 3 naming it within 2 s. A stranger from a third namespace at
# the store and the transport ports: refused, logged, the job unaffected.
# Then the mistakes that must fail at once:
# an interface that does not exist, a host with loopback only.
# The job token travels in a file (COLL_JOB_TOKEN_FILE), never on a command line;
# without one, ranks on reachable addresses refuse to start unless --insecure.
# Exit 77 (skip) without root or ip netns.
BIN=${1:?usage: $0 path/to/collbench torchrun|srun}
STYLE=${2:?usage: $0 path/to/collbench torchrun|torchrun6|srun}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netns_lib.sh"
# below the ephemeral range (no outgoing connection holds it), free now
. "$(dirname "$0")/../pick_port.sh"
PORT=$(pick_port)
FAILED=0
case "$STYLE" in torchrun | torchrun6 | srun) ;; *) echo "unknown style '$STYLE' (torchrun, torchrun6, srun)" >&2; exit 2 ;; esac
netns_require
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-launchers.XXXXXX")
cleanup() {
    netns_cleanup
    ip netns del "${NETNS_TAG}lo" 2>/dev/null || true
    ip netns del "${NETNS_TAG}x" 2>/dev/null || true
    if [ -n "${KEEP:-}" ]; then echo "outputs kept in $WORK"; else rm -rf "$WORK"; fi
}
netns_setup 2
rc=$?
trap cleanup EXIT
[ $rc -eq 0 ] || { echo "FAIL: cannot set up 2 namespaces"; exit 1; }
MASTER=$(netns_addr 0)
if [ "$STYLE" = torchrun6 ]; then
    netns_ipv6_only || { echo "FAIL: cannot give the veths IPv6 addresses"; exit 1; }
    MASTER=$(netns_addr6 0)
fi
TOKEN_FILE="$WORK/token"
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE")

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# rank_env HOST LOCAL PER_HOST: the launcher's variables for that rank, one per word.
rank_env() {
    local h=$1 l=$2 m=$3
    local r=$((h * m + l)) n=$((2 * m))
    if [ "$STYLE" != srun ]; then
        echo "RANK=$r WORLD_SIZE=$n LOCAL_RANK=$l LOCAL_WORLD_SIZE=$m GROUP_RANK=$h" \
            "MASTER_ADDR=$MASTER MASTER_PORT=$PORT"
    else
        echo "SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$l SLURM_NODEID=$h SLURM_NNODES=2" \
            "SLURM_STEP_NUM_NODES=2 SLURM_TASKS_PER_NODE=$m(x2)" \
            "SLURM_LAUNCH_NODE_IPADDR=$MASTER MASTER_PORT=$PORT"
    fi
}

# run_job TAG PER_HOST ARGS...: every rank at once, each in its host's namespace,
# with a clean launcher environment. RCS: "rc rc ..." in rank order.
run_job() {
    local tag=$1 m=$2 h l pids=()
    shift 2
    PORT=$((PORT + 1))
    for h in 0 1; do
        for ((l = 0; l < m; l++)); do
            # shellcheck disable=SC2046 # rank_env is a list of words
            netns_run $h env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE \
                -u MASTER_ADDR -u MASTER_PORT -u COLL_LAUNCHED -u COLL_LISTEN_ADDR \
                -u COLL_JOB_TOKEN -u OMPI_COMM_WORLD_RANK -u PMI_RANK \
                ${TOKEN_ENV:-COLL_JOB_TOKEN_FILE=$TOKEN_FILE} $(rank_env $h $l "$m") \
                bash -c 'sleep "$1"; shift; "$@"; rc=$?; date +%s.%N >"$0"; exit $rc' \
                "$WORK/$tag.end.$((h * m + l))" "$([ $((h * m + l)) -eq $((2 * m - 1)) ] && echo "${DELAY_LAST:-0}" || echo 0)" \
                "$BIN" "$@" >"$WORK/$tag.out.$((h * m + l))" 2>&1 &
            pids+=($!)
        done
    done
    netns_wait_all "${pids[@]}"
}

check_matrix() {
    local m backend
    for m in 1 2; do
        for backend in tcp auto; do
            local tag="$backend.$m" csv="$WORK/$backend.$m.csv"
            run_job "$tag" $m allreduce --backend $backend --sizes 1028,1M -w 1 -n 2 -c 1 -T 60 \
                -v --csv "$csv"
            local want
            want=$(printf '0 %.0s' $(seq $((2 * m))) | sed 's/ $//')
            if [ "$RCS" != "$want" ]; then
                fail "$STYLE 2 hosts x $m, $backend: exit codes $RCS"
                tail -n 5 "$WORK/$tag".out.* >&2
                continue
            fi
            awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                     $col["nnodes"] != 2 || $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' \
                "$csv" || fail "$STYLE 2 hosts x $m, $backend: CSV rows without nnodes 2 and wrong 0: $(cat "$csv")"
            # Rank 0 alone writes the CSV: ranks sharing the file would each add rows.
            [ "$(grep -c '^timestamp' "$csv")" -eq 1 ] || fail "$STYLE $tag: more than one header"
            if [ $backend = auto ]; then
                # -v prints auto's plan: shm within a host (with one rank per host
                # there is nothing within), tcp across
                local plan="auto: 2 hosts, 1 ranks on this one; .*inter-host tcp"
                [ $m -eq 2 ] && plan="auto: 2 hosts, 2 ranks on this one; intra-host shm, inter-host tcp; all-reduce hierarchical"
                grep -q "$plan" "$WORK/$tag.out.0" ||
                    fail "$STYLE 2 hosts x $m, auto: plan is not '$plan': $(grep 'auto:' "$WORK/$tag.out.0")"
            fi
        done
    done
    echo "checked: $STYLE-style, 2 hosts x 1 and x 2 ranks, tcp and auto, -c 1"
}

# A bad interface name fails every rank at once with the variable named.
check_bad_ifname() {
    local start=$SECONDS
    COLL_SOCKET_IFNAME=nosuchif0 run_job ifname 1 allreduce --backend tcp --sizes 4K -w 1 -n 1 -T 60
    [ "$RCS" = "2 2" ] || fail "COLL_SOCKET_IFNAME=nosuchif0: exit codes $RCS, want 2 2"
    grep -q "COLL_SOCKET_IFNAME=nosuchif0 matches no interface" "$WORK/ifname.out.1" ||
        fail "COLL_SOCKET_IFNAME=nosuchif0: rank 1 does not name it: $(cat "$WORK/ifname.out.1")"
    # "at once": well before the 60 s that a rank waiting for its peers would take
    [ $((SECONDS - start)) -lt 30 ] || fail "COLL_SOCKET_IFNAME=nosuchif0 took $((SECONDS - start)) s"
}

# A host with loopback only (a third namespace, no link) cannot take part in a
# job that spans hosts: it says so, and which variable to set, at once.
check_loopback_only() {
    local ns="${NETNS_TAG}lo" out="$WORK/loonly.out"
    ip netns add "$ns" || { fail "cannot add namespace $ns"; return; }
    ip -n "$ns" link set lo up
    # shellcheck disable=SC2046
    ip netns exec "$ns" env -u MASTER_ADDR -u COLL_LISTEN_ADDR COLL_JOB_TOKEN_FILE="$TOKEN_FILE" \
        $(rank_env 1 0 1) "$BIN" allreduce --backend tcp --sizes 4K -w 1 -n 1 -T 60 >"$out" 2>&1
    local rc=$?
    ip netns del "$ns"
    [ $rc -ne 0 ] || fail "loopback-only host: exit 0"
    grep -q "no route to the store host.*COLL_SOCKET_IFNAME" "$out" ||
        fail "loopback-only host: no message naming what to set: $(cat "$out")"
}

# No token on addresses other hosts reach: every rank refuses at once and names
# the variable; --insecure is the user saying any peer will do.
check_no_token() {
    TOKEN_ENV="COLL_INSECURE=0" run_job notoken 1 allreduce --backend tcp --sizes 4K -w 1 -n 1 -T 60
    [ "$RCS" = "2 2" ] || fail "no token: exit codes $RCS, want 2 2"
    grep -q "without a job token.*COLL_JOB_TOKEN_FILE" "$WORK/notoken.out.0" ||
        fail "no token: rank 0 does not name COLL_JOB_TOKEN_FILE: $(cat "$WORK/notoken.out.0")"
    TOKEN_ENV="COLL_INSECURE=0" run_job insecure 1 allreduce --backend tcp --sizes 4K -w 1 -n 1 \
        -c 1 -T 60 --insecure
    [ "$RCS" = "0 0" ] || fail "no token, --insecure: exit codes $RCS: $(cat "$WORK"/insecure.out.*)"
}

# Rank 3 (host 1) killed mid all-reduce: every survivor, on both hosts, exits 3
# naming it within 2 s of its death (the issue's bound; -T is 30 s, so no
# timeout can be what ends them).
check_kill() {
    local backend
    for backend in tcp auto; do
        local tag="kill.$backend"
        COLL_FAULT=3:collective:kill:1M run_job "$tag" 2 allreduce --backend $backend --sizes 16M \
            -w 1 -n 20 -c 0 -T 30 --time-budget 0
        local t0 r
        t0=$(date -r "$WORK/$tag.out.3" +%s.%N) # the fault's announcement is its last write
        grep -q "COLL_FAULT: .* kill at collective" "$WORK/$tag.out.3" ||
            { fail "kill, $backend: rank 3 did not report the fault: $(cat "$WORK/$tag.out.3")"; continue; }
        for r in 0 1 2; do
            local rc msg late
            rc=$(echo "$RCS" | cut -d' ' -f$((r + 1)))
            msg=$(sed 's/^collbench: rank [0-9]*: //' "$WORK/$tag.out.$r" | tr '\n' '|')
            [ "$rc" = 3 ] || fail "kill, $backend: rank $r exited $rc, want 3: $msg"
            printf '%s' "$msg" | grep -q "rank 3\b" || fail "kill, $backend: rank $r does not name rank 3: $msg"
            late=$(awk -v e="$(cat "$WORK/$tag.end.$r")" -v t="$t0" 'BEGIN { if (e - t > 2) printf "%.2f", e - t }')
            [ -z "$late" ] || fail "kill, $backend: rank $r exited $late s after rank 3 died (bound 2 s)"
        done
    done
}

# A stranger in a third namespace (routed to host 0 over its own veth) talks to
# the store and to the transport ports of host 0's ranks while they set up:
# refused and logged with its address, and the job still passes its check.
# Rank 3 is slow to connect (COLL_FAULT delay) so that set-up lasts long enough to be met.
check_stranger() {
    local ns="${NETNS_TAG}x" h0 addr="10.254.$(($$ % 250)).2" gw="10.254.$(($$ % 250)).1"
    h0=$(netns_name 0)
    ip netns add "$ns" || { fail "cannot add namespace $ns"; return; }
    ip -n "$ns" link set lo up
    ip link add "${NETNS_TAG}x0" netns "$h0" type veth peer name "${NETNS_TAG}x1" netns "$ns"
    ip -n "$h0" addr add "$gw/24" dev "${NETNS_TAG}x0" && ip -n "$h0" link set "${NETNS_TAG}x0" up
    ip -n "$ns" addr add "$addr/24" dev "${NETNS_TAG}x1" && ip -n "$ns" link set "${NETNS_TAG}x1" up
    ip -n "$ns" route add default via "$gw"
    local port=$((PORT + 1))
    (
        listeners() { ip netns exec "$h0" ss -Hltn | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u; }
        local end=$((SECONDS + 30))
        while [ -z "$(listeners | grep -x "$port")" ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
        # a HELLO with a made-up MAC and client nonce and no CHALLENGE, then HTTP
        ip netns exec "$ns" bash -c "printf '\x00\x00\x00\x39\x01\x00\x00\x00\x20%032d\x00\x00\x00\x10%016d' 0 0 >/dev/tcp/$MASTER/$port"
        ip netns exec "$ns" bash -c "printf 'GET / HTTP/1.0\r\n\r\n' >/dev/tcp/$MASTER/$port"
        # ranks 0 and 1's transports, as soon as they listen
        while [ "$(listeners | wc -l)" -lt 3 ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
        for p in $(listeners); do
            [ "$p" = "$port" ] && continue
            ip netns exec "$ns" bash -c "printf 'CLHS%060d' 0 >/dev/tcp/$MASTER/$p" && echo "sent to $p"
        done
    ) >"$WORK/stranger.log" 2>&1 &
    local stranger=$!
    COLL_FAULT=3:connect:delay COLL_FAULT_DELAY_S=4 run_job stranger 2 allreduce --backend tcp --sizes 1M -w 1 -n 2 -c 1 -T 60 --csv "$WORK/stranger.csv"
    wait $stranger
    ip netns del "$ns"
    [ "$RCS" = "0 0 0 0" ] || fail "stranger: the job's exit codes are $RCS: $(cat "$WORK"/stranger.out.*)"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' \
        "$WORK/stranger.csv" || fail "stranger: wrong results: $(cat "$WORK/stranger.csv")"
    grep -q "collbench store: dropped connection from $addr:.*bad job token" "$WORK/stranger.out.0" ||
        fail "stranger: the store did not log refusing $addr: $(grep -v '^#\|^ ' "$WORK/stranger.out.0"; cat "$WORK/stranger.log")"
    grep -q "tcp transport rank [01]: refused a connection from $addr:" "$WORK"/stranger.out.[01] ||
        fail "stranger: no transport on host 0 logged refusing $addr: $(grep -hv '^#\|^ ' "$WORK"/stranger.out.[01]; cat "$WORK/stranger.log")"
}

# IPv6 only: COLL_SOCKET_IFNAME picks the veth's global IPv6 address (it has no
# IPv4 one), and rank 0's IPv6 store is named by tcp://[addr]:port; the
# addresses each rank published through the store are IPv6 ones.
check_ipv6_forms() {
    COLL_SOCKET_IFNAME="${NETNS_TAG}v" run_job ifname6 1 allreduce --backend tcp --sizes 64K \
        -w 1 -n 2 -c 1 -T 60 -v
    [ "$RCS" = "0 0" ] || fail "IPv6, COLL_SOCKET_IFNAME: exit codes $RCS: $(cat "$WORK"/ifname6.out.*)"
    local info
    info=$(netns_run 1 env MASTER_ADDR="$MASTER" MASTER_PORT=1 RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 \
        LOCAL_WORLD_SIZE=1 GROUP_RANK=1 COLL_SOCKET_IFNAME="${NETNS_TAG}v" "$BIN" info 2>&1)
    echo "$info" | grep -q "listen tcp, auto *$(netns_addr6 1) on ${NETNS_TAG}v1" ||
        fail "IPv6: collbench info on host 1 does not show $(netns_addr6 1): $(echo "$info" | grep listen)"
    run_job tcpurl 1 allreduce --backend tcp --sizes 64K -w 1 -n 2 -c 1 -T 60 \
        --init-method "tcp://[$MASTER]:$((PORT + 1))"
    [ "$RCS" = "0 0" ] || fail "IPv6, tcp://[$MASTER]:port: exit codes $RCS: $(cat "$WORK"/tcpurl.out.*)"
}

if [ "$STYLE" = torchrun6 ]; then
    check_matrix
    check_ipv6_forms
    check_kill
    [ $FAILED -eq 0 ] && echo PASS
    exit $FAILED
fi
check_matrix
check_stranger
check_kill
check_no_token
check_bad_ifname
check_loopback_only
[ $FAILED -eq 0 ] && echo PASS
exit $FAILED
