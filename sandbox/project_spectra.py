"""rgd's spectrum collector (`rgd locate`; PYTEST_DONT_REWRITE): which of the project's own functions each test's call
phase entered, and, for a test that failed, the project frames its exception passed through,
innermost last. Information for fault localisation, never a verdict (outcomes come from
rgd_verdict's channel).

Loaded as a pytest plugin (`-p rgd_spectra`) next to rgd_verdict. Written to $RGD_SPECTRA_OUT,
one JSON object per test:
    {"id", "functions": [[file, qualname, line], ...], "raised": [[file, qualname, line], ...]}
A function is the project's when its file is under the working directory (the copy) and is not a
test file or conftest; tracing covers the test's call phase only, in every thread.
"""

import json
import os
import sys
import threading

import pytest

_OUT = os.environ.pop("RGD_SPECTRA_OUT", None)
_ROOT = os.path.realpath(os.getcwd()) + os.sep


def _is_test(path):
    parts = path.split(os.sep)
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


_project = {}


def _key(code):
    """(file relative to the root, qualified name, first line) of a project function, else None."""
    found = _project.get(code)
    if found is None:
        path = code.co_filename
        found = False
        if path.startswith(_ROOT) and path.endswith(".py"):
            rel = path[len(_ROOT) :]
            if not _is_test(rel):
                name = getattr(code, "co_qualname", code.co_name)
                if ".<locals>" in name:
                    # A comprehension, lambda or inner function counts for the function it is in
                    # (the one a repair would change); its first line is not that function's.
                    found = (rel.replace(os.sep, "/"), name.split(".<locals>")[0], 0)
                else:
                    found = (rel.replace(os.sep, "/"), name, code.co_firstlineno)
        _project[code] = found
    return found or None


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item):
    if _OUT is None:
        yield
        return
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            key = _key(frame.f_code)
            if key is not None:
                seen.add(key)

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        outcome = yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    raised = []
    excinfo = outcome.excinfo
    recorded = getattr(item, "_excinfo", None)
    tb = excinfo[2] if excinfo else (recorded[0].tb if recorded else None)
    while tb is not None:
        key = _key(tb.tb_frame.f_code)
        if key is not None and (not raised or raised[-1] != key):
            raised.append(key)
        tb = tb.tb_next
    with open(_OUT, "a") as out:
        out.write(json.dumps({"id": item.nodeid, "functions": sorted(seen), "raised": raised}) + "\n")
