"""rgd tracer: one traced run of one call, for debuggers that read real executions (LDB's block
traces, call trees for RGD's Feedback agent).

Job (one JSON line, after the runner read `"role": "tracer"`):
  {"role": "tracer", "nonce": str, "code": str, "call": str, "mode": "block"|"calls",
   "max_events": int, "max_seconds": float}

The program's top level runs untraced; then `call` (an expression such as `f(1, 2)`) is evaluated
under `sys.settrace`. Records stream out as they complete, one line each, `<nonce> <json>`, so a run
the host has to kill (an infinite loop past the time budget) still leaves its partial trace:
  block mode: {"kind": "block", "function", "first_line", "last_line", "lines": [...],
               "before": {name: repr}, "after": {name: repr}}
  calls mode: {"kind": "call", "depth", "function", "line", "args": {name: repr},
               "returned": repr | null, "raised": str | null}  (written when the call ends)
  finally:    {"kind": "end", "result": repr | null, "exception": {"type", "message", "line"} | null,
               "events": int, "truncated": str | null}

A basic block is a maximal run of statements that execute in sequence: a new block starts at a
function's first statement, at a jump target (the first statement of an `if`/`else` body, a loop
body, an `except` handler, the statement after a loop or after a branch), and whenever a line runs
that is not the next one in the block (a loop going round, a call returning). Values are shown by a
repr of rgd's own for builtin types (capped: strings 60 characters, 8 items per container, depth 3)
and as `<TypeName>` for anything else: a program's `__repr__` is never called, so it can neither
break nor hang the trace.
"""

import sys
import time

_type = type
STR_CAP = 60
ITEMS_CAP = 8
DEPTH_CAP = 3
VARS_CAP = 20


def safe_repr(v, depth=0):
    t = _type(v)
    if v is None or t in (bool, int, float, complex):
        text = repr(v)
        return text if len(text) <= STR_CAP else text[: STR_CAP - 3] + "..."
    if t in (str, bytes):
        text = repr(v)
        return text if len(text) <= STR_CAP else text[: STR_CAP - 4] + "..." + text[-1]
    if t in (list, tuple, set, frozenset, dict):
        if depth >= DEPTH_CAP:
            return "[...]" if t is list else "(...)" if t is tuple else "{...}"
        items = list(v.items()) if t is dict else list(v) if t is not set and t is not frozenset else sorted(v, key=repr)
        shown = items[:ITEMS_CAP]
        if t is dict:
            parts = [safe_repr(k, depth + 1) + ": " + safe_repr(x, depth + 1) for k, x in shown]
        else:
            parts = [safe_repr(x, depth + 1) for x in shown]
        if len(items) > ITEMS_CAP:
            parts.append("... (%d items)" % len(items))
        body = ", ".join(parts)
        if t is list:
            return "[" + body + "]"
        if t is tuple:
            return "(" + body + ("," if len(items) == 1 else "") + ")"
        if t is dict:
            return "{" + body + "}"
        return (t.__name__ + "({" + body + "})") if (t is frozenset or not items) else "{" + body + "}"
    if t is range:
        return repr(v)
    return "<" + getattr(t, "__name__", "object") + ">"


def variables(frame):
    out = {}
    for name, value in list(frame.f_locals.items())[:VARS_CAP]:
        if name.startswith("__"):
            continue
        out[name] = safe_repr(value)
    return out


def leaders(code_text):
    """Lines where a basic block starts, per the statements' structure (see the module doc)."""
    import ast

    tree = ast.parse(code_text)
    starts = set()

    def body(stmts):
        if not stmts:
            return
        starts.add(stmts[0].lineno)
        for i, s in enumerate(stmts):
            branching = isinstance(s, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.Match)) or (
                sys.version_info >= (3, 11) and isinstance(s, getattr(ast, "TryStar", ()))
            )
            if branching and i + 1 < len(stmts):
                starts.add(stmts[i + 1].lineno)
            if isinstance(s, (ast.If,)):
                body(s.body)
                body(s.orelse)
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                starts.add(s.lineno)
                body(s.body)
                body(s.orelse)
            elif isinstance(s, ast.Try) or (hasattr(ast, "TryStar") and isinstance(s, ast.TryStar)):
                body(s.body)
                for h in s.handlers:
                    body(h.body)
                body(s.orelse)
                body(s.finalbody)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                body(s.body)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    body(case.body)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body(s.body)
            elif isinstance(s, ast.ClassDef):
                body(s.body)

    body(tree.body)
    return starts


class Budget(BaseException):
    """The trace's own budget ran out; the run stops here (partial trace kept)."""


