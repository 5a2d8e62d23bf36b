#!/bin/sh
# IPv6 over loopback: 2 ranks started by hand with MASTER_ADDR=::1 (tcp and
# auto, results checked), and with --init-method tcp://[::1]:PORT; while rank 1
# is held back, rank 0's store and transport listen on IPv6 (ss), so the
# addresses published through the store are IPv6 ones. `collbench info` shows
# ::1; init methods with an unbracketed or broken IPv6 address fail at once
# naming the mistake. Exit 77 where IPv6 (or ::1 on lo) is missing.
# shellcheck disable=SC2086 # $init is a word list
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../pick_port.sh"

if [ "$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6 2>/dev/null || echo 1)" != 0 ] ||
    ! grep -q '^0\{31\}1 .* lo$' /proc/net/if_inet6 2>/dev/null; then
    echo "SKIP: IPv6 is disabled here, or lo has no ::1 (/proc/sys/net/ipv6/conf/all/disable_ipv6)"
    exit 77
fi

ENVS="-u MASTER_ADDR -u MASTER_PORT -u COLL_LAUNCHED -u COLL_LISTEN_ADDR -u COLL_SOCKET_IFNAME"

# run2 NAME BACKEND [ARGS...]: ranks 0 and 1 with MASTER_ADDR=::1; RCS "rc0 rc1".
run2() {
    name=$1 backend=$2
    shift 2
    pids=""
    for r in 0 1; do
        env $ENVS RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=::1 \
            MASTER_PORT="$PORT" ${RANK_ENV:+$([ $r = 1 ] && echo "$RANK_ENV")} \
            "$BIN" allreduce --sizes 1K,64K -w 1 -n 2 -c 1 -T 60 --backend "$backend" \
            --csv "$WORK/$name.csv" "$@" >"$WORK/$name.out.$r" 2>&1 &
        pids="$pids $!"
    done
    RCS=""
    for p in $pids; do
        wait "$p"
        RCS="$RCS $?"
    done
    RCS=${RCS# }
}

# check_ok NAME LABEL: both ranks exited 0 and NAME.csv has rows, none wrong.
check_ok() {
    name=$1 label=$2
    [ "$RCS" = "0 0" ] || { fail "$label: exit codes $RCS: $(cat "$WORK/$name".out.*)"; return; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != 0 { bad = 1 } END { exit bad || NR < 2 }' \
        "$WORK/$name.csv" || fail "$label: CSV rows without wrong 0: $(cat "$WORK/$name.csv")"
}

for backend in tcp auto; do
    PORT=$(pick_port)
    run2 "env.$backend" $backend
    check_ok "env.$backend" "MASTER_ADDR=::1, $backend"
done

PORT=$(pick_port)
run2 url tcp --init-method "tcp://[::1]:$PORT"
check_ok url "tcp://[::1]:$PORT"

# Rank 1 held back 3 s before connecting: rank 0's listening sockets meanwhile.
if command -v ss >/dev/null 2>&1; then
    PORT=$(pick_port)
    RANK_ENV="COLL_FAULT=1:connect:delay COLL_FAULT_DELAY_S=3" run2 held tcp &
    job=$!
    sleep 1.5
    pid0=$(pgrep -f -- "--csv $WORK/held.csv" | while read -r p; do
        grep -qz '^RANK=0$' "/proc/$p/environ" 2>/dev/null && echo "$p"; done | head -n 1)
    listens=$(ss -Hltnp 2>/dev/null | grep "pid=${pid0:-none}," | awk '{ print $4 }' | tr '\n' ' ')
    wait $job
    echo "rank 0 listened on: $listens"
    check_ok held "held back"
    case "$listens" in
    *"[::1]:$PORT "*) ;;
    *) fail "rank 0 does not serve the store on [::1]:$PORT: listens on '$listens'" ;;
    esac
    # the store's port and the transport's: both IPv6, nothing on 127.0.0.1
    n6=$(echo "$listens" | tr ' ' '\n' | grep -c '^\[::1\]:')
    if [ "$n6" -lt 2 ] || echo "$listens" | grep -q '127\.0\.0\.1'; then
        fail "rank 0's transport does not listen on ::1 alone: '$listens'"
    fi
else
    echo "note: no ss (iproute2): the listening addresses are not checked"
fi

info=$(env $ENVS MASTER_ADDR=::1 MASTER_PORT=1 RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 \
    "$BIN" info 2>&1)
echo "$info" | grep -q 'listen tcp, auto *::1 on lo' ||
    fail "collbench info with MASTER_ADDR=::1 does not show ::1: $(echo "$info" | grep listen)"

# Broken init methods: exit 2 at once, the mistake named.
for bad in "tcp://fd00::1:29500|needs brackets" "tcp://[fd00::1:29500|closing" \
    "tcp://[::1]29500|after ']'" "tcp://[::1]:0|1..65535"; do
    url=${bad%%|*} why=${bad#*|}
    env $ENVS RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 "$BIN" allreduce --sizes 1K \
        -w 1 -n 1 -T 10 --backend tcp --init-method "$url" >"$WORK/bad.out" 2>&1
    rc=$?
    if [ $rc -ne 2 ] || ! grep -qF "$why" "$WORK/bad.out"; then
        fail "--init-method $url: exit $rc, want 2 naming '$why': $(cat "$WORK/bad.out")"
    fi
done
finish
