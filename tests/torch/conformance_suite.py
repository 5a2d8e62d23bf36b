"""One backend's pass of torch's own distributed tests: the DistributedTest
suite of torch.testing._internal.distributed.distributed_test, as torch's
test_distributed_spawn.py runs it (world size 2, every test in 2 freshly
spawned ranks meeting through a file:// store). Started by
tests/torch/conformance.py, once per backend:

    BACKEND=coll python3 conformance_suite.py OUT.json [-n NAME]... [-k PATTERN]... [-x PATTERN]... [--shard I/N]

Writes {test name: "pass" | "fail" | "error" | "skip"} and the skipped tests'
reasons to OUT.json (atomically).
-n: the test of that name; -k: the tests whose name contains PATTERN (or
matches it, with * ?); -x: not those. No -n or -k: every test. --shard I/N:
every Nth of them from the Ith. The spawned ranks import this file again (as
__mp_main__): everything above main() is what they need.
"""
import fnmatch
import importlib.util
import json
import logging
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

if __name__ == "__main__":
    # torch's common_utils parses sys.argv at import (and the spawned ranks get
    # the parent's sys.argv): ours must not reach it.
    ARGV, sys.argv = sys.argv[1:], sys.argv[:1]

# read by torch's suite at import; TEMP_DIR: each test's setUp makes its own
os.environ.setdefault("WORLD_SIZE", "2")
# Debian 12 does not package expecttest, which torch's common_utils imports.
if importlib.util.find_spec("expecttest") is None:
    sys.path.insert(0, os.path.join(HERE, "stubs"))

try:
    import torch
    import torch.distributed as dist  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch is not importable by {sys.executable}: {e}")
    sys.exit(SKIP)
if os.environ.get("BACKEND") == "coll":
    import collbench_torch  # noqa: F401  registers "coll" (here and in every spawned rank)
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

# torch's helpers log every spawned process at INFO: keep the output to the results
logging.getLogger("torch.testing._internal.common_distributed").setLevel(logging.WARNING)
logging.getLogger("torch.distributed.distributed_c10d").setLevel(logging.WARNING)

# The suite's own switches, which its decorators read when distributed_test
# is imported: coll is a backend registered from outside torch ("plugin"),
# and it is in every feature set that holds gloo (ddp, subgroup, and "gpu"
# and "cuda", the suite's names for tests that gloo runs on CPU tensors; those
# that need a GPU skip on both for want of one). gloo's pass is left as torch
# has it (where coll is not registered, naming it would fail).
if os.environ.get("BACKEND") == "coll":
    DistTestCases.backend_feature["plugin"].add("coll")
    for _backends in DistTestCases.backend_feature.values():
        if "gloo" in _backends:
            _backends.add("coll")

SUITE = "torch.testing._internal.distributed.distributed_test"
# Where the suite names gloo alone, coll stands beside it: a test restricted to
# gloo (BACKEND != "gloo" -> skip, require_backend({"gloo"}), ...) runs on coll
# too, and a branch for gloo is coll's branch, so coll is held to every test
# gloo passes, not only to those the suite offers any backend. Applied to the
# suite's text before it is imported (decorators read BACKEND at import).
AS_GLOO = [
    ('BACKEND != "gloo"', 'BACKEND not in ("gloo", "coll")'),
    ('BACKEND == "gloo"', 'BACKEND in ("gloo", "coll")'),
    ('({"gloo"})', '({"gloo", "coll"})'),  # require_backend*({"gloo"})
]


def import_suite_as_gloo():
    """The suite module with AS_GLOO applied; how many places changed."""
    spec = importlib.util.find_spec(SUITE)
    with open(spec.origin) as f:
        text = f.read()
    changed = 0
    for old, new in AS_GLOO:
        changed += text.count(old)
        text = text.replace(old, new)
    module = importlib.util.module_from_spec(spec)
    sys.modules[SUITE] = module
    exec(compile(text, spec.origin, "exec"), module.__dict__)
    return changed


