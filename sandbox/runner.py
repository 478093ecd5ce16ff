"""rgd test runner: executes one program against a list of tests and reports a verdict per test.

The host sends one JSON job on stdin:
  {"nonce": str, "code": str, "mode": "function"|"stdio"|"call", "entry_point": str|null,
   "tests": [{"kind": "assert", "src": str} | {"kind": "check", "src": str}
             | {"kind": "io", "input": str, "output": str}],
   "per_test_timeout": float, "output_cap": int}
and reads verdict lines `<nonce> <json>` from stdout. Everything the program prints is captured per
test (capped) and reported inside the verdict, so a program cannot mix its own lines into the
verdict stream by printing. The same file runs under native python3 and (later) under wasm, so it
only relies on the standard library and degrades gracefully where signals are unavailable.
"""

import _ast  # the C node types; the `ast` module itself costs ~15 ms of start-up
import builtins
import io
import operator
import os
import sys
import time

try:
    import _signal as signal  # the C module: `signal` itself imports enum (~10 ms)

    _HAS_ALARM = hasattr(signal, "setitimer")
except ImportError:  # pragma: no cover - wasm builds have no signal module
    _HAS_ALARM = False

# The judge's own copy of every builtin: a program that patches `builtins` (bool, isinstance,
# AssertionError...) changes its own world, not how its tests are judged.
globals().update({k: v for k, v in vars(builtins).items() if not k.startswith("__")})

# Keep private references: the program under test may overwrite builtins or module attributes.
_repr = repr
_len = len
_isinstance = isinstance
_str = str
_perf = time.perf_counter
_out = None  # the verdict stream, opened by main()


def open_verdict_stream():
    """A private handle on the real stdout (the program's prints are redirected per test)."""
    try:
        return os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
    except OSError:  # WASI has no dup()
        return sys.__stdout__

REPR_CAP = 400
MSG_CAP = 600

_COMPARE = {
    _ast.Eq: operator.eq,
    _ast.NotEq: operator.ne,
    _ast.Lt: operator.lt,
    _ast.LtE: operator.le,
    _ast.Gt: operator.gt,
    _ast.GtE: operator.ge,
    _ast.Is: operator.is_,
    _ast.IsNot: operator.is_not,
    _ast.In: lambda a, b: a in b,
    _ast.NotIn: lambda a, b: a not in b,
}


def parse(src, filename):
    return compile(src, filename, "exec", _ast.PyCF_ONLY_AST)


def walk(node):
    """Breadth-first over a syntax tree, outermost nodes first."""
    todo = [node]
    i = 0
    while i < _len(todo):
        current = todo[i]
        i += 1
        yield current
        for field in current._fields:
            value = getattr(current, field, None)
            if _isinstance(value, list):
                todo.extend(v for v in value if _isinstance(v, _ast.AST))
            elif _isinstance(value, _ast.AST):
                todo.append(value)


# Everything the program can get hold of (its stdout object, the alarm handler, `exit`) is defined
# in a namespace of its own: their `__globals__` lead nowhere near the judge.
_EXPOSED_SOURCE = """
import io


class TestTimeout(BaseException):
    # Raised by the per-test alarm; a BaseException so `except Exception` cannot eat it.
    pass


def on_alarm(signum, frame):
    raise TestTimeout()


def exit(code=None):
    raise SystemExit(code)


class CappedWriter(io.TextIOBase):
    # Keeps the first `cap` characters written and counts the rest.

    def __init__(self, cap):
        self.cap = cap
        self.parts = []
        self.size = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        room = self.cap - self.size
        if room > 0:
            keep = s[:room]
            self.parts.append(keep)
            self.size += len(keep)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self):
        return "".join(self.parts)
"""
_exposed = {"__name__": "rgd_io"}
exec(compile(_EXPOSED_SOURCE, "<rgd io>", "exec"), _exposed)
TestTimeout = _exposed["TestTimeout"]
CappedWriter = _exposed["CappedWriter"]
_on_alarm = _exposed["on_alarm"]
_exit = _exposed["exit"]


def clip(s, cap):
    return s if _len(s) <= cap else s[:cap] + "...<%d more chars>" % (_len(s) - cap)


def safe_repr(value):
    try:
        return clip(_repr(value), REPR_CAP)
    except BaseException as e:  # a hostile __repr__ must not break the runner
        return "<unrepresentable %s: %s>" % (type(value).__name__, type(e).__name__)


