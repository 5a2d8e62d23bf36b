#!/usr/bin/env bash
# Fault matrix (issue 9, item 1): for each backend in this build, each fault
# point, two ranks and each action (kill, hang), run
#   collbench allreduce -P N --csv F ...  with COLL_FAULT set
# (for the progress point, collbench train --mode ddp: its buckets are the
# nonblocking collectives that the progress thread runs)
# under collbench's own launcher (every case), and with the ranks started by
# hand (torchrun style), which shows each rank's exit code and exit time, for a
# representative half: every point with each action once and each faulty rank
# once (a Latin square over point x action).
# Backends: tcp, shm, auto (3 ranks, one host) and auto-2x2 (auto over 2
# emulated hosts x 2 ranks: hierarchical all-reduce, shm within a host, tcp
# between; rank 3 is rank 1 of both of its sub-groups, so its failures must be
# translated into world numbering; its 1M all-reduce is pipelined), gloo (3 ranks, Gloo's own collectives: a
# hung rank inside a collective makes Gloo time out without saying whom it
# waited for, so there only the exit code and time are asserted).
# Asserts:
#   * every surviving rank exits with code 3, within timeout + 2 s of the fault
#     (its stderr's last write is the fault's time), naming the failed rank
#     (by hand: each survivor's message; under the launcher: what the
#     survivors printed before it stopped them);
#   * the launcher returns non-zero;
#   * no process of the job is left (a unique marker in the environment);
#   * nothing new in /dev/shm;
#   * rows measured before the fault (the 1K size; the fault fires in the 1M
#     size) are in the CSV.
# Cases run in parallel (COLL_FAULT_JOBS, default 12): each mostly waits on a
# timeout or on the launcher's 3 s grace. A case that fails runs once more,
# alone; it fails the matrix only if it fails there too.
# Usage: fault_matrix.sh path/to/collbench [backend...]
#        (default: tcp shm auto auto-2x2 gloo, those available)
set -u
BIN=${1:?usage: $0 path/to/collbench [backend...]}
shift
T=2            # -T: below the launcher's 3 s grace, so survivors report themselves
SLACK=2        # "within timeout + 2 s"
JOBS=${COLL_FAULT_JOBS:-12}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-fault.XXXXXX")
MARK="collbench-fault-$$-$RANDOM"
# COLL_FAULT_KEEP=1 keeps every case's stderr, exit codes and CSV there.
if [ -n "${COLL_FAULT_KEEP:-}" ]; then echo "# cases in $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi

ARGS="allreduce --sizes 1K,1M -w 1 -n 3 --inplace 0 --time-budget 0 -T $T -q"
# The progress thread runs nonblocking collectives only: the training
# benchmark's ddp mode starts one per gradient bucket (needs OpenBLAS).
TRAIN_ARGS="train --mode ddp --hidden 256,256 --input 256 --batch-sizes 8 --bucket-mb 1"
TRAIN_ARGS="$TRAIN_ARGS --first-bucket-mb 1 --steps 6 --warmup 1 --compute-steps 1 -T $T"
POINTS="rendezvous connect store collective progress"
. "$(dirname "$0")/../have_train.sh"
if ! have_train "$BIN"; then
    POINTS="rendezvous connect store collective"
    echo "SKIP progress point: collbench train is unavailable in this build (no OpenBLAS)"
fi
args_for() { if [ "$1" = progress ]; then echo "$TRAIN_ARGS"; else echo "$ARGS"; fi; }
ACTIONS="kill hang"

# variant NAME: sets BACKEND, NP, FAULT_RANKS and VENV (extra environment).
variant() {
    VENV=""
    case $1 in
    # 64 KiB chunks: the 1M all-reduce the fault fires in is pipelined (its
    # inter-host steps on the pipe's thread, src/backend/auto/auto_pipe.h)
    auto-2x2) BACKEND=auto NP=4 FAULT_RANKS="0 3"
              VENV="COLL_AUTO_RANKS_PER_HOST=2 COLL_AUTO_PIPE_BYTES=65536" ;;
    *) BACKEND=$1 NP=3 FAULT_RANKS="0 2" ;;
    esac
}