AS_GLOO_PLACES = import_suite_as_gloo() if os.environ.get("BACKEND") == "coll" else 0
from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest, TestDistBackend)


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    """test_distributed_spawn.py's class: each test in freshly spawned ranks."""

    def setUp(self):
        super().setUp()
        self._spawn_processes()
        torch.backends.cudnn.flags(enabled=True, allow_tf32=False).__enter__()


def selected(name, names, include, exclude):
    def match(pat):
        return fnmatch.fnmatchcase(name, pat if any(c in pat for c in "*?[") else f"*{pat}*")
    chosen = not names and not include or name in names or any(map(match, include))
    return chosen and not any(map(match, exclude))


class Outcomes(unittest.TextTestResult):
    """Each test's outcome by name, and a line per test with its time."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes, self.reasons = {}, {}  # reasons: why a test was skipped

    def startTest(self, test):  # noqa: N802 (unittest's names)
        self._t0 = time.monotonic()
        super().startTest(test)

    def _set(self, test, outcome):
        self.outcomes[test._testMethodName] = outcome
        self.stream.write(f"[{time.monotonic() - self._t0:.1f} s] ")

    def addSuccess(self, test):  # noqa: N802
        self._set(test, "pass")
        super().addSuccess(test)

    def addExpectedFailure(self, test, err):  # noqa: N802
        self._set(test, "pass")
        super().addExpectedFailure(test, err)

    def addFailure(self, test, err):  # noqa: N802
        self._set(test, "fail")
        super().addFailure(test, err)

    def addUnexpectedSuccess(self, test):  # noqa: N802
        self._set(test, "fail")
        super().addUnexpectedSuccess(test)

    def addError(self, test, err):  # noqa: N802
        self._set(test, "error")
        super().addError(test, err)

    def addSkip(self, test, reason):  # noqa: N802
        self._set(test, "skip")
        self.reasons[test._testMethodName] = str(reason)
        super().addSkip(test, reason)


def main(argv):
    out, sel = None, {"-n": [], "-k": [], "-x": [], "--shard": []}
    it = iter(argv)
    for a in it:
        if a in sel:
            pat = next(it, None)
            if pat is None:
                sys.exit(f"conformance_suite.py: {a} needs an argument")
            sel[a].append(pat)
        elif out is None and not a.startswith("-"):
            out = a
        else:
            sys.exit(f"conformance_suite.py: unknown argument '{a}' "
                     "(usage: BACKEND=... conformance_suite.py OUT.json [-n NAME]... [-k PATTERN]... [-x PATTERN]...)")
    if out is None:
        sys.exit("conformance_suite.py: no output file given")
    if os.environ["BACKEND"] == "coll":
        if AS_GLOO_PLACES == 0:  # the suite changed: its gloo-only tests would skip on coll
            sys.exit(f"conformance_suite.py: torch {torch.__version__}'s suite names gloo "
                     f"nowhere that AS_GLOO knows")
        print(f"coll stands beside gloo in {AS_GLOO_PLACES} places of the suite (AS_GLOO)")
    every = unittest.TestLoader().getTestCaseNames(TestDistBackendWithSpawn)
    unknown = [n for n in sel["-n"] if n not in every]
    if unknown:
        sys.exit(f"conformance_suite.py: torch {torch.__version__}'s suite has no test {unknown}")
    names = [n for n in every if selected(n, sel["-n"], sel["-k"], sel["-x"])]
    if not names:
        sys.exit(f"conformance_suite.py: no test matches {sel}")
    if sel["--shard"]:  # I/N: every Nth test from the Ith (conformance.py --jobs)
        i, n = map(int, sel["--shard"][-1].split("/"))
        names = names[i::n]
    suite = unittest.TestSuite(TestDistBackendWithSpawn(n) for n in names)
    res = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=Outcomes).run(suite)
    tmp = f"{out}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"backend": os.environ["BACKEND"], "torch": torch.__version__,
                   "outcomes": res.outcomes, "skip_reasons": res.reasons}, f, indent=1, sort_keys=True)
    os.replace(tmp, out)


if __name__ == "__main__":
    main(ARGV)
