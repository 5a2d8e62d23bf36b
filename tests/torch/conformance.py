"""torch's own distributed tests as coll's conformance test: runs the
DistributedTest suite (tests/torch/conformance_suite.py) against gloo and
against coll with the python running this, and fails when a test that passes
on gloo does not pass on coll, except the tests in GLOO_ONLY (gloo-only by
design; docs/TORCH.md says why for each).

    conformance.py [--quick] [-n NAME]... [-k PATTERN]... [-x PATTERN]... [--jobs N]
                   [--shards A-B] [--keep DIR]

--quick: the tests in QUICK (ctest torch/conformance_quick); -n/-k/-x select
tests by name (conformance_suite.py); none: the whole suite (10 minutes or
more, scripts/torch_conformance.sh --full). --jobs N: N suite processes at
a time (default 1: gloo's pass, then coll's). --shards A-B: only shards A to
B (1-based) of the 4 x N that --jobs N splits the suite into, to run a whole
suite in parts (e.g. 1-4 then 5-8 with --jobs 2).
--keep: the JSON results and logs there. collbench_torch must be importable
(PYTHONPATH). Prints both backends' counts and every test that passes on
gloo and not on coll.
Exit: 0 parity, 1 a test gloo passes that coll does not (or a pass that
failed to run, or no test passing on gloo), 77 torch or collbench_torch not
importable.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# Tests that pass on gloo and cannot pass on another backend, by design of
# the suite (docs/TORCH.md, "torch's distributed tests"): test name -> why.
_MONITORED = ("torch's dist.monitored_barrier refuses every backend but gloo "
              "('monitored_barrier is only implemented for GLOO backend')")
GLOO_ONLY = {
    "test_monitored_barrier_gloo": _MONITORED,
    "test_monitored_barrier_gloo_subgroup": _MONITORED,
    "test_monitored_barrier_gloo_rank_0_timeout": _MONITORED,
    "test_monitored_barrier_failure_order": _MONITORED,
    "test_monitored_barrier_wait_all_ranks": _MONITORED,
    # torch 2's DDP logger records ProcessGroup::getBackendName(), "custom" for
    # every plugin (ProcessGroup::backendTypeToString), never the plugin's name
    "test_ddp_logging_data_cpu": "torch 2's DDP logging names every plugin backend 'custom' "
                                 "(ProcessGroup::getBackendName), not 'coll'",
}

# --quick: one test per kind of call (reduce, root, gather, point to point),
# and one the suite restricts to gloo (sparse all_reduce: it runs on coll only
# through conformance_suite.py's AS_GLOO, so this set fails if that breaks).
# Each is a 2-rank job per backend that imports torch, and CI runs them on two
# torches.
QUICK = [
    "test_all_reduce_sum", "test_broadcast", "test_all_gather",
    "test_send_recv", "test_scatter", "test_sparse_all_reduce_sum",
    "test_send_recv_any_source",
]


def run_suites(selection, jobs, workdir, first=1, last=None):
    """{test: outcome} of gloo and of coll, and coll's skip reasons; with jobs > 1
    each split into 4 x jobs shards, run jobs at a time, a shard on gloo next
    to the same shard on coll (same load, and results that compare early).
    Each shard's output is printed when it ends."""
    shards = 1 if jobs == 1 else 4 * jobs
    last = shards if last is None else last
    if not 1 <= first <= last <= shards:
        sys.exit(f"conformance.py: --shards {first}-{last}: there are {shards} shards "
                 f"(4 x --jobs {jobs})")
    tasks = [(b, i) for i in range(first - 1, last) for b in ("gloo", "coll")]
    running, results, reasons = [], {"gloo": {}, "coll": {}}, {}
    env = dict(os.environ, WORLD_SIZE="2")
    # torch's own per-test limit (300 s; a hung test fails then), or yours
    try:
        while tasks or running:
            run_next(tasks, running, results, reasons, jobs, shards, selection, env, workdir)
    finally:  # a pass that failed to run ends the others
        for *_, proc in running:
            proc.kill()
            proc.wait()
    return results["gloo"], results["coll"], reasons


