"""rgd test runner: judges one program against tests from two interpreters that share nothing.

Every run starts this file twice, as two separate interpreters (two wasm instances, or two python3
processes), connected only through the host:

* the CANDIDATE interpreter holds the program under test and nothing else: no test, no expected
  value, no verdict. It answers requests ("call this function with these arguments") with values
  serialised as plain data (numbers, strings, lists, dicts, ...), or with a handle for objects that
  are not plain data.
* the CHECKER interpreter holds the tests and never runs a line of the program. The program's names
  are proxies in it: calling one sends a request to the candidate and rebuilds the answer out of
  exact builtin types. Comparisons, `assert`s and verdicts all happen here, on values the program
  can no longer steer (an "always equal" object arrives as a handle that equals only itself).

The host relays the checker's requests (lines `<nonce>><json>`) to the candidate, the candidate's
answers back, and reads the checker's verdict lines (`<nonce> <json>`). Whatever the program does to
its own interpreter (rewriting frames, builtins, `sys.stdout` or `json`, exiting, printing fake
protocol lines) can change what its functions return, never how they are judged. The candidate also
reports what it sees of such attempts (an audit hook, a snapshot of builtins and of its own globals,
early exits); the checker marks those tests `tampered`. That label is best effort; the verdict is not.

Jobs arrive as one JSON line on stdin:
  candidate: {"role": "candidate", "code": str, "mode": "function"|"stdio"|"call",
              "entry_point": str|null, "per_test_timeout": float, "output_cap": int, "chdir": str?}
  checker:   {"role": "checker", "nonce": str, "mode": ..., "entry_point": ...,
              "tests": [{"kind": "assert"|"check"|"value", "src": str} | {"kind": "io"|"run", "input", "output"}]}
Only the standard library is used; imports beyond `json` are kept lazy: start-up time is much of a run.
"""

import _ast  # the C node types; the `ast` module itself costs ~15 ms of start-up
import builtins
import io
import json
import operator
import os
import sys
import time

try:
    import _signal as signal  # the C module: `signal` itself imports enum (~10 ms)

    _HAS_ALARM = hasattr(signal, "setitimer")
except ImportError:  # pragma: no cover - wasm builds have no signal module
    _HAS_ALARM = False

# Private references, taken before any program runs.
_repr = repr
_len = len
_isinstance = isinstance
_str = str
_type = type
_perf = time.perf_counter

REPR_CAP = 400
MSG_CAP = 600
# Items materialised when a test iterates over an object that lives in the candidate.
ITER_CAP = 100000
# Top-level names of the program offered to the tests.
NAMES_CAP = 2000


def clip(s, cap):
    return s if _len(s) <= cap else s[:cap] + "...<%d more chars>" % (_len(s) - cap)


def open_private_stdout():
    """A private handle on the real stdout (the program's prints are redirected per call)."""
    try:
        return os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
    except OSError:  # WASI has no dup()
        return sys.__stdout__


def private_stdin_readline():
    stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    return stream.readline


# ---------------------------------------------------------------------------------------------
# JSON, through private references to the C-accelerated codec taken before any program runs (the
# wasm guest preloads `json`). The checker reads the candidate's lines, which are untrusted, only
# with `json.loads`: data in, never code.
# ---------------------------------------------------------------------------------------------
_json_dumps = json.dumps
_json_loads = json.loads


def to_json(value):
    return _json_dumps(value, ensure_ascii=True, separators=(",", ":"))


def from_json(text):
    return _json_loads(text)


# ---------------------------------------------------------------------------------------------
# Values on the wire. Plain JSON scalars travel as themselves; everything else as {"$": tag, "v": ...}.
# ---------------------------------------------------------------------------------------------
class Unsendable(Exception):
    pass


def to_wire(v, ref, depth=0):
    """Encodes a value; `ref(obj)` encodes what is not plain data (or raises Unsendable)."""
    if depth > 100:
        raise Unsendable("value nested deeper than 100 levels")
    t = _type(v)
    # Exact scalars travel as themselves (ints as JSON numbers while they fit in 64 bits).
    if v is None or t is bool or t is float or t is str or t is int and -(1 << 63) < v < (1 << 63):
        return v
    d = depth + 1
    if t is list:
        return {"$": "l", "v": [to_wire(x, ref, d) for x in v]}
    if t is tuple:
        return {"$": "t", "v": [to_wire(x, ref, d) for x in v]}
    if t is dict:
        return {"$": "d", "v": [[to_wire(k, ref, d), to_wire(x, ref, d)] for k, x in v.items()]}
    if t is set:
        return {"$": "s", "v": [to_wire(x, ref, d) for x in v]}
    if t is frozenset:
        return {"$": "fs", "v": [to_wire(x, ref, d) for x in v]}
    if t is bytes:
        return {"$": "b", "v": v.decode("latin-1")}
    if t is bytearray:
        return {"$": "ba", "v": bytes(v).decode("latin-1")}
    if t is complex:
        return {"$": "c", "v": [v.real, v.imag]}
    if t is range:
        return {"$": "rg", "v": [v.start, v.stop, v.step]}
    if v is Ellipsis:
        return {"$": "e", "v": None}
    if t is int:
        return {"$": "i", "v": hex(v)}
    return ref(v, d)


