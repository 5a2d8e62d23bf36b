# have_train BIN: true when BIN's training benchmark runs (it needs OpenBLAS at
# build time). Sourced by the scripts that skip their training cases without it.
have_train() {
    "$1" train --mode single -P 1 --hidden 8 --input 8 --batch-sizes 1 --steps 1 --warmup 0 \
        --compute-steps 1 >/dev/null 2>&1
}