def run_next(tasks, running, results, reasons, jobs, shards, selection, env, workdir):
    """Starts shards up to `jobs` at a time, then waits for the oldest."""
    while tasks and len(running) < jobs:
        backend, i = tasks.pop(0)
        out = os.path.join(workdir, f"{backend}.{i}.json")
        log = open(os.path.join(workdir, f"{backend}.{i}.log"), "w+")
        cmd = [sys.executable, os.path.join(HERE, "conformance_suite.py"), out, *selection,
               "--shard", f"{i}/{shards}"]
        running.append((backend, i, out, log, subprocess.Popen(
            cmd, env=dict(env, BACKEND=backend), stdout=log, stderr=subprocess.STDOUT)))
    backend, i, out, log, proc = running.pop(0)
    rc = proc.wait()
    log.seek(0)
    print(f"=== {backend} (shard {i + 1} of {shards}): torch's DistributedTest suite, world size 2",
          flush=True)
    sys.stdout.write(log.read())
    log.close()
    if rc == SKIP:
        sys.exit(SKIP)
    if not os.path.exists(out):
        print(f"FAIL: the {backend} pass ended (status {rc}) without results", flush=True)
        sys.exit(1)
    with open(out) as f:
        res = json.load(f)
    results[backend].update(res["outcomes"])
    reasons.update(res.get("skip_reasons", {}) if backend == "coll" else {})


def counts(outcomes):
    kinds = ("pass", "fail", "error", "skip")
    return ", ".join(f"{sum(1 for o in outcomes.values() if o == k)} {k}" for k in kinds)


def main(argv):
    selection, keep, jobs, shards = [], None, 1, (1, None)
    it = iter(argv)
    for a in it:
        if a in ("-n", "-k", "-x"):
            pat = next(it, None)
            if pat is None:
                sys.exit(f"conformance.py: {a} needs an argument")
            selection += [a, pat]
        elif a == "--quick":
            selection += [arg for name in QUICK for arg in ("-n", name)]
        elif a == "--jobs":
            jobs = next(it, "")
            if not jobs.isdigit() or int(jobs) < 1:
                sys.exit("conformance.py: --jobs needs a number from 1")
            jobs = int(jobs)
        elif a == "--shards":
            spec = next(it, "")
            parts = spec.split("-")
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                sys.exit(f"conformance.py: --shards needs A-B, e.g. 1-4 (got '{spec}')")
            shards = (int(parts[0]), int(parts[1]))
        elif a == "--keep":
            keep = next(it, None)
            if keep is None:
                sys.exit("conformance.py: --keep needs a directory")
        else:
            sys.exit(f"conformance.py: unknown argument '{a}' (usage: conformance.py "
                     "[--quick] [-n NAME]... [-k PATTERN]... [-x PATTERN]... [--jobs N] "
                     "[--shards A-B] [--keep DIR])")
    probe = subprocess.run([sys.executable, "-c", "import torch, collbench_torch"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: {sys.executable} cannot import torch and collbench_torch "
              f"(PYTHONPATH=<build>/bindings/torch): {(probe.stderr.strip().splitlines() or [''])[-1]}")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="collconf-") as tmp:
        workdir = keep or tmp
        os.makedirs(workdir, exist_ok=True)
        gloo, coll, why = run_suites(selection, jobs, workdir, *shards)
    print(f"\ngloo: {len(gloo)} tests: {counts(gloo)}")
    print(f"coll: {len(coll)} tests: {counts(coll)}")
    missing = sorted(t for t, o in gloo.items() if o == "pass" and coll.get(t) != "pass")
    excused = [t for t in missing if t in GLOO_ONLY]
    broken = [t for t in missing if t not in GLOO_ONLY]
    for t in excused:
        print(f"gloo only (by design): {t}: {GLOO_ONLY[t]}")
    extra = sorted(t for t, o in coll.items() if o == "pass" and gloo.get(t) != "pass")
    for t in extra:
        print(f"passes on coll, not on gloo ({gloo.get(t)}): {t}")
    for t in broken:
        reason = f": {why[t]}" if t in why else ""
        print(f"NOT ON COLL ({coll.get(t, 'not run')}{reason}): {t}")
    print(f"{len(broken)} test(s) pass on gloo and not on coll, {len(excused)} of gloo's passes "
          f"excused (GLOO_ONLY)")
    if not any(o == "pass" for o in gloo.values()):
        print("FAIL: no test passed on gloo: the suite does not run here, nothing was compared")
        return 1
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