def from_wire(w, deref, depth=0):
    """Decodes a wire value into exact builtin types; `deref(tag, value)` handles handles."""
    if depth > 100:
        raise ValueError("value nested deeper than 100 levels")
    t = _type(w)
    if w is None or t is bool or t is int or t is float or t is str:
        return w
    if t is not dict:
        raise ValueError("malformed value")
    tag = w.get("$")
    v = w.get("v")
    d = depth + 1
    if tag == "l":
        return [from_wire(x, deref, d) for x in v]
    if tag == "t":
        return tuple(from_wire(x, deref, d) for x in v)
    if tag == "d":
        return {from_wire(k, deref, d): from_wire(x, deref, d) for k, x in v}
    if tag == "s":
        return set(from_wire(x, deref, d) for x in v)
    if tag == "fs":
        return frozenset(from_wire(x, deref, d) for x in v)
    if tag == "b":
        return _str(v).encode("latin-1")
    if tag == "ba":
        return bytearray(_str(v).encode("latin-1"))
    if tag == "c":
        return complex(float(v[0]), float(v[1]))
    if tag == "rg":
        return range(int(v[0]), int(v[1]), int(v[2]))
    if tag == "e":
        return Ellipsis
    if tag == "i":
        return int(_str(v), 16)
    return deref(tag, w)


# ---------------------------------------------------------------------------------------------
# Both sides: exceptions and output capture.
# ---------------------------------------------------------------------------------------------

# Everything the program can get hold of (its stdout object, the alarm handler, `exit`) is defined
# in a namespace of its own: their `__globals__` lead nowhere near the runner.
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
        self.buffer = BytesView(self)

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


class BytesView(io.RawIOBase):
    # `sys.stdout.buffer.write(b"...")`, the fast output of competitive programs.

    def __init__(self, text):
        self.text = text

    def writable(self):
        return True

    def write(self, b):
        self.text.write(bytes(b).decode("utf-8", "replace"))
        return len(b)


def stdin_for(text):
    # A text stream with a `.buffer`, as `sys.stdin` has.
    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")
