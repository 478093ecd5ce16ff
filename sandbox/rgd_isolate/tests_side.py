"""The tests' side: the stub's `call`, the connection to the program's process, patches watched."""

import collections
import itertools
import os
import socket
import sys
import time
import types


_client = [None]


def _current_test():
    return (os.environ.get("PYTEST_CURRENT_TEST") or "").rsplit(" ", 1)[0]


# What the tests patched outside the project (monkeypatch, unittest.mock) and is still in force,
# as (what, module name or None, attribute, value): a standard module's function replaced by a
# plain function is replaced in the program's process too (calling the test's back); any other
# patch the program's process cannot see, so a call made under one is not isolated.
_patches = {}


# A process the tests start (`python -m slugify`, a fork) imports the tests' copy, whose target
# is the stub, and has no channel: the socket is the tests' process's own (in a child its number
# may be another file's). It must never run the program's code with the tests' rights: the stub
# leaves a mark in the tests' copy, where the program's process cannot write (only the tests'
# side can cause this), with the time, and fails. A mark made while the tests' process ran code
# for the program (a callback the program called that starts such a process) is the program's
# doing, and that failure its own; any other, the tests', judges the run in-process
# (`children_checked`). The tests' process is the one rgd's plugin started in (`watch_patches`).
_OWNER, _MARK = "RGD_ISOLATE_OWNER", ".rgd-isolate-child"
_owner = [None]


def _noting_served(peer):
    """The tests' end of the channel, made to note when it ran code for the program (`served`:
    the clock is the system's, which the processes the tests start read too)."""
    serve = peer.serve

    def noted(m):
        start = time.monotonic()
        try:
            return serve(m)
        finally:
            peer.served.append((start, time.monotonic()))

    peer.served, peer.serve = [], noted


def _connect():
    peer = _client[0]
    if _owner[0] != os.getpid():
        # (A fork of the tests' process too, which holds its peer: one socket, two speakers.)
        cfg = read(TestsConfig, os.environ.get("RGD_ISOLATE", "{}"))
        with open(os.path.join(cfg.root, _MARK), "a") as mark:
            mark.write("%.6f %s\n" % (time.monotonic(), " ".join(sys.argv).replace(os.path.join(cfg.root, ""), "")[:200]))
        raise RuntimeError("the target was called in a process the tests started, which has no channel to the program's process")
    if peer is None:
        cfg = read(TestsConfig, os.environ.get("RGD_ISOLATE", "{}"))
        sock = socket.socket(fileno=cfg.fd)
        sock.setblocking(True)
        os.set_inheritable(sock.fileno(), False)
        policy = Policy(cfg.root, cfg.project, True)
        peer = Peer(sock, policy, "the program's process", timeout=float(cfg.timeout))
        _noting_served(peer)
        peer.state = ModuleState(policy)
        peer.state.agree()
        # Nothing agreed yet: the first call sends the tests' whole environment (the program's
        # process starts with a few variables only: in one process the program sees the tests').
        peer.env = {}
        peer.copied = 0
        peer.tmp = os.path.normpath(cfg.tmp or "/nonexistent") + os.sep
        peer.assigned = Assignments()
        peer.dirs_checked = {}
        _client[0] = peer
    return peer


def baseline():
    """Called by rgd's plugin once collection imported the project: module state as both sides
    have it before any test ran."""
    if os.environ.get("RGD_ISOLATE"):
        fresh = _client[0] is None
        peer = _connect()
        if not fresh:
            # Connected while the project was importing (its own code called the target at
            # import): what both sides hold is what they hold now, every module imported.
            with peer.lock:
                peer.state.agree()
        # The code every imported module holds before any test ran: a module that crosses by
        # name must still hold it (`Encoder.fresh`), else a test changed it by assignment.
        peer.pristine = {}
        for n, m in list(sys.modules.items()):
            ns = _own_dict(m)
            if isinstance(ns, dict):
                peer.pristine[n] = [(a, x) for a, x in list(ns.items()) if _behaviour(x)]
        peer.assigned.baseline(peer.policy, peer.pristine, peer.state._project_modules())


