#!/bin/sh
# The launcher's verdict names the rank that died, every time: rank 2 of 4 is
# killed (SIGKILL) mid-benchmark, KILLS times per backend, and the launcher's
# last line must name rank 2, never a survivor that exited 3 first. Then rank 1
# is stopped (SIGSTOP): the survivors time out, and the verdict names rank 1.
. "$(dirname "$0")/lib.sh"

KILLS=${KILLS:-8}
RUN="allreduce -P 4 --sizes 1M -n 1000000 -w 0 -c 0 -T 3 --time-budget 20"

# pid_of_rank LAUNCHER_PID RANK: the rank's pid once it has started, else "".
pid_of_rank() {
    for try in $(seq 500); do
        for c in $(pgrep -P "$1"); do
            if tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx "RANK=$2"; then
                echo "$c"
                return
            fi
        done
        sleep 0.02
    done
}

# hit BACKEND RANK SIGNAL WANT: signal the rank once the benchmark runs, then
# check the launcher's exit code (3) and that its last line matches WANT.
hit() {
    "$BIN" $RUN --backend "$1" >"$WORK/out" 2>"$WORK/err" &
    launcher=$!
    pid=$(pid_of_rank $launcher "$2")
    # the benchmark runs once rank 0 printed the table's header
    for try in $(seq 200); do
        grep -q "^#" "$WORK/out" && break
        sleep 0.02
    done
    sleep 0.2
    if [ -n "$pid" ]; then kill -"$3" "$pid"; else kill $launcher; fi
    wait $launcher
    got=$?
    last=$(tail -n 1 "$WORK/err")
    if [ -z "$pid" ]; then
        fail "$1: rank $2 never started: $(cat "$WORK/err")"
    elif [ "$got" -ne 3 ] || ! printf '%s\n' "$last" | grep -q -e "$4"; then
        fail "$1: SIG$3 of rank $2: exit $got, last line '$last', want '$4'"
    fi
}

for backend in tcp shm; do
    kills=0 # sh has no local variables: hit's loops use other names
    while [ $kills -lt "$KILLS" ]; do
        hit $backend 2 KILL "failed: rank 2 killed by signal 9"
        kills=$((kills + 1))
    done
done
hit shm 1 STOP "failed: rank 1 hung"
finish