"""
_exposed = {"__name__": "rgd_io"}
exec(compile(_EXPOSED_SOURCE, "<rgd io>", "exec"), _exposed)
TestTimeout = _exposed["TestTimeout"]
CappedWriter = _exposed["CappedWriter"]
_stdin_for = _exposed["stdin_for"]
_on_alarm = _exposed["on_alarm"]
_exit = _exposed["exit"]


def error_info(exc, filename):
    """Exception type, message and the last line of `filename` involved in it."""
    line = None
    try:
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        if _isinstance(exc, SyntaxError) and exc.filename == filename:
            line = exc.lineno
    except BaseException:
        line = None
    try:
        msg = _str(exc)
    except BaseException:
        msg = "<unprintable message>"
    return {"exc_type": _type(exc).__name__, "exc_msg": clip(msg, MSG_CAP), "line": line}


def classify(exc):
    if _isinstance(exc, TestTimeout):
        return "timeout"
    if _isinstance(exc, MemoryError):
        return "memory"
    return "error"


class Guard:
    """Output capture (and, where signals exist, a deadline) around one piece of program code."""

    def __init__(self, timeout, cap, stdin_text=None):
        self.timeout = timeout
        self.out = CappedWriter(cap)
        self.stdin_text = stdin_text
        self.swapped = None

    def __enter__(self):
        self.saved = (sys.stdout, sys.stderr, sys.stdin)
        # A stdin with `.buffer` for stdin/stdout programs; a plain empty one otherwise (cheaper).
        self.stdin = io.StringIO() if self.stdin_text is None else _stdin_for(self.stdin_text)
        sys.stdout = self.out
        sys.stderr = self.out
        sys.stdin = self.stdin
        if _HAS_ALARM and self.timeout > 0:
            signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
        self.t0 = _perf()
        return self

    def __exit__(self, *exc):
        if _HAS_ALARM and self.timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.secs = _perf() - self.t0
        if sys.stdout is not self.out or sys.stderr is not self.out or sys.stdin is not self.stdin:
            self.swapped = "the program replaced sys.stdout, sys.stderr or sys.stdin"
        sys.stdout, sys.stderr, sys.stdin = self.saved
        return False


# ---------------------------------------------------------------------------------------------
# The candidate: runs the program, answers requests.
# ---------------------------------------------------------------------------------------------
class _Sentinel:
    """A fresh object no honest value claims to equal."""

    __slots__ = ()


class _SysView:
    """The `sys` attributes and modules a judge inside the program's interpreter would lean on,
    read live, as a namespace for the snapshot."""

    NAMES = ("stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__", "excepthook", "displayhook")
    MODULES = ("json", "builtins", "sys", "io", "os")

    def keys(self):
        return self.NAMES + tuple("modules['%s']" % m for m in self.MODULES)

    def values(self):
        return [getattr(sys, k, None) for k in self.NAMES] + [sys.modules.get(m) for m in self.MODULES]

    def __len__(self):
        return _len(self.NAMES) + _len(self.MODULES)


class Candidate:
    def __init__(self, job, write, readline):
        self.job = job
        self.write = write
        self.readline = readline
        self.mode = job.get("mode", "function")
        self.entry = job.get("entry_point")
        self.timeout = float(job.get("per_test_timeout", 5.0))
        self.cap = int(job.get("output_cap", 8192))
        # Trace events (lines, calls, returns) a call may take: a limit every run counts alike.
        self.line_budget = job.get("line_budget")
        self.own_trace = False
        self.objects = {}  # handle -> object the checker holds a proxy for
        self.tamper = []
        self.runner_files = frozenset()
        self.snapshot = None

    # -- tamper evidence ------------------------------------------------------------------------
    def note(self, reason):
        if reason not in self.tamper:
            self.tamper.append(reason)

    def audit(self, event, args):
        """Audit hook: refuses introspection that reaches the runner, and notes the attempt.

        Hooks cannot be removed once added; this one is installed before the program runs."""
        if event == "sys._getframe":
            frame = args[0]
            if frame is not None and frame.f_code.co_filename in self.runner_files:
                self.note("the program inspected the test harness's stack frames (sys._getframe)")
                raise RuntimeError("rgd sandbox: the test harness's frames are off limits")
        elif event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents"):
            self.note("the program walked the interpreter's objects (%s)" % event)
            raise RuntimeError("rgd sandbox: %s is not available" % event)
        elif event in ("sys.settrace", "sys.setprofile", "sys._current_frames"):
            if self.own_trace:  # the line budget's own tracer, set by the runner around a call
                return
            self.note("the program hooked the interpreter (%s)" % event)
            raise RuntimeError("rgd sandbox: %s is not available" % event)

    def take_snapshot(self, frame):
        """Identity of everything a program could swap to fool a judge in its own interpreter: the
        builtins, the standard streams, `json`, and the globals of every frame on the stack (the
        runner's, and the wasm guest's entry module above it). Taken before the audit hook is
        installed: the hook refuses exactly this walk to the program."""
        spaces = [("builtins.", builtins.__dict__), ("sys.", _SysView()), ("json.", vars(sys.modules["json"]))]
        files = ["<rgd io>"]
        n = 0
        while frame is not None:
            if not any(space is frame.f_globals for _, space in spaces):
                spaces.append(("the harness's globals (%d): " % n, frame.f_globals))
                n += 1
            files.append(frame.f_code.co_filename)
            frame = frame.f_back
        self.runner_files = frozenset(files)
        # Per namespace: its keys and the very objects it held, compared with `is` at C speed (not
        # with `id()`, which raises an audit event, so a Python call, per value); the slow path
        # only runs to name what changed.
        self.snapshot = [(label, space, tuple(space.keys()), tuple(space.values())) for label, space in spaces]

    def check_snapshot(self):
        for label, space, keys, values in self.snapshot:
            if _len(space) == _len(keys) and all(map(operator.is_, space.values(), values)):
                continue
            now = dict(zip(space.keys(), space.values()))
            for k, v in zip(keys, values):
                if k not in now or now[k] is not v:
                    self.note("the program replaced %s%s" % (label, k))
                    return
            for k in now:
                if k not in keys:
                    self.note("the program added %s%s" % (label, k))
                    return
            self.note("the program changed %s" % label.strip(". "))
            return

    def judge_exception(self, exc):
        """Exceptions that end a test rather than fail it are attempts to skip the judge."""
        if _isinstance(exc, (Exception, TestTimeout)):
            return
        if _isinstance(exc, SystemExit) and self.mode == "stdio":
            return
        self.note("the program raised %s to end the test early" % _type(exc).__name__)

    # -- values ------------------------------------------------------------------------------------
    def handle(self, obj, depth=0):
        """A value for the checker: plain data, or a handle to an object that stays here."""
        t = _type(obj)
        self.probe(obj)
        if t.__name__ == "module" and t.__module__ == "builtins":
            return {"$": "m", "v": _str(getattr(obj, "__name__", ""))}
        for base, conv in _BASE_CONVERSIONS:
            if _isinstance(obj, base):
                return to_wire(conv(obj), self.handle, depth)
        h = _len(self.objects) + 1
        self.objects[h] = obj
        flags = []
        for dunder in ("__bool__", "__len__", "__iter__", "__getitem__", "__next__", "__contains__"):
            if getattr(t, dunder, None) is not None:
                flags.append(dunder)
        return {"$": "r", "v": h, "n": getattr(t, "__qualname__", "object"), "f": flags}

    def probe(self, obj):
        """Notes objects that claim to equal a fresh object: the "always equal" trick."""
        t = _type(obj)
        if t.__eq__ is object.__eq__ and t.__ne__ is object.__ne__:
            return
        try:
            with Guard(self.timeout, self.cap):
                s = _Sentinel()
                lies = bool(obj == s) or not bool(obj != s)
        except BaseException:
            return
        if lies:
            self.note("the program returned a %s that claims to equal anything (__eq__/__ne__/__bool__)" % t.__name__)

    def deref(self, tag, w):
        if tag == "r":
            return self.objects[w["v"]]
        raise ValueError("unknown value tag %r" % tag)

    # -- protocol -----------------------------------------------------------------------------------
    def reply(self, seq, body, check=False):
        # The snapshot is compared after set-up and at the end of the run (the checker asks):
        # any evidence marks the whole run, so earlier checkpoints would change no verdict.
        if check and self.snapshot is not None:
            self.check_snapshot()
        body["seq"] = seq
        if self.tamper:
            body["tamper"] = list(self.tamper)
        self.write(to_json(body) + "\n")

    def set_trace(self, fn):
        self.own_trace = True
        try:
            sys.settrace(fn)
        finally:
            self.own_trace = False

    def budgeted(self, fn):
        """`fn` stopped after `line_budget` trace events: where a deadline depends on the
        machine's speed and load, this stops a call at the same place on every run."""
        left = [self.line_budget]

        def tracer(frame, event, arg):
            left[0] -= 1
            if left[0] < 0:
                raise OverBudget("the call ran more than %d lines" % self.line_budget)
            return tracer

        def run():
            self.set_trace(tracer)
            try:
                return fn()
            finally:
                self.set_trace(None)

        return run

    def run_guarded(self, fn, stdin_text=None):
        """Runs program code; returns (reply fields, value or None)."""
        if self.line_budget:
            fn = self.budgeted(fn)
        guard = Guard(self.timeout, self.cap, stdin_text)
        fields = {}
        value = None
        try:
            with guard:
                value = fn()
            fields["status"] = "ok"
        except BaseException as e:
            self.judge_exception(e)
            if _isinstance(e, SystemExit) and self.mode == "stdio":
                fields["status"] = "ok"
            else:
                fields["status"] = classify(e)
                fields["raise"] = error_info(e, "solution.py")
                fields["raise"]["bases"] = [c.__name__ for c in _type(e).__mro__ if c.__module__ == "builtins"]
        if guard.swapped:
            self.note(guard.swapped)
        fields["out"] = guard.out.text()
        fields["secs"] = round(getattr(guard, "secs", 0.0), 6)
        return fields, value

    def setup(self):
        code = self.job["code"]
        try:
            self.code_obj = compile(code, "solution.py", "exec")
        except (SyntaxError, ValueError) as e:
            return dict({"setup": "error"}, **error_info(e, "solution.py"))
        if self.mode == "stdio":
            return {"setup": "ok"}
        self.ns = {"__name__": "__rgd_solution__", "__builtins__": builtins}
        fields, _ = self.run_guarded(lambda: exec(self.code_obj, self.ns))
        if fields["status"] != "ok":
            out = dict({"setup": fields["status"]}, **fields["raise"])
            out["stdout"] = fields["out"]
            return out
        names = {}
        for k, v in list(self.ns.items())[: NAMES_CAP]:
            if k.startswith("__"):
                continue
            try:
                names[k] = to_wire(v, self.handle)
            except Unsendable:
                continue
        out = {"setup": "ok", "stdout": fields["out"], "names": names}
        entry = self.resolve_entry()
        if entry is not None:
            out["entry"] = to_wire(entry, self.handle)
        return out

    def resolve_entry(self):
        if not self.entry:
            return None
        if self.entry in self.ns:
            return self.ns[self.entry]
        cls = self.ns.get("Solution")
        if cls is not None:  # LeetCode-style starter code
            try:
                with Guard(self.timeout, self.cap):
                    return getattr(cls(), self.entry)
            except BaseException:
                return None
        return None

    def serve(self, request):
        op = request.get("op")
        if op == "stdio":
            ns = {"__name__": "__main__", "__builtins__": builtins}
            fields, _ = self.run_guarded(lambda: exec(self.code_obj, ns), request.get("input", ""))
            return fields
        target = self.objects[request["ref"]]
        args = [from_wire(a, self.deref) for a in request.get("args", [])]
        kwargs = {k: from_wire(v, self.deref) for k, v in request.get("kwargs", {}).items()}
        if op == "call":
            fields, value = self.run_guarded(lambda: target(*args, **kwargs))
            # Arguments the program changed in place go back, so tests of in-place functions work.
            changed = []
            for i, (wire, arg) in enumerate(zip(request.get("args", []), args)):
                if _type(arg) in (list, dict, set, bytearray):
                    try:
                        now = to_wire(arg, self.handle)
                    except Unsendable:
                        continue
                    if now != wire:
                        changed.append([i, now])
            if changed:
                fields["mut"] = changed
        elif op == "getattr":
            fields, value = self.run_guarded(lambda: getattr(target, request["name"]))
        elif op == "setattr":
            fields, value = self.run_guarded(lambda: setattr(target, request["name"], args[0]))
        elif op == "apply":
            fn = _APPLY[request["fn"]]
            fields, value = self.run_guarded(lambda: fn(target, *args))
        else:
            raise ValueError("unknown request %r" % op)
        if fields["status"] == "ok":
            try:
                fields["value"] = to_wire(value, self.handle)
            except Unsendable as e:
                fields["status"] = "error"
                fields["raise"] = {"exc_type": "TypeError", "exc_msg": _str(e), "line": None, "bases": ["TypeError"]}
        return fields

    def main(self):
        setup = self.setup()
        self.reply(0, setup, check=True)
        if setup["setup"] != "ok":
            return
        while True:
            line = self.readline()
            if not line:
                return
            try:
                request = from_json(line)
            except BaseException as e:
                self.reply(-1, {"status": "error", "raise": error_info(e, "")})
                continue
            seq = request.get("seq", -1)
            check = bool(request.get("check"))
            try:
                body = {"status": "ok"} if request.get("op") == "end" else self.serve(request)
            except BaseException as e:
                body = {"status": "error", "raise": error_info(e, "solution.py")}
            self.reply(seq, body, check=check)


