"""rgd's spectrum collector (`rgd locate`; PYTEST_DONT_REWRITE): which of the project's own functions each test's
setup and call phases entered and which of their lines they ran, and, for a test that failed, the
project frames its exception passed through, innermost last. Also what collection ran (the project's
import-time code, decorators applied in test modules) and the paths of collection errors. Information
for fault localisation, never a verdict (outcomes come from rgd_verdict's channel).

Loaded as a pytest plugin (`-p rgd_spectra`) next to rgd_verdict. Written to $RGD_SPECTRA_OUT,
one JSON object per test:
    {"id", "functions": [[file, qualname, line], ...], "lines": [[file, qualname, line, [ran, ...]], ...],
     "raised": [[file, qualname, line], ...], "mismatched": ["TypeError: f() takes ...", ...],
     "stopped": true when this collector's timer stopped the test}
and one for collection, with "id": "<collection>" and "errors": [[collector id, [frame, ...]], ...].
With $RGD_SPECTRA_TEST_SECONDS, a test's call phase that runs longer is stopped (it fails with
RgdTestTimeout, raised where it was). A function is the project's when its file is under the
working directory (the copy) and is not a test file or conftest; tracing covers every thread. What pytest's reporting runs to print a failure
(an assertion's message calls the operands' __repr__, a traceback's formatting) is not traced: it is
not code the test ran, and only failing tests run it, so it would look like the fault.
"mismatched" holds the calls from project code whose arguments did not fit the callee (the
TypeError before the callee's frame begins), caught or not: a framework that catches everything
(click's test runner) leaves a test's failure saying only that the output was wrong.
"""

import json
import os
import signal
import sys
import threading

import pytest

_OUT = os.environ.pop("RGD_SPECTRA_OUT", None)
# A test's call phase is stopped after this many seconds (then 1 s for every later test: a fault
# that loops tends to loop in every test reaching it), so a looping fault leaves the spectrum of
# what ran and, on its exception path, where it was looping, instead of a whole run timed out.
_LIMIT = float(os.environ.pop("RGD_SPECTRA_TEST_SECONDS", "0") or 0)
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
# pytest's reporting: what a frame called from here runs, it runs to print a failure.
_REPORTING = tuple(
    os.sep + os.path.join("_pytest", part) for part in ("assertion", "_io", "_code", "reports.py", "terminal.py")
)


def _reporting(frame):
    """Whether pytest's reporting called this project frame (walking up to the first frame under the root)."""
    frame = frame.f_back
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_ROOT):
            return False
        if any(part in path for part in _REPORTING):
            return True
        frame = frame.f_back
    return False
_NEWLOCALS = 0x2  # inspect.CO_NEWLOCALS, without importing inspect


def _key(code):
    """(file relative to the root, qualified name, first line) of a project function, else None."""
    found = _project.get(code)
    if found is None:
        path = code.co_filename
        found = False
        # Functions only: a module's or a class's body is not what a repair would change.
        if path.startswith(_ROOT) and path.endswith(".py") and code.co_flags & _NEWLOCALS:
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


# What a TypeError says when a call's arguments do not fit its callee (`locate::mismatched_callee`
# reads the callee's name from it).
_MISMATCHES = ("() takes ", "() got ", "() missing ")
# At most this many of a test's mismatched calls are kept: a test hitting more says no more.
_MAX_MISMATCHED = 8


class _Tracer:
    """Line coverage of the project's frames (the rest of the program runs untraced), and the
    mismatched calls they made."""

    def __init__(self):
        self.seen = {}
        self.mismatched = []
        # Per thread: the reporting frame whose calls go untraced until it returns.
        self.muted = threading.local()

    def trace(self, frame, event, arg):
        if event != "call" or getattr(self.muted, "frame", None) is not None:
            return None
        key = _key(frame.f_code)
        if key is None:
            return None
        if _reporting(frame):
            self.muted.frame = frame

            def unmute(frame, event, arg):
                if event == "return":
                    self.muted.frame = None
                return unmute

            return unmute
        ran = self.seen.get(key)
        if ran is None:
            ran = self.seen[key] = set()

        def lines(frame, event, arg):
            if event == "line":
                ran.add(frame.f_lineno)
            elif event == "exception" and arg[0] is TypeError:
                self.mismatch(arg[1])
            return lines

        return lines

    def mismatch(self, error):
        """Keeps what `error` said if it is a call that did not fit (every project frame it passes
        through reports it again)."""
        if len(self.mismatched) >= _MAX_MISMATCHED:
            return
        try:
            said = "TypeError: " + str(error).splitlines()[0][:300]
        except Exception:  # a TypeError subclass whose __str__ raises says nothing
            return
        if any(m in said for m in _MISMATCHES) and said not in self.mismatched:
            self.mismatched.append(said)

    def start(self):
        threading.settrace(self.trace)
        sys.settrace(self.trace)

    @staticmethod
    def stop():
        sys.settrace(None)
        threading.settrace(None)

    def record(self, id, raised, stopped):
        return {
            "id": id,
            "stopped": stopped,
            "functions": sorted(self.seen),
            "lines": [[*key, sorted(ran)] for key, ran in sorted(self.seen.items())],
            "raised": raised,
            "mismatched": self.mismatched,
        }