class Tracer:
    def __init__(self, job, emit, filename):
        self.emit = emit
        self.mode = job.get("mode", "block")
        self.max_events = int(job.get("max_events", 20000))
        self.deadline = time.perf_counter() + float(job.get("max_seconds", 5.0))
        self.filename = filename
        self.events = 0
        self.truncated = None
        self.leaders = set()
        # Block mode: the open block per frame (id -> record).
        self.open = {}
        # Calls mode: frames being traced, with their record.
        self.calls = {}
        self.depth = 0
        self.started = 0

    def count(self):
        self.events += 1
        if self.events > self.max_events:
            self.truncated = "more than %d trace events" % self.max_events
            raise Budget()
        if time.perf_counter() > self.deadline:
            self.truncated = "the trace's time budget ran out"
            raise Budget()

    def close_block(self, frame):
        block = self.open.pop(id(frame), None)
        if block is not None:
            block["after"] = variables(frame)
            self.emit(block)

    def trace(self, frame, event, arg):
        if frame.f_code.co_filename != self.filename:
            return None  # library code: not traced
        self.count()
        if self.mode == "calls":
            return self.trace_calls(frame, event, arg)
        if event == "line":
            line = frame.f_lineno
            block = self.open.get(id(frame))
            # A jump target, or a line at or above the block's last one (a loop going round):
            # control left the straight line, and a new block starts.
            if block is not None and (line in self.leaders or line <= block["last_line"]):
                self.close_block(frame)
                block = None
            if block is None:
                block = {
                    "kind": "block",
                    "function": frame.f_code.co_name,
                    "first_line": line,
                    "last_line": line,
                    "lines": [line],
                    "before": variables(frame),
                }
                self.open[id(frame)] = block
            else:
                block["lines"].append(line)
                block["last_line"] = line
        elif event in ("return", "exception"):
            if event == "exception" and id(frame) in self.open:
                self.open[id(frame)]["raised"] = getattr(arg[0], "__name__", "Exception")
            if event == "return":
                self.close_block(frame)
        return self.trace

    def trace_calls(self, frame, event, arg):
        key = id(frame)
        if event == "call":
            self.calls[key] = {
                "kind": "call",
                "order": self.started,
                "depth": self.depth,
                "function": frame.f_code.co_name,
                "line": frame.f_lineno,
                "args": variables(frame),
                "returned": None,
                "raised": None,
            }
            self.depth += 1
            self.started += 1
        elif event == "exception" and key in self.calls:
            self.calls[key]["raised"] = getattr(arg[0], "__name__", "Exception")
        elif event == "return" and key in self.calls:
            record = self.calls.pop(key)
            self.depth -= 1
            if record["raised"] is None:
                record["returned"] = safe_repr(arg)
            self.emit(record)
        return self.trace

    def flush_open(self):
        """Blocks (or calls) still open when the run stopped are written as they stand."""
        for block in list(self.open.values()):
            self.emit(block)
        self.open.clear()
        for record in list(self.calls.values()):
            self.emit(record)
        self.calls.clear()


def run(job, write):
    nonce = job.get("nonce", "")

    def emit(record):
        write(nonce + " " + _json_dumps(record) + "\n")

    filename = "<program>"
    code = job.get("code", "")
    end = {"kind": "end", "result": None, "exception": None, "events": 0, "truncated": None}
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(code, filename, "exec"), namespace)
    except BaseException as e:
        end["exception"] = describe(e, filename, "the program's top level")
        emit(end)
        return
    tracer = Tracer(job, emit, filename)
    try:
        tracer.leaders = leaders(code)
    except SyntaxError:
        tracer.leaders = set()
    # An expression (`f(1, 2)`: its value is the result) or statements (a test's `assert`).
    source = job.get("call", "")
    try:
        expression, evaluate = compile(source, "<call>", "eval"), eval
    except SyntaxError:
        try:
            expression, evaluate = compile(source, "<call>", "exec"), exec
        except SyntaxError as e:
            end["exception"] = {"type": "SyntaxError", "message": str(e.msg), "line": None}
            emit(end)
            return
    sys.settrace(tracer.trace)
    try:
        value = evaluate(expression, namespace)
        sys.settrace(None)
        end["result"] = safe_repr(value)
    except Budget:
        sys.settrace(None)
    except BaseException as e:
        sys.settrace(None)
        end["exception"] = describe(e, filename, None)
    finally:
        sys.settrace(None)
    tracer.flush_open()
    end["events"] = tracer.events
    end["truncated"] = tracer.truncated
    emit(end)


def describe(e, filename, where):
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    message = str(e) if _type(e).__str__ is BaseException.__str__ else "<message hidden: custom __str__>"
    return {"type": _type(e).__name__, "message": message[:300], "line": line, "where": where}


import json as _json  # noqa: E402  (after the definitions: the guest preloads json)

_json_dumps = _json.dumps