class OverBudget(BaseException):
    """A call ran past the job's line budget (a BaseException: `except Exception` in the program
    does not swallow it)."""


def _materialise(obj):
    out = []
    for x in obj:
        out.append(x)
        if _len(out) > ITER_CAP:
            raise MemoryError("more than %d items" % ITER_CAP)
    return out


_APPLY = {
    "bool": bool,
    "len": len,
    "repr": lambda o: clip(_repr(o), REPR_CAP),
    "str": lambda o: clip(_str(o), REPR_CAP),
    "list": _materialise,
    "next": next,
    "contains": lambda o, x: x in o,
    "getitem": lambda o, k: o[k],
    "setitem": operator.setitem,
}

# Subclasses of builtin types (Counter, namedtuple, IntEnum, str subclasses) travel as their base
# value, read through the base type's own methods, so an override has no say in it.
_BASE_CONVERSIONS = (
    (int, int.__int__),
    (float, float.__float__),
    (str, str.__str__),
    (bytes, lambda b: bytes.__getitem__(b, slice(None))),
    (tuple, lambda t: tuple(tuple.__iter__(t))),
    (list, lambda x: list(list.__iter__(x))),
    (dict, lambda d: {k: dict.__getitem__(d, k) for k in dict.__iter__(d)}),
    (frozenset, lambda s: frozenset(frozenset.__iter__(s))),
    (set, lambda s: set(set.__iter__(s))),
)


