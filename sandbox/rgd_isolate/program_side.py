"""The program's side: `serve()` answers the tests' calls with the agents' function, in a process that holds no test file."""

import contextlib
import importlib.util
import json
import os
import socket
import sys
import types

from .peer import Peer


_serving = [None]  # the program's side: its peer, once serving


def _resolve_target(module, qualname):
    """The target's plain function, and its default values: classes' own dicts, static and class
    methods and properties opened, decorators unwrapped (`__wrapped__`, a getter's `fget`, a
    cached property's `func`) down to the function of that name. The module keeps them, so its
    own code still calls the decorated target; only the tests' calls, decorated on their side,
    reach the function bare. A decorator that keeps neither leaves its result to be called."""
    fn = _stored(vars(module), qualname)
    for _ in range(100):
        # `functools.wraps` gives a wrapper the function's own name: only `__wrapped__` says.
        inner = getattr(fn, "__wrapped__", None)
        if inner is None and not isinstance(fn, types.FunctionType):
            inner = getattr(fn, "fget", None) or getattr(fn, "func", None)
        if inner is None or inner is fn:
            break
        fn = inner
    return fn, _defaults(fn)


class Server(Peer):
    def __init__(self, sock, policy, target, root):
        Peer.__init__(self, sock, policy, "the tests' process")
        self.target = target
        self.root = root
        self.state = ModuleState(policy)
        self.state.agree()
        self.outside = {}  # (module, attribute) -> (the original, the tests' value, what was put in its place)
        policy.lifted = self.lifted
        self.shadows = {}  # a builtin's name -> (what the project's modules see, the tests' replacement)

    def enter(self, values):
        """The tests' side of things before the call: module state, functions the tests
        replaced, environment, directory."""
        self.state.apply(values.get("state") or ())
        patches = values.get("patch")
        for entry in patches if isinstance(patches, tuple) else ():
            # ((module, holder, attr), a handle of the tests' function or None)
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple) and len(entry[0]) == 3):
                raise Refused("a malformed replacement of a function")
            key = entry[0]
            if not all(isinstance(part, str) for part in key):
                raise Refused("a malformed replacement of a function")
            self.state.patch(key, entry[1])
        self.patch_outside(values.get("outside"))
        env = values.get("env")
        if isinstance(env, tuple) and len(env) == 2 and isinstance(env[0], dict):
            for k, v in env[0].items():
                os.environ[str(k)] = str(v)
            for k in env[1] if isinstance(env[1], list) else ():
                os.environ.pop(str(k), None)
        cwd = values.get("cwd")
        if isinstance(cwd, str):
            os.chdir(cwd if os.path.isabs(cwd) else os.path.normpath(os.path.join(self.root, cwd)))
        self.entered = os.getcwd()
        self.env_agreed = _environment()

    def carried(self, values, with_state=True):
        """`values` (an answer's) with the directory the program changed to, as the tests' side
        names it (inside the project: relative to its root), and what it changed in its
        environment, and (`with_state`) the module state it changed, for the tests' process to
        change as well, as in one process (`_carry_directory`, `_carry_environment`): click's
        `CliRunner.isolation`, a generator, sets `os.environ` and `termui`'s prompt functions for
        the `with` block the tests run."""
        now = os.getcwd()
        if now != getattr(self, "entered", now):
            inside = now == self.root or now.startswith(self.root + os.sep)
            values["moved"] = os.path.relpath(now, self.root) if inside else now
            self.entered = now
        env = _environment()
        agreed = getattr(self, "env_agreed", env)
        if env != agreed:
            values["env"] = _env_diff(agreed, env)
        self.env_agreed = env
        if with_state:
            # (A call's answer says its module state itself, after writing back.)
            state, _ = self.state.changes(rebound_only=True)
            if state:
                values["state"] = state
        return values

    def patch_outside(self, patches):
        """The attributes of the standard library's and installed packages' modules the tests
        replaced, as they stand at this call: a function by one calling the test's function
        back, anything else as it came (`sys.stdin` the test's own, a lent class, data); the
        originals put back when the test's patch is undone."""
        wanted = {}
        for entry in patches if isinstance(patches, tuple) else ():
            if not (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str) and isinstance(entry[1], str)):
                raise Refused("a malformed patch")
            if entry[0] not in sys.modules:
                self.policy.import_lifted(entry[0], only_found=True)
            if not (_is_stdlib_module(entry[0]) or _is_installed_module(entry[0])):
                raise Refused("a patch of %s.%s, which is no module of the standard library's or an installed package's" % entry[:2])
            wanted[(entry[0], entry[1])] = entry[2]
        self.shadow_builtins({k[1]: fn for k, fn in wanted.items() if k[0] == "builtins"})
        wanted = {k: fn for k, fn in wanted.items() if k[0] != "builtins"}
        for key in [k for k in self.outside if k not in wanted]:
            original = self.outside.pop(key)[0]
            setattr(sys.modules[key[0]], key[1], original)
        for key, fn in wanted.items():
            was = self.outside.get(key)
            if was is not None and was[1] is fn:
                continue
            module = sys.modules[key[0]]
            original = was[0] if was is not None else getattr(module, key[1], None)
            # A test's function is called back; the rest is put as it came (a stdin, lent or data).
            called_back = type(fn) in (RemoteFunction, RemoteMethod, LentMethod) and key != ("sys", "stdin")
            value = _calling_back(fn, key[1]) if called_back else fn
            setattr(module, key[1], value)
            self.outside[key] = (original, fn, value)

    @contextlib.contextmanager
    def lifted(self):
        """The tests' patches of other modules lifted while a module the tests' process imported
        before them is found and imported here (finding one imports its package): freezegun's
        module subclasses the `datetime` it finds, under its own patch a handle."""
        put = list(self.outside.items())
        for (module, attr), (original, _, _) in put:
            setattr(sys.modules[module], attr, original)
        try:
            yield
        finally:
            for (module, attr), (_, _, value) in put:
                setattr(sys.modules[module], attr, value)

    def shadow_builtins(self, patches):
        """A test's patch of a builtin (`mocker.patch("builtins.print")`), made for the project's
        code: a global of that name in each project module that has none of its own (a module's
        global is found before the builtin), taken away when the test's patch is undone.
        `builtins` itself is left as it is: the channel's own code runs on it here."""
        for name in [n for n in self.shadows if n not in patches]:
            self._unshadow(name, self.shadows.pop(name)[0])
        for name, fn in patches.items():
            was = self.shadows.get(name)
            if was is None or was[1] is not fn:
                if was is not None:
                    self._unshadow(name, was[0])
                called_back = type(fn) in (RemoteFunction, RemoteMethod, LentMethod)
                self.shadows[name] = (_calling_back(fn, name) if called_back else fn, fn)
            value = self.shadows[name][0]
            # Every call: a project module imported since has it too.
            for _, module in self.state._project_modules():
                ns = vars(module)
                if name not in ns:
                    ns[name] = value

    def _unshadow(self, name, value):
        for _, module in self.state._project_modules():
            ns = vars(module)
            if ns.get(name, _MISSING) is value:
                del ns[name]

    def serve_other(self, m):
        if m.get("op") != "call":
            return Peer.serve_other(self, m)
        import traceback
        import warnings

        if self.depth == 0:
            self.reset()
            bury(self, m.get("dead"))
        printed = _Printed()
        trace = ""
        logs, handler = _capture_logs()
        caught = []
        try:
            args = self.decode(m)
            self.enter(args)
            printed.patched(args.get("streams"))
            with printed, warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = self.target(*args["a"], **_keywords(args.get("k")))
                if isinstance(value, types.CoroutineType):
                    import asyncio

                    value = asyncio.new_event_loop().run_until_complete(value)
            op, values = "ok", {"v": value}
        except Gone:
            raise
        except BaseException as e:
            trace = "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None))
            op, values = "err", {"e": e}
        finally:
            import logging

            logging.getLogger().removeHandler(handler)
        printed.streams(values)
        self.carried(values, with_state=False)
        # Written back: every shared object the call's messages named, with its contents where
        # they changed (a list the program sorted, `self`'s attributes).
        written = [obj for obj in self.received if _mutable(obj)]
        state, _ = self.state.changes()
        try:
            if written:
                values["wb"] = written
            if state:
                values["state"] = state
            body = self.encode(values)
        except Refused as why:
            what = "answer" if op == "ok" else "exception"
            op, values = "err", {"e": RuntimeError("the program's %s is not data: %s" % (what, why))}
            body = self.encode(printed.streams(values))
        body["op"] = op
        if self.depth == 0:
            # Which of what the call named no program code holds, said once nothing of the call
            # holds it either: the tests' side then holds its side weakly (`lifetimes`).
            args = value = values = written = None
            body.update(report(self, named_ids(self), m.get("weak")))
        printed.put(body)
        body["trace"] = trace[-TRACE_CAP:]
        body["logs"] = logs[:1000]
        body["warnings"] = [
            [w.category.__module__, w.category.__qualname__, str(w.message)[:OUTPUT_CAP], str(w.filename), int(w.lineno or 0)]
            for w in (caught or [])[:1000]
        ]
        self.send(body)


