#!/bin/sh
# The store under a flood of strangers (issue 27, item 1): a 4-rank job
# (2 nodes x 2 ranks on loopback, a job token) starts while 1,000 idle
# connections and 1,000 garbage-sending ones are aimed at its store port.
# The job must start and finish with every result checked; the test prints
# its start-up delay against the same job without strangers. Loopback only;
# the flood is bounded in connections (at most FLOOD_MAX) and time.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/../pick_port.sh"

command -v python3 >/dev/null || { echo "SKIP: python3 (the flooder) is not installed"; exit 77; }
umask 077
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/token"

# node N NAME PORT: one node (2 ranks) of the job on PORT, in the background,
# its output in $WORK/NAME.nodeN.
node() {
    "$BIN" allreduce --nnodes 2 --node-rank "$1" --nproc-per-node 2 --master-port "$3" \
        --job-token-file "$WORK/token" --backend tcp --sizes 1K -n 2 -w 1 -c 1 -T 60 \
        >"$WORK/$2.node$1" 2>&1 &
}

# run_job NAME PORT [FLOOD]: node 0 first (its rank 0 hosts the store), then,
# once the flooder (when FLOOD is given) holds its connections, node 1.
# True when both exit 0; node 1's milliseconds from start to exit in $WORK/NAME.ms.
run_job() {
    node 0 "$1" "$2"; pid0=$!
    if [ $# -gt 2 ]; then
        python3 "$WORK/flood.py" "$2" "$WORK/stop" >"$WORK/flood.out" 2>&1 &
        flooder=$!
        i=0
        while ! grep -q "flood up" "$WORK/flood.out" 2>/dev/null && [ $i -lt 400 ]; do
            sleep 0.05; i=$((i + 1))
        done
    fi
    t0=$(date +%s%N)
    node 1 "$1" "$2"; pid1=$!
    wait "$pid1"; rc1=$?
    echo $((($(date +%s%N) - t0) / 1000000)) >"$WORK/$1.ms"
    wait "$pid0"; rc0=$?
    [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ]
}

run_job quiet "$(pick_port)" ||
    fail "the job without strangers failed: $(tail -n 5 "$WORK/quiet.node0" "$WORK/quiet.node1")"

# The flooder waits for the port to listen, then holds 1,000 idle connections
# and keeps 1,000 more sending garbage (reconnecting when dropped) until
# the job is over or 90 s have passed.
cat >"$WORK/flood.py" <<'EOF'
import os, random, socket, sys, time
port, stop_file = int(sys.argv[1]), sys.argv[2]
IDLE, GARBAGE, FLOOD_MAX, LIMIT_S = 1000, 1000, 30000, 90
end = time.time() + LIMIT_S
def connect():
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    return s
while time.time() < end and not os.path.exists(stop_file):  # until rank 0 listens
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
        break
    except OSError:
        time.sleep(0.005)
idle = [connect() for _ in range(IDLE)]
garbage = [connect() for _ in range(GARBAGE)]
made = IDLE + GARBAGE
print("flood up", flush=True)
while time.time() < end and not os.path.exists(stop_file) and made < FLOOD_MAX:
    for i, s in enumerate(garbage):
        try:
            s.send(os.urandom(random.choice((3, 7, 64))))
        except BlockingIOError:
            pass
        except OSError:  # dropped by the server: a fresh one takes its place
            s.close()
            garbage[i] = connect()
            made += 1
    time.sleep(0.05)
print("flooder: %d connections made" % made)
EOF

ulimit -n 8192 2>/dev/null
run_job flood "$(pick_port)" flood ||
    fail "the job under a flood failed: $(tail -n 5 "$WORK/flood.node0" "$WORK/flood.node1")"
touch "$WORK/stop"
wait "$flooder"

grep -q "^flooder: [0-9]* connections made" "$WORK/flood.out" ||
    fail "the flooder did not run: $(cat "$WORK/flood.out")"
grep -q "^# Out of bounds values : 0 OK" "$WORK/flood.node0" ||
    fail "node 0 under the flood printed no checked result: $(tail -20 "$WORK/flood.node0")"
# The server logs the first strangers one by one, then sums the rest up.
grep -q "collbench store: dropped connection from 127.0.0.1:" "$WORK/flood.node0" ||
    fail "no stranger was logged: $(grep 'collbench store' "$WORK/flood.node0" | head -5)"
logged=$(grep -c 'collbench store: dropped connection from' "$WORK/flood.node0")
[ "$logged" -le 40 ] || fail "strangers logged a line each: $logged lines"

echo "node 1 of a 2x2 tcp job (start-up, 1K x 2 iterations, exit): $(cat "$WORK/quiet.ms") ms" \
     "without strangers, $(cat "$WORK/flood.ms") ms with 1,000 idle and 1,000 garbage-sending" \
     "connections at its store ($(grep '^flooder:' "$WORK/flood.out" | sed 's/flooder: //'))"
finish
