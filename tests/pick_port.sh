# Sourced by the test scripts that start ranks by hand.
# pick_port: a port in 20000-31999 (below Linux's ephemeral range, so no
# outgoing connection holds it) that nothing listens on now, from
# /proc/net/tcp{,6} (state 0A = LISTEN). Another process may still take it
# before rank 0 binds it: callers retry on "Address already in use".
pick_port() {
    while :; do
        r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
        port=$((20000 + r % 12000))
        hex=$(printf '%04X' "$port")
        if ! awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}