def error_info(exc, filename="solution.py"):
    """Exception type, message and the last line of the program involved in it."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if _isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    try:
        msg = _str(exc)
    except BaseException:
        msg = "<unprintable message>"
    return {"exc_type": type(exc).__name__, "exc_msg": clip(msg, MSG_CAP), "line": line}


def classify(exc):
    if _isinstance(exc, TestTimeout):
        return "timeout"
    if _isinstance(exc, MemoryError):
        return "memory"
    if _isinstance(exc, RecursionError):
        return "error"
    return "error"


class Guard:
    """Per-test deadline (SIGALRM where available) and stdout/stderr/stdin redirection."""

    def __init__(self, timeout, cap, stdin_text=""):
        self.timeout = timeout
        self.out = CappedWriter(cap)
        self.stdin_text = stdin_text

    def __enter__(self):
        self.saved = (sys.stdout, sys.stderr, sys.stdin)
        sys.stdout = self.out
        sys.stderr = self.out
        sys.stdin = io.StringIO(self.stdin_text)
        if _HAS_ALARM and self.timeout > 0:
            signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
        self.t0 = _perf()
        return self

    def __exit__(self, *exc):
        if _HAS_ALARM:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.secs = _perf() - self.t0
        sys.stdout, sys.stderr, sys.stdin = self.saved
        return False


# The `json` module drags in `re`, `enum` and `collections`: ~18 ms of a ~45 ms run, measured.
# Verdicts are flat dicts of str/int/float/bool/None, so they are encoded here, and the job (JSON
# from serde_json, which is also a Python literal once true/false/null are named) is evaluated.
_JSON_ESCAPES = {i: "\\u%04x" % i for i in range(32)}
_JSON_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"})
_JSON_LITERALS = {"true": True, "false": False, "null": None}


def to_json(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if _isinstance(value, (int, float)):
        return _repr(value)
    if _isinstance(value, _str):
        return '"' + value.translate(_JSON_ESCAPES) + '"'
    return "{" + ", ".join(to_json(_str(k)) + ": " + to_json(v) for k, v in value.items()) + "}"


def read_job(text):
    return eval(text, {"__builtins__": {}}, _JSON_LITERALS)


def emit(nonce, record):
    _out.write(nonce + " " + to_json(record) + "\n")
    _out.flush()


def find_entry_call(node, entry):
    for sub in walk(node):
        if _isinstance(sub, _ast.Call) and _isinstance(sub.func, _ast.Name) and sub.func.id in (entry, "candidate"):
            return sub
    return None


def eval_node(node, ns):
    return eval(compile(_ast.Expression(body=node), "test.py", "eval"), ns)


def run_assert(src, ns, entry, verdict):
    """Run one assert; on failure report the real value the asserted call produced."""
    tree = parse(src, "test.py")
    if _len(tree.body) != 1 or not _isinstance(tree.body[0], _ast.Assert):
        exec(compile(tree, "test.py", "exec"), ns)
        verdict["status"] = "passed"
        return
    test = tree.body[0].test
    if _isinstance(test, _ast.Compare) and _len(test.ops) == 1 and type(test.ops[0]) in _COMPARE:
        left = eval_node(test.left, ns)
        right = eval_node(test.comparators[0], ns)
        ok = bool(_COMPARE[type(test.ops[0])](left, right))
        if not ok:
            verdict["got"] = safe_repr(left)
            verdict["expected"] = safe_repr(right)
            call = find_entry_call(test, entry) if entry else None
            if call is not None and call is not test.left:
                verdict["got"] = safe_repr(eval_node(call, ns))
                verdict.pop("expected", None)
    else:
        ok = bool(eval_node(test, ns))
        if not ok:
            call = find_entry_call(test, entry) if entry else None
            if call is not None:
                verdict["got"] = safe_repr(eval_node(call, ns))
    verdict["status"] = "passed" if ok else "failed"


def run_check(src, ns, entry, verdict):
    """A dataset `check(candidate)` function: define it, drop any top-level call, call it once.

    The test's `check` is renamed before it is defined: some MBPP solutions are themselves
    called `check`, and the test must not shadow the function it tests.
    """
    tree = parse(src, "test.py")
    body = []
    for s in tree.body:
        if (_isinstance(s, _ast.Expr) and _isinstance(s.value, _ast.Call)
                and _isinstance(s.value.func, _ast.Name) and s.value.func.id == "check"):
            continue
        if _isinstance(s, _ast.FunctionDef) and s.name == "check":
            s.name = "__rgd_check__"
        body.append(s)
    tree.body = body
    env = dict(ns)
    exec(compile(tree, "test.py", "exec"), env)
    env["__rgd_check__"](resolve_entry(ns, entry))
    verdict["status"] = "passed"


def resolve_entry(ns, entry):
    if entry in ns:
        return ns[entry]
    if "Solution" in ns:  # LeetCode-style starter code
        return getattr(ns["Solution"](), entry)
    raise NameError("name %r is not defined" % entry)


def tokens_equal(got, expected):
    a, b = got.split(), expected.split()
    if a == b:
        return True
    if _len(a) != _len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        try:
            if abs(float(x) - float(y)) > 1e-6 * max(1.0, abs(float(y))):
                return False
        except ValueError:
            return False
    return True


def parse_arg(line):
    import ast  # only call-based tasks need it

    try:
        return ast.literal_eval(line)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return line


def normalise(value):
    """Tuples and lists compare equal (JSON has no tuples)."""
    if _isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if _isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


def run_call(test, ns, entry, verdict):
    """APPS call-based task: one argument per input line, compare the return value."""
    lines = test["input"].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    args = [parse_arg(line) for line in lines]
    expected = parse_arg(test["output"]) if _isinstance(test["output"], _str) else test["output"]
    result = resolve_entry(ns, entry)(*args)
    ok = normalise(result) == normalise(expected) or _str(result) == _str(test["output"]).strip()
    verdict["status"] = "passed" if ok else "failed"
    if not ok:
        verdict["got"] = safe_repr(result)
        verdict["expected"] = safe_repr(expected)


def run_stdio(test, code_obj, verdict, guard):
    ns = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(code_obj, ns)
    except SystemExit:
        pass  # `exit()` after printing the answer is normal for stdin/stdout programs
    got = guard.out.text()
    if test["kind"] == "run":  # no expectation: report what it printed
        verdict["status"] = "passed"
        verdict["got"] = clip(got, REPR_CAP)
        return
    ok = tokens_equal(got, test["output"])
    verdict["status"] = "passed" if ok else "failed"
    if not ok:
        verdict["got"] = clip(got, REPR_CAP)
        verdict["expected"] = clip(test["output"], REPR_CAP)


def main():
    global _out
    _out = open_verdict_stream()
    # The program must not find the judge by importing it.
    me = sys.modules.get(__name__)
    for name, module in list(sys.modules.items()):
        if module is me:
            del sys.modules[name]
    job = read_job(sys.stdin.read())
    nonce = job["nonce"]
    code = job["code"]
    mode = job["mode"]
    entry = job.get("entry_point")
    timeout = float(job.get("per_test_timeout", 5.0))
    cap = int(job.get("output_cap", 8192))
    if job.get("chdir"):
        os.chdir(job["chdir"])  # the read-only data directory of the wasm guest
    # `python -S` leaves these out; stdin/stdout programs use them.
    builtins.exit = _exit
    builtins.quit = _exit

    try:
        code_obj = compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError) as e:
        emit(nonce, dict({"setup": "error"}, **error_info(e)))
        return

    ns = {"__name__": "__rgd_solution__", "__builtins__": builtins}
    if mode != "stdio":
        guard = Guard(timeout, cap)
        setup = {"setup": "ok"}
        try:
            with guard:
                exec(code_obj, ns)
        except BaseException as e:  # SystemExit at import time is an error too
            setup = dict({"setup": classify(e)}, **error_info(e))
        setup["stdout"] = guard.out.text()
        emit(nonce, setup)
        if setup["setup"] != "ok":
            return
    else:
        emit(nonce, {"setup": "ok"})

    for i, test in enumerate(job["tests"]):
        verdict = {"i": i}
        guard = Guard(timeout, cap, test.get("input", "") if mode == "stdio" else "")
        try:
            with guard:
                kind = test["kind"]
                if mode == "stdio":
                    run_stdio(test, code_obj, verdict, guard)
                elif kind == "assert":
                    run_assert(test["src"], ns, entry, verdict)
                elif kind == "check":
                    run_check(test["src"], ns, entry, verdict)
                elif kind == "io":
                    run_call(test, ns, entry, verdict)
                else:
                    raise ValueError("unknown test kind %r" % kind)
        except AssertionError as e:
            verdict["status"] = "failed"
            verdict.update(error_info(e, "test.py"))
        except BaseException as e:
            verdict["status"] = classify(e)
            verdict.update(error_info(e))
        verdict["secs"] = round(getattr(guard, "secs", 0.0), 6)
        stdout = guard.out.text()
        if stdout and mode != "stdio":
            verdict["stdout"] = clip(stdout, REPR_CAP)
        emit(nonce, verdict)


if __name__ == "__main__":
    main()
