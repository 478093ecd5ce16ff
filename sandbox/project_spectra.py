"""rgd's spectrum collector (`rgd locate`; PYTEST_DONT_REWRITE): which of the project's own functions each test's call
phase entered and which of their lines it ran, and, for a test that failed, the project frames its
exception passed through, innermost last. Information for fault localisation, never a verdict (outcomes come from
rgd_verdict's channel).

Loaded as a pytest plugin (`-p rgd_spectra`) next to rgd_verdict. Written to $RGD_SPECTRA_OUT,
one JSON object per test:
    {"id", "functions": [[file, qualname, line], ...], "lines": [[file, qualname, line, [ran, ...]], ...],
     "raised": [[file, qualname, line], ...]}
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
    seen = {}

    def trace(frame, event, arg):
        # Only the project's frames get a line tracer: the rest of the program runs untraced.
        if event != "call":
            return None
        key = _key(frame.f_code)
        if key is None:
            return None
        ran = seen.get(key)
        if ran is None:
            ran = seen[key] = set()

        def lines(frame, event, arg):
            if event == "line":
                ran.add(frame.f_lineno)
            return lines

        return lines

    threading.settrace(trace)
    sys.settrace(trace)
    try:
        outcome = yield
    finally:
        sys.settrace(None)
        threading.settrace(None)
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
        record = {
            "id": item.nodeid,
            "functions": sorted(seen),
            "lines": [[*key, sorted(ran)] for key, ran in sorted(seen.items())],
            "raised": raised,
        }
        out.write(json.dumps(record) + "\n")
