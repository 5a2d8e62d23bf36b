#!/bin/sh
# A bad tuning variable is a usage error: exit 2, naming the variable, at once,
# every time. The launcher checks them before any rank starts (a rank's own
# refusal raced its peers' exit 3 and waited out their grace); a rank started
# by someone else refuses them too, also where the backend would not use them
# (COLL_AUTO_PIPE_BYTES on one host).
. "$(dirname "$0")/lib.sh"

LOOPS=${LOOPS:-200}
RUN="allreduce --sizes 1K -n 2 -w 0 -c 1 -T 20"

# expect_usage TEXT VARS... -- ARGS...: exit 2 within 2 s, stderr naming TEXT.
expect_usage() {
    text=$1
    shift
    vars=
    while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
    shift
    start=$(date +%s)
    env -u RANK -u WORLD_SIZE -u COLL_LAUNCHED $vars "$BIN" "$@" >"$WORK/out" 2>"$WORK/err"
    got=$? took=$(($(date +%s) - start))
    if [ "$got" -ne 2 ]; then
        fail "$vars collbench $*: exit $got, want 2; stderr: $(cat "$WORK/err")"
    elif ! grep -q "$text" "$WORK/err"; then
        fail "$vars collbench $*: stderr does not name $text: $(cat "$WORK/err")"
    elif [ "$took" -gt 2 ]; then
        fail "$vars collbench $*: refused after $took s, not at once"
    fi
}

i=0
while [ $i -lt "$LOOPS" ] && [ "$FAILED" -eq 0 ]; do
    expect_usage COLL_AUTO_PIPE_BYTES COLL_AUTO_RANKS_PER_HOST=1 COLL_AUTO_PIPE_BYTES=abc \
        -- $RUN -P 2 --backend auto
    i=$((i + 1))
done
expect_usage COLL_SHM_SPIN_US COLL_SHM_SPIN_US=-5 -- $RUN -P 2 --backend shm
expect_usage COLL_GLOO_CHECK COLL_GLOO_CHECK=yes -- $RUN -P 2 --backend tcp

# Ranks started by hand (world of 1: no launcher of ours checked anything).
expect_usage COLL_AUTO_PIPE_BYTES RANK=0 WORLD_SIZE=1 COLL_AUTO_PIPE_BYTES=abc -- $RUN --backend auto
"$BIN" $RUN -P 1 --backend gloo >/dev/null 2>&1 && \
    expect_usage COLL_GLOO_CHECK RANK=0 WORLD_SIZE=1 COLL_GLOO_CHECK=yes -- $RUN --backend gloo

# info --tuning: the values in force and their source; a bad one named, exit 2.
expect_usage COLL_SHM_CMA_MIN COLL_SHM_CMA_MIN=1T -- info --tuning
expect_usage markdown -- info --markdown
COLL_SHM_PRIV_MAX=2M "$BIN" info --tuning >"$WORK/tuning" 2>&1 || fail "info --tuning: exit $?"
grep -Eq '^COLL_SHM_PRIV_MAX +2M +env ' "$WORK/tuning" ||
    fail "info --tuning does not show COLL_SHM_PRIV_MAX=2M from env: $(cat "$WORK/tuning")"
grep -Eq '^COLL_SHM_CHUNK_BYTES +256K +default ' "$WORK/tuning" ||
    fail "info --tuning does not show COLL_SHM_CHUNK_BYTES's default: $(cat "$WORK/tuning")"
finish
