# The cost model in index.html: a fit-quality line per series and the "what
# if" table, labelled as predictions, where the rows allow a fit (comm_cpu:
# 5 sizes x 2 process counts per backend); where they do not (one size
# only), the line says why and there is no table.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/fit
run_report 0 "$FIX/comm_cpu.csv" -o "$OUT"
H=$OUT/index.html
expect_in "$H" "<h2>Cost model (predictions)</h2>"
for b in shm tcp; do
    grep -qE "<li class=\"fit\">allreduce auto, $b, [^<]*: model fitted to [0-9]+ rows, \|model - measured\| / measured median [0-9.]+%, worst [0-9.]+%; alpha_intra = " "$H" ||
        fail "no fit-quality line for $b"
done
expect_in "$H" "What if (a prediction, not a measurement)"
for g in 25 100 400; do expect_in "$H" "<th>$g Gbit/s (prediction)</th>"; done
for r in "8 (1 hosts x 8)" "64 (8 hosts x 8)" "512 (64 hosts x 8)"; do expect_in "$H" "$r"; done
# tcp predicted at every cluster and link; shm only on one host, and says so
n=$(grep '<tr><td>allreduce auto, tcp' "$H" | grep -o '<td class="n">[0-9.]* [mu]*s (busbw [0-9.e+-]* GB/s)</td>' | wc -l)
[ "$n" -eq 9 ] || fail "what-if table: $n predicted cells for tcp, want 9"
n=$(grep '<tr><td>allreduce auto, shm' "$H" | grep -o '<td class="n">[0-9.]* [mu]*s (busbw' | wc -l)
[ "$n" -eq 3 ] || fail "what-if table: $n predicted cells for shm, want 3 (8 ranks on one host)"
n=$(grep -o '<td>cannot predict: backend shm runs inside one host</td>' "$H" | wc -l)
[ "$n" -eq 6 ] || fail "what-if table: $n shm cells say why they cannot be predicted, want 6"

OUT=$WORK/one
run_report 0 "$FIX/model_one_size.csv" -o "$OUT"
H=$OUT/index.html
expect_in "$H" "<li class=\"fit\">allreduce ring, tcp, unknown buffers, float32, on cpubox: cannot fit a model: only one message size (65536 B) measured"
grep -q 'class="whatif"' "$H" && fail "one size: a what-if table without a fit"
grep -q 'model fitted to' "$H" && fail "one size: a fit-quality line for a series that cannot be fitted"
finish