# leftovers MARK [kill]: processes whose environment holds COLL_FAULT_MARK=MARK
# (one marker per case, as cases run in parallel); "kill" also SIGKILLs them.
leftovers() {
    for f in $(grep -l -z -x -s -e "COLL_FAULT_MARK=$1" /proc/[0-9]*/environ); do
        pid=${f#/proc/}
        pid=${pid%/environ}
        [ "$pid" = "$$" ] && continue
        echo "$pid"
        [ "${2:-}" = kill ] && kill -KILL "$pid" 2>/dev/null
    done
}

backend_available() {
    "$BIN" info 2>/dev/null | grep -Eq "^ *backend $1 +available"
}

. "$(dirname "$0")/../pick_port.sh"

fault_spec() { # POINT RANK ACTION
    if [ "$1" = collective ]; then
        echo "$2:collective:$3:64K" # after the 1K size (a few KiB), early in the 1M size
    elif [ "$1" = progress ]; then
        echo "$2:progress:$3:4" # a few buckets in: the ranks are mid-step
    else
        echo "$2:$1:$3"
    fi
}

# names_rank RANK: stdin names "rank RANK", alone or in a list ("ranks 1,3
# never connected"), not "rank 12" for rank 1.
names_rank() {
    grep -Eq "ranks? ([0-9]+(, ?| and ))*$1([^0-9]|\$)"
}

# plain_prefix: stdin with "collbench train: " (the progress cases) read as
# "collbench: ", the prefix the checks below look for.
plain_prefix() { sed 's/collbench train: /collbench: /g'; }

# ring_hang POINT ACTION: a rank hung inside a collective (a blocking one, or
# a nonblocking one on its progress thread): only the ranks next to it in the
# ring can know whom to blame, the others name whom they waited for.
ring_hang() { [ "$2" = hang ] && { [ "$1" = collective ] || [ "$1" = progress ]; }; }
# unnamed_hang POINT ACTION: a ring hang on gloo, whose timeouts name no rank
# (docs/RELIABILITY.md): nobody can be asked to name the hung rank.
unnamed_hang() { [ "$BACKEND" = gloo ] && ring_hang "$1" "$2"; }

# check_csv NAME FILE: the 1K rows measured before the fault are there.
check_csv() {
    if ! grep -q ",allreduce,.*,1024,256," "$2" 2>/dev/null; then
        echo "FAIL $1: no 1K row in the CSV ($(wc -l <"$2" 2>/dev/null || echo 0) lines)"
        return 1
    fi
}

# Launcher mode: collbench -P N starts the ranks.
case_launcher() { # NAME VARIANT POINT RANK ACTION
    name=$1 d="$WORK/$1" F=$4
    variant "$2"
    mkdir -p "$d"
    env $VENV COLL_FAULT="$(fault_spec "$3" "$4" "$5")" COLL_FAULT_MARK="$MARK-$name" \
        timeout -s KILL 60 "$BIN" $(args_for "$3") -P "$NP" --backend "$BACKEND" --csv "$d/out.csv" \
        >"$d/out" 2>"$d/err"
    rc=$?
    ok=1
    if [ "$rc" -eq 0 ] && ! grep -q COLL_FAULT "$d/err"; then
        echo "SKIP $name: the $2 backend never reaches the $3 point"
        return
    fi
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL $name: launcher exit $rc; stderr: $(tr '\n' '|' <"$d/err")"
        ok=0
    fi
    # What the survivors said before the launcher stopped them (its grace is
    # longer than -T, so they normally all speak): each names the failed rank,
    # but in a ring hang only the hung rank's neighbour has to.
    # (Ranks share the launcher's stderr: split lines that two ranks wrote into.)
    said=$(plain_prefix <"$d/err" | sed 's/collbench: /\ncollbench: /g' | grep -E "^collbench: rank [0-9]+: " |
           grep -Ev "^collbench: rank $F: ")
    if [ -z "$said" ]; then
        echo "FAIL $name: no surviving rank said why it stopped: $(tr '\n' '|' <"$d/err")"
        ok=0
    elif ring_hang "$3" "$5"; then
        if ! unnamed_hang "$3" "$5" && ! printf '%s\n' "$said" | sed 's/^collbench: rank [0-9]*: //' | names_rank "$F"; then
            echo "FAIL $name: no surviving rank names the hung rank $F: $(printf '%s' "$said" | tr '\n' '|')"
            ok=0
        fi
    else
        while IFS= read -r line; do
            if ! printf '%s\n' "${line#collbench: rank * }" | names_rank "$F"; then
                echo "FAIL $name: a message does not name rank $F: $line"
                ok=0
            fi
        done <<<"$said"
    fi
    left=$(leftovers "$MARK-$name" kill | tr '\n' ' ')
    if [ -n "$left" ]; then
        echo "FAIL $name: processes left running after the launcher returned: $left"
        ok=0
    fi
    if [ "$3" = collective ] && ! check_csv "$name" "$d/out.csv"; then ok=0; fi
    [ "$ok" -eq 1 ] && echo "PASS $name"
}

# Manual mode: each rank started here, its exit code and end time recorded.
case_manual() { # NAME VARIANT POINT RANK ACTION
    name=$1 d="$WORK/$1" F=$4
    variant "$2"
    mkdir -p "$d"
    token=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
    for _ in 1 2 3; do
        port=$(pick_port)
        pids=""
        rm -f "$d"/rc.* "$d"/end.* "$d"/pid.*
        for r in $(seq 0 $((NP - 1))); do
            (
                # Exactly what collbench's launcher gives its ranks, less the
                # inherited store socket: rank 0 binds MASTER_PORT itself.
                env $VENV COLL_LAUNCHED=1 RANK=$r WORLD_SIZE=$NP LOCAL_RANK=$r LOCAL_WORLD_SIZE=$NP \
                    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port COLL_JOB_TOKEN=$token \
                    COLL_FAULT="$(fault_spec "$3" "$4" "$5")" COLL_FAULT_MARK="$MARK-$name" \
                    "$BIN" $(args_for "$3") --backend "$BACKEND" --csv "$d/out.csv" >"$d/out.$r" 2>"$d/err.$r" &
                echo $! >"$d/pid.$r"
                wait $!
                echo $? >"$d/rc.$r"
                date +%s.%N >"$d/end.$r"
            ) &
            pids="$pids $!"
        done
        # Survivors must end by themselves; a watchdog stops a hung test.
        (
            sleep $((T + 20)) &
            trap 'kill $! 2>/dev/null; exit 0' TERM
            wait $!
            cat "$d"/pid.* | xargs kill -KILL 2>/dev/null
        ) &
        dog=$!
        r=0
        for p in $pids; do
            [ "$r" -ne "$F" ] && wait "$p"
            r=$((r + 1))
        done
        # The faulty rank is stopped only once it announced its hang: where the
        # backend never reaches the point, it is still finishing a clean run
        # (a kill then would read as a fault); the watchdog bounds the rest.
        if grep -q "COLL_FAULT: .* hang at" "$d/err.$F" 2>/dev/null; then
            kill -KILL "$(cat "$d/pid.$F")" 2>/dev/null
        fi
        wait $pids
        kill "$dog" 2>/dev/null
        wait "$dog" 2>/dev/null
        grep -q "in use" "$d/err.0" || break # the port was taken: try another
    done
    ok=1
    t0=$(date -r "$d/err.$F" +%s.%N) # the fault's announcement is its last write
    if ! grep -q "COLL_FAULT" "$d/err.$F" && [ -z "$(cat "$d"/rc.* | tr -d '0\n')" ]; then
        echo "SKIP $name: the $2 backend never reaches the $3 point"
        return
    fi
    if ! grep -q "COLL_FAULT: .* $5 at $3" "$d/err.$F"; then
        echo "FAIL $name: rank $F did not report the injected fault: $(tr '\n' '|' <"$d/err.$F")"
        ok=0
    fi
    for s in $(seq 0 $((NP - 1))); do
        [ "$s" -eq "$F" ] && continue
        rc=$(cat "$d/rc.$s")
        msg=$(plain_prefix <"$d/err.$s" | sed "s/^collbench: rank $s: //" | tr '\n' '|')
        if [ "$rc" != 3 ]; then
            echo "FAIL $name: surviving rank $s exited $rc, want 3; stderr: $msg"
            ok=0
        fi
        # A rank hung inside a ring collective: its neighbour's neighbour times
        # out first waiting for the neighbour, which cannot know better; the
        # neighbour must name the hung rank (checked below), the others may
        # name whom they waited for.
        if ! ring_hang "$3" "$5" && ! printf '%s' "$msg" | names_rank "$F"; then
            echo "FAIL $name: rank $s's message does not name rank $F: $msg"
            ok=0
        fi
        late=$(awk -v e="$(cat "$d/end.$s")" -v t="$t0" -v lim=$((T + SLACK)) \
            'BEGIN { if (e - t > lim) printf "%.2f", e - t }')
        if [ -n "$late" ]; then
            echo "FAIL $name: rank $s exited ${late} s after the fault (limit $((T + SLACK)) s); stderr: $msg"
            ok=0
        fi
    done
    if ring_hang "$3" "$5" && ! unnamed_hang "$3" "$5" &&
        ! cat "$d"/err.* | grep -v "COLL_FAULT" | plain_prefix | sed 's/^collbench: rank [0-9]*: //' | names_rank "$F"; then
        echo "FAIL $name: no surviving rank names the hung rank $F"
        ok=0
    fi
    if [ "$3" = collective ] && [ "$F" -ne 0 ] && ! check_csv "$name" "$d/out.csv"; then ok=0; fi
    left=$(leftovers "$MARK-$name" kill | tr '\n' ' ')
    if [ -n "$left" ]; then
        echo "FAIL $name: processes left running: $left"
        ok=0
    fi
    [ "$ok" -eq 1 ] && echo "PASS $name"
}

if [ $# -gt 0 ]; then
    VARIANTS="$*"
else
    VARIANTS=""
    for b in tcp shm auto; do
        if backend_available "$b"; then VARIANTS="$VARIANTS $b"; else echo "SKIP backend $b (not available)"; fi
    done
    case " $VARIANTS " in *" auto "*) VARIANTS="$VARIANTS auto-2x2" ;; esac
    if backend_available gloo; then VARIANTS="$VARIANTS gloo"; else echo "SKIP backend gloo (not available)"; fi
fi

# The case list: "mode variant point rank action", the slow ones (a hang
# under the launcher costs -T plus its 3 s grace) first so the tail is short.
cases() {
    for v in $VARIANTS; do
        variant "$v"
        set -- $FAULT_RANKS
        i=0
        for p in $POINTS; do
            a=0
            for act in $ACTIONS; do
                for r in $FAULT_RANKS; do echo "launcher $v $p $r $act"; done
                # by hand: rank $1 or $2, alternating over point and action
                if [ $(((i + a) % 2)) -eq 0 ]; then echo "manual $v $p $1 $act"; else echo "manual $v $p $2 $act"; fi
                a=$((a + 1))
            done
            i=$((i + 1))
        done
    done | sort -k1,1 -k5,5r -s # launcher before manual, hang before kill
}

START=$(date +%s)
ls /dev/shm >"$WORK/shm.before" 2>/dev/null
running=0
while read -r mode v p r a; do
    n="$v-$p-rank$r-$a-$mode"
    echo "$mode $v $p $r $a" >"$WORK/args.$n"
    "case_$mode" "$n" "$v" "$p" "$r" "$a" >"$WORK/result.$n" 2>"$WORK/log.$n" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done < <(cases)
wait
# A case that failed runs once more, alone. With JOBS cases at once on 2 cores,
# which death a survivor sees first can race (a rank that failed because
# another died may close its connections before the dead one's show closed:
# docs/RELIABILITY.md); a real fault fails alone too. Both verdicts are shown.
retried=0
for f in "$WORK"/result.*; do
    grep -q '^FAIL' "$f" || continue
    n=${f#"$WORK"/result.}
    read -r mode v p r a <"$WORK/args.$n"
    first=$(grep '^FAIL' "$f" | tr '\n' ' ')
    rm -rf "${WORK:?}/$n"
    "case_$mode" "$n" "$v" "$p" "$r" "$a" >"$f" 2>>"$WORK/log.$n"
    if grep -q '^PASS' "$f"; then
        retried=$((retried + 1))
        echo "RETRIED $n: failed among $JOBS parallel cases ($first), passed alone" >>"$f"
    else
        echo "(also failed among $JOBS parallel cases: $first)" >>"$f"
    fi
done
cat "$WORK"/result.* 2>/dev/null
ls /dev/shm >"$WORK/shm.after" 2>/dev/null
sleep 1 # what another user of the machine creates and removes soon is not ours
ls /dev/shm >"$WORK/shm.later" 2>/dev/null
# Open MPI's segments and Python multiprocessing's (the torch tests) come from other jobs, never from collbench ranks.
# A collbench-mpi.<pid>.* directory is a running launcher's (another test's
# mpirun beside this one); only a dead launcher's would be left behind.
live_launcher() {
    local p
    case $1 in collbench-mpi.*) p=${1#collbench-mpi.} && [ -d "/proc/${p%%.*}" ] ;; *) return 1 ;; esac
}
new_shm=$(comm -13 "$WORK/shm.before" "$WORK/shm.after" | comm -12 - "$WORK/shm.later" |
          grep -v -e '^vader_segment' -e 'openmpi' -e '^sem\.mp-' -e '^torch_' |
          while read -r e; do live_launcher "$e" || echo "$e"; done | tr '\n' ' ')

passed=$(cat "$WORK"/result.* 2>/dev/null | grep -c '^PASS')
failed=$(cat "$WORK"/result.* 2>/dev/null | grep -c '^FAIL')
skipped=$(cat "$WORK"/result.* 2>/dev/null | grep -c '^SKIP')
status=0
[ "$failed" -ne 0 ] && status=1
if [ -n "$new_shm" ]; then
    echo "FAIL: left in /dev/shm: $new_shm"
    status=1
fi
if [ -z "$(echo $VARIANTS)" ]; then
    echo "FAIL: no backend available"
    status=1
fi
echo "fault matrix: $passed cases passed ($retried of them on a second run alone), $failed failures, $skipped skipped" \
     "(backends:$VARIANTS; $(($(date +%s) - START)) s)"
exit $status