# ---------------------------------------------------------------------------------------------
# The checker: runs the tests, with the program's names as proxies.
# ---------------------------------------------------------------------------------------------
class Tampered(BaseException):
    """The candidate tried to fool the judge; ends the test as `tampered`."""


def tampered_record(reason):
    """The fields of a verdict (or set-up record) that ends as `tampered`."""
    return {"exc_type": "Tampered", "exc_msg": clip(_str(reason), MSG_CAP), "line": None}


class CandidateGone(BaseException):
    """The candidate's interpreter ended; every later test fails the same way."""


class Channel:
    def __init__(self, nonce, write, readline):
        self.nonce = nonce
        self.write = write
        self.readline = readline
        self.seq = 0
        self.gone = None
        self.tamper = []
        self.out = []
        # Set for the closing request: it asks the candidate to compare its snapshot.
        self.checkpoint = False

    def loads(self, line):
        return _json_loads(line)

    def receive(self, seq):
        """The candidate's answer to request `seq` (untrusted: checked field by field)."""
        if self.gone is not None:
            raise CandidateGone(self.gone)
        line = self.readline()
        if not line:
            self.gone = "the host closed the channel"
            raise CandidateGone(self.gone)
        try:
            msg = self.loads(line)
        except BaseException:
            msg = None
        if _type(msg) is dict and "ended" in msg and msg.get("host") == self.nonce:
            self.gone = _str(msg["ended"])
            if msg.get("voluntary"):
                self.tamper.append("the program ended its interpreter during a test (%s)" % self.gone)
                raise Tampered(self.tamper[-1])
            raise CandidateGone(self.gone)
        if _type(msg) is not dict or msg.get("seq") != seq:
            self.gone = "the program wrote to the judge's channel"
            self.tamper.append("the program wrote lines of its own to the judge's channel")
            raise Tampered(self.tamper[-1])
        for reason in msg.get("tamper", []) or []:
            if _isinstance(reason, _str) and reason not in self.tamper:
                self.tamper.append(reason)
        out = msg.get("out")
        if _isinstance(out, _str) and out:
            self.out.append(out)
            if "{" in out and self.mimics_verdicts(out):
                self.tamper.append("the program printed lines that mimic the judge's verdicts")
        return msg

    def mimics_verdicts(self, text):
        """Output lines shaped like rgd's protocol (a JSON object with a verdict or answer key)."""
        for line in text.splitlines():
            start = line.find("{")
            if start < 0:
                continue
            try:
                record = self.loads(line[start:])
            except BaseException:
                continue
            if _type(record) is dict and ("status" in record or "setup" in record or "seq" in record):
                return True
        return False

    def request(self, body):
        self.seq += 1
        body["seq"] = self.seq
        if self.checkpoint:
            body["check"] = True
            self.checkpoint = False
        if self.gone is not None:
            raise CandidateGone(self.gone)
        self.write(self.nonce + ">" + to_json(body) + "\n")
        msg = self.receive(self.seq)
        if self.tamper:
            raise Tampered(self.tamper[0])
        return msg