def _path(tb):
    """The project frames a traceback passed through, innermost last. A module's or a class's
    body that raised while running a `def` (a decorator, a default, an annotation naming what the
    module no longer imports) counts as that function's frame: the error is in its definition."""
    raised = []
    while tb is not None:
        key = _key(tb.tb_frame.f_code) or _defining(tb.tb_frame.f_code, tb.tb_lineno)
        if key is not None and (not raised or raised[-1] != key):
            raised.append(key)
        tb = tb.tb_next
    return raised


_headers = {}


def _defining(code, line):
    """(file, qualified name, first line) of the project function whose `def` statement, from its
    first decorator to the line before its body, holds `line` of the module or class body `code`;
    else None."""
    path = code.co_filename
    if code.co_flags & _NEWLOCALS or not (path.startswith(_ROOT) and path.endswith(".py")):
        return None
    rel = path[len(_ROOT) :]
    if _is_test(rel):
        return None
    headers = _headers.get(path)
    if headers is None:
        headers = _headers[path] = []
        try:
            import ast

            with open(path, "rb") as source:
                tree = ast.parse(source.read())
        except (OSError, SyntaxError, ValueError):
            tree = None
        # Definitions that a module's or a class's body runs (not those inside functions).
        todo = [(tree, "")] if tree is not None else []
        while todo:
            node, prefix = todo.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    last = max(child.lineno, child.body[0].lineno - 1)
                    headers.append((first, last, prefix + child.name, child.lineno))
                elif isinstance(child, ast.ClassDef):
                    todo.append((child, prefix + child.name + "."))
                else:
                    todo.append((child, prefix))
    body = getattr(code, "co_qualname", code.co_name)
    prefix = "" if body == "<module>" else body + "."
    for first, last, name, at in headers:
        if first <= line <= last and name.startswith(prefix) and "." not in name[len(prefix) :]:
            return (rel.replace(os.sep, "/"), name, at)
    return None


def _write(record):
    with open(_OUT, "a") as out:
        out.write(json.dumps(record) + "\n")


# Collection: from this plugin's loading (before conftests import the project) to its end.
_collection = _Tracer()
_errors = []
_test = None
_raised = {}
_stopped = set()
if _OUT is not None:
    _collection.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    yield
    if _OUT is not None:
        _Tracer.stop()
        record = _collection.record("<collection>", [], False)
        record["errors"] = _errors
        _write(record)


def pytest_exception_interact(node, call, report):
    # Called for collection errors too (a module that failed to import).
    if _OUT is not None and isinstance(report, pytest.CollectReport) and call.excinfo is not None:
        _errors.append([node.nodeid, _path(call.excinfo.tb)])


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    global _test
    if _OUT is not None:
        _test = _Tracer()
        _test.start()
    yield


class RgdTestTimeout(Exception):
    """Raised in the test by the collector's timer: the test ran over its time."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    # Only the main thread receives signals; a Python-level loop is stopped between bytecodes,
    # one inside C code when it returns to Python (the run's own timeout stays the last resort).
    timed = _OUT is not None and _LIMIT > 0 and threading.current_thread() is threading.main_thread()
    if not timed:
        yield
        return
    limit = _LIMIT

    def stop(signum, frame):
        global _LIMIT
        _LIMIT = 1.0
        _stopped.add(item.nodeid)
        raise RgdTestTimeout(f"rgd locate stopped this test after {limit:g} s (an endless loop?)")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    # After every implementation: unittest's moves a recorded failure into call.excinfo.
    if _OUT is not None and call.when in ("setup", "call") and call.excinfo is not None:
        _raised.setdefault(item.nodeid, _path(call.excinfo.tb))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    global _test
    if _OUT is not None and _test is not None:
        _Tracer.stop()
        _write(_test.record(item.nodeid, _raised.pop(item.nodeid, []), item.nodeid in _stopped))
        _test = None
    yield