def serve():
    """The program's process: imports the target's module and answers calls until the tests end."""
    cfg = read(ProgramConfig, os.environ.pop("RGD_ISOLATE"))
    sock = socket.socket(fileno=cfg.fd)
    sock.setblocking(True)
    os.set_inheritable(sock.fileno(), False)
    policy = Policy(cfg.root, cfg.project, False)
    policy.target_module = cfg.module
    policy.swap_roots(cfg.tests_root)
    try:
        target, defaults = _resolve_target(importlib.import_module(cfg.module), cfg.qualname)
    except BaseException as e:
        # Every call then fails with what importing the program raised, as a test in one
        # process would have failed (a SyntaxError in the agents' code, a missing name).
        failed, defaults = e, []

        def target(*a, **k):
            raise failed

    server = Server(sock, policy, target, os.path.normpath(cfg.root))
    _serving[0] = server
    server.target_defaults = defaults
    # Every call the tests make and every callback the program makes stacks frames in both
    # processes: a recursive parser whose recursion crosses at each level needs more room than
    # the same recursion in one process.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))
    while True:
        try:
            m = server.recv()
        except Gone:
            return
        try:
            server.serve(m)
        except Gone:
            return
        except BaseException as e:
            # Whatever broke outside the call itself (a RecursionError while answering) is said,
            # not silent; the process then ends and the tests' side says so.
            sys.stderr.write("rgd's program process stopped: %s: %s\n" % (type(e).__name__, e))
            return

from .config import ProgramConfig, read  # noqa: E402

# Names of the other modules, bound once every module is made (they call each other).
from .common import Gone, OUTPUT_CAP, Refused, TRACE_CAP, _MISSING  # noqa: E402
from .handles import LentMethod, RemoteFunction, RemoteMethod  # noqa: E402
from .lifetimes import bury, named_ids, report  # noqa: E402
from .modules import _is_installed_module, _is_stdlib_module  # noqa: E402
from .output import _Printed, _capture_logs, _env_diff, _environment  # noqa: E402
from .policy import Policy  # noqa: E402
from .state import ModuleState, _calling_back  # noqa: E402
from .values import _defaults, _keywords, _mutable, _stored  # noqa: E402
from .handles import _SERVER  # noqa: E402

_SERVER[0] = Server
