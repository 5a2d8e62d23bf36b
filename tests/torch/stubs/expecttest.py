"""Stand-in for the `expecttest` module (PyPI), which torch's test helpers
(torch.testing._internal.common_utils) import and Debian 12 does not package.
Put on sys.path by tests/torch/conformance_suite.py only when the real one is
missing. The distributed suite uses only TestCase and ACCEPT; an inline
expectation is compared exactly, never rewritten."""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802 (expecttest's name)
        self.assertMultiLineEqual(expect, actual)
