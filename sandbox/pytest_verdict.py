"""rgd's pytest plugin: how a project's test outcomes reach rgd (`rgd solve --repo`).

pytest runs the project's tests in the same process as the program under test, so whatever pytest
prints, the program can print too (a line `PASSED tests/t.py::test_x` is one `print` away). rgd
therefore never reads outcomes from pytest's output. This plugin, loaded first (`-p`, before any
conftest or project module is imported), sends them over a channel of its own:

* rgd hands it two pipes: it reads its configuration (a per-run key among it) from one, then
  closes it; it writes one JSON line per record to the other, each carrying the key and a sequence
  number. rgd accepts only an unbroken sequence, one record per test and phase, and a closing
  record: a line the program wrote (without the key, out of sequence, a phase reported twice) or a
  run that ended without the closing record counts as tampering or as tests not run.
* Each phase's outcome (setup, call, teardown) is what this plugin's own hook wrappers saw raised,
  not what pytest's report objects say: patching `TestReport` changes pytest's summary, not these.
* Tamper detection, best effort: before the project is imported it notes the identity of what
  decides an outcome (pytest's runner, report, test-call and skip functions, pluggy's hook calling,
  this plugin's hooks) and checks them again after every test; it installs an audit hook (PEP 578)
  that notes, when the program under test is on the stack, tracing and profiling, frame walks,
  `gc` object queries, special-attribute writes on pytest's or pluggy's classes (Python 3.11
  reports no others: the identities stand in), function code swaps, `ctypes`, new processes,
  opening this channel or `/proc/self/*`, the program's own code opening a test file, and writing
  Python, conftest or pytest configuration files; it refuses pytest hooks implemented by the program or by
  files written during the run; and it probes what the target function returns for objects that
  claim to equal anything. Any of these makes the run `tampered`: rgd counts every test failed.

None of this can be airtight: code in the same process can, with enough effort, reach and rewrite
anything here. The README says what rgd guarantees (the channel and its key are never printed
output) and what it only detects.

Records (JSON lines): {"t": "collected", "ids"}, {"t": "collect_error", "id", "msg", "text"},
{"t": "phase", "id", "when", "outcome": passed|failed|skipped, "exc", "msg"},
{"t": "report", "id", "when", "text"} (pytest's own report and captured output: information for a
reader, never an outcome), {"t": "tamper", "why"}, {"t": "end", "status"}.
"""

import json
import os
import sys
from _json import encode_basestring_ascii

TEXT_CAP = 4000
MSG_CAP = 600
OUTPUT_CAP = 2000

# What decides an outcome: dotted paths; the last part of a class member is read from the class's
# own __dict__ (so properties and classmethods are compared as stored).
DECIDING = (
    "_pytest.runner.call_and_report",
    "_pytest.runner.runtestprotocol",
    "_pytest.runner.call_runtest_hook",
    "_pytest.runner.check_interactive_exception",
    "_pytest.runner.pytest_runtest_protocol",
    "_pytest.runner.pytest_runtest_setup",
    "_pytest.runner.pytest_runtest_call",
    "_pytest.runner.pytest_runtest_teardown",
    "_pytest.runner.pytest_runtest_makereport",
    "_pytest.runner.CallInfo.from_call",
    "_pytest.runner.SetupState.setup",
    "_pytest.runner.SetupState.teardown_exact",
    "_pytest.reports.TestReport.from_item_and_call",
    "_pytest.reports.TestReport.__init__",
    "_pytest.reports.BaseReport.passed",
    "_pytest.reports.BaseReport.failed",
    "_pytest.reports.BaseReport.skipped",
    "_pytest.python.Function.runtest",
    "_pytest.python.Function.setup",
    "_pytest.python.pytest_pyfunc_call",
    "_pytest.python.Function._getobj",
    "_pytest.unittest.TestCaseFunction.runtest",
    "_pytest.main.pytest_runtestloop",
    "_pytest.outcomes.skip",
    "_pytest.outcomes.fail",
    "_pytest.outcomes.xfail",
    "_pytest.outcomes.exit",
    "_pytest.outcomes.Skipped",
    "_pytest.outcomes.Failed",
    "_pytest.outcomes.XFailed",
    "_pytest.outcomes.OutcomeException",
    "_pytest.skipping.pytest_runtest_setup",
    "_pytest.skipping.pytest_runtest_call",
    "_pytest.skipping.pytest_runtest_makereport",
    "_pytest.skipping.evaluate_xfail_marks",
    "_pytest.skipping.evaluate_skip_marks",
    "_pytest.assertion.rewrite.rewrite_asserts",
    "_pytest.assertion.rewrite.AssertionRewriter.run",
    "_pytest.assertion.rewrite.AssertionRewriter.visit_Assert",
    "_pytest.assertion.rewrite.AssertionRewritingHook.exec_module",
    "_pytest.assertion.rewrite.AssertionRewritingHook.find_spec",
    "_pytest.fixtures.FixtureDef.execute",
    "pluggy._callers._multicall",
    "pluggy._hooks.HookCaller.__call__",
    "pluggy._hooks.HookImpl.__init__",
    "pluggy._manager.PluginManager._hookexec",
    "pluggy._manager.PluginManager.register",
    "builtins.isinstance",
    "builtins.BaseException",
    "builtins.Exception",
    "builtins.AssertionError",
)