class Checker:
    def __init__(self, job, write, readline):
        self.job = job
        self.nonce = job["nonce"]
        self.write = write
        self.chan = Channel(self.nonce, write, readline)
        self.mode = job.get("mode", "function")
        self.entry = job.get("entry_point")
        self.entry_proxy = None

    def emit(self, record):
        self.write(self.nonce + " " + to_json(record) + "\n")

    # -- values from the candidate --------------------------------------------------------------------
    def deref(self, tag, w):
        if tag == "r":
            return Remote(self, int(w["v"]), _str(w.get("n", "object")), w.get("f") or [])
        if tag == "m":  # a module the program imported: the checker's own copy of it
            try:
                return __import__(_str(w["v"]), fromlist=["_"])
            except ImportError:
                return None
        raise ValueError("unknown value tag %r" % tag)

    def value(self, msg):
        """The value of an answer, or the exception the program raised, raised here."""
        status = msg.get("status")
        if status == "ok":
            return from_wire(msg.get("value"), self.deref)
        info = msg.get("raise") or {}
        exc_type = _str(info.get("exc_type", "Error"))
        exc_msg = _str(info.get("exc_msg", ""))
        if status == "timeout":
            exc = TestTimeout()
        elif status == "memory":
            exc = MemoryError(exc_msg)
        else:
            exc = rebuild_exception(exc_type, exc_msg, info.get("bases") or [])
        try:
            exc.rgd_info = {"exc_type": exc_type, "exc_msg": clip(exc_msg, MSG_CAP), "line": info.get("line")}
        except AttributeError:
            pass
        raise exc

    def call(self, proxy, args, kwargs):
        wire_args = [to_wire(a, self.ref) for a in args]
        msg = self.chan.request({"op": "call", "ref": proxy._h, "args": wire_args,
                                 "kwargs": {_str(k): to_wire(v, self.ref) for k, v in kwargs.items()}})
        for item in msg.get("mut") or []:
            try:
                i, new = item
                put_back(args[int(i)], from_wire(new, self.deref))
            except (ValueError, TypeError, IndexError):
                continue
        return self.value(msg)

    def ref(self, obj, depth):
        if _isinstance(obj, Remote):
            return {"$": "r", "v": obj._h}
        raise TypeError("a test cannot pass a %s to the program" % _type(obj).__name__)

    # -- setup --------------------------------------------------------------------------------------------
    def setup(self):
        try:
            msg = self.chan.receive(0)
        except Tampered as e:
            return dict({"setup": "tampered"}, **tampered_record(e))
        except CandidateGone as e:
            return dict({"setup": "error"}, exc_type="Crashed", exc_msg=_str(e), line=None)
        status = msg.get("setup")
        if self.chan.tamper:
            return dict({"setup": "tampered", "stdout": _str(msg.get("stdout", ""))}, **tampered_record(self.chan.tamper[0]))
        if status != "ok":
            out = {"setup": status if status in ("error", "timeout", "memory") else "error"}
            for k in ("exc_type", "exc_msg", "line", "stdout"):
                if k in msg:
                    out[k] = msg[k]
            return out
        self.names = {}
        try:
            for k, w in (msg.get("names") or {}).items():
                self.names[_str(k)] = from_wire(w, self.deref)
            if "entry" in msg:
                self.entry_proxy = from_wire(msg["entry"], self.deref)
        except (ValueError, TypeError, KeyError) as e:
            return dict({"setup": "tampered"}, **tampered_record("malformed setup answer: %s" % e))
        return {"setup": "ok", "stdout": _str(msg.get("stdout", ""))}

    def namespace(self):
        """The tests' globals: the program's top-level names, except those that would shadow a builtin."""
        ns = {"__name__": "__rgd_test__", "__builtins__": builtins}
        for k, v in self.names.items():
            if k == self.entry or not hasattr(builtins, k):
                ns[k] = v
        return ns

    def candidate(self):
        if self.entry_proxy is None:
            raise NameError("name %r is not defined" % self.entry)
        return self.entry_proxy

    # -- tests ----------------------------------------------------------------------------------------------
    def run_assert(self, src, ns, verdict):
        """Run one assert; on failure report the real value the asserted call produced."""
        tree = parse(src, "test.py")
        if _len(tree.body) != 1 or not _isinstance(tree.body[0], _ast.Assert):
            exec(compile(tree, "test.py", "exec"), ns)
            verdict["status"] = "passed"
            return
        test = tree.body[0].test
        if _isinstance(test, _ast.Compare) and _len(test.ops) == 1 and _type(test.ops[0]) in _COMPARE:
            left = eval_node(test.left, ns)
            right = eval_node(test.comparators[0], ns)
            ok = bool(_COMPARE[_type(test.ops[0])](left, right))
            if not ok:
                verdict["got"] = safe_repr(left)
                verdict["expected"] = safe_repr(right)
                call = find_entry_call(test, self.entry) if self.entry else None
                if call is not None and call is not test.left:
                    verdict["got"] = safe_repr(eval_node(call, ns))
                    verdict.pop("expected", None)
        else:
            ok = bool(eval_node(test, ns))
            if not ok:
                call = find_entry_call(test, self.entry) if self.entry else None
                if call is not None:
                    verdict["got"] = safe_repr(eval_node(call, ns))
        verdict["status"] = "passed" if ok else "failed"

    def run_check(self, src, ns, verdict):
        """A dataset `check(candidate)` function: define it, drop any top-level call, call it once.

        The test's `check` is renamed before it is defined: some MBPP solutions are themselves
        called `check`, and the test must not shadow the function it tests."""
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
        exec(compile(tree, "test.py", "exec"), ns)
        ns["__rgd_check__"](self.candidate())
        verdict["status"] = "passed"

    def run_value(self, src, ns, verdict):
        """An expression whose value is reported whole, as a Python literal (`rgd datasets plus`:
        the reference solution's output on a generated input). The value was rebuilt here out of
        exact builtin types, so the literal is the data itself; one that holds an object of the
        candidate's (a handle), a float that is not finite, or more than VALUE_CAP characters is
        an error."""
        value = eval(compile(src, "test.py", "eval"), ns)
        text = literal(value, 0)
        if _len(text) > VALUE_CAP:
            raise ValueError("the value's literal has %d characters, over %d" % (_len(text), VALUE_CAP))
        verdict["status"] = "passed"
        verdict["got"] = text

    def run_call(self, test, verdict):
        """APPS call-based task: one argument per input line, compare the return value."""
        lines = test["input"].split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        args = [parse_arg(line) for line in lines]
        expected = parse_arg(test["output"]) if _isinstance(test["output"], _str) else test["output"]
        result = self.candidate()(*args)
        ok = normalise(result) == normalise(expected) or _str(result) == _str(test["output"]).strip()
        verdict["status"] = "passed" if ok else "failed"
        if not ok:
            verdict["got"] = safe_repr(result)
            verdict["expected"] = safe_repr(expected)

    def run_stdio(self, test, verdict):
        msg = self.chan.request({"op": "stdio", "input": test.get("input", "")})
        if msg.get("status") != "ok":
            self.value(msg)
        got = _str(msg.get("out", ""))
        if test["kind"] == "run":  # no expectation: report what it printed
            verdict["status"] = "passed"
            verdict["got"] = clip(got, REPR_CAP)
            return
        ok = tokens_equal(got, test["output"])
        verdict["status"] = "passed" if ok else "failed"
        if not ok:
            verdict["got"] = clip(got, REPR_CAP)
            verdict["expected"] = clip(test["output"], REPR_CAP)

    def main(self):
        setup = self.setup()
        self.emit(setup)
        if setup["setup"] != "ok":
            return
        for i, test in enumerate(self.job["tests"]):
            verdict = {"i": i}
            self.chan.out = []
            guard = Guard(0, 8192)  # the tests' own prints stay out of the verdict stream
            try:
                with guard:
                    kind = test["kind"]
                    if self.mode == "stdio":
                        self.run_stdio(test, verdict)
                    elif kind == "assert":
                        self.run_assert(test["src"], self.namespace(), verdict)
                    elif kind == "check":
                        self.run_check(test["src"], self.namespace(), verdict)
                    elif kind == "io":
                        self.run_call(test, verdict)
                    elif kind == "value":
                        self.run_value(test["src"], self.namespace(), verdict)
                    else:
                        raise ValueError("unknown test kind %r" % kind)
            except Tampered as e:
                verdict["status"] = "tampered"
                verdict.update(tampered_record(e))
            except CandidateGone as e:
                verdict["status"] = "error"
                verdict.update({"exc_type": "Crashed", "exc_msg": clip(_str(e), MSG_CAP), "line": None})
            except AssertionError as e:
                verdict["status"] = "failed"
                verdict.update(getattr(e, "rgd_info", None) or error_info(e, "test.py"))
            except BaseException as e:
                verdict["status"] = classify(e)
                verdict.update(getattr(e, "rgd_info", None) or error_info(e, "solution.py"))
            if self.chan.tamper and verdict["status"] != "tampered":
                # Evidence that came with an answer the test accepted still ends the test.
                verdict["status"] = "tampered"
                verdict.update(tampered_record(self.chan.tamper[0]))
            verdict["secs"] = round(getattr(guard, "secs", 0.0), 6)
            stdout = "".join(self.chan.out)
            if stdout and self.mode != "stdio":
                verdict["stdout"] = clip(stdout, REPR_CAP)
            self.emit(verdict)
        # A last checkpoint: what the final test did to the candidate's interpreter.
        try:
            self.chan.checkpoint = True
            self.chan.request({"op": "end"})
        except (Tampered, CandidateGone):
            pass
        if self.chan.tamper:
            self.emit({"run_tampered": clip(self.chan.tamper[0], MSG_CAP)})