def children_checked():
    """The tests' process, after each test: whether a process the tests started called the
    target (`_MARK`); if so, said to rgd's plugin (`child_process`)."""
    peer = _client[0]
    served = list(peer.served) if peer is not None else []
    if peer is not None:
        del peer.served[:]
    # (Connected, the copy is the policy's root: no configuration read again after each test.)
    root = peer.policy.root if peer is not None else read(TestsConfig, os.environ.get("RGD_ISOLATE", "{}")).root
    path = os.path.join(root, _MARK)
    try:
        with open(path) as mark:
            lines = [line.rstrip("\n").partition(" ") for line in mark]
        os.unlink(path)
    except FileNotFoundError:
        lines = []
    for at, _, what in lines:
        try:
            at = float(at)
        except ValueError:
            continue
        if not any(start <= at <= end for start, end in served):
            _said(getattr(peer, "qualname", None) or "the target", "child_process", what or "a process")
            return True
    return False


def watch_patches():
    """Notes, while they are in force, what pytest's `monkeypatch` and `unittest.mock` patch
    outside the project's modules (the environment and the working directory are sent along).
    Called as rgd's plugin starts: this is the tests' process (`_connect`), unless a process
    that started before it is (the plugin in a pytest the tests run)."""
    me = str(os.getpid())
    _owner[0] = os.getpid() if os.environ.setdefault(_OWNER, me) == me else None
    try:
        from _pytest.monkeypatch import MonkeyPatch
    except ImportError:
        MonkeyPatch = None
    if MonkeyPatch is not None:
        setattr_, undo = MonkeyPatch.setattr, MonkeyPatch.undo

        def patched_setattr(self, target, name=None, *a, **k):
            result = setattr_(self, target, name, *a, **k)
            # Only a test's own patches: pytest patches its own classes for the whole session.
            if os.environ.get("PYTEST_CURRENT_TEST"):
                _patches.setdefault(id(self), []).append(_patch_entry(target, name, a, k))
            return result

        def patched_undo(self):
            _patches.pop(id(self), None)
            return undo(self)

        MonkeyPatch.setattr, MonkeyPatch.undo = patched_setattr, patched_undo
    try:
        import unittest.mock as mock
    except ImportError:
        return
    enter, exit_ = mock._patch.__enter__, mock._patch.__exit__

    def patched_enter(self):
        result = enter(self)
        if os.environ.get("PYTEST_CURRENT_TEST"):
            target = self.getter()
            if isinstance(target, types.ModuleType):
                what, module = "%s.%s" % (target.__name__, self.attribute), target.__name__
            else:
                # A class's attribute: named from its module, which says whose it is.
                holder = "%s.%s" % (getattr(target, "__module__", "?"), getattr(target, "__qualname__", type(target).__name__))
                what, module = "%s.%s" % (holder, self.attribute), None
            # What the patch put in place (a mock, or the `new` it was given).
            _patches[id(self)] = [(what, module, self.attribute, getattr(target, self.attribute, None), None if module else target)]
        return result

    def patched_exit(self, *exc):
        _patches.pop(id(self), None)
        return exit_(self, *exc)

    mock._patch.__enter__, mock._patch.__exit__ = patched_enter, patched_exit


def _patch_entry(target, name, rest, kwargs):
    """(what, module name or None, attribute, value, the object patched when it is no module) of a
    `monkeypatch.setattr` call."""
    if isinstance(target, str):
        # `setattr("os.path.exists", fake)`: the dotted path, then the value.
        module_name, _, attr = target.rpartition(".")
        module = sys.modules.get(module_name)
        value = name
    else:
        module, attr = target, name
        value = rest[0] if rest else kwargs.get("value")
    module_name = module.__name__ if isinstance(module, types.ModuleType) else None
    what = "%s.%s" % (getattr(module, "__name__", type(module).__name__) if module is not None else target, attr)
    return (what, module_name, attr, value, None if module_name is not None or isinstance(target, str) else module)


def _outside_project(entry, policy):
    """Whether a patch is of something outside the project's modules: the module it is in is
    the longest imported one its dotted name begins with (a class's attribute, `pkg.m.C.f`)."""
    parts = entry[0].split(".")
    for i in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:i])
        if name in sys.modules:
            return not policy.project_module(name)
    return not policy.project_module(parts[0])