# Modules whose classes only pytest may change.
GUARDED_MODULES = ("_pytest", "pytest", "pluggy", "rgd_verdict", "unittest", "builtins")
# Standard-library functions that hand a frame back to their caller: the caller is who asked.
HANDS_BACK = frozenset(
    ("currentframe", "stack", "trace", "getouterframes", "getinnerframes", "walk_stack", "walk_tb", "<lambda>", "_getframe")
)
WATCHED = frozenset(
    (
        "sys.settrace",
        "sys.setprofile",
        "sys._getframe",
        "sys._current_frames",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "object.__setattr__",
        "object.__delattr__",
        "object.__getattr__",
        "open",
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.truncate",
        "os.symlink",
        "os.link",
        "os.chmod",
        "os.utime",
        "shutil.copyfile",
        "shutil.move",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "code.__new__",
        "sys.addaudithook",
        # ctypes: loading libraries, reading and writing raw memory, calling C.
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.addressof",
        "ctypes.call_function",
        "ctypes.create_string_buffer",
        "ctypes.create_unicode_buffer",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.PyObj_FromPtr",
        "ctypes.set_errno",
        "ctypes.set_exception",
    )
)
FRAME_ATTRS = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))
# What of /proc/PID holds a process's descriptors, environment or memory.
PROC_ENTRIES = frozenset(("fd", "fdinfo", "environ", "mem", "map_files", "task", "cwd", "root"))
WRITTEN_SUFFIXES = (".py", ".pth", ".pyc", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")


class _Guarded:
    """A target that is a callable object of the program's (an `lru_cache` wrapper), watched in
    the tests' process: its calls' results checked, every other attribute its own
    (`cache_clear`)."""

    __slots__ = ("__wrapped__", "_check")

    def __init__(self, fn, check):
        object.__setattr__(self, "__wrapped__", fn)
        object.__setattr__(self, "_check", check)

    def __call__(self, *a, **k):
        __tracebackhide__ = True
        return self._check(self.__wrapped__(*a, **k))

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)

    def __get__(self, obj, objtype=None):
        import types

        return self if obj is None else types.MethodType(self, obj)


