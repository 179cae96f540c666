"""kfuse_test_util.py - what the Python suites share: the package from this
checkout's python/ (and the build's libkfuse through KFUSE_LIB, set by
CTest), numpy (required: scripts/deps.sh installs it), and small helpers."""
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if os.environ.get("KFUSE_TEST_INSTALLED") != "1":  # else: the installed package
    sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import numpy as np  # noqa: F401
except ImportError:  # a failure, not a skip: the suites are meaningless without it
    sys.exit("the Python suites need numpy (scripts/deps.sh installs it)")

import kfuse  # noqa: E402,F401


def path(rel):
    return os.path.join(ROOT, rel)


def rng(seed=0):
    return np.random.default_rng(seed)