def _forwarded(entry):
    """Whether a patch outside the project is made in the program's process too: an attribute of
    a module of the standard library's or an installed package's, replaced by anything that
    crosses (`monkeypatch.setattr(sys, "getfilesystemencoding", lambda: "utf-8")`: a function is
    called back, a test's class lent, data copied)."""
    _, module, attr, value, _ = entry
    if module == "sys" and attr in _STREAMS:
        # What the program prints already reaches the tests' `sys.stdout` as it stands; a stdin
        # the test set crosses as data or is lent (or is refused, as an argument would be).
        return True
    if module == "builtins":
        # A function put in a builtin's place is made for the project's code only (`Server.
        # shadow_builtins`), never in the program's `builtins`, which the channel runs on.
        return isinstance(attr, str) and callable(value)
    if module in _OWN_MODULES or (module, attr) in _OWN_FUNCTIONS:
        return False
    return module is not None and (_is_stdlib_module(module) or _is_installed_module(module)) and isinstance(attr, str)


_STREAMS = frozenset(("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__"))


# What a test may put in a function's place that the program's process calls back: a function,
# or a method of a test's object (`monkeypatch.setattr(time, "time", clock.time)`).
_CALLED_BACK = (types.FunctionType, types.MethodType)


# What this module itself calls in the program's process: a test's patch of one of them is not
# forwarded (the socket's own `json.dumps` would call the test back).
_OWN_MODULES = frozenset(
    ("json", "select", "socket", "struct", "threading", "_thread", "base64", "importlib", "builtins", "io", "types",
     "itertools", "operator", "collections", "logging", "warnings", "traceback", "os.path", "posixpath", "asyncio")
)


_OWN_FUNCTIONS = frozenset(
    (("os", "getcwd"), ("os", "chdir"), ("os", "set_inheritable"), ("os", "getpid"), ("os", "fspath"), ("sys", "setrecursionlimit"),
     ("sys", "getrecursionlimit"), ("sys", "_getframe"), ("sys", "exc_info"))
)


def _test_path(rel):
    """A file the program's copy never holds (`isolate::kept_from_the_program`)."""
    parts = rel.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test", "testing") for p in parts)
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", ".pytest.ini")
    )


def _tests_inside(peer, path):
    """Whether a directory of the tests' copy holds a file the program's copy lacks: there the
    program's walk (which crosses to its own copy, `Policy.swap_roots`) would miss it. Asked
    once per directory of a run."""
    seen = peer.dirs_checked
    if path not in seen:
        root = peer.policy.root
        seen[path] = os.path.isdir(path) and any(
            _test_path(os.path.join(d, n)[len(root) :].replace(os.sep, "/")) for d, _, names in os.walk(path) for n in names
        )
    return seen[path]


def _given_files(peer, value, found, depth=0):
    """Fills `found` with the path arguments, or those in an argument's containers or project
    objects, naming files of the tests' that the program's copy lacks (a test's data file): the
    program's process could not open them. Every one is collected, as the program may open any."""
    import pathlib

    if depth > 3:
        return found
    if isinstance(value, (str, pathlib.PurePath)):
        text = str(value)
        if "/" not in text or len(text) > 4096 or "\0" in text:
            return found
        path = os.path.normpath(os.path.join(os.getcwd(), text))
        root = peer.policy.root
        rel = path[len(root) :].replace(os.sep, "/")
        if (path + os.sep).startswith(root) and os.path.exists(path) and (_test_path(rel) or _tests_inside(peer, path)):
            found.add(path)
    elif type(value) in (list, tuple, set, frozenset):
        for v in list(value)[:100]:
            _given_files(peer, v, found, depth + 1)
    elif type(value) is dict:
        for v in list(value.values())[:100]:
            _given_files(peer, v, found, depth + 1)
    elif type(value).__module__ != "builtins" and peer.policy.kind_of_class(type(value)) == "project":
        # An object of the project's that crosses as data, holding the path (click's `Option`
        # whose default is the test's own file, which the program's `prompt` opens).
        _given_files(peer, _state(value), found, depth)
    return found


def _stub_defaults(qualname, frame):
    """The stub's default values (the project's own function's, under its decorators)."""
    try:
        return _defaults(_stored(frame.f_globals, qualname), frame.f_code)
    except (KeyError, AttributeError, TypeError):
        return []


def call(qualname, args, kwargs):
    """The stub's body: the target's call, made in the program's process (one thread's call at
    a time, as the stream carries one conversation)."""
    peer = _connect()
    with peer.turn():
        return _call(peer, qualname, args, kwargs)