def _install(
    DECIDING=DECIDING,
    GUARDED_MODULES=GUARDED_MODULES,
    HANDS_BACK=HANDS_BACK,
    WATCHED=WATCHED,
    FRAME_ATTRS=FRAME_ATTRS,
    PROC_ENTRIES=PROC_ENTRIES,
    WRITTEN_SUFFIXES=WRITTEN_SUFFIXES,
    TEXT_CAP=TEXT_CAP,
    MSG_CAP=MSG_CAP,
    OUTPUT_CAP=OUTPUT_CAP,
    _isinstance=isinstance,
    _type=type,
    _str=str,
    _int=int,
    _getattr=getattr,
    _len=len,
    _write=os.write,
    _getcwd=os.getcwd,
    _normpath=os.path.normpath,
    _join=os.path.join,
    _frame=sys._getframe,
    _esc=encode_basestring_ascii,
):
    """The whole plugin, built before any project code runs. Everything its hooks rely on is a
    local of this function (taken here: the defaults above), never a module attribute: a program
    can rebind `rgd_verdict_impl._emit` or `json.dumps` in one line, and neither reaches these."""
    import pytest

    def _encode(value):
        """JSON from the C string escaper and builtin types only (`json.dumps` is Python code
        whose module a program can rewire)."""
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        t = _type(value)
        if t is _str:
            return _esc(value)
        if t is _int:
            return _int.__repr__(value)
        if t is list or t is tuple:
            return "[" + ",".join([_encode(v) for v in value]) + "]"
        if t is dict:
            return "{" + ",".join([_esc(_str(k)) + ":" + _encode(v) for k, v in value.items()]) + "}"
        return _esc(_str(value))

    def _resolve(dotted):
        """The object a dotted path names (a class member as stored in the class), or None."""
        parts = dotted.split(".")
        # Modules already loaded only: pytest has imported all of these before any `-p` plugin, and a
        # failed import of a dotted name that is no module costs a search of the whole path.
        for cut in range(_len(parts) - 1, 0, -1):
            module = sys.modules.get(".".join(parts[:cut]))
            if module is None:
                continue
            obj = module
            for i, name in enumerate(parts[cut:]):
                holder = obj
                if _isinstance(holder, _type) and i == _len(parts) - cut - 1:
                    obj = _type.__dict__["__dict__"].__get__(holder).get(name)
                else:
                    obj = _getattr(holder, name, None)
                if obj is None:
                    return None
            return obj
        return None


    def _setup():
        """Reads the configuration, opens the channel and installs the watchers; returns the plugin."""
        env = os.environ
        cfg_fd = int(env.pop("RGD_VERDICT_IN"))
        out_fd = int(env.pop("RGD_VERDICT_OUT"))
        chunks = []
        while True:
            b = os.read(cfg_fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
        os.close(cfg_fd)
        os.set_inheritable(out_fd, False)
        cfg = json.loads(b"".join(chunks))
        key = cfg["key"]
        root = _normpath(cfg["root"])
        root_slash = root + os.sep
        target = cfg.get("target") and _normpath(_join(root, cfg["target"]))
        target_name = cfg.get("name")
        # The functions the agents wrote (the target and the helpers they added): only these are
        # "the program" in the target's file, never the module's own import-time code (a
        # `namedtuple(..., defaults=...)` sets a function's __defaults__ as the module loads).
        program_names = cfg.get("program")
        isolated = cfg.get("isolate")
        protected = frozenset(_normpath(_join(root, p)) for p in cfg.get("protected", ()))
        # The run's node ids: of these files only these ids are kept (rgd names the files on
        # pytest's command line, so an id that no longer collects is a test not run, not a run
        # pytest refuses whole).
        select = cfg.get("select")
        tools = _normpath(os.path.dirname(os.path.abspath(__file__)))
        trusted_dirs = tuple(
            d + os.sep
            for d in {_normpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, tools)}
            | {_normpath(p) for p in sys.path if p and os.path.isabs(p) and not _normpath(p).startswith(root)}
            if d != os.sep
        )
        stdlib = _normpath(os.path.dirname(os.__file__)) + os.sep
        seq = [0]
        tampered = []
        written = set()

        def emit(record):
            record["k"] = key
            record["seq"] = seq[0]
            seq[0] += 1
            data = (_encode(record) + "\n").encode()
            while data:
                data = data[_write(out_fd, data) :]

        def tamper(why):
            if why not in tampered:
                tampered.append(why)
                emit({"t": "tamper", "why": why})

        # --- who did it -------------------------------------------------------------------------------
        def program_code(filename, code=None):
            """Code the agents wrote: their functions in the target file, or code compiled from a
            string (`<string>`)."""
            if filename == target:
                if program_names is None or code is None:
                    return True
                qualname = _getattr(code, "co_qualname", code.co_name)
                return any(qualname == n or qualname.startswith(n + ".") for n in program_names)
            return filename[:1] == "<" and not filename.startswith("<frozen")

        def program_on_stack(f):
            while f is not None:
                if program_code(f.f_code.co_filename, f.f_code):
                    return True
                f = f.f_back
            return False

        def made_by_program(fn):
            """A function the program compiled from a string of its own (boltons' `get_func`
            `exec`s one, then sets its defaults): its own to change. Never a test's function,
            nor a doctest's, whose code is compiled from a string too."""
            code = _getattr(fn, "__code__", None)
            filename = _getattr(code, "co_filename", "")
            return _isinstance(filename, _str) and program_code(filename, code) and not filename.startswith("<doctest")

        def program_asked(f):
            """Whether the program itself asked (directly, or through a standard-library function that
            hands the result back to it), rather than the library for its own internal use."""
            while f is not None:
                filename = f.f_code.co_filename
                if program_code(filename, f.f_code):
                    return True
                if not (filename.startswith(stdlib) or filename.startswith("<frozen")):
                    return False
                if f.f_code.co_name not in HANDS_BACK:
                    return False
                f = f.f_back
            return False

        def program_opened(f):
            """Whether the program's own code opened the file, itself or through the standard library
            (`pathlib`, `linecache`, `shutil`): not a module of the project's that a test handed a path
            (a test that gives its own `__file__` to the code under test)."""
            while f is not None:
                filename = f.f_code.co_filename
                if not (filename.startswith(stdlib) or filename.startswith("<frozen")):
                    return program_code(filename, f.f_code)
                f = f.f_back
            return False

        def path_of(p):
            if _isinstance(p, bytes):
                p = p.decode("utf-8", "replace")
            if not _isinstance(p, _str):
                try:
                    p = os.fspath(p)
                except TypeError:
                    return None
                if _isinstance(p, bytes):
                    p = p.decode("utf-8", "replace")
            if not p.startswith(os.sep):
                p = _join(_getcwd(), p)
            return _normpath(p)

        def touches_channel(p):
            if p.startswith("/proc/"):
                rest = p[6:].split(os.sep)
                return _len(rest) > 1 and rest[1] in PROC_ENTRIES
            return p.startswith("/dev/fd") or p == tools or p.startswith(tools + os.sep)

        def writes(mode, flags):
            if _isinstance(mode, _str):
                return any(c in mode for c in "wax+")
            if _isinstance(flags, int):
                return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            return False

        def guarded_class(obj):
            module = _getattr(obj, "__module__", "") or ""
            return _isinstance(module, _str) and module.split(".")[0] in GUARDED_MODULES

        def check(event, args, f):
            if event == "object.__getattr__":
                if args[1] in FRAME_ATTRS and program_asked(f):
                    tamper("the program reached pytest's frames (%s)" % args[1])
            elif event == "object.__setattr__" or event == "object.__delattr__":
                obj, name = args[0], args[1]
                if _isinstance(obj, _type):
                    if guarded_class(obj) and program_on_stack(f):
                        tamper("the program changed %s.%s" % (obj.__qualname__, name))
                elif name in ("__code__", "__defaults__", "__kwdefaults__") and program_on_stack(f) and not made_by_program(obj):
                    tamper("the program swapped a function's %s (%s)" % (name, _getattr(obj, "__qualname__", "?")))
            elif event == "open":
                if _isinstance(args[0], int):
                    if args[0] == out_fd and program_on_stack(f):
                        tamper("the program opened rgd's verdict channel")
                    return
                p = path_of(args[0])
                if p is None:
                    return
                writing = writes(args[1], args[2] if _len(args) > 2 else None)
                if writing and (p.endswith(WRITTEN_SUFFIXES) or os.path.basename(p) == "conftest.py"):
                    written.add(p)
                    if program_on_stack(f):
                        tamper("the program wrote %s" % p.replace(root_slash, ""))
                elif touches_channel(p) and program_on_stack(f):
                    tamper("the program opened %s" % p)
                elif p in protected and program_opened(f):
                    tamper("the program read the test file %s" % p.replace(root_slash, ""))
            elif event in ("os.rename", "os.remove", "os.truncate", "os.symlink", "os.link", "os.chmod", "os.utime", "shutil.copyfile", "shutil.move"):
                paths = [path_of(a) for a in args[:2] if _isinstance(a, (_str, bytes))]
                for p in paths:
                    if p and (p in protected or p.endswith(WRITTEN_SUFFIXES) or os.path.basename(p) == "conftest.py"):
                        written.add(p)
                        if program_on_stack(f):
                            tamper("the program changed %s (%s)" % (p.replace(root_slash, ""), event))
            elif event in ("sys._getframe", "sys._current_frames"):
                if program_asked(f):
                    tamper("the program walked the interpreter's frames (%s)" % event)
            elif event.startswith("gc."):
                if program_asked(f):
                    tamper("the program searched the interpreter's objects (%s)" % event)
            elif event in ("sys.settrace", "sys.setprofile", "sys.addaudithook"):
                if program_on_stack(f):
                    tamper("the program called %s" % event)
            elif event == "code.__new__":
                # (Not `marshal.loads`: every import of a cached module makes code that way.)
                if program_on_stack(f):
                    tamper("the program made code objects (%s)" % event)
            elif program_on_stack(f):
                # ctypes, new processes, signals.
                tamper("the program used %s" % event)

        busy = [False]

        # Called for every audited event of the process (pytest alone raises tens of thousands, most of
        # them `builtins.id`): the first test must be as cheap as a set lookup, and a frame is fetched
        # only for the events that can matter.
        def audit(event, args, watched=WATCHED, frame_attrs=FRAME_ATTRS):
            if event not in watched:
                return
            if event == "object.__getattr__" and args[1] not in frame_attrs:
                return
            if busy[0]:
                return
            busy[0] = True
            try:
                check(event, args, _frame(1))
            except BaseException:
                pass
            finally:
                busy[0] = False

        # --- identities ---------------------------------------------------------------------------------
        known = {name: _resolve(name) for name in DECIDING}
        known = {name: obj for name, obj in known.items() if obj is not None}

        def check_identities():
            for name, obj in known.items():
                if _resolve(name) is not obj:
                    tamper("%s was replaced while the tests ran" % name)

        # --- hooks the program may not implement -----------------------------------------------------------
        def trusted_file(filename):
            if program_code(filename) or filename in written:
                return False
            if filename.startswith("<frozen") or filename.startswith(root_slash):
                return True
            return filename.startswith(trusted_dirs)

        seen_impls = {}

        def check_hooks(pm):
            for name in dir(pm.hook):
                caller = _getattr(pm.hook, name, None)
                get = _getattr(caller, "get_hookimpls", None)
                if get is None:
                    continue
                for impl in get():
                    fn = impl.function
                    was = seen_impls.get(id(impl))
                    if was is not None and was[0] is impl and was[1] is fn:
                        continue
                    if was is not None and was[0] is impl:
                        tamper("pytest's hook %s was given another function" % name)
                    code = _getattr(_getattr(fn, "__func__", fn), "__code__", None)
                    if code is None:
                        if not guarded_class(_type(impl.plugin)) and not guarded_class(impl.plugin):
                            tamper("a pytest hook (%s) that is not a function, from %s" % (name, impl.plugin_name))
                    elif not trusted_file(code.co_filename):
                        tamper("a pytest hook (%s) implemented by the program (%s)" % (name, code.co_filename.replace(root_slash, "")))
                    seen_impls[id(impl)] = (impl, fn)

        # --- what the target returns ----------------------------------------------------------------------
        class _Unlikely:
            __slots__ = ()

        def claims_anything(value, depth=0):
            t = _type(value)
            if t in (int, float, str, bytes, bool, type(None), complex):
                return False
            if t in (list, tuple, set, frozenset) and depth < 2:
                return any(claims_anything(v, depth + 1) for v in list(value)[:50])
            if t is dict and depth < 2:
                return any(claims_anything(v, depth + 1) for v in list(value.values())[:50])
            try:
                return (value == _Unlikely()) is True or (value == -7.0123e-301) is True or (value != _Unlikely()) is False
            except Exception:
                return False

        def guard(fn, qualname):
            import functools
            import inspect

            def check_result(result):
                if claims_anything(result):
                    tamper("%s returned an object that claims to equal anything" % qualname)
                return result

            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def guarded(*a, **k):
                    __tracebackhide__ = True
                    return check_result(await fn(*a, **k))

            elif inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
                return fn
            elif not inspect.isfunction(fn):
                # A callable object (an `lru_cache` wrapper: soupsieve's tests call its
                # `cache_clear`): guarded calls, every other attribute its own.
                return _Guarded(fn, check_result)
            else:

                @functools.wraps(fn)
                def guarded(*a, **k):
                    __tracebackhide__ = True
                    return check_result(fn(*a, **k))

            return guarded

        def wrap_target(module):
            parts = target_name.split(".")
            holder = module
            for part in parts[:-1]:
                holder = _getattr(holder, part, None)
                if holder is None:
                    return
            stored = (_type.__dict__["__dict__"].__get__(holder) if _isinstance(holder, _type) else holder.__dict__).get(parts[-1])
            if stored is None:
                return
            for kind in (staticmethod, classmethod):
                if _isinstance(stored, kind):
                    setattr(holder, parts[-1], kind(guard(stored.__func__, target_name)))
                    return
            if callable(stored):
                setattr(holder, parts[-1], guard(stored, target_name))

        class TargetFinder:
            """Wraps the target function once its module has run (the program's own code first)."""

            def find_spec(self, name, path=None, target_module=None):
                for finder in sys.meta_path:
                    if finder is self:
                        continue
                    find = _getattr(finder, "find_spec", None)
                    spec = find and find(name, path, target_module)
                    if spec is not None:
                        if spec.origin and _normpath(spec.origin) == target and spec.loader is not None:
                            loader = spec.loader
                            run = loader.exec_module

                            class Loader:
                                def __getattr__(self, name):
                                    return _getattr(loader, name)

                                def create_module(self, spec):
                                    return loader.create_module(spec)

                                def exec_module(self, module):
                                    run(module)
                                    wrap_target(module)

                            spec.loader = Loader()
                            return spec
                        return None
                return None

        if isolated:
            # The program runs in a process of its own (`sandbox/rgd_isolate/`): nothing here is its
            # code, so there is nothing to watch; a call the tests cannot send as data is said on
            # the channel, and rgd judges the target in-process instead, labelled so.
            import rgd_isolate

            def refused(why, cause=None):
                emit({"t": "not_isolated", "why": why, "cause": cause})
                # rgd judges the whole run again in-process: the tests still to come here would
                # only be thrown away (a suite of slow failures, for minutes).
                session = _state.get("session")
                if session is not None:
                    session.shouldstop = "rgd judges this run in-process: %s" % why

            rgd_isolate.refusals.on_refusal = refused
            # (A `fileno()` the program asks of a lent object crosses with the descriptor: never
            # this channel's.)
            rgd_isolate.fds.guarded.add(out_fd)
            rgd_isolate.watch_patches()
        else:
            if target and target_name:
                sys.meta_path.insert(0, TargetFinder())
            sys.addaudithook(audit)
        return emit, tamper, tampered, check_identities, check_hooks, known, select


    _emit, _tamper, _tampered, _check_identities, _check_hooks, _known, _select = _setup()
    _Skipped = _known.get("_pytest.outcomes.Skipped")
    _XFailed = _known.get("_pytest.outcomes.XFailed")
    _state = {"pm": None, "items": {}}


    def _first_line(e):
        try:
            text = _str(e)
        except Exception:
            text = "(unprintable %s)" % _type(e).__name__
        return text.strip().split("\n")[0][:MSG_CAP]


    def _failed(item, when, e):
        skipped = (_Skipped is not None and _isinstance(e, _Skipped)) or (_XFailed is not None and _isinstance(e, _XFailed))
        msg = _first_line(e)
        # A failure the project marked as expected (xfail) is still no pass: said as such.
        if when == "call" and not skipped and item.get_closest_marker("xfail") is not None:
            skipped, msg = True, "expected to fail (xfail): " + msg
        _emit(
            {
                "t": "phase",
                "id": item.nodeid,
                "when": when,
                "outcome": "skipped" if skipped else "failed",
                "exc": _type(e).__name__,
                "msg": msg,
            }
        )


    def _phase(item, when):
        """The phase's outcome, from what it raised."""
        try:
            result = yield
        except BaseException as e:
            _failed(item, when, e)
            raise
        # A unittest case records its failures, skips and expected failures on the item instead of
        # raising them; pytest makes them the call's exception only when it writes its report, after
        # this wrapper.
        recorded = _getattr(item, "_excinfo", None) if when == "call" else None
        if recorded:
            _failed(item, when, _getattr(recorded[0], "value", recorded[0]))
        else:
            _emit({"t": "phase", "id": item.nodeid, "when": when, "outcome": "passed"})
        return result


    def _function(obj):
        """The function under a bound method (a unittest test's `obj` is bound anew at every read)."""
        return _getattr(obj, "__func__", obj)


    def _checked_item(item):
        """The test about to run (or just run) is the one collected: same function, same code, no
        method replaced on the item itself."""
        seen = _state["items"].get(item.nodeid)
        if seen is None:
            return
        obj = _function(_getattr(item, "obj", None))
        if obj is not seen[0] or _getattr(obj, "__code__", None) is not seen[1]:
            _tamper("the test %s was replaced" % item.nodeid)
        for name, value in vars(item).items():
            if callable(value) and name != "_obj" and hasattr(_type(item), name):
                _tamper("the test item %s had %s replaced" % (item.nodeid, name))




    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(item):
        _checked_item(item)
        return (yield from _phase(item, "setup"))


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(item):
        _checked_item(item)
        return (yield from _phase(item, "call"))


    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(item, nextitem):
        result = yield from _phase(item, "teardown")
        isolate = sys.modules.get("rgd_isolate")
        if isolate is not None and _state.get("session") is not None:
            # (A process the test started that called the target: `children_checked`.)
            isolate.children_checked()
        _checked_item(item)
        _check_identities()
        if _state["pm"] is not None:
            _check_hooks(_state["pm"])
        return result


    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        _state["pm"] = config.pluginmanager


    def _asked_nodes(select):
        """Every node an asked id passes through below its file (`f::Class`, `f::Class::test`),
        parameters taken off: what pytest itself would descend into for those ids."""
        nodes = set()
        for nodeid in select["ids"] if select else ():
            parts = nodeid.split("::")
            for depth in range(2, len(parts) + 1):
                nodes.add("::".join(parts[:depth]).split("[")[0])
        return frozenset(nodes)


    _narrowed = frozenset(_select["files"]) if _select else frozenset()
    _asked = _asked_nodes(_select)


    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makeitem(collector, name, obj):
        # In a file narrowed to some of its tests, what no asked id names is not collected at all,
        # as pytest leaves it when given node ids: collecting it could fail the whole run (a class
        # pytest warns it cannot collect, where a test module turned warnings into errors).
        nodeid = collector.nodeid
        if nodeid.split("::")[0] in _narrowed and (nodeid + "::" + name) not in _asked:
            return []
        return None


    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(session, config, items):
        if not _select:
            return
        # In the order asked: callers order tests on purpose (`rgd locate` runs the failing ones
        # last, so what runs once per process is charged to a passing test), as pytest keeps the
        # order of the ids on its command line. Tests of whole files asked for go first, as they are.
        order = {nodeid: i for i, nodeid in enumerate(_select["ids"])}
        keep, drop = [], []
        for item in items:
            narrowed = item.nodeid.split("::")[0] in _narrowed
            (drop if narrowed and item.nodeid not in order else keep).append(item)
        keep.sort(key=lambda item: order.get(item.nodeid, -1))
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep


    def pytest_collectreport(report):
        if report.failed:
            text = _getattr(report, "longreprtext", "") or ""
            lines = [l for l in text.splitlines() if l.startswith("E ")]
            _emit(
                {
                    "t": "collect_error",
                    "id": report.nodeid,
                    "msg": (lines[-1][1:].strip() if lines else text.strip().split("\n")[-1] if text.strip() else "")[:MSG_CAP],
                    "text": text[-TEXT_CAP:],
                }
            )


    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(session):
        # Isolated: the module state both processes start from is the one after collection.
        isolate = sys.modules.get("rgd_isolate")
        if isolate is not None:
            isolate.baseline()
            _state["session"] = session
        for item in session.items:
            obj = _function(_getattr(item, "obj", None))
            _state["items"][item.nodeid] = (obj, _getattr(obj, "__code__", None))
        _check_identities()
        _check_hooks(session.config.pluginmanager)
        _emit({"t": "collected", "ids": [item.nodeid for item in session.items]})


    def pytest_runtest_logreport(report):
        if report.passed and report.when != "call":
            return
        text = _getattr(report, "longreprtext", "") or ""
        for title, content in _getattr(report, "sections", ()):
            text += "\n----- %s -----\n%s" % (title, content[:OUTPUT_CAP])
        if text.strip():
            _emit({"t": "report", "id": report.nodeid, "when": report.when, "text": text[:TEXT_CAP]})


    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session, exitstatus):
        _check_identities()
        _check_hooks(session.config.pluginmanager)
        _emit({"t": "end", "status": int(exitstatus), "tampered": list(_tampered)})

    return {name: value for name, value in locals().items() if name.startswith("pytest_")}


globals().update(_install())
del _install