class Remote:
    """An object that lives in the candidate. It equals only itself; everything else is a request."""

    __slots__ = ("_c", "_h", "_n", "_f")

    def __init__(self, checker, handle, name, flags):
        object.__setattr__(self, "_c", checker)
        object.__setattr__(self, "_h", handle)
        object.__setattr__(self, "_n", name)
        object.__setattr__(self, "_f", flags)

    def _apply(self, fn, *args):
        c = self._c
        msg = c.chan.request({"op": "apply", "ref": self._h, "fn": fn, "args": [to_wire(a, c.ref) for a in args]})
        return c.value(msg)

    def __call__(self, *args, **kwargs):
        return self._c.call(self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._c.value(self._c.chan.request({"op": "getattr", "ref": self._h, "name": name}))

    def __setattr__(self, name, value):
        c = self._c
        c.value(c.chan.request({"op": "setattr", "ref": self._h, "name": name, "args": [to_wire(value, c.ref)]}))

    def __setitem__(self, key, value):
        self._apply("setitem", key, value)

    def __eq__(self, other):
        return _isinstance(other, Remote) and other._h == self._h

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("rgd-remote", self._h))

    def __bool__(self):
        return bool(self._apply("bool")) if ("__bool__" in self._f or "__len__" in self._f) else True

    def __len__(self):
        return int(self._apply("len"))

    def __iter__(self):
        return iter(self._apply("list"))

    def __next__(self):
        return self._apply("next")

    def __contains__(self, item):
        return bool(self._apply("contains", item))

    def __getitem__(self, key):
        return self._apply("getitem", key)

    def __repr__(self):
        try:
            return _str(self._apply("repr"))
        except BaseException:
            return "<%s from the program>" % self._n

    def __str__(self):
        return _str(self._apply("str"))


