"""rgd project tracer: the call tree of one of a project's own tests, across the project's files
only (Kamiya's execution-trace context), and the source of the functions the test entered.

Usage (in a throw-away copy of the project, the working directory):
    python project_trace.py RECORDS.jsonl MAX_EVENTS NODE_ID

pytest runs the one test; only its call phase is traced (not collection, not fixtures). A frame
is the project's when its file is under the working directory and is not a conftest.py; pytest,
the standard library and installed packages are left out, and calls inside them that come back
into the project show up one level below the project's caller. Written to RECORDS.jsonl, one JSON
object per line, in the shape of tracer.py's calls mode (imported from beside this file, which
also gives the bounded value reprs that never call a program's __repr__):
    {"kind": "call", "order", "depth", "function": "path.py::qualname", "line", "args",
     "returned", "raised"}                     (written as each call ends)
    {"kind": "source", "function", "line", "code"}   (the first 12 functions entered)
    {"kind": "end", "result": null, "exception": {...} | null (how the test failed), "events",
     "truncated"}
"""

import inspect
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracer import safe_repr, variables  # noqa: E402

import pytest  # noqa: E402

SOURCES_CAP = 12
SOURCE_LINES_CAP = 60
ROOT = os.path.realpath(os.getcwd()) + os.sep


class CallTree:
    def __init__(self, out, max_events):
        self.out = out
        self.max_events = max_events
        self.order = 0
        self.depth = 0
        self.open = {}
        self.sources = set()
        self.truncated = None
        self.own = {}

    def emit(self, record):
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def ours(self, filename):
        known = self.own.get(filename)
        if known is None:
            # "<frozen os>", "<string>": no file, and realpath would put it under the root.
            real = os.path.realpath(filename)
            known = (not filename.startswith("<") and os.path.isfile(real) and real.startswith(ROOT)
                     and os.path.basename(real) != "conftest.py")
            self.own[filename] = known
        return known

    def name(self, code):
        rel = os.path.relpath(code.co_filename, ROOT)
        return rel + "::" + getattr(code, "co_qualname", code.co_name)

    def trace(self, frame, event, arg):
        if event != "call" or not self.ours(frame.f_code.co_filename):
            return None
        if self.order >= self.max_events:
            self.truncated = "%d calls" % self.max_events
            return None
        name = self.name(frame.f_code)
        self.open[id(frame)] = {
            "kind": "call",
            "order": self.order,
            "depth": self.depth,
            "function": name,
            "line": frame.f_lineno,
            "args": variables(frame),
            "returned": None,
            "raised": None,
        }
        self.order += 1
        self.depth += 1
        if name not in self.sources and len(self.sources) < SOURCES_CAP:
            self.sources.add(name)
            try:
                lines, first = inspect.getsourcelines(frame.f_code)
                self.emit({"kind": "source", "function": name, "line": first,
                           "code": "".join(lines[:SOURCE_LINES_CAP])})
            except (OSError, TypeError):
                pass
        return self.local

    def local(self, frame, event, arg):
        record = self.open.get(id(frame))
        if record is None:
            return None
        if event == "exception":
            record["raised"] = getattr(arg[0], "__name__", "Exception")
        elif event == "line":
            record["raised"] = None
        elif event == "return":
            del self.open[id(frame)]
            self.depth -= 1
            if record["raised"] is None:
                record["returned"] = safe_repr(arg)
            self.emit(record)
        return self.local

    def flush_open(self):
        for record in list(self.open.values()):
            self.emit(record)
        self.open.clear()


class Plugin:
    def __init__(self, tree):
        self.tree = tree
        self.exception = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        sys.settrace(self.tree.trace)
        try:
            yield
        finally:
            sys.settrace(None)

    def pytest_runtest_logreport(self, report):
        crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
        if report.outcome != "passed" and crash is not None and self.exception is None:
            kind, _, message = crash.message.partition(": ")
            where = os.path.relpath(crash.path, ROOT) if crash.path.startswith(ROOT) else crash.path
            self.exception = {"type": kind, "message": message or kind, "line": crash.lineno, "where_": where}


def main():
    records, max_events, node = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(records, "w") as out:
        tree = CallTree(out, max_events)
        plugin = Plugin(tree)
        pytest.main([node, "-q", "-p", "no:cacheprovider", "--no-header", "--color=no"], plugins=[plugin])
        tree.flush_open()
        # The test's outcome is its exception (a test returns nothing worth showing).
        tree.emit({"kind": "end", "result": None, "exception": plugin.exception,
                   "events": tree.order, "truncated": tree.truncated})


if __name__ == "__main__":
    main()