def _call(peer, qualname, args, kwargs):
    outermost = peer.depth == 0
    if outermost:
        peer.qualname = qualname
        # (The stub's frame: `call`'s caller.)
        stub = sys._getframe(2)
        peer.target_defaults = _stub_defaults(qualname, stub)
        peer.policy.target_module = stub.f_globals.get("__name__")
        # (A project's function crosses by its name instead, and so comes back as the tests' own:
        # cachetools' `cached(cache)` keeps its default `key=hashkey`, which the tests check by `is`.)
        peer.defaults = {
            id(d): i for i, d in enumerate(peer.target_defaults) if type(d) not in _SCALARS and not (type(d) is types.FunctionType and peer.policy.function_name(d))
        }
    try:
        policy = peer.policy
        active = [w for ws in list(_patches.values()) for w in ws if _outside_project(w, policy)]
        patched = {(w[1], w[2]) for w in active}
        # What the tests replaced by assignment (freezegun) is carried over as a patch is.
        # (Not in the channel's own modules, which the test runner sets around each test: the
        # program's process keeps its own, as it did before any of this was looked at.)
        assigned = [("%s.%s" % (m, a), m, a, v, None) for m, a, v in peer.assigned.replaced(_current_test()) if (m, a) not in patched]
        active += [e for e in assigned if _forwarded(e)]
        stdin = sys.stdin
        if ("sys", "stdin") not in patched and stdin is not sys.__stdin__ and not type(stdin).__module__.startswith("_pytest"):
            # A stdin the test assigned (python-slugify's `sys.stdin = io.StringIO(...)`), not
            # pytest's own: read by the program as one the test patched is.
            active.append(("sys.stdin", "sys", "stdin", stdin, None))
        peer.patched_now = {(w[1], w[2]) for w in active}
        own_streams = (("stdout", sys.stdout), ("stderr", sys.stderr))
        stream_patches, outside = [], []
        for entry in active:
            # A patch of the tests' own stream as it stands (`sys.stdout.isatty`): made on the
            # streams the program prints to during this call.
            on = next((name for name, stream in own_streams if entry[4] is not None and entry[4] is stream), None)
            if on is not None:
                stream_patches.append((on, entry[2], entry[3]))
            elif not _forwarded(entry):
                _refuse(qualname, "patched", entry[0])
            elif not (entry[1] == "sys" and entry[2] in _STREAMS and entry[2] != "stdin"):
                outside.append(entry[1:4])
        state, behaviour = peer.state.changes()
        # A project function a test replaced (`monkeypatch.setattr(pkg.utils, "f", fake)`): the
        # program's process calls the fake back here, as a callback; put back, its own again.
        # Anything else put in a function's place (a mock, a class) cannot be called back.
        patches = []
        for key, value in behaviour:
            if value is peer.state.original.get(key, _MISSING):
                patches.append((key, None))
            elif not _behaviour(value):
                state.append((key, value))  # a function's place given back to data (None)
            elif type(value) in _CALLED_BACK or _is_mock(value) or isinstance(value, type):
                # (A mock is lent: the program calls it, the test asserts the calls here; a
                # class is lent or crosses by name, `_lent_code`.)
                patches.append((key, value))
            else:
                _refuse(qualname, "patched", _key_name(key))
        cwd = os.getcwd()
        if not (cwd + os.sep).startswith(policy.root) and not (cwd + os.sep).startswith(peer.tmp) and cwd + os.sep != policy.root:
            _refuse(qualname, "directory", cwd)
        for given in sorted(_given_files(peer, (args, kwargs), set())):
            # Decided here, of what the tests pass, before the program runs: whether it then
            # opens the path, or fails, cannot choose the tests' process for its verdict.
            _refuse(qualname, "own_file", given[len(policy.root) :] or "(the project's root)")
        env = _environment()
        try:
            # What is empty or unchanged (most calls: no state, patch or environment change) is
            # left out of the message.
            message = {
                "a": args,
                "cwd": os.path.relpath(cwd, policy.root) if (cwd + os.sep).startswith(policy.root) else cwd,
            }
            for name, value in (("k", kwargs), ("state", state), ("patch", patches), ("outside", outside), ("streams", stream_patches)):
                if value:
                    message[name] = value
            if env != peer.env:
                message["env"] = _env_diff(peer.env, env)
            # Module data too large to copy in one call (dateutil's zone file instance, cached
            # in a module list: 160,000 values) is lent: the program reads it here, if at all.
            # (Not what the program holds already: that crosses as what changed in it.)
            big = [v for _, v in state if _mutable(v) and not shared(peer, v) and _larger_than(v, COPY_LIMIT // 2)]
            code = [v for _, v in patches if _lent_code(policy, v)] + [e[2] for e in outside if _lent_code(policy, e[2])]
            body = peer.encode(message, lend=big + code)
        except Refused as why:
            _refuse(qualname, "not_data", why)
        if peer.last_values > COPY_LIMIT:
            _refuse(qualname, "call_values", peer.last_values)
        # Counted on this side only, of what the tests send: the program cannot make a run
        # in-process by answering at length.
        peer.copied += peer.last_values
        if peer.copied > RUN_COPY_LIMIT:
            test = _current_test()
            _refuse(qualname, "run_values", RUN_COPY_LIMIT, peer.last_values, test or "a test")
        peer.env = env
        body["op"] = "call"
        if outermost:
            ask(peer, body)
        try:
            reply = peer.request(body)
        except Gone as why:
            raise RuntimeError("%s: %s" % (qualname, why)) from None
        _replay_output(reply)
        try:
            # The written-back objects' new contents are put in place as the reply is read.
            values = peer.decode(reply)
            _carry_over(peer, values)
        except Refused as why:
            raise RuntimeError("%s: the program's answer is not data: %s" % (qualname, why)) from None
        if outermost:
            weaken(peer, reply)
        _replay_logs(reply.get("logs"))
        _replay_warnings(reply.get("warnings"), policy)
        if reply.get("op") == "ok":
            return values["v"]
        e = values["e"]
        if not isinstance(e, BaseException):
            e = RuntimeError("%s: the program raised something that is no exception here (%r)" % (qualname, e))
        trace = reply.get("trace")
        if isinstance(trace, str) and trace and hasattr(e, "add_note"):
            e.add_note("(in the program's process)\n" + trace[-TRACE_CAP:])
        raise e
    finally:
        if outermost:
            peer.reset()


def _lent_code(policy, value):
    """A class of an installed package's the tests put in the place of code (freezegun's
    `FakeDatetime`): lent, never made by its name in the program's process, whose copy of that
    package's module data the test never set (the frozen time is the tests')."""
    return (
        isinstance(value, type)
        and _is_installed_module(value.__module__)
        and not policy.project_module(value.__module__)
        and not policy.tests_module(value.__module__)
        and not issubclass(value, BaseException)
        and not policy._holds_tests(value)
    )


def _larger_than(value, limit):
    """Whether `value` holds more than `limit` values, each counted once as a copy would."""
    seen, stack = set(), [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if len(seen) > limit:
            return True
        t = type(v)
        if t in (list, tuple, set, frozenset, collections.deque):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(itertools.chain.from_iterable(dict.items(v)))
        elif t not in _SCALARS:
            # (Its own `__dict__`, never through a class's `__getattr__`: a handle's asks the other side.)
            try:
                own = object.__getattribute__(v, "__dict__")
            except AttributeError:
                continue
            if type(own) is dict:
                stack.extend(own.values())
    return False


from .config import TestsConfig, read  # noqa: E402
from .assigned import Assignments  # noqa: E402

# Names of the other modules, bound once every module is made (they call each other).
from .common import COPY_LIMIT, Gone, RUN_COPY_LIMIT, Refused, TRACE_CAP, _MISSING  # noqa: E402
from .modules import _is_installed_module, _is_stdlib_module  # noqa: E402
from .output import _carry_over, _env_diff, _environment, _replay_logs, _replay_output, _replay_warnings  # noqa: E402
from .lifetimes import ask, shared, weaken  # noqa: E402
from .peer import Peer  # noqa: E402
from .policy import Policy  # noqa: E402
from .refusals import _refuse, _said  # noqa: E402
from .state import ModuleState, _behaviour, _key_name  # noqa: E402
from .values import _SCALARS, _defaults, _is_mock, _mutable, _own_dict, _state, _stored  # noqa: E402