def rebuild_exception(name, msg, bases):
    """The program's exception as a checker-side object: a builtin class where one matches, so a
    test's `except ValueError:` still catches it."""
    for base in [name] + [b for b in bases if _isinstance(b, _str)]:
        cls = getattr(builtins, base, None)
        if _isinstance(cls, _type) and issubclass(cls, Exception):
            try:
                return cls(msg)
            except BaseException:
                continue
    return RuntimeError(msg)


def put_back(arg, new):
    """Applies the program's in-place change of an argument to the test's own object."""
    t = _type(arg)
    if t is list and _type(new) is list or t is bytearray and _type(new) is bytearray:
        arg[:] = new
    elif t is dict and _type(new) is dict or t is set and _type(new) is set:
        arg.clear()
        arg.update(new)


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


VALUE_CAP = 20000
_LITERAL_SCALARS = (_type(None), bool, int, str, bytes)


def literal(value, depth):
    """`value` as a Python literal that `ast.literal_eval` reads back equal, or ValueError."""
    if depth > 50:
        raise ValueError("a value nested deeper than 50 levels")
    t = _type(value)
    if t in _LITERAL_SCALARS:
        return _repr(value)
    if t is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("a float that is not finite: %r" % value)
        return _repr(value)
    d = depth + 1
    if t is list:
        return "[" + ", ".join(literal(x, d) for x in value) + "]"
    if t is tuple:
        inner = ", ".join(literal(x, d) for x in value)
        return "(" + inner + ("," if _len(value) == 1 else "") + ")"
    if t is dict:
        return "{" + ", ".join(literal(k, d) + ": " + literal(v, d) for k, v in value.items()) + "}"
    if t is set:
        # Sorted by literal, so the same set always reads the same.
        return "{" + ", ".join(sorted(literal(x, d) for x in value)) + "}" if value else "set()"
    raise ValueError("not plain data: a %s" % t.__name__)


def safe_repr(value):
    try:
        return clip(_repr(value), REPR_CAP)
    except BaseException as e:
        return "<unrepresentable %s: %s>" % (_type(value).__name__, _type(e).__name__)


def find_entry_call(node, entry):
    for sub in walk(node):
        if _isinstance(sub, _ast.Call) and _isinstance(sub.func, _ast.Name) and sub.func.id in (entry, "candidate"):
            return sub
    return None


def eval_node(node, ns):
    return eval(compile(_ast.Expression(body=node), "test.py", "eval"), ns)


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


def serve_checks(job, write, readline):
    """The checker's runs: one, or (a job with "reuse") one after another in this interpreter.

    Between two runs the protocol resets what a run could have changed: every module the run
    imported is dropped (a program's answer can name a module for the checker to import; the next
    run must not find it), and each run gets a new `Checker` (its own channel, nonce, names). Test
    code is the dataset's; the program's answers reach the checker only as JSON data."""
    modules = set(sys.modules)
    while True:
        Checker(job, write, readline).main()
        if not job.get("reuse"):
            return
        for name in list(sys.modules):
            if name not in modules:
                del sys.modules[name]
        write(job["nonce"] + " " + to_json({"end": True}) + "\n")
        line = readline()
        if not line:
            return
        job = from_json(line)
        if job.get("role") != "checker":
            return


def main():
    out = open_private_stdout()

    def write(text):
        out.write(text)
        out.flush()

    readline = private_stdin_readline()
    # The program must not find the runner by importing it.
    me = sys.modules.get(__name__)
    for name, module in list(sys.modules.items()):
        if module is me:
            del sys.modules[name]
    first = readline()
    job = from_json(first)
    if job.get("role") == "checker":
        serve_checks(job, write, readline)
        return
    if job.get("chdir"):
        os.chdir(job["chdir"])  # the read-only data directory of the wasm guest
    if job.get("role") == "tracer":
        # One traced call (sandbox/tracer.py, sent with the job): information, not a verdict.
        # The program's own prints are kept out of the channel.
        tracer = {"__name__": "rgd_tracer", "__builtins__": builtins}
        exec(compile(job.get("tracer_src", ""), "tracer.py", "exec"), tracer)
        sys.stdout = io.StringIO()
        tracer["run"](job, write)
        return
    # `python -S` leaves these out; stdin/stdout programs use them.
    builtins.exit = _exit
    builtins.quit = _exit
    candidate = Candidate(job, write, readline)
    candidate.take_snapshot(sys._getframe())
    sys.addaudithook(candidate.audit)
    candidate.main()


if __name__ == "__main__":
    main()
