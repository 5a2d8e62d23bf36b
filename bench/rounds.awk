# Functions the bench/ tables share over a space-separated list of numbers
# (one per round or iteration): the median, the smallest and the largest.
# Used as `awk -f bench/rounds.awk -f PROGRAM` (ab.sh, ddp_ab.sh, floor.sh, replay_cycles.sh,
# replay_across.sh, tcp_vs_mpi.sh).
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,   n, a, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function hi(list,   n, a, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
