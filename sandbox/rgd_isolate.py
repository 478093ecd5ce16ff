"""rgd's isolation of a repository target (`rgd solve --repo`, `rgd fix`): the agents' function
runs in a process of its own, apart from the tests that judge it.

Two processes share one socket and this module:

* the **tests' process** (pytest, the project's modules, the tests, rgd's plugin): the target's
  body there is a stub, `return __import__("rgd_isolate").call(QUALNAME, args, kwargs)`;
* the **program's process** (`serve()`): the project's modules with the agents' function spliced
  in and no test file at all, answering calls.

Only data crosses, both ways: builtins and containers, instances of the project's own classes
(rebuilt from their attributes with the receiver's own copy of the class, never a class the sender
made: a class the project does not define is refused by name), a fixed list of the standard
library's value types, enum members, named tuples and exceptions. Shared references and cycles
survive (a message is a table of nodes); an object that came from the other side goes back as
itself (`result is arg`). A mutable object keeps its identity for the whole run on both sides:
sent again, it crosses as that identity with its contents only where they changed since the sides
last agreed (a parser handed over at every call sends its position, not its tokens again). After a
call, every mutable object the call named is written back the same way into the tests' objects (a
list it sorted, `self`'s attributes). Callables and iterators stay where they were made and are
called or pulled through the socket. One thread's call at a time: tests that call from threads
take turns on the socket.

What is no data but the tests' own (an object of a test's class, a stream, a lock) the tests'
process lends: it stays there, and the program uses it through a handle by its own names, never
its class's code or a method's globals (`Policy.lendable`, `Peer.serve_lent`); copying it, making
another of its class or reading its attributes as a whole is done there too.

What the program does in its own process that would change the tests' in one process is carried
over: a stream of `sys` it replaces (`_Printed`), the directory it moves to within the project
(`_carry_directory`), a plain attribute it sets on a tests' function or class. What it cannot do
across the processes is its own failure, said as such (`_cannot`): nothing the program does
chooses how it is judged. What the tests can neither send nor lend (a test case, a patch the
program's process cannot see: `FALLBACK_CAUSES`, the one list) is no verdict: the stub reports it
to rgd (`on_refusal`), which then judges the target in-process, where the verdict is only ever
"unverified", never solved. What the program cannot send back is the program's failure: the
test sees an error.

Messages are bounded: a length prefix checked before anything is read (`MAX_MESSAGE`), at most
`MAX_NODES` nodes, `MAX_DEPTH` levels of immutable nesting (mutable chains are made from the top
level: `DEFER_DEPTH`), `MAX_INT_DIGITS` digits in an integer.
"""

import base64
import builtins
import collections
import contextlib
import copyreg
import importlib
import importlib.util
import io
import itertools
import json
import operator
import os
import re
import socket
import struct
import sys
import threading
import time
import types
import weakref

MAX_MESSAGE = 64 << 20
MAX_NODES = 1_000_000
# Strings, tuples and frozensets whose identity the tests' side keeps for the run (`Peer.sent_values`).
MAX_SENT_VALUES = 100_000
MAX_DEPTH = 400
# Below this depth a mutable object's contents are made from the top level, both ways (`Encoder.
# finish`, `Decoder.later`): only immutable nesting (tuples in tuples) counts against MAX_DEPTH.
DEFER_DEPTH = 100
MAX_INT_DIGITS = 4300
# More values than this copied in one call's arguments, or in all the calls of a run, and the
# target is judged in-process instead (what did not change since the last call is not copied
# again; this bounds a suite that hands over new large values at every call). Counted on the
# tests' side, of what it sends: the program cannot choose the fallback.
COPY_LIMIT = 100_000
RUN_COPY_LIMIT = 2_000_000
# Scalars of a shared object that are only compared (by identity, in C) count as one copied
# value per this many: about the ratio of the two costs, measured on cachetools' tables.
SCALARS_PER_COPY = 32
# A read first polls the socket for this long before it sleeps in the kernel. The two processes
# take turns, so the waiting one would sleep at every call; on a virtual machine waking a sleeping
# CPU costs 40 to 600 µs, more than a call's own work (3,000 calls of `f(i)` took 0.9 s sleeping,
# 0.5 s polling). Polling yields the CPU to anything else that is ready to run.
POLL_SECONDS = 0.001
# After polls in a row that missed, up to this many reads sleep at once before one polls again.
POLL_BACKOFF = 64
OUTPUT_CAP = 64 << 10
TRACE_CAP = 4000


class Refused(Exception):
    """A value that is not data (its type named), or a message that breaks a bound."""


class Gone(Exception):
    """The other process ended, or did not answer in time."""


# --- what counts as whose class ---------------------------------------------------------------------

_STDLIB = os.path.normpath(os.path.dirname(os.__file__)) + os.sep


def _is_stdlib_module(name):
    module = sys.modules.get(name)
    if module is None:
        return False
    if name in sys.builtin_module_names:
        return True
    f = getattr(module, "__file__", None)
    if not isinstance(f, str):
        return False
    f = os.path.normpath(os.path.abspath(f))
    return f.startswith(_STDLIB) and "site-packages" not in f and "dist-packages" not in f


def _is_installed_module(name):
    """Whether `name` is an imported module of an installed package (site-packages): the same
    unchanged source in both processes, which use one interpreter."""
    module = sys.modules.get(name) if isinstance(name, str) else None
    f = getattr(module, "__file__", None)
    if not isinstance(f, str):
        return False
    parts = os.path.normpath(os.path.abspath(f)).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


# Packages whose objects never cross as their attributes, whatever their reduction: the test
# runner's (its objects reach the session, the tests and their outcomes), the test case's, rgd's
# own, and those whose objects stand for what a process has (threads, processes, sockets, event
# loops, queues between threads): a copy of one would be another.
_NEVER_STATE = frozenset(
    ("_pytest", "pytest", "pluggy", "py", "unittest", "doctest", "rgd_isolate", "rgd_verdict", "rgd_verdict_impl", "rgd_spectra",
     "threading", "_thread", "subprocess", "multiprocessing", "concurrent", "asyncio", "selectors", "socket", "socketserver",
     "ssl", "queue", "signal", "sched", "tempfile", "weakref", "gc", "sys", "os", "io", "_io", "mmap", "sqlite3", "ctypes",
     "tkinter", "atexit", "faulthandler", "tracemalloc", "importlib", "pkgutil", "zipimport", "site", "builtins")
)

_PLAIN = {}  # class -> whether its instances pickle as a bare object and its attributes


def _plain_reduction(cls):
    """Whether `cls`'s own reduction (what `copy` and `pickle` use) makes an instance as a bare
    object given its attributes: `copyreg.__newobj__(cls)` or `cls()` with no arguments, and a
    state that is its `__dict__` (and slots), with no `__getstate__` or `__setstate__` of its own
    and no items, and no finalizer. Such an object is its attributes and nothing else (`ast`
    nodes, `argparse`'s and most classes of installed packages); one whose reduction needs
    arguments, items or a function of its own, or refuses, is not. Asked of a bare instance made
    here, never of what the other side sends."""
    known = _PLAIN.get(cls)
    if known is not None:
        return known
    ok = False
    # (A class with a finalizer holds something besides its attributes, and a bare one would
    # run it when collected.)
    finalized = any("__del__" in vars(k) for k in cls.__mro__)
    if not finalized and getattr(cls, "__getstate__", None) is getattr(object, "__getstate__", None) and not hasattr(cls, "__setstate__"):
        blank = _bare(cls)
        if blank is not None:
            try:
                rv = blank.__reduce_ex__(4)
            except Exception:
                rv = None
            if isinstance(rv, tuple) and 2 <= len(rv) <= 6:
                fn, args, rest = rv[0], rv[1], list(rv[2:]) + [None] * (6 - len(rv))
                made = (fn is cls and args == ()) or (fn is copyreg.__newobj__ and args == (cls,))
                state = rest[0]
                ok = (
                    made
                    and all(x is None for x in rest[1:])
                    and (state is None or type(state) is dict or (type(state) is tuple and len(state) == 2 and all(x is None or type(x) is dict for x in state)))
                )
    _PLAIN[cls] = ok
    return ok


def _bare(cls):
    """A bare instance of `cls`, made without running Python code (`object.__new__`, or a C
    class's own `__new__` with no arguments), or None where that cannot be: the class
    `_plain_reduction` and `_generous` ask about their objects."""
    maker = next((k for k in cls.__mro__ if "__new__" in vars(k)), object)
    if isinstance(vars(maker)["__new__"], (staticmethod, types.FunctionType)):
        return None
    try:
        return object.__new__(cls) if maker is object else cls.__new__(cls)
    except Exception:
        return None


def _spec_origin(name):
    """Where the module `name` would be loaded from (found, not imported): "built-in",
    "frozen", a file's path, or None."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(spec, "origin", None)
    return origin if origin in ("built-in", "frozen") or not isinstance(origin, str) else os.path.normpath(os.path.abspath(origin))


def _installed_spec(name):
    """Whether `name` is a module of an installed package (found there, not imported)."""
    origin = _spec_origin(name)
    parts = origin.split(os.sep) if isinstance(origin, str) else []
    return "site-packages" in parts or "dist-packages" in parts


def _stdlib_spec(name):
    """Whether `name` is a module of the standard library (found there, not imported)."""
    path = _spec_origin(name)
    if path in ("built-in", "frozen"):
        return True
    if not isinstance(path, str):
        return False
    return path.startswith(_STDLIB) and "site-packages" not in path and "dist-packages" not in path


# Standard-library classes whose instances are plain values, rebuilt from their attributes:
# anything else of the standard library (unittest.mock.ANY equals everything) is refused.
_STATE_CLASSES = {("types", "SimpleNamespace"), ("argparse", "Namespace")}
# The standard library's objects that are no data which the tests lend the program (it uses
# them, they stay in the tests' process): in-memory and open streams, a context stack, locks.
# (Not codecs' stream wrappers nor a dict's views: lent, they changed outcomes of boltons' and
# toolz's suites.)
_LENT_STD = frozenset(
    ("_io", name) for name in ("BytesIO", "StringIO", "TextIOWrapper", "BufferedReader", "BufferedWriter", "BufferedRandom", "FileIO")
) | {("contextlib", "ExitStack"), ("threading", "Condition"), ("threading", "Event"), ("threading", "Semaphore"),
     ("threading", "BoundedSemaphore"), ("_thread", "lock"), ("_thread", "RLock"),
     # A `Mapping`'s views of the tests' mapping (toolz's tests' `Foo(Mapping)`: `d.items()`).
     ("collections.abc", "KeysView"), ("collections.abc", "ItemsView"), ("collections.abc", "ValuesView")}


class Policy:
    """Which modules are the project's: files of `project` (relative to `root`), never a test file."""

    def __init__(self, root, project, strict):
        self.root = os.path.normpath(root) + os.sep
        # The tests' side: a class it receives must be one whose instances may cross (the
        # program's side may be handed any standard class, `OrderedDict` as a factory).
        self.strict = strict
        self._globals_seen = -1
        self._globals = {}
        self._misses = 0
        self.project = frozenset(project)
        self._checked = {}

    def project_module(self, name):
        if not isinstance(name, str):
            return False
        known = self._checked.get(name)
        if known is not None:
            return known
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) if module is not None else None
        if origin is None and module is None:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError, AttributeError):
                spec = None
            origin = spec.origin if spec is not None else None
        ok = False
        if isinstance(origin, str):
            path = os.path.normpath(os.path.abspath(origin))
            ok = path.startswith(self.root) and path[len(self.root) :].replace(os.sep, "/") in self.project
        self._checked[name] = ok
        return ok

    def named(self, value):
        """Whether `value` crosses by the name it has in a project module rather than as a copy:
        a sentinel `object()`, a thread-local or lock (each process its own: click's context
        stack), or an instance of a project class: a module's singleton (`click.INT`, compared
        with `is`), and, reached through instances' attributes, values over an immutable builtin
        whose identity is their meaning (sqlparse's token types: `Token.Keyword.DML`). Their
        state, when it changes, crosses with the module state (`ModuleState`)."""
        t = type(value)
        if t is object or t in _BY_NAME:
            return True
        return t.__module__ is not None and self.project_module(t.__module__) and not isinstance(value, (type, BaseException))

    def tests_module(self, name):
        """A module of the tests': a file of the project's folder that is not the project's (a
        test module, a conftest, a helper beside them)."""
        module = sys.modules.get(name) if isinstance(name, str) else None
        origin = getattr(module, "__file__", None)
        if not isinstance(origin, str) or self.project_module(name):
            return False
        return os.path.normpath(os.path.abspath(origin)).startswith(self.root)

    def lendable(self, value):
        """How the tests' side lends an object that is no data, which stays in the tests' process
        while the program uses it through a handle: "lent" (attributes and methods, as the
        program would use the object itself: an instance of a class the tests define, an
        in-memory stream, an `ExitStack`), "opaque" (identity only: a bare `object()`, a
        traceback), or None (refused). Never a class, a module, a function's insides, an
        exception, nor anything of pytest's or of a test case: what the program reaches
        through a lent object are names an object of the tests' gives it, never the test
        functions or the module that holds the expected values."""
        t = type(value)
        if t is object or t is types.TracebackType:
            return "opaque"
        if t in _DICT_VIEWS:
            # A view of a mapping the tests lend (toolz's tests' own `defaultdict`) is lent with
            # it: what the program reads through it is read there.
            under = _viewed_dict(value)
            return "lent" if under is not None and self.lendable(under) == "lent" else None
        if any((k.__module__, k.__qualname__) in _LENT_STD for k in t.__mro__) or _is_mock(value):
            # (A stream of a class over one of them, too: click's `_NamedTextIOWrapper`, made
            # by the project's test runner in the tests' process.)
            return "lent"
        if isinstance(value, type):
            # A class the tests define, handed to the program (toolz's `curry` of a test's
            # class, a classmethod's `cls`): lent, to be called (its instances are made and
            # stay here), asked `isinstance` of and read by its plain names; never an exception
            # class (raised, it would have to cross as one).
            if issubclass(value, BaseException) or not self.tests_module(value.__module__) or self._holds_tests(value):
                return None
            return "lent"
        if isinstance(value, (types.ModuleType, BaseException)):
            return None
        if not self.tests_module(t.__module__):
            return "lent" if self._unreducible(t, value) else None
        return None if self._holds_tests(t) else "lent"

    def tests_exception(self, cls):
        """An exception class of the tests' (a test's `MyError`, handed to `retry` or raised by a
        test's callback under the program's call): it crosses as a stand-in the program's side
        makes (`Encoder.tests_exception_class`), as no object of it could be lent (it must be
        raised and caught). Never a skip, nor what is no `Exception` (it would stop pytest)."""
        skip = getattr(sys.modules.get("unittest"), "SkipTest", None)
        return (
            isinstance(cls, type)
            and issubclass(cls, Exception)
            and not (skip is not None and issubclass(cls, skip))
            and self.tests_module(cls.__module__)
            and not self._holds_tests(cls)
        )

    def library_class(self, t):
        """A class of the standard library's or an installed package's that may be lent where
        its objects cannot cross (`reducible`), never the interpreter's own (`builtins`: a
        frame, code, a cell)."""
        return t.__module__ != "builtins" and self.reducible(t)

    def _unreducible(self, t, value):
        """An object of the standard library's or an installed package's that has no reduction the
        other side can read (`re.Match`, `TreeBuilder`; an object of a class its module does not
        name): no data, so it is lent as the tests' own objects are, and
        the program uses it where it lives. What has a reduction but may not cross by it is still
        refused (an element tree, changed in place by the program, would not come back)."""
        if not self.library_class(t) or (t.__module__, t.__qualname__) in _NOT_LENT:
            return False
        if not _named_by(t, t.__module__):
            # Its reduction would name a class the receiver cannot find (`whatever`'s).
            return True
        try:
            value.__reduce_ex__(4)
        except TypeError:
            return True
        except Exception:
            return False
        return False

    def _holds_tests(self, cls):
        """A test class of pytest's or unittest's (or one holding test methods): lending it, or
        one of its objects, would hand the program the tests themselves."""
        unittest = sys.modules.get("unittest")
        if unittest is not None and issubclass(cls, unittest.TestCase):
            return True
        for klass in cls.__mro__:
            if self.project_module(klass.__module__) or klass.__module__ == "builtins":
                break
            if klass.__name__.startswith("Test") or any(isinstance(n, str) and n.startswith("test") for n in vars(klass)):
                return True
        return False

    def project_base(self, cls):
        """What a lent object says it is: the first class of the project's among `cls`'s bases
        (`isinstance(self, Cache)` of a test's subclass of the project's `Cache`), else the first
        of the standard library's or a builtin one (a lent stream's `TextIOBase`, a test's
        `Mapping` or `dict` subclass: `isinstance(d, Mapping)`, which toolz's `merge_with` asks,
        a test's own `defaultdict`), never `object`. A member of a test's enum says it is an
        enum member before it says it is its mixed-in type (`class E(str, Enum)`: click's
        `Choice` asks `isinstance(c, enum.Enum)` to show `c.name`)."""
        for klass in cls.__mro__:
            if self.project_module(klass.__module__) and "<" not in klass.__qualname__:
                return klass
        enum = sys.modules.get("enum")
        members = enum is not None and issubclass(cls, enum.Enum)
        for klass in cls.__mro__:
            module = klass.__module__
            if members and not issubclass(klass, enum.Enum):
                continue
            if klass is not object and (module == "builtins" or _is_stdlib_module(module)) and _named_by(klass, module):
                return klass
        return None

    def _named_deep(self, value):
        """A named value whose attributes are named too, and may be made on first use."""
        return _builtin_base(type(value)) in _IMMUTABLE_BASES

    def _index_globals(self):
        index = {}
        for name, module in list(sys.modules.items()):
            if module is None or not self.project_module(name):
                continue
            todo = [(attr, v) for attr, v in list(getattr(module, "__dict__", {}).items()) if isinstance(attr, str)]
            while todo and len(index) < 100_000:
                path, v = todo.pop()
                if not self.named(v) or id(v) in index:
                    continue
                index[id(v)] = (name, path, v)
                d = _own_dict(v) if self._named_deep(v) else None
                if isinstance(d, dict):
                    todo.extend((path + "." + a, x) for a, x in list(d.items()) if isinstance(a, str) and not a.startswith("_"))
        self._globals = index

    def global_name(self, value):
        """(module, path) of a value that crosses by name (`named`) and is a project module's
        global or an attribute of one (through instances' own attributes), if any."""
        if len(sys.modules) != self._globals_seen:
            self._globals_seen = len(sys.modules)
            self._index_globals()
        found = self._globals.get(id(value))
        if (found is None or found[2] is not value) and self.named(value) and self._named_deep(value):
            # Perhaps made since the index was (a token type is made the first time it is
            # named); looked for again now and then, not at every value that is no global.
            self._misses += 1
            if self._misses % 64 == 1:
                self._index_globals()
                found = self._globals.get(id(value))
        return (found[0], found[1]) if found is not None and found[2] is value else None

    def global_value(self, module_name, path):
        """The receiver's own value of a name `global_name` gave: through the module's globals,
        then instances' own attributes (or, for a name not made here yet, the project class's
        own attribute lookup: a token type made on first use); only a sentinel or an instance
        of a project class over an immutable builtin is ever the answer."""
        if not isinstance(module_name, str) or not isinstance(path, str) or not self.project_module(module_name):
            raise Refused("a global of a module the project does not have")
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        parts = path.split(".")
        value = vars(module).get(parts[0], _MISSING)
        for part in parts[1:]:
            if part.startswith("_") or not self.named(value) or not self._named_deep(value):
                raise Refused("a name that goes through something that is not named (%s.%s)" % (module_name, path))
            d = _own_dict(value)
            inner = d.get(part, _MISSING) if isinstance(d, dict) else _MISSING
            value = getattr(value, part, _MISSING) if inner is _MISSING else inner
        if value is _MISSING or not self.named(value):
            raise Refused("%s.%s names nothing that crosses by name here" % (module_name, path))
        return value

    def resolve_class(self, module_name, qualname):
        """The receiver's own class `module.qualname`: the project's (imported if need be),
        builtins', or an allowed standard-library one; else Refused naming it."""
        if not isinstance(module_name, str) or not isinstance(qualname, str) or "<" in qualname:
            raise Refused("a class the project does not define (%r)" % (qualname,))
        if not self.strict and module_name not in sys.modules and (_stdlib_spec(module_name) or _installed_spec(module_name)):
            # The program's side may be handed a class of the standard library's or an installed
            # package's that its code has not imported yet.
            importlib.import_module(module_name)
        if module_name == "builtins" or self.project_module(module_name) or _is_stdlib_module(module_name) or _is_installed_module(module_name):
            module = sys.modules.get(module_name)
            if module is None:
                module = importlib.import_module(module_name)
        else:
            raise Refused("a value of type %s.%s, which the project does not define" % (module_name, qualname))
        obj = module
        for part in qualname.split("."):
            obj = type.__dict__["__dict__"].__get__(obj).get(part) if isinstance(obj, type) else vars(obj).get(part)
            if obj is None:
                break
        if obj is None and module_name == "builtins":
            # A builtin class no builtin name holds (`NoneType`, click's type guessed from a
            # default of None): `types` names it.
            obj = vars(types).get(qualname)
        if not isinstance(obj, type) or obj.__module__ != module_name or obj.__qualname__ != qualname:
            raise Refused("a value of type %s.%s, which the project does not define" % (module_name, qualname))
        return obj

    def kind_of_class(self, cls):
        """How instances of `cls` cross: 'project', 'enum', 'ntuple', 'state', 'exc', or None."""
        module = getattr(cls, "__module__", None)
        import enum

        if issubclass(cls, enum.Enum):
            return "enum" if (self.project_module(module) or _is_stdlib_module(module)) else None
        if issubclass(cls, BaseException):
            if module == "builtins" or self.project_module(module) or _is_stdlib_module(module):
                return "exc"
            return None
        if self.project_module(module):
            if issubclass(cls, tuple) and hasattr(cls, "_fields"):
                return "ntuple"
            # Over a C class that keeps state of its own (a `property` subclass's getter), the
            # attributes are not the whole value: no data.
            return None if _hidden_state_base(cls) is not None else "project"
        if _is_stdlib_module(module) or _is_installed_module(module):
            if issubclass(cls, tuple) and hasattr(cls, "_fields") and type(cls) is type:
                return "ntuple"
            if (module, cls.__qualname__) in _STATE_CLASSES:
                return "project"
            if self.plain_state(cls) and _named_by(cls, module):
                # (Only a class its module names: the receiver makes it by that name; a class a
                # package makes and binds nowhere, `whatever`'s, has no name to cross by.)
                return "project"
        return None

    def reducible(self, cls):
        """Whether instances of `cls` may cross through their own reduction (`Encoder.reduced`):
        a class of the standard library's or an installed package's (the same unchanged source
        in both processes), not lent, not the test runner's or rgd's, no finalizer."""
        module = getattr(cls, "__module__", None)
        if not isinstance(cls, type) or issubclass(cls, (type, BaseException)) or not isinstance(module, str) or "<" in cls.__qualname__:
            return False
        if module.split(".")[0] in _NEVER_STATE or not (_is_stdlib_module(module) or _is_installed_module(module)):
            return False
        return not any((k.__module__, k.__qualname__) in _LENT_STD for k in cls.__mro__) and not any("__del__" in vars(k) for k in cls.__mro__)

    def plain_state(self, cls):
        """The general rule for a class of the standard library's or an installed package's: its
        instances cross as their attributes, rebuilt with the receiver's own class (the same
        unchanged source), when its reduction says that is all they are (`_plain_reduction`),
        unless the tests lend them (a stream, a lock, a mock: used where they live) or they are
        the test runner's or rgd's."""
        return self.reducible(cls) and _plain_reduction(cls) and not _generous(cls)


# --- encoding -----------------------------------------------------------------------------------------


def _exact(value, depth=0):
    """A key equal only for values of the same types all the way down (`(1,)` is not `(1.0,)`),
    or None for what is too big, too deep or not a plain immutable value. A string is its own key
    (every other key is a tuple): strings cross most, and this costs them no tuple."""
    t = type(value)
    if t is str:
        return value
    if t is bytes or t is int or t is bool or value is None:
        return (t, value)
    if t is float:
        return (t, value.hex())
    if (t is tuple or t is frozenset) and depth < 4 and len(value) <= 64:
        parts = [_exact(x, depth + 1) for x in value]
        if None in parts:
            return None
        return (t, tuple(parts) if t is tuple else frozenset(parts))
    return None


def _keep_sent(sent, value):
    """The tests' side keeps a string, tuple or frozenset it sent (`Peer.sent_values`): of equal
    ones, the one sent last, which is what a program that passes a value through hands back
    (click's `Option.get_default` returning the `flag_value` of the option it was just handed, a
    test's literal that `is` compares, where the run had sent an equal string before)."""
    if sent is not None:
        key = _exact(value)
        if key is not None and (key in sent or len(sent) < MAX_SENT_VALUES):
            sent[key] = value


def _as_sent(sent, value):
    """What the tests' side sent equal to `value`, exactly, if it did; else `value`."""
    if sent is None:
        return value
    key = _exact(value)
    return value if key is None else sent.get(key, value)


_SCALARS = (type(None), bool, int, float, str, bytes, complex)
_SCALAR_SET = frozenset(_SCALARS)
# The builtin constants that are no scalars of JSON's, by their names.
_CONSTANTS = {"Ellipsis": Ellipsis, "NotImplemented": NotImplemented}
_MUTABLE_BUILTINS = (list, dict, set, bytearray)
_BUILTIN_BASES = (list, dict, set, frozenset, tuple, str, bytes, int, float)
_IMMUTABLE_BASES = (frozenset, tuple, str, bytes, int, float)
_HEAPTYPE = 1 << 9
_BY_NAME = (threading.local, type(threading.Lock()), type(threading.RLock()))
# Module globals whose contents cannot change in place (a pattern, a table of strings as a
# tuple or frozenset): `ModuleState` compares them by identity only, not by their contents at
# every call (boltons' `urlutils` holds dozens).
_UNCHANGING_TYPES = frozenset(_SCALARS + (tuple, frozenset, range, type(Ellipsis), re.Pattern))
_UNCHANGING = ("unchanging",)


# A mock's record of the calls made to it, which a program may read but not write, and the
# methods that rewrite it (its own `_mock_*` and `_spec_*` attributes are refused too).
_MOCK_RECORDS = frozenset(("called", "call_count", "call_args", "call_args_list", "mock_calls", "method_calls"))
_MOCK_MUTATORS = frozenset(("reset_mock", "configure_mock", "attach_mock", "mock_add_spec"))


def _viewed_dict(view):
    """The dict (or dict subclass) a dict's view shows: the one referent of its `mapping` proxy."""
    import gc

    under = [d for d in gc.get_referents(view.mapping) if isinstance(d, dict)]
    return under[0] if len(under) == 1 else None


# Objects without a reduction that are still not lent, each for a measured reason: lent, an
# `re.Match` failed markdown's released `BacktickInlineProcessor.handleMatch` isolated where it
# passes in one process (not yet understood), so a run handed one stays in-process (`not_data`).
_NOT_LENT = frozenset((("re", "Match"),))


def _known_base(cls):
    """The first class among `cls`'s of the standard library's or an installed package's, named by
    its module (`io.BytesIO` as `_io.BytesIO`), bar `object` and builtins: what a handle of the
    program's object says it is of (`isinstance(buffer, BytesIO)`), or None."""
    for klass in cls.__mro__:
        module = klass.__module__
        if module != "builtins" and "<" not in klass.__qualname__ and (_is_stdlib_module(module) or _is_installed_module(module)) and _named_by(klass, module):
            return klass
    return None


def _named_by(cls, module):
    """Whether `module.qualname` names `cls` (`_thread.lock`, a class no name holds, does not)."""
    obj = sys.modules.get(module)
    for part in cls.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is cls


def _is_mock(value):
    """A mock of `unittest.mock`'s (`Mock`, `MagicMock`, a spec'd one): the tests' stand-in,
    which they lend as any object of theirs; what the program does with it is recorded in
    the tests' process, where the test asserts it. (`mock.ANY`, equal to everything, is no
    mock and is not lent.)"""
    mock = sys.modules.get("unittest.mock")
    return mock is not None and isinstance(value, mock.NonCallableMock)


def _by_class_name(policy, cls):
    """Whether a class crosses to the tests' side by its name: one whose instances cross (the
    project's, an enum, a named tuple, an exception, a value type of the standard library's:
    `curry(functools.partial)`, one whose own reduction names it: `operator.itemgetter`, which
    toolz looks up in a table by identity); any other stays where it is and is called through a
    handle, so that its instances stay there too (`operator.methodcaller`)."""
    return (
        policy.kind_of_class(cls) is not None
        or (cls.__module__, cls.__qualname__) in _STD_VALUE_CLASSES
        or (policy.reducible(cls) and _own_reduction(cls))
    )


# The standard library's classes whose instances `Encoder.stdlib` writes as values.
_STD_VALUE_CLASSES = frozenset(
    [("datetime", n) for n in ("datetime", "date", "time", "timedelta", "timezone")]
    + [("pathlib", n) for n in ("PurePath", "PurePosixPath", "Path", "PosixPath")]
    + [("collections", n) for n in ("OrderedDict", "Counter", "deque", "defaultdict")]
    + [("zoneinfo", "ZoneInfo"), ("decimal", "Decimal"), ("fractions", "Fraction"), ("uuid", "UUID"), ("functools", "partial")]
    + [("re", "Pattern"), ("inspect", "Signature"), ("inspect", "Parameter")]
)


def _hidden_state_base(cls):
    """The first class below `cls` written in C that keeps state outside `__dict__` and slots,
    if any: not `object`, the builtins whose contents cross (`_BUILTIN_BASES`), or io's abstract
    bases (which hold none). A heap type with methods written in C is one too (`functools.partial`
    is a heap type since Python 3.10; boltons' `CachedInstancePartial` over it keeps its function
    outside `__dict__`)."""
    for base in cls.__mro__[1:]:
        if base.__flags__ & _HEAPTYPE and not any(type(x) is types.MethodDescriptorType for x in vars(base).values()):
            continue
        if base is object or base in _BUILTIN_BASES:
            continue
        if base.__module__ in ("_io", "io") and base.__name__.startswith("_") and base.__name__.endswith("IOBase"):
            continue
        return base
    return None


_PATTERN_METHODS = frozenset(("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split"))


def _slots_of(cls):
    """A class's slot names, through its bases (fixed once the class is made: kept per class, by
    identity, as a metaclass may hash its classes as it likes)."""
    kept = _SLOTS.get(id(cls))
    if kept is None or kept[0] is not cls:
        kept = _SLOTS[id(cls)] = (cls, _find_slots(cls))
    return kept[1]


_SLOTS = {}  # id(class) -> (the class, its slot names)


def _stored_on_type(cls, name):
    """What `cls` or the first of its bases stores under `name`, as stored (a `staticmethod`
    itself, not its function): what Python binds when it calls a protocol's method."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return getattr(cls, name)


def _find_slots(cls):
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for s in slots:
            if s not in ("__dict__", "__weakref__") and s not in names:
                names.append(s)
    return names


def _own_dict(obj):
    """An object's own `__dict__` (a mapping proxy for a class), or None: looked up past its
    class's `__getattr__`, which a class with slots may answer from a slot (click's
    `CompletionItem`, whose `__getattr__` reads `self._info`): on an instance made blank, to be
    filled, that lookup recursed until the stack ran out."""
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None


def _state(obj):
    """An instance's attributes: its `__dict__` and slots, as a dict."""
    state = {}
    d = _own_dict(obj)
    if isinstance(d, dict):
        state.update(d)
    for s in _slots_of(type(obj)):
        try:
            state[s] = object.__getattribute__(obj, s)
        except AttributeError:
            pass
    return state


# Integers JSON carries exactly (and every reader parses as an integer).
_SAFE_INT = 1 << 53
# Between an object's attributes and its contents as a list, set or dict, in `_children`.
_SEP = object()


def _children(value):
    """A shared mutable object's contents one level down, the parts themselves: what both sides
    last agreed on is kept as this, which also keeps the parts alive (so their identities, by
    which `_same` compares, cannot be reused)."""
    t = type(value)
    if t is list or t is set:
        return tuple(value)
    if t is dict:
        return tuple(itertools.chain.from_iterable(value.items()))
    if t is bytearray:
        return bytes(value)
    module = t.__module__
    if module == "collections":
        name = t.__qualname__
        if name == "deque":
            return tuple(value)
        if name == "OrderedDict":
            return tuple(itertools.chain.from_iterable(collections.OrderedDict.items(value)))
        if name in ("Counter", "defaultdict"):
            parts = tuple(itertools.chain.from_iterable(dict.items(value)))
            return parts + (value.default_factory,) if name == "defaultdict" else parts
    parts = tuple(itertools.chain.from_iterable(_state(value).items()))
    base = _builtin_base(t)
    if base is list or base is set:
        parts += (_SEP,) + tuple(base.__iter__(value))
    elif base is dict:
        parts += (_SEP,) + tuple(itertools.chain.from_iterable(dict.items(value)))
    return parts


def _same(was, now):
    """Whether contents (`_children`) are the same parts, by identity."""
    if type(was) is bytes:
        return was == now
    return len(was) == len(now) and all(map(operator.is_, was, now))


def _dict_delta(was, now):
    """What changed in a dict (or an OrderedDict) between two of its `_children`: the keys to
    take out (gone, or moved towards the end: an LRU order's `move_to_end`), then the (key,
    value) parts to set, flat, in order (a value changed in place keeps its key's position, a
    key set after being taken out goes to the end). None when that is not much smaller."""
    old_keys, new_keys = was[0::2], now[0::2]
    if len(old_keys) <= len(new_keys) and all(map(operator.is_, old_keys, new_keys)):
        # Keys only added (compared in C): the common case.
        removed, kept, old_values = (), len(old_keys), was[1::2]
    else:
        # The longest start of the new keys that are old keys in their old order; every other
        # old key is taken out, and what follows that start is set again.
        where = {id(k): i for i, k in enumerate(old_keys)}
        last, kept, keep = -1, len(new_keys), set()
        for j, k in enumerate(new_keys):
            at = where.get(id(k))
            if at is None or at < last:
                kept = j
                break
            last = at
            keep.add(at)
        removed = tuple(k for i, k in enumerate(old_keys) if i not in keep)
        old_values = tuple(was[2 * i + 1] for i in sorted(keep))
    changed = list(itertools.compress(range(1, 2 * kept, 2), map(operator.is_not, old_values, now[1 : 2 * kept : 2])))
    if 2 * (len(removed) + len(changed)) + len(now) - 2 * kept > len(now) // 2:
        return None
    pairs = tuple(itertools.chain.from_iterable((now[i - 1], now[i]) for i in changed)) + now[2 * kept :]
    return removed, pairs


def _list_delta(was, now):
    """What changed in a list between two of its `_children`: the slice `was[start:end]` that
    became the parts given (what stayed before and after it is the same objects); None when
    that slice is not much smaller than the list."""
    shorter = min(len(was), len(now))
    start = next(itertools.compress(itertools.count(), map(operator.is_not, was, now)), shorter)
    tail = next(
        itertools.compress(itertools.count(), map(operator.is_not, reversed(was), reversed(now))), shorter
    )
    tail = min(tail, shorter - start)
    parts = now[start : len(now) - tail]
    if len(parts) + (len(was) - tail - start) > len(now) // 2:
        return None
    return start, len(was) - tail, parts


def _replace_slice(seq, start, end, parts):
    """`seq[start:end] = parts` for a list or a deque (which has no slices: what changed at
    either end is popped and pushed there, as the sender's deque was)."""
    if type(seq) is list:
        seq[start:end] = parts
    elif seq.maxlen is None and start == 0:
        for _ in range(end):
            seq.popleft()
        seq.extendleft(reversed(parts))
    elif seq.maxlen is None and end == len(seq):
        for _ in range(end - start):
            seq.pop()
        seq.extend(parts)
    else:
        items = list(seq)
        items[start:end] = parts
        seq.clear()
        seq.extend(items)


def _builtin_base(cls):
    for base in cls.__mro__[1:]:
        if base in _BUILTIN_BASES:
            return base
    return None


# A message's own containers, which cross as tuples (`Peer.encode`).
_ENVELOPES = frozenset(("wb", "state", "patch", "outside", "env", "streams"))


def _envelope(name, value):
    if name == "k" and type(value) is dict:
        return tuple(value.items())
    if name in _ENVELOPES and type(value) is list:
        return tuple(value)
    return value


def _keywords(pairs):
    """A call's keyword arguments, from the pairs they crossed as."""
    if pairs is None:
        return {}
    if not isinstance(pairs, tuple) or not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
        raise Refused("malformed keyword arguments")
    return dict(pairs)


class Encoder:
    """One message's table of nodes. Scalars are written in place (a string as itself, an integer
    as `[n]`, a float as `["f", hex]`); other values are nodes of the table, referred to by index.
    An object the other side already holds a copy of (one it sent, `came_from`, or one this side
    sent before, `sent_ids`) crosses as its identity, with its contents only when they changed
    since the two sides last agreed on them (`snaps`): a parser handed over at every call sends
    its position, not its tokens. `peer.handle()` keeps callables and iterators on this side."""

    def __init__(self, peer, answer=False):
        self.peer = peer
        self.values_sent = peer.sent_values if peer.policy.strict else None
        self.nodes = []
        self.memo = {}
        self.keep = []
        # Objects already shared whose contents this message sends: (object, its contents now).
        self.updated = []
        # Values this message copies (a shared object that did not change copies nothing).
        self.values = 0
        # Module state sent as such: by its contents, never by its name (the receiver's value
        # of that name is what it updates).
        self.unnamed = set()
        self.later = []  # (index, object) of mutable objects deep down, written by `finish`
        # Whether this is the tests' answer to the program's call, which lends what the
        # standard library's or an installed package's objects cannot cross as (`fresh`).
        self.answer = answer

    def ref(self, value, depth=0):
        t = type(value)
        if t is str:
            self.values += 1
            _keep_sent(self.values_sent, value)
            return value
        if t is int:
            self.values += 1
            return [value] if -_SAFE_INT < value < _SAFE_INT else ["i", str(value)]
        if value is None or t is bool:
            self.values += 1
            return value
        if t is float:
            self.values += 1
            return ["f", value.hex()]
        key = id(value)
        at = self.memo.get(key)
        if at is not None:
            return at
        deferred = depth > DEFER_DEPTH and _mutable(value)
        if depth > MAX_DEPTH and not deferred:
            raise Refused("a value nested deeper than %d levels" % MAX_DEPTH)
        if len(self.nodes) >= MAX_NODES:
            raise Refused("a value of more than %d parts" % MAX_NODES)
        self.values += 1
        at = len(self.nodes)
        self.nodes.append(None)
        self.memo[key] = at
        self.keep.append(value)
        if deferred:
            # A chain of mutable objects (a linked list's links, a tree's parents) is written
            # from the top level, not by recursing down it: its length is bounded by the
            # table's parts, not by the stack.
            self.later.append((at, value))
        else:
            self.nodes[at] = self.node(value, depth + 1)
        return at

    def pinned(self, node, v):
        """A tuple's or frozenset's node, which the tests' side keeps for the run (the first
        MAX_SENT_VALUES) both by value (`_keep_sent`) and as that very object, numbered: sent
        again in a later message (an item a lent view yields, a second call), it is the same
        object on the program's side too, as in one process (boltons' `remap` caches by `id`:
        two keys holding one tuple are one entry there, two apart). Kept, its `id` is not reused,
        so that `id` names it for the run."""
        if self.values_sent is None:
            return node
        _keep_sent(self.values_sent, v)
        pins = self.peer.pins
        got = pins.get(id(v))
        if got is None:
            if len(pins) >= MAX_SENT_VALUES:
                return node
            got = pins[id(v)] = (len(pins), v)
        node.append(got[0])
        return node

    def finish(self):
        """Writes the nodes `ref` left for later, each from the top level."""
        while self.later:
            at, value = self.later.pop()
            self.nodes[at] = self.node(value, 1)

    def node(self, v, depth):
        peer = self.peer
        key = id(v)
        back = peer.came_from.get(key)
        if back is not None and back[1] is v:
            return self.shared(v, "back", back[0], depth)
        gid = peer.sent_ids.get(key)
        if gid is not None and peer.sent.get(gid) is v:
            return self.shared(v, "m", gid, depth)
        return self.fresh(v, type(v), depth)

    def shared(self, v, tag, gid, depth):
        """An object the other side holds a copy of: its identity, and its contents if they
        changed. Its parts are looked at either way (a token inside an unchanged list may have
        changed); they go in the table as nodes of their own, which the receiver reads too."""
        was = self.peer.snaps.get(id(v))
        if was is None:
            return [tag, gid]
        now = _children(v)
        if _same(was, now):
            self.look(now, (), depth)
            return [tag, gid]
        self.updated.append((v, now))
        t = type(v)
        delta = _dict_delta(was, now) if t in _DELTA_DICTS else _list_delta(was, now) if t in _DELTA_LISTS else None
        if delta is None:
            # Its contents, never its name: an object made by a call may be a project global
            # by the time it changes (`toolz.curried`'s curries, named as they are imported).
            self.unnamed.add(id(v))
            return [tag, gid, self.fresh(v, t, depth)]
        # Only what changed is copied (a cache's table, one entry added at every call).
        self.look(now, set(map(id, delta[-1])), depth)
        if t in _DELTA_DICTS:
            removed, pairs = delta
            return [tag, gid, ["dd", [self.ref(k, depth) for k in removed], [[self.ref(k, depth), self.ref(x, depth)] for k, x in zip(pairs[0::2], pairs[1::2])]]]
        start, end, parts = delta
        return [tag, gid, ["ls", start, end, [self.ref(x, depth) for x in parts]]]

    def look(self, parts, changed, depth):
        """The parts of a shared object that stayed, looked at (a token inside an unchanged
        list may have changed): each object among them is a node of its own, which the
        receiver reads too. Counted with the copies (`RUN_COPY_LIMIT`): what bounds a run's
        time is the calls times what each looks at (a hot function handed a large structure at
        every call), even where nothing changed."""
        if set(map(type, parts)) <= _SCALAR_SET:
            # Only compared, by identity and in C (`_same`, the deltas): a cache's table of
            # numbers looked at after every call costs a fraction of copying it.
            self.values += len(parts) // SCALARS_PER_COPY
            return
        self.values += len(parts)
        for part in parts:
            if type(part) not in _SCALARS and part is not _SEP and id(part) not in changed:
                self.ref(part, depth)

    def fresh(self, v, t, depth):
        peer = self.peer
        lent = peer.handle_ids.get(id(v))
        if lent is not None and lent in peer.lent and peer.handles[lent] is v:
            # Lent before (`lendable`): the same handle again.
            return self.lent(lent, t, depth)
        if t is bytes:
            return ["b", base64.b64encode(v).decode()]
        if t is bytearray:
            return ["ba", base64.b64encode(bytes(v)).decode()]
        if t is complex:
            return ["c", v.real.hex(), v.imag.hex()]
        if v is Ellipsis or v is NotImplemented:
            return ["k", repr(v)]
        if t is list:
            return ["l", [self.ref(x, depth) for x in v]]
        if t is tuple:
            return self.pinned(["t", [self.ref(x, depth) for x in v]], v)
        if t is dict:
            return ["d", [[self.ref(k, depth), self.ref(x, depth)] for k, x in v.items()]]
        if t is set:
            return ["S", [self.ref(x, depth) for x in v]]
        if t is frozenset:
            return self.pinned(["fs", [self.ref(x, depth) for x in v]], v)
        std = self.stdlib(v, t, depth)
        if std is not None:
            return std
        if t is type and v in _MAKERS:
            # The program's stand-in for a tests' class (`_stand_in`) is that class.
            v = _MAKERS[v]
        hid = peer.remote_id(v)
        if hid is not None:
            return ["hb", hid]
        own = peer.tests_exception_hid(v)
        if own is not None:
            # A tests' exception, or its class's stand-in, goes back as itself.
            return ["hb", own]
        at = peer.defaults.get(id(v))
        if at is not None:
            # A default value of the target that is no data (a sentinel `object()`): the other
            # side's function has its own, made by the same line.
            return ["dflt", at]
        named = peer.policy.global_name(v) if t not in _SCALARS and id(v) not in self.unnamed else None
        if named is not None:
            # A module-level sentinel of the project's (`MISSING = object()`), or a value whose
            # identity is its meaning (a token type): the other side has its own by that name.
            return ["glob", named[0], named[1]]
        if isinstance(v, type):
            # A class names code, not state: any class the other side has by the same name (the
            # project's, the standard library's) may be sent; the tests' side only takes back
            # those whose instances may cross (`Decoder`, strict).
            module = v.__module__
            known = module == "builtins" or peer.policy.project_module(module) or _is_stdlib_module(module)
            if not peer.policy.strict and (not known or (module != "builtins" and not _by_class_name(peer.policy, v))):
                # A class the tests' side would not take back (`operator.methodcaller`, a class
                # the program made): it stays here; calling it through the handle makes its
                # instances here too.
                return ["h", peer.handle(v), "objc" if callable(v) else "obj"]
            if peer.policy.strict and not known and peer.policy.tests_exception(v):
                return self.tests_exception_class(v, depth)
            if not known or "<" in v.__qualname__:
                lend = peer.policy.lendable(v) if peer.policy.strict else None
                if lend is None:
                    raise Refused("the class %s.%s, which the project does not define" % (module, v.__qualname__))
                return self.lend(v, lend, t, depth)
            return ["cls", module, v.__qualname__]
        if t is types.BuiltinFunctionType:
            owner = getattr(v, "__self__", None)
            if isinstance(owner, types.ModuleType) and _is_stdlib_module(owner.__name__) and getattr(owner, v.__name__, None) is v:
                # `max`, `operator.add`: the standard library's own function, which the other
                # side has by the same name (toolz looks such functions up in a table by identity).
                return ["bi", owner.__name__, v.__name__]
            if isinstance(owner, type) and _builtin_class(owner) and isinstance(v.__name__, str) and getattr(owner, v.__name__, None) == v:
                # `dict.fromkeys`, `itertools.chain.from_iterable`: a builtin class's own
                # class method, which the other side has by the same names (equal, as each
                # reading of it is a new bound method).
                return ["bm", owner.__module__, owner.__qualname__, v.__name__]
        if t in _BUILTIN_DESCRIPTORS:
            owner, name = getattr(v, "__objclass__", None), getattr(v, "__name__", None)
            if isinstance(owner, type) and _builtin_class(owner) and isinstance(name, str) and vars(owner).get(name) is v:
                # `str.join`, `dict.get`, `object.__init__`: a builtin class's own method, which
                # the other side has by the same names (toolz's table of builtins' signatures).
                return ["bm", owner.__module__, owner.__qualname__, name]
        if t.__module__ == "_sitebuiltins":
            # `quit`, `exit`, `help`, `license`: objects the `site` module puts among the
            # builtins, which the other side has by the same name (toolz's tests take the
            # signature of every builtin).
            name = next((a for a, x in vars(builtins).items() if x is v), None)
            if name is not None:
                return ["bi", "builtins", name]
        if isinstance(v, (types.FunctionType, types.MethodType)) or (
            callable(v) and t.__module__ in ("builtins", "operator", "functools")
        ):
            # A plain function binds as a method when a class holds it (toolz's `memoize` on a
            # method); a builtin or bound method does not; a lent object's method carries
            # what changed (`Peer.named`).
            hid = peer.kept(v)
            return ["h", hid, "lm" if hid in peer.lent_methods else "fm" if t is types.FunctionType else "fn"]
        if isinstance(v, (types.GeneratorType, types.CoroutineType)) or (
            hasattr(t, "__next__") and t.__module__ in ("builtins", "itertools")
        ):
            return ["h", peer.kept(v), "it"]
        if isinstance(v, BaseException) and peer.policy.strict and peer.policy.tests_exception(t):
            hid = peer.handle(v)
            peer.sent_exceptions[hid] = "exc"
            return ["xo", self.ref(t, depth), hid, *self.exception_parts(v, depth)]
        if isinstance(v, BaseException) and not peer.policy.strict:
            made = next((hid for hid in map(peer.tests_exception_hid, t.__mro__) if hid is not None), None)
            if made is not None:
                # The program made an exception of a tests' class (its stand-in, or a subclass
                # of it): the tests' side makes one of that class from its arguments.
                return ["xn", made, *self.exception_parts(v, depth)]
        kind = peer.policy.kind_of_class(t)
        if kind == "enum":
            if isinstance(v, _flag_type()) and type(v.value) is int:
                # A combination of flags (`re.I | re.S`) is no member of its own name
                # ("IGNORECASE|DOTALL" on 3.11, None before): it crosses as its value.
                return ["e", t.__module__, t.__qualname__, None, v.value]
            return ["e", t.__module__, t.__qualname__, v.name]
        if kind == "ntuple":
            return ["nt", t.__module__, t.__qualname__, [self.ref(x, depth) for x in tuple.__iter__(v)], self.ref(_state(v), depth)]
        if kind == "exc":
            return self.exception(v, depth)
        if kind == "project" and "<" in t.__qualname__ and not peer.policy.strict:
            # An object of a class the program made in a function (boltons' `make_sentinel`):
            # the tests' side has no class of that name to make it from, so it stays here.
            return ["h", peer.handle(v), "objc" if callable(v) else "obj"]
        if kind == "project":
            base = _builtin_base(t)
            content = None
            if base is not None:
                content = self.ref(base(v) if base is not dict else dict(dict.items(v)), depth)
            mark = len(self.nodes)
            try:
                state = self.ref(_state(v), depth)
            except Refused:
                if peer.policy.strict:
                    raise
                # An object of the project's holding something that is no data (a stream): it
                # stays in the program's process (what was begun of its state is taken back).
                self.rollback(mark)
                return ["h", peer.handle(v), "objc" if callable(v) else "obj"]
            return ["o", t.__module__, t.__qualname__, state, content]
        # Only the program's objects cross through their reduction: a copy, not written back, so
        # a tests' object the program would change in place (markdown's element trees) is not
        # copied there; the tests' objects cross as their attributes, lent, or not at all.
        reduced = self.reduced(v, t, depth) if not peer.policy.strict and peer.policy.reducible(t) else None
        if reduced is not None:
            return reduced
        if not peer.policy.strict:
            # The program's process keeps what is no data (an open stream, a lock, a third-party
            # object) and hands out a handle that equals only itself, saying the class of the
            # standard library's or an installed package's it is of (`Peer.proxy`).
            node = ["h", peer.handle(v), "objc" if callable(v) else "obj"]
            said = _known_base(t)
            return node if said is None else node + [None, None, None, [said.__module__, said.__qualname__]]
        lend = peer.policy.lendable(v)
        if lend is None and self.answer and peer.policy.library_class(t):
            # What the program's own call got back (a `TreeBuilder`'s `start` answering its
            # element) is lent where it may not cross: refused, the call would fail, which in
            # one process it would not; only what the tests hand over falls back. Never the
            # interpreter's own objects, which stay refused (`Policy.library_class`).
            lend = "lent"
        if lend is not None:
            return self.lend(v, lend, t, depth)
        raise Refused("a value of type %s.%s, which is not data" % (t.__module__, t.__qualname__))

    def reduced(self, v, t, depth):
        """An object of a class with a pickling of its own (`Policy.reducible`) as its reduction,
        the one `copy` and `pickle` use: made by `t.__new__(t, *args)` (`copyreg.__newobj__`) or,
        where the class's own `__reduce__` names it, `t(*args)`, then given its state (its
        `__setstate__`, else its attributes) and items. None when the reduction is anything else
        (a function of its own, another class) or does not cross: the object is then lent, kept or
        refused as before. A copy, not shared: what the receiver changes in it is its own."""
        try:
            rv = v.__reduce_ex__(4)
        except Exception:
            return None
        if not isinstance(rv, tuple) or not 2 <= len(rv) <= 6 or not isinstance(rv[1], tuple):
            return None
        fn, args = rv[0], rv[1]
        rest = list(rv[2:]) + [None] * (6 - len(rv))
        state, listitems, dictitems, setter = rest[0], rest[1], rest[2], rest[3]
        if setter is not None or _equals_anything(v):
            # (An object that equals anything stays a handle, equal only to itself.)
            return None
        if fn is copyreg.__newobj__ and args[:1] == (t,):
            how, args = "new", args[1:]
        elif fn is t and _own_reduction(t):
            how = "call"
        else:
            return None
        mark = len(self.nodes)
        try:
            # (Items are read from their iterators at most up to the bound on a message's parts.)
            items = tuple(itertools.islice(listitems, MAX_NODES)) if listitems is not None else None
            pairs = tuple(tuple(p) for p in itertools.islice(dictitems, MAX_NODES)) if dictitems is not None else None
            return [
                "rd", t.__module__, t.__qualname__, how, self.ref(args, depth + 1), self.ref(state, depth + 1),
                None if items is None else self.ref(items, depth + 1), None if pairs is None else self.ref(pairs, depth + 1),
            ]
        except (Refused, TypeError, ValueError):
            self.rollback(mark)
            return None

    def lend(self, v, kind, t, depth):
        """The tests' process lends `v` (`Policy.lendable`): the program uses it through a
        handle (`serve_lent`), and the channel keeps it alive for the run. A lent class's calls
        carry what changed, as a lent object's method calls do."""
        peer = self.peer
        hid = peer.handle(v)
        peer.lent[hid] = kind
        peer.keeps_alive(v)
        if isinstance(v, type):
            peer.lent_methods.add(hid)
        return self.lent(hid, t, depth)

    def lent(self, hid, t, depth):
        """The handle of an object the tests lend, of type `t`, with the class it says it is
        (a mock made with a project class as its spec says it is of that class)."""
        kind = self.peer.lent[hid]
        obj = self.peer.handles[hid]
        if kind == "lent" and _is_mock(obj):
            said = obj.__class__
            t = said if isinstance(said, type) else t
        base = self.peer.policy.project_base(t) if kind == "lent" else None
        if kind == "lent" and isinstance(obj, type):
            kind = "lentk"
        elif kind == "lent" and callable(obj):
            # Only what can be called says it can (`callable(m)`: toolz asks it of all it is handed).
            kind = "lentc"
        node = ["h", hid, kind, None if base is None else self.ref(base, depth)]
        if kind != "lentk" and t is not base and (base is not None and base.__module__ == "builtins" or self.peer.policy.tests_module(t.__module__)):
            # An object of a tests' class: its class is lent with it, so that `type(value)` in the
            # program stands for it (`_lent_type`: `type(self).__new__(type(self))`, cachetools'
            # `Cache.__copy__`); over a builtin one (a test's named tuple, a dict subclass),
            # `value.__class__(...)` makes one of the tests' class too, as boltons' `remap` does
            # (`_stand_in`).
            mark = len(self.nodes)
            try:
                node += [self.ref(t, depth), t.__name__]
            except Refused:
                self.rollback(mark)
        return node

    def rollback(self, mark):
        """Forgets the nodes from `mark` on."""
        self.updated = [(v, now) for v, now in self.updated if self.memo.get(id(v), -1) < mark]
        self.later = [(at, v) for at, v in self.later if at < mark]
        del self.nodes[mark:]
        del self.keep[mark:]
        for key in [k for k, at in self.memo.items() if at >= mark]:
            del self.memo[key]

    def maybe(self, value, depth):
        """`[]` for inspect's `empty` (no default, no annotation), else `[ref]`."""
        import inspect

        return [] if value is inspect.Parameter.empty else [self.ref(value, depth)]

    def exception(self, e, depth):
        t = type(e)
        return ["x", t.__module__, t.__qualname__, *self.exception_parts(e, depth)]

    def tests_exception_class(self, cls, depth):
        """A tests' exception class (`Policy.tests_exception`): its name and those of its bases
        both sides have (`Exception`, the project's `FooError`) or that are the tests' exception
        classes too, from which the program's side makes a stand-in subclass (`except MyError`
        there catches it; raised, it comes back as one). The class stays here, numbered."""
        peer = self.peer
        hid = peer.handle(cls)
        peer.sent_exceptions[hid] = "exck"
        policy = peer.policy
        bases = [b for b in cls.__bases__ if policy.tests_exception(b) or policy.kind_of_class(b) == "exc"]
        if not bases:
            bases = [next(b for b in cls.__mro__ if policy.kind_of_class(b) == "exc")]
        return ["xk", hid, cls.__module__, cls.__qualname__, [self.ref(b, depth) for b in bases]]

    def exception_parts(self, e, depth):
        """An exception's arguments (as text where they are no data) and its plain attributes
        (none where they are not all data)."""
        state = {k: x for k, x in _state(e).items() if not k.startswith("__")}
        mark = len(self.nodes)
        try:
            state_ref = self.ref(state, depth)
        except Refused:
            self.rollback(mark)
            state_ref = self.ref({}, depth)
        mark = len(self.nodes)
        try:
            args_ref = self.ref(tuple(e.args), depth)
        except Refused:
            self.rollback(mark)
            args_ref = self.ref(tuple(str(a) for a in e.args), depth)
        return [args_ref, state_ref]

    def stdlib(self, v, t, depth):
        module = t.__module__
        name = t.__qualname__
        if module == "datetime" and name in ("datetime", "date", "time", "timedelta", "timezone"):
            if name == "timedelta":
                return ["std", "timedelta", [v.days, v.seconds, v.microseconds]]
            if name == "timezone":
                return ["std", "timezone", [self.ref(v.utcoffset(None), depth), self.ref(v.tzname(None), depth)]]
            if name == "date":
                return ["std", "date", [v.year, v.month, v.day]]
            tz = None if v.tzinfo is None else self.ref(v.tzinfo, depth)
            if name == "time":
                return ["std", "time", [v.hour, v.minute, v.second, v.microsecond, v.fold], tz]
            return ["std", "datetime", [v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, v.fold], tz]
        if module == "zoneinfo" and name == "ZoneInfo":
            return ["std", "zoneinfo", v.key]
        if module == "decimal" and name == "Decimal":
            return ["std", "Decimal", str(v)]
        if module == "fractions" and name == "Fraction":
            return ["std", "Fraction", [str(v.numerator), str(v.denominator)]]
        if module in ("pathlib", "posixpath") and name in ("PurePath", "PurePosixPath", "Path", "PosixPath"):
            return ["std", "path", name, str(v)]
        if module == "uuid" and name == "UUID":
            return ["std", "UUID", v.hex]
        if module == "collections" and name in ("OrderedDict", "Counter"):
            # An OrderedDict's order is its own, not the dict's underneath (`move_to_end`).
            items = collections.OrderedDict.items(v) if name == "OrderedDict" else dict.items(v)
            return ["std", name, [[self.ref(k, depth), self.ref(x, depth)] for k, x in items]]
        if module == "collections" and name == "deque":
            return ["std", "deque", [self.ref(x, depth) for x in v], v.maxlen]
        if module == "collections" and name == "defaultdict":
            return ["std", "defaultdict", self.ref(v.default_factory, depth), [[self.ref(k, depth), self.ref(x, depth)] for k, x in dict.items(v)]]
        if t in _DICT_VIEWS:
            # A dict's view is a view of the receiver's copy of that dict (which, shared, stays
            # one object there): `d.items()` a test's mapping answers is iterated as itself. A
            # view of a mapping of the tests' own class is not data (`Policy.lendable`).
            under = _viewed_dict(v)
            policy = self.peer.policy
            if under is None or (policy.strict and type(under) not in _PLAIN_DICTS and policy.kind_of_class(type(under)) != "project"):
                return None
            return ["std", "view", _DICT_VIEWS[t], self.ref(under, depth)]
        if t is range:
            return ["std", "range", [v.start, v.stop, v.step]]
        if t is slice:
            return ["std", "slice", [self.ref(v.start, depth), self.ref(v.stop, depth), self.ref(v.step, depth)]]
        if module == "re" and name == "Pattern":
            return ["std", "Pattern", self.ref(v.pattern, depth), v.flags]
        if module == "inspect" and name in ("Signature", "Parameter"):
            # A signature is a value: its parameters' names, kinds, defaults and annotations
            # (`Parameter.empty`, where there is none, crosses as the absence it means).
            if name == "Parameter":
                return ["std", "Parameter", v.name, int(v.kind), self.maybe(v.default, depth), self.maybe(v.annotation, depth)]
            params = [self.ref(p, depth) for p in v.parameters.values()]
            return ["std", "Signature", params, self.maybe(v.return_annotation, depth)]
        if module == "builtins" and callable(v) and getattr(v, "__name__", None) in _PATTERN_METHODS:
            owner = getattr(v, "__self__", None)
            if type(owner).__module__ == "re" and type(owner).__qualname__ == "Pattern":
                # `pattern.match` kept in a table (a lexer's): the other side's own compiled
                # pattern's method, whose answers (`re.Match`) stay where they are made.
                return ["std", "bound", self.ref(owner, depth), v.__name__]
        if t is types.GenericAlias:
            # `Cache[int, str]`: its class and arguments.
            return ["std", "alias", self.ref(v.__origin__, depth), self.ref(v.__args__, depth)]
        if t is types.UnionType:
            # `int | None`: its members (`NoneType`, which no module names, as None).
            return ["std", "union", self.ref(tuple(None if a is type(None) else a for a in v.__args__), depth)]
        if module == "functools" and name == "partial":
            # Its parts cross (the function as a handle, when it is one): `p.func` still reads.
            return ["std", "partial", self.ref(v.func, depth), self.ref(v.args, depth), self.ref(v.keywords, depth)]
        return None


# --- decoding -----------------------------------------------------------------------------------------

# The nodes whose objects the receiver notes as shared (`Decoder.made`, `instance`): the sender
# records the same, so that both agree on which identities last.
_SHARED_KINDS = frozenset(("l", "d", "S", "ba", "o"))
# The nodes made empty first and filled after (so deep down, from the top level: `Decoder.shell`).
_DEFERRABLE = frozenset(("l", "d", "S", "o", "back", "m"))
# The dicts whose changes cross as such (`_dict_delta`): their `_children` are their items.
_DELTA_DICTS = (dict, collections.OrderedDict)
# The sequences whose changes cross as one slice replaced (`_list_delta`): a deque a peekable
# iterator pops from the left at every call.
_DELTA_LISTS = (list, collections.deque)
_PLAIN_DICTS = (dict, collections.OrderedDict, collections.Counter, collections.defaultdict)
_DICT_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}
_SHARED_STD = frozenset(("OrderedDict", "Counter", "defaultdict", "deque"))


class Decoder:
    """Builds the objects of one message's table with the receiver's own classes."""

    def __init__(self, peer, message):
        self.peer = peer
        self.nodes = message.get("n")
        self.base = message.get("base")
        if not isinstance(self.nodes, list) or not isinstance(self.base, int):
            raise Refused("a message without its table")
        if len(self.nodes) > MAX_NODES:
            raise Refused("a message of more than %d parts" % MAX_NODES)
        self.memo = {}
        self.building = set()
        self.depth = 0
        self.values_sent = peer.sent_values if peer.policy.strict else None
        # Mutable objects this message made or filled: what both sides now agree they hold.
        self.fresh = []
        self.later = []  # (index, node, object) made empty deep down, filled by `finish`

    def get(self, i, whole=False):
        """The value node `i` stands for. `whole`: its contents are read at once (an object's
        attributes, a builtin base's contents, an exception's arguments), so it is never made
        empty to be filled later."""
        t = type(i)
        if t is str:
            return _as_sent(self.values_sent, i)
        if t is not int:
            return self.scalar(i, t)
        if not 0 <= i < len(self.nodes):
            raise Refused("a reference out of the message's table")
        if i in self.memo:
            return self.memo[i]
        if i in self.building:
            raise Refused("an immutable value that contains itself")
        if self.depth > DEFER_DEPTH and not whole:
            n = self.nodes[i]
            shell = self.shell(i, n) if isinstance(n, list) and n and n[0] in _DEFERRABLE else None
            if shell is not None:
                # Deep down a chain of mutable objects: made empty now, filled from the top.
                self.later.append((i, n, shell))
                return shell
        self.depth += 1
        if self.depth > MAX_DEPTH * 4:
            raise Refused("a value nested deeper than %d levels" % MAX_DEPTH)
        self.building.add(i)
        try:
            value = self.build(i, self.nodes[i])
        finally:
            self.building.discard(i)
            self.depth -= 1
        self.memo[i] = value
        return value

    @staticmethod
    def scalar(r, t):
        """A scalar written in place of a reference (`Encoder.ref`)."""
        if t is str or r is None or t is bool:
            return r
        if t is list and len(r) == 1 and type(r[0]) is int:
            return r[0]
        if t is list and len(r) == 2 and type(r[1]) is str:
            if r[0] == "i":
                if len(r[1]) > MAX_INT_DIGITS:
                    raise Refused("an integer of more than %d digits" % MAX_INT_DIGITS)
                return int(r[1])
            if r[0] == "f":
                return float.fromhex(r[1])
        raise Refused("a malformed reference")

    def rest(self):
        """Every node no root reached: the parts of shared objects that did not change, where a
        changed object further down is."""
        self.finish()
        for i in range(len(self.nodes)):
            if i not in self.memo:
                self.get(i)
                self.finish()

    def finish(self):
        """Fills the objects `get` made empty deep down, each from the top level."""
        while self.later:
            i, n, obj = self.later.pop()
            self.fill_node(i, n, obj)

    def shell(self, i, n):
        """The object a mutable node stands for, made (or, for a shared one, found) but not
        yet filled; None for a node whose contents come first (an object over a tuple)."""
        k = n[0]
        if k == "l":
            return self.made(i, [])
        if k == "d":
            return self.made(i, {})
        if k == "S":
            return self.made(i, set())
        if k == "back" or k == "m":
            peer = self.peer
            obj = peer.sent_object(n[1]) if k == "back" else peer.copy_of(n[1])
            self.memo[i] = obj
            peer.received.append(obj)
            return obj
        if k == "o":
            cls, base = self.project_class(n)
            if base in _IMMUTABLE_BASES:
                return None
            return self.made(i, _blank(cls) if base is None else base.__new__(cls))
        return None

    def project_class(self, n):
        """An object node's class, the receiver's own and one of the project's, and the builtin
        it derives from (None for none)."""
        cls = self.peer.policy.resolve_class(n[1], n[2])
        if self.peer.policy.kind_of_class(cls) != "project":
            raise Refused("a value of type %s.%s, which the project does not define" % (n[1], n[2]))
        return cls, _builtin_base(cls)

    def fill_node(self, i, n, obj):
        """Puts a mutable node's contents into the object `shell` made for it."""
        k = n[0]
        if k == "l":
            obj.extend([self.get(r) for r in n[1]])
        elif k == "d":
            for key, value in n[1]:
                obj[self.get(key)] = self.get(value)
        elif k == "S":
            obj.update([self.get(r) for r in n[1]])
        elif k == "back" or k == "m":
            if len(n) > 2:
                if self.peer.snaps.get(id(obj)) is None:
                    raise Refused("new contents for an object that has none to change")
                self.update(obj, n[2])
                self.fresh.append(obj)
        else:
            base = _builtin_base(type(obj))
            if base is list:
                list.extend(obj, self.get(n[4], True))
            elif base is dict:
                dict.update(obj, self.get(n[4], True))
            elif base is set:
                set.update(obj, self.get(n[4], True))
            self.fill(obj, self.get(n[3], True))

    def made(self, i, value):
        """A mutable value, memoised before its contents are built (cycles), and noted as come
        from the peer (it goes back as itself, and is written back after a call)."""
        self.memo[i] = value
        self.peer.note_received(self.base + i, value)
        self.fresh.append(value)
        return value

    def update(self, obj, n):
        """Puts the contents a node of the sender's describes into `obj`, which is of its kind."""
        if not isinstance(n, list) or not n:
            raise Refused("a malformed node")
        k, t = n[0], type(obj)
        if k == "l" and t is list:
            obj[:] = [self.get(r) for r in n[1]]
        elif k == "d" and t is dict:
            items = [(self.get(key), self.get(value)) for key, value in n[1]]
            obj.clear()
            obj.update(items)
        elif k == "S" and t is set:
            items = [self.get(r) for r in n[1]]
            obj.clear()
            obj.update(items)
        elif k == "dd" and t in _DELTA_DICTS and len(n) == 3:
            # Only what changed (`_dict_delta`): the keys gone, then the entries set.
            for key in [self.get(r) for r in n[1]]:
                obj.pop(key, None)
            obj.update([(self.get(key), self.get(value)) for key, value in n[2]])
        elif k == "ls" and t in _DELTA_LISTS and len(n) == 4:
            start, end = n[1], n[2]
            if type(start) is not int or type(end) is not int or not 0 <= start <= end <= len(obj):
                raise Refused("a change to a list out of its bounds")
            _replace_slice(obj, start, end, [self.get(r) for r in n[3]])
        elif k == "ba" and t is bytearray:
            obj[:] = base64.b64decode(n[1])
        elif k == "std" and n[1] in ("OrderedDict", "Counter", "defaultdict") and t.__qualname__ == n[1] and t.__module__ == "collections":
            if n[1] == "defaultdict":
                factory = self.get(n[2])
                if factory is not None and not callable(factory):
                    raise Refused("a defaultdict whose factory is not callable")
                obj.default_factory = factory
            items = [(self.get(key), self.get(value)) for key, value in n[-1]]
            t.clear(obj)
            for key, value in items:
                t.__setitem__(obj, key, value)
        elif k == "std" and n[1] == "deque" and t is collections.deque:
            items = [self.get(r) for r in n[2]]
            obj.clear()
            obj.extend(items)
        elif k == "o" and (t.__module__, t.__qualname__) == (n[1], n[2]):
            base = _builtin_base(t)
            state = self.get(n[3], True)
            if base in (list, dict, set):
                inner = self.get(n[4], True)
                if type(inner) is not base:
                    raise Refused("an object's contents of the wrong kind")
                base.clear(obj)
                if base is list:
                    list.extend(obj, inner)
                else:
                    base.update(obj, inner)
            if not isinstance(state, dict):
                raise Refused("an object's attributes that are not a dict")
            d = _own_dict(obj)
            if isinstance(d, dict):
                for name in [a for a in d if a not in state]:
                    del d[name]
            for name in _slots_of(t):
                if name not in state:
                    try:
                        object.__delattr__(obj, name)
                    except AttributeError:
                        pass
            self.fill(obj, state)
        else:
            raise Refused("new contents of another kind than the object's (%r for %s)" % (k, t.__qualname__))

    def build(self, i, n):
        if not isinstance(n, list) or not n:
            raise Refused("a malformed node")
        k = n[0]
        peer = self.peer
        if k == "b":
            return base64.b64decode(n[1])
        if k == "ba":
            return self.made(i, bytearray(base64.b64decode(n[1])))
        if k == "c":
            return complex(float.fromhex(n[1]), float.fromhex(n[2]))
        if k == "k":
            if n[1] not in _CONSTANTS:
                raise Refused("a constant Python has not (%r)" % (n[1],))
            return _CONSTANTS[n[1]]
        if k in _DEFERRABLE:
            obj = self.shell(i, n)
            if obj is not None:
                self.fill_node(i, n, obj)
                return obj
        if k == "t" or k == "fs":
            # The program's side: the tests' side numbered this very object (`Encoder.pinned`).
            # The tests' side reads no number: the program's side sends none, and one it forged
            # would name nothing there.
            pin = n[2] if self.values_sent is None and len(n) > 2 and type(n[2]) is int else None
            # Its parts are read either way: a list inside it that the tests changed since is
            # brought up to date by reading its node.
            parts = [self.get(r) for r in n[1]]
            same = self.peer.pinned.get(pin) if pin is not None else None
            if same is not None:
                return same
            value = _as_sent(self.values_sent, tuple(parts) if k == "t" else frozenset(parts))
            if pin is not None and len(self.peer.pinned) < MAX_SENT_VALUES:
                self.peer.pinned[pin] = value
            return value
        if k == "bi":
            module = sys.modules.get(n[1]) if isinstance(n[1], str) else None
            if module is None and isinstance(n[1], str) and _stdlib_spec(n[1]):
                module = importlib.import_module(n[1])
            value = getattr(module, n[2], None) if module is not None and isinstance(n[2], str) else None
            site = n[1] == "builtins" and type(value).__module__ == "_sitebuiltins"
            if not site and (type(value) is not types.BuiltinFunctionType or not _is_stdlib_module(n[1])):
                raise Refused("a function of the standard library's that is not one (%r)" % (n[1:],))
            return value
        if k == "bm":
            if len(n) != 4 or not isinstance(n[3], str):
                raise Refused("a malformed method of a builtin class")
            owner = peer.policy.resolve_class(n[1], n[2])
            value = getattr(owner, n[3], None)
            bound = type(value) is types.BuiltinFunctionType and getattr(value, "__self__", None) is owner
            if type(value) not in _BUILTIN_DESCRIPTORS and not bound:
                raise Refused("a method of %s.%s that is not one (%r)" % (n[1], n[2], n[3]))
            if not _builtin_class(owner):
                raise Refused("%s.%s is no builtin class" % (n[1], n[2]))
            return value
        if k == "hb":
            return peer.local_handle(n[1])
        if k == "glob":
            return peer.policy.global_value(n[1], n[2])
        if k == "dflt":
            defaults = peer.target_defaults
            if type(n[1]) is not int or not 0 <= n[1] < len(defaults):
                raise Refused("a default value the function does not have")
            return defaults[n[1]]
        if k == "h":
            cls = self.get(n[3]) if len(n) > 3 and n[3] is not None else None
            own = None
            if len(n) > 5 and not peer.policy.strict:
                maker = self.get(n[4])
                if type(maker) is LentClass and isinstance(n[5], str):
                    own = maker, n[5]
                    if isinstance(cls, type) and cls.__module__ == "builtins":
                        cls = _stand_in(cls, maker, n[5])
            if len(n) > 6 and peer.policy.strict and n[2] in ("obj", "objc"):
                # What class of the standard library's or an installed package's the program's
                # object is of: `isinstance` of the handle says so, as a subclass of it in one
                # process could; equality stays identity, and every method is asked there.
                said = n[6] if type(n[6]) is list and len(n[6]) == 2 else (None, None)
                # (`resolve_class` finds only a class its module names.)
                cls = peer.policy.resolve_class(*said)
                if cls.__module__ == "builtins" or peer.policy.project_module(cls.__module__):
                    raise Refused("a handle said to be of %s.%s" % (cls.__module__, cls.__qualname__))
            return peer.proxy(n[1], n[2], cls, own)
        if k == "cls":
            cls = peer.policy.resolve_class(n[1], n[2])
            if peer.policy.strict and n[1] != "builtins" and not _by_class_name(peer.policy, cls):
                raise Refused("the class %s.%s, which the project does not define" % (n[1], n[2]))
            return cls
        if k == "rd":
            return self.reduction(n)
        if k == "e":
            cls = peer.policy.resolve_class(n[1], n[2])
            import enum

            if not issubclass(cls, enum.Enum):
                raise Refused("%s.%s is not an enum" % (n[1], n[2]))
            if len(n) > 4 and issubclass(cls, enum.Flag):
                if type(n[4]) is not int:
                    raise Refused("flags of %s.%s that are no integer" % (n[1], n[2]))
                return cls(n[4])
            if not isinstance(n[3], str) or n[3] not in cls.__members__:
                raise Refused("%s.%s has no member %r" % (n[1], n[2], n[3]))
            return cls[n[3]]
        if k == "nt":
            cls = peer.policy.resolve_class(n[1], n[2])
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise Refused("%s.%s is not a named tuple" % (n[1], n[2]))
            value = tuple.__new__(cls, [self.get(r) for r in n[3]])
            self.fill(value, self.get(n[4], True))
            return value
        if k == "o":
            return self.instance(i, n)
        if k == "x":
            return self.exception(n)
        if k == "xk" and not peer.policy.strict:
            return self.tests_exception_class(n)
        if k == "xo" and not peer.policy.strict:
            return self.tests_exception(n)
        if k == "xn" and peer.policy.strict:
            if len(n) != 4 or type(n[1]) is not int or peer.sent_exceptions.get(n[1]) != "exck":
                raise Refused("an exception of a class the tests never sent")
            return self.made_exception(peer.local_handle(n[1]), self.get(n[2], True), self.get(n[3], True))
        if k == "std":
            return self.stdlib(i, n)
        raise Refused("a node of an unknown kind (%r)" % (k,))

    def reduction(self, n):
        """An object sent as its reduction (`Encoder.reduced`), made with the receiver's own class
        by the fixed reconstructors only: `cls.__new__(cls, *args)`, or `cls(*args)` where the
        receiver's class itself says that is how it is made; never a function the sender names."""
        if len(n) != 8 or n[3] not in ("new", "call"):
            raise Refused("a malformed reduction")
        cls = self.peer.policy.resolve_class(n[1], n[2])
        if not self.peer.policy.reducible(cls) or (n[3] == "call" and not _own_reduction(cls)):
            raise Refused("a value of type %s.%s that is not made from its reduction here" % (n[1], n[2]))
        args = self.get(n[4])
        if type(args) is not tuple:
            raise Refused("a reduction whose arguments are no tuple")
        try:
            obj = cls.__new__(cls, *args) if n[3] == "new" else cls(*args)
            state = self.get(n[5], True)
            if state is not None:
                setstate = getattr(obj, "__setstate__", None)
                if setstate is not None:
                    setstate(state)
                else:
                    dict_state, slots = state if type(state) is tuple and len(state) == 2 else (state, None)
                    for part in (dict_state, slots):
                        if part is not None and type(part) is not dict:
                            raise Refused("a reduction's state of the wrong kind")
                        for name, value in (part or {}).items():
                            if not isinstance(name, str):
                                raise Refused("an attribute name that is not a string")
                            object.__setattr__(obj, name, value)
            items = self.get(n[6], True) if n[6] is not None else ()
            pairs = self.get(n[7], True) if n[7] is not None else ()
            if type(items) is not tuple or type(pairs) is not tuple:
                raise Refused("a reduction's items of the wrong kind")
            for item in items:
                obj.append(item)
            for pair in pairs:
                if type(pair) is not tuple or len(pair) != 2:
                    raise Refused("a reduction's items of the wrong kind")
                obj[pair[0]] = pair[1]
        except Refused:
            raise
        except Exception as e:
            raise Refused("a value of type %s.%s that its reduction does not make here (%s: %s)" % (n[1], n[2], type(e).__name__, e)) from None
        if self.peer.policy.strict and _equals_anything(obj):
            raise Refused("a value of type %s.%s that says it equals anything" % (n[1], n[2]))
        return obj

    def instance(self, i, n):
        """An instance of a project class over an immutable builtin (its contents come first);
        the others are made by `shell` and `fill_node`."""
        cls, base = self.project_class(n)
        if base not in _IMMUTABLE_BASES:
            raise Refused("a value of type %s.%s, which the project does not define" % (n[1], n[2]))
        value = base.__new__(cls, self.get(n[4]))
        self.peer.note_received(self.base + i, value)
        self.memo[i] = value
        self.fresh.append(value)
        self.fill(value, self.get(n[3], True))
        return value

    @staticmethod
    def fill(value, state):
        """Sets an object's attributes from `state` (its `__dict__` and slots), as pickle does."""
        if not isinstance(state, dict):
            raise Refused("an object's attributes that are not a dict")
        slots = set(_slots_of(type(value)))
        d = _own_dict(value)
        for name, x in state.items():
            if not isinstance(name, str):
                raise Refused("an attribute name that is not a string")
            if name in slots:
                object.__setattr__(value, name, x)
            elif isinstance(d, dict):
                d[name] = x
            else:
                raise Refused("an attribute %s its class has no room for" % name)

    def exception(self, n):
        policy = self.peer.policy
        args = self.get(n[3], True)
        state = self.get(n[4], True)
        try:
            cls = policy.resolve_class(n[1], n[2])
            if not issubclass(cls, BaseException) or policy.kind_of_class(cls) != "exc":
                raise Refused("%s.%s is not an exception" % (n[1], n[2]))
        except Refused as why:
            return RuntimeError("the program raised %s.%s (%s): %s" % (n[1], n[2], why, ", ".join(map(str, args if isinstance(args, tuple) else ()))))
        return self.made_exception(cls, args, state)

    def tests_exception_class(self, n):
        """The program's side: the stand-in of a tests' exception class (`Encoder.
        tests_exception_class`), one per class for the run, a subclass of its bases here."""
        peer = self.peer
        if len(n) != 5 or type(n[1]) is not int or not isinstance(n[2], str) or not isinstance(n[3], str) or type(n[4]) is not list:
            raise Refused("a malformed exception class of the tests'")
        made = peer.stand_ins.get(n[1])
        if made is None:
            bases = tuple(self.get(r) for r in n[4])
            if not bases or not all(isinstance(b, type) and issubclass(b, Exception) for b in bases):
                raise Refused("an exception class of the tests' over what is no exception")
            namespace = {"__module__": n[2], "__qualname__": n[3]}
            try:
                made = type(n[3].rpartition(".")[2], bases, namespace)
            except TypeError:
                # Bases that cannot be joined here (their layouts): the first one's.
                made = type(n[3].rpartition(".")[2], bases[:1], namespace)
            peer.stand_ins[n[1]] = made
            peer.tests_exceptions[id(made)] = (made, n[1])
        return made

    def tests_exception(self, n):
        """The program's side: a tests' exception (raised by a test's callback), as an object of
        its class's stand-in, the same one each time it crosses; it goes back as itself."""
        peer = self.peer
        if len(n) != 5 or type(n[2]) is not int:
            raise Refused("a malformed exception of the tests'")
        cls = self.get(n[1])
        if peer.tests_exception_hid(cls) is None:
            raise Refused("an exception of the tests' of a class they never sent")
        same = peer.stand_ins.get(("o", n[2]))
        args, state = self.get(n[3], True), self.get(n[4], True)
        if same is not None:
            return same
        e = self.made_exception(cls, args, state)
        peer.stand_ins[("o", n[2])] = e
        peer.tests_exceptions[id(e)] = (e, n[2])
        return e

    def made_exception(self, cls, args, state):
        """An exception of `cls` made from its arguments and plain attributes."""
        policy = self.peer.policy
        if type(args) is not tuple:
            raise Refused("an exception whose arguments are no tuple")
        skip = getattr(sys.modules.get("unittest"), "SkipTest", None)
        stops = not issubclass(cls, Exception) and cls is not SystemExit
        if policy.strict and (stops or (skip is not None and issubclass(cls, skip))):
            # From the program: KeyboardInterrupt or GeneratorExit across the socket would stop
            # pytest itself; a skip would turn a failure into no outcome.
            return RuntimeError("the program raised %s%r" % (cls.__name__, args))
        if stops and cls is not KeyboardInterrupt:
            # From the tests: a test's callback that interrupts (click's `prompt` tests make the
            # input function raise KeyboardInterrupt, which the program turns into `Abort`)
            # arrives as itself; anything else that is no Exception stays a plain failure.
            return RuntimeError("the tests raised %s%r" % (cls.__name__, args))
        try:
            e = cls(*args)
        except Exception:
            e = cls.__new__(cls)
        try:
            e.args = args
        except Exception:
            pass
        if isinstance(state, dict):
            for name, x in state.items():
                if isinstance(name, str) and not name.startswith("__"):
                    try:
                        object.__setattr__(e, name, x)
                    except Exception:
                        pass
        return e

    def stdlib(self, i, n):
        kind = n[1]
        if kind in ("timedelta", "date", "time", "datetime", "timezone"):
            import datetime as dt

            if kind == "timedelta":
                return dt.timedelta(*n[2])
            if kind == "date":
                return dt.date(*n[2])
            if kind == "timezone":
                offset, name = (self.get(r) for r in n[2])
                return dt.timezone(offset) if name is None else dt.timezone(offset, name)
            tz = None if n[3] is None else self.get(n[3])
            if tz is not None and not isinstance(tz, dt.tzinfo):
                raise Refused("a time zone that is not one")
            if kind == "time":
                h, m, s, us, fold = n[2]
                return dt.time(h, m, s, us, tz, fold=fold)
            y, mo, d, h, m, s, us, fold = n[2]
            return dt.datetime(y, mo, d, h, m, s, us, tz, fold=fold)
        if kind == "zoneinfo":
            import zoneinfo

            return zoneinfo.ZoneInfo(n[2])
        if kind == "Decimal":
            import decimal

            return decimal.Decimal(n[2])
        if kind == "Fraction":
            import fractions

            if len(n[2][0]) > MAX_INT_DIGITS or len(n[2][1]) > MAX_INT_DIGITS:
                raise Refused("a fraction of more than %d digits" % MAX_INT_DIGITS)
            return fractions.Fraction(int(n[2][0]), int(n[2][1]))
        if kind == "path":
            import pathlib

            if n[2] not in ("PurePath", "PurePosixPath", "Path", "PosixPath"):
                raise Refused("an unknown kind of path")
            return getattr(pathlib, n[2])(n[3])
        if kind == "UUID":
            import uuid

            return uuid.UUID(hex=n[2])
        if kind in ("OrderedDict", "Counter"):
            import collections

            cls = getattr(collections, kind)
            out = self.made(i, cls())
            for key, value in n[2]:
                # `cls`'s own: an OrderedDict keeps its order beside the dict underneath.
                cls.__setitem__(out, self.get(key), self.get(value))
            return out
        if kind == "deque":
            import collections

            out = self.made(i, collections.deque(maxlen=n[3]))
            out.extend(self.get(r) for r in n[2])
            return out
        if kind == "defaultdict":
            import collections

            factory = self.get(n[2])
            if factory is not None and not callable(factory):
                raise Refused("a defaultdict whose factory is not callable")
            out = self.made(i, collections.defaultdict(factory))
            for key, value in n[3]:
                dict.__setitem__(out, self.get(key), self.get(value))
            return out
        if kind == "view":
            under = self.get(n[3])
            if not isinstance(under, dict) or n[2] not in _DICT_VIEWS.values():
                raise Refused("a dict's view of something else than a dict")
            return getattr(dict, n[2])(under)
        if kind == "range":
            return range(*n[2])
        if kind == "slice":
            return slice(*(self.get(r) for r in n[2]))
        if kind == "Pattern":
            import re

            return re.compile(self.get(n[2]), n[3])
        if kind in ("Parameter", "Signature"):
            import inspect

            def maybe(r):
                if not isinstance(r, list) or len(r) > 1:
                    raise Refused("a malformed signature")
                return self.get(r[0]) if r else inspect.Parameter.empty

            if kind == "Parameter":
                if not isinstance(n[2], str) or type(n[3]) is not int:
                    raise Refused("a malformed parameter")
                try:
                    return inspect.Parameter(n[2], inspect.Parameter.POSITIONAL_ONLY.__class__(n[3]), default=maybe(n[4]), annotation=maybe(n[5]))
                except ValueError as e:
                    raise Refused("a parameter that cannot be (%s)" % e)
            params = [self.get(r) for r in n[2]] if isinstance(n[2], list) else None
            if params is None or not all(isinstance(p, inspect.Parameter) for p in params):
                raise Refused("a signature whose parameters are not parameters")
            try:
                return inspect.Signature(params, return_annotation=maybe(n[3]))
            except ValueError as e:
                raise Refused("a signature that cannot be (%s)" % e)
        if kind == "bound":
            import re

            owner = self.get(n[2])
            if not isinstance(owner, re.Pattern) or n[3] not in _PATTERN_METHODS:
                raise Refused("a bound method that is not a pattern's")
            return getattr(owner, n[3])
        if kind == "alias":
            origin, args = self.get(n[2]), self.get(n[3])
            if not isinstance(origin, type) or not isinstance(args, tuple):
                raise Refused("a generic alias that is not one")
            return types.GenericAlias(origin, args)
        if kind == "union":
            import functools

            args = self.get(n[2])
            args = tuple(type(None) if a is None else a for a in args) if isinstance(args, tuple) else None
            if not args or not all(isinstance(a, (type, types.GenericAlias)) for a in args):
                raise Refused("a union that is not one")
            return functools.reduce(operator.or_, args)
        if kind == "partial":
            import functools

            func, args, keywords = self.get(n[2]), self.get(n[3], True), self.get(n[4], True)
            if not callable(func) or not isinstance(args, tuple) or not isinstance(keywords, dict):
                raise Refused("a partial that is not one")
            return functools.partial(func, *args, **keywords)
        raise Refused("an unknown standard value (%r)" % (kind,))


# The methods and attributes of classes written in C, as their classes hold them.
_BUILTIN_DESCRIPTORS = (
    types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
    types.GetSetDescriptorType, types.MemberDescriptorType,
)


def _builtin_class(cls):
    """A class written in C, of the builtins or the standard library (`str`, `itertools.chain`,
    `operator.itemgetter`), which both processes have as the same thing."""
    return not cls.__flags__ & _HEAPTYPE and (cls.__module__ == "builtins" or _is_stdlib_module(cls.__module__))


def _flag_type():
    import enum

    return enum.Flag


class _Probe:
    """Nothing anything should equal."""

    __slots__ = ()


_GENEROUS = {}  # class -> whether a bare one equals a `_Probe`


def _generous(cls):
    """Of a class of the standard library's or an installed package's whose objects would cross
    by value: whether a bare one says it equals what nothing should
    (`unittest.mock.ANY`, `dirty_equals.IsAnything`: a matcher, in the tests' venv, which a wrong
    program would return to pass an `==`). Such a class never crosses by value: the program's
    object stays a handle, equal only to itself (and the tests' side, which decides, asks its own
    class, on a bare object made there: nothing the program sent)."""
    known = _GENEROUS.get(cls)
    if known is None:
        # (A class whose bare object cannot be made without running Python code is not asked,
        # and counts as generous: it does not cross by value.)
        blank = _bare(cls)
        known = blank is None or _equals_anything(blank)
        _GENEROUS[cls] = known
    return known


def _equals_anything(obj):
    """Whether `obj` says it equals what nothing should (a matcher: `mock.ANY`), asked with its
    own class's comparison: such an object never crosses by value (the tests' side refuses it,
    the program's keeps it as a handle), since a wrong program would return one to pass an `==`.
    A comparison that raises is no generous one."""
    probe = _Probe()
    try:
        return bool(obj == probe) or not bool(obj != probe)
    except Exception:
        return False


def _own_reduction(cls):
    """Whether a class below `object` defines the reduction that names the class itself as its
    maker (`Path`, `Decimal`): only then may a receiver call the class with what was sent (a
    class that never said so, `subprocess.Popen`, is never called)."""
    return any(("__reduce__" in vars(k) or "__reduce_ex__" in vars(k)) for k in cls.__mro__ if k is not object)


def _blank(cls):
    """An instance of `cls` with no state yet: `object.__new__`, or, for a class over a C base
    that refuses it (an `io.IOBase` subclass), that base's own `__new__` without arguments."""
    try:
        return object.__new__(cls)
    except TypeError:
        pass
    try:
        return cls.__new__(cls)
    except TypeError as e:
        raise Refused("an instance of %s.%s that cannot be made without arguments (%s)" % (cls.__module__, cls.__qualname__, e))


# --- contents put in place ---------------------------------------------------------------------------

def _copy_into(target, source):
    """Makes `target` hold what `source`, an object of its type, holds, in place (module state
    the other side changed, put into the object this side's code already holds)."""
    if target is source:
        return
    t = type(target)
    if t is list or t is bytearray:
        target[:] = source
    elif t is dict or t is set:
        target.clear()
        target.update(source)
    elif t.__module__ == "collections" and t.__qualname__ in ("OrderedDict", "Counter", "defaultdict"):
        items = list(t.items(source))
        t.clear(target)
        for k, v in items:
            t.__setitem__(target, k, v)
    elif t.__module__ == "collections" and t.__qualname__ == "deque":
        target.clear()
        target.extend(source)
    else:
        state = _state(source)
        base = _builtin_base(t)
        if base is list:
            list.__setitem__(target, slice(None), list(source))
        elif base is dict:
            inner = dict(dict.items(source))
            dict.clear(target)
            dict.update(target, inner)
        elif base is set:
            inner = set(source)
            set.clear(target)
            set.update(target, inner)
        d = _own_dict(target)
        if isinstance(d, dict):
            for name in [n for n in d if n not in state]:
                del d[name]
        Decoder.fill(target, state)


def _mutable(value):
    t = type(value)
    if t in _MUTABLE_BUILTINS:
        return True
    if t.__module__ == "collections" and t.__qualname__ in ("OrderedDict", "Counter", "defaultdict", "deque"):
        return True
    return t not in _SCALARS and t not in (tuple, frozenset) and not isinstance(value, (type, BaseException)) and (
        hasattr(value, "__dict__") or bool(_slots_of(t))
    )


# --- the peer -----------------------------------------------------------------------------------------

class _stack_for:
    """Room on the interpreter's stack for `levels` levels of a value (a few frames each) beyond
    the limit in force, however deep the call already is (in pytest, in a recursive parser), for
    the time of one message; the limit is put back after."""

    def __init__(self, levels):
        self.levels = levels

    def __enter__(self):
        self.was = sys.getrecursionlimit()
        sys.setrecursionlimit(self.was + 4 * self.levels + 100)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.was)


class Peer:
    """One side of the socket: sends requests and serves the other side's while it waits."""

    def __init__(self, sock, policy, other, timeout=None):
        self.sock = sock
        self.other = other
        self.policy = policy
        self.timeout = timeout
        self.inbox = bytearray()  # what was read and not yet taken (a message's head and body come in one read)
        self.poll_misses = 0  # polls in a row that ended before the answer came (`_read`)
        self.poll_skip = 0  # reads left that sleep at once, after such a miss
        if timeout is not None:
            # The kernel ends a read that waits longer (`BlockingIOError`): a wait per read with
            # no `select` before it, which cost a third of a round trip.
            whole = int(timeout)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("@ll", whole, int((timeout - whole) * 1e6)))
        # Identities last the whole run, on both sides: what this side sent (gid -> object, and
        # id -> gid), the copies of what the other side sent (id -> (its gid, copy), and gid ->
        # copy), and for the mutable ones the contents both sides last agreed on (id -> parts).
        self.sent = {}
        self.sent_ids = {}
        self.counter = 0
        self.came_from = {}
        self.copies = {}
        self.snaps = {}
        self.received = []  # shared objects a message of this outermost call named: written back
        self.last_values = 0  # how many values the last message this side encoded copied
        self.lock = threading.RLock()  # one conversation at a time (tests that call from threads)
        self.serving = 0  # requests of the other side this side is running (a callback of the tests')
        self.handles = {}  # hid -> callable or iterator kept here
        self.handle_ids = {}  # id(object) -> hid
        # The tests' side: what it lends the program (hid -> "lent" or "opaque", `serve_lent`),
        # the methods the program took from those (their calls carry what changed), and those
        # bound methods kept by (hid, name) so that reading one again is the same handle.
        self.lent = {}
        self.lent_methods = set()
        self.lent_bound = {}
        self.sent_now = []  # shared objects this side's messages named in this outermost call
        # The tests' side: the strings, tuples and frozensets its messages sent in the run (the
        # first MAX_SENT_VALUES), by value. One the program sends back equal, of the same types
        # all the way down (`_exact`), is that object, as when one process passes it through
        # (boltons' `remap` tests `value is target_str` and `old_parent is target_set` of what
        # its target's iterator yielded, a later call than the one that sent it); such a value
        # is otherwise a value, and which of two equal ones is which no verdict's business.
        self.sent_values = {}
        # Tuples and frozensets by identity across messages (`Encoder.pinned`): the tests' side
        # numbers each it sends (id -> (number, object)); the program's side keeps what it made
        # of each number (number -> object).
        self.pins = {}
        self.pinned = {}
        self.decoding = 0  # messages being read (nested: a request made while one is read)
        self.proxies = {}  # peer's hid -> proxy
        # The program's side: stand-ins of the tests' exception classes (`Decoder.
        # tests_exception_class`) and the tests' exceptions, by their hid; id -> (it, hid).
        self.stand_ins = {}
        self.tests_exceptions = {}
        # The tests' side: the hids of those it sent, "exck" (a class) or "exc".
        self.sent_exceptions = {}
        self.kept_with = {}  # the program's side: hid -> the shared objects named where it was made
        self.dead = None
        self.depth = 0
        # The target's default values (`_defaults`), and those of them that are no data by
        # identity: they cross as their place in that list.
        self.target_defaults = []
        self.defaults = {}
        # The tests' side: the objects of theirs the channel keeps alive for the run (sent,
        # lent, copies of the program's) that can be weakly referenced (checked by `request`).
        self.kept_alive = []
        # The target of the outermost call (`_call`), which a refusal names.
        self.qualname = "the target"

    # identities
    def note_received(self, gid, value):
        self.came_from[id(value)] = (gid, value)
        self.copies[gid] = value
        self.received.append(value)
        self.keeps_alive(value)

    def keeps_alive(self, value):
        if self.policy.strict and type(value).__weakrefoffset__ and not isinstance(value, type):
            self.kept_alive.append(value)

    def sent_object(self, gid):
        try:
            return self.sent[gid]
        except (KeyError, TypeError):
            raise Refused("a reference to an object this side never sent")

    def copy_of(self, gid):
        try:
            return self.copies[gid]
        except (KeyError, TypeError):
            raise Refused("a reference to an object the other side never sent")

    def handle(self, obj):
        hid = self.handle_ids.get(id(obj))
        if hid is None:
            if len(self.handles) >= 100_000:
                raise Refused("more than 100000 callables kept for the other side")
            hid = len(self.handles) + 1
            self.handles[hid] = obj
            self.handle_ids[id(obj)] = hid
        return hid

    def kept(self, obj):
        """The handle of a function or iterator this side keeps. The program's side notes the
        shared objects the exchange that made it named: a later call or pull of it, by the
        tests, writes them back too (a generator appending to the list its call was handed,
        resumed by `contextmanager` at the end of a `with` block)."""
        hid = self.handle(obj)
        if not self.policy.strict and hid not in self.kept_with:
            self.kept_with[hid] = self.named()
        return hid

    def tests_exception_hid(self, obj):
        """The program's side: the tests' hid of `obj` where it is a tests' exception or the
        stand-in of their exception class (`Decoder.tests_exception_class`), else None."""
        own = self.tests_exceptions.get(id(obj))
        return own[1] if own is not None and own[0] is obj else None

    def local_handle(self, hid):
        try:
            return self.handles[hid]
        except (KeyError, TypeError):
            raise Refused("a reference to a callable this side never sent")

    def remote_id(self, value):
        if type(value) in _HANDLE_TYPES and object.__getattribute__(value, "_peer") is self:
            return object.__getattribute__(value, "_hid")
        return None

    def proxy(self, hid, kind, cls=None, own=None):
        """The handle of the other side's object `hid`; `own`: (a handle of the tests' class of a
        lent object, its name), so that the handle's own type stands for that class."""
        key = (hid, kind)
        p = self.proxies.get(key)
        if p is None:
            kinds = _PROXIES_OF_THE_PROGRAM if self.policy.strict else _PROXIES_OF_THE_TESTS
            made = kinds.get(kind, RemoteValue)
            if own is not None and made in (LentObject, LentCallable):
                p = object.__new__(_lent_type(made, *own))
                _Remote.__init__(p, self, hid)
            elif cls is not None and made in (RemoteValue, RemoteObject):
                p = object.__new__(_SaidOf if made is RemoteValue else _CallableSaidOf)
                _Remote.__init__(p, self, hid)
                object.__setattr__(p, "_cls", cls)
            else:
                p = made(self, hid)
            if isinstance(p, LentObject):
                if cls is not None and not isinstance(cls, type):
                    raise Refused("a lent object said to be of something that is no class")
                object.__setattr__(p, "_cls", cls)
            self.proxies[key] = p
        return p

    def named(self):
        """The shared mutable objects this outermost call's messages named, both ways: sent with
        a call of a lent object's method (and its answer), so that the method, run in the tests'
        process, sees what the program changed in them so far, and the program what it changed."""
        seen, out = set(), []
        for obj in itertools.chain(self.received, self.sent_now):
            if id(obj) not in seen and _mutable(obj):
                seen.add(id(obj))
                out.append(obj)
        return out

    def reset(self):
        """After an outermost call: what is written back next time is what the next call brings.
        Identities last the whole run (a generator returned by one call and pulled in another
        still yields the tests' own objects), and every copy is kept alive with them: a copy
        dropped would run its class's `__del__` (closing a stream a handle still uses)."""
        self.received = []
        self.sent_now = []

    # messages
    def encode(self, values, answer=False):
        """A message body holding `values` (a dict of name -> value) as one table. The message's
        own containers (keyword arguments, what is written back, module state, patches) cross
        as tuples: no code of either side holds them, so they are not shared objects to track,
        keep alive and write back at every later call. `answer`: the tests' answer to the
        program's own call (`Encoder.answer`)."""
        values = {name: _envelope(name, v) for name, v in values.items()}
        enc = Encoder(self, answer)
        state = values.get("state")
        if isinstance(state, tuple):
            enc.unnamed = {id(v) for _, v in state}
        try:
            with _stack_for(MAX_DEPTH):
                roots = {name: enc.ref(v) for name, v in values.items()}
                enc.finish()
        except RecursionError:
            raise Refused("a value nested deeper than the interpreter's stack") from None
        base = self.counter
        for i, v in enumerate(enc.keep):
            node = enc.nodes[i]
            if (node[0] in _SHARED_KINDS or (node[0] == "std" and node[1] in _SHARED_STD)) and _mutable(v):
                self.sent[base + i] = v
                self.sent_ids[id(v)] = base + i
                self.snaps[id(v)] = _children(v)
                self.sent_now.append(v)
                self.keeps_alive(v)
            elif node[0] in ("back", "m"):
                self.sent_now.append(v)
        for v, now in enc.updated:
            self.snaps[id(v)] = now
        self.counter += len(enc.nodes)
        self.last_values = enc.values
        return {"n": enc.nodes, "base": base, "r": roots}

    def decode(self, message):
        dec = Decoder(self, message)
        roots = message.get("r")
        if not isinstance(roots, dict):
            raise Refused("a message without its values")
        self.decoding += 1
        try:
            with _stack_for(MAX_DEPTH * 4):
                values = {name: dec.get(i) for name, i in roots.items()}
                dec.rest()
        except RecursionError:
            raise Refused("a value nested deeper than the interpreter's stack") from None
        finally:
            self.decoding -= 1
        for obj in dec.fresh:
            if _mutable(obj):
                self.snaps[id(obj)] = _children(obj)
        return values

    def send(self, message):
        data = json.dumps(message, separators=(",", ":")).encode()
        if len(data) > MAX_MESSAGE:
            raise Refused("a value of more than %d MB" % (MAX_MESSAGE >> 20))
        try:
            self.sock.sendall(struct.pack(">Q", len(data)) + data)
        except OSError as e:
            self.dead = "%s is gone (%s)" % (self.other, e)
            raise Gone(self.dead)
        except BaseException as e:
            # Cut off in the middle of a message (a RecursionError, an interrupt): the stream is
            # out of step for good.
            self.dead = "the channel broke while sending (%s)" % type(e).__name__
            raise Gone(self.dead)

    def recv(self):
        try:
            return self._recv()
        except Gone:
            raise
        except BaseException as e:
            self.dead = "the channel broke while receiving (%s)" % type(e).__name__
            raise Gone(self.dead)

    def _recv(self):
        if self.dead:
            raise Gone(self.dead)
        head = self._read(8)
        (size,) = struct.unpack(">Q", head)
        if size > MAX_MESSAGE:
            self.dead = "%s sent a message of %d bytes, over the bound of %d" % (self.other, size, MAX_MESSAGE)
            raise Gone(self.dead)
        try:
            message = json.loads(self._read(size))
        except ValueError:
            self.dead = "%s sent a message that is not JSON" % self.other
            raise Gone(self.dead)
        if not isinstance(message, dict):
            self.dead = "%s sent a message that is not an object" % self.other
            raise Gone(self.dead)
        return message

    def _read(self, n):
        inbox = self.inbox
        if len(inbox) < n:
            if self.poll_skip:
                self.poll_skip -= 1
            elif self._poll(n):
                self.poll_misses = 0
            else:
                # The answer took longer than the poll: the next reads sleep at once, more of
                # them after each miss in a row (the other side computes long, or shares the
                # CPU with other work, where polling would only take CPU from it).
                self.poll_misses += 1
                self.poll_skip = min(1 << self.poll_misses, POLL_BACKOFF)
        while len(inbox) < n:
            try:
                b = self.sock.recv(min(max(n - len(inbox), 1 << 16), 1 << 20))
            except BlockingIOError:
                self.dead = "%s did not answer within %g s" % (self.other, self.timeout)
                raise Gone(self.dead)
            except OSError:
                b = b""
            if not b:
                self.dead = "%s ended" % self.other
                raise Gone(self.dead)
            inbox += b
        data = bytes(inbox[:n])
        del inbox[:n]
        return data

    def _poll(self, n):
        """Reads what arrives within `POLL_SECONDS` without sleeping (an answer usually comes
        sooner); `_read` then waits in the kernel for the rest. Whether `n` bytes came."""
        inbox = self.inbox
        end = time.perf_counter() + POLL_SECONDS
        while len(inbox) < n:
            try:
                b = self.sock.recv(min(max(n - len(inbox), 1 << 16), 1 << 20), socket.MSG_DONTWAIT)
            except BlockingIOError:
                if time.perf_counter() > end:
                    return False
                os.sched_yield()
                continue
            except OSError:
                return False
            if not b:
                return False
            inbox += b
        return True

    def request(self, message):
        """Sends a request and serves the other side's requests until its answer comes. One
        thread at a time: the stream carries one conversation."""
        with self.turn():
            if self.dead:
                raise Gone(self.dead)
            if self.depth == 0 and self.kept_alive and any(map(weakref.getweakrefcount, self.kept_alive)):
                # In one process such an object dies with its last strong reference, and a weak
                # mapping holding it (cachetools' tests cache in a `WeakValueDictionary`) lets
                # it go; here the channel keeps it for the run, which a test could tell.
                _refuse(self.qualname, "weak_reference")
            if not self.policy.strict:
                _Printed.so_far(message)
            elif _carried:
                dropped = _streams_back()
                if dropped:
                    message["streams_back"] = dropped
            self.send(message)
            self.depth += 1
            try:
                while True:
                    m = self.recv()
                    op = m.get("op")
                    if op in ("ok", "err"):
                        return m
                    if self.policy.strict:
                        # The tests' side: what the program printed before asking, first.
                        _write_printed(m)
                    self.serving += 1
                    try:
                        self.serve(m)
                    finally:
                        self.serving -= 1
            finally:
                self.depth -= 1

    @contextlib.contextmanager
    def turn(self):
        """The conversation, for this thread. Tests that call from several threads take turns;
        on the tests' side, a thread kept waiting while the thread that has the turn runs the
        tests' own code for the program (a callback waiting at a `Barrier` for the others, as
        cachetools' threading tests do) would wait for ever or time out where in one process
        the threads run together: the run is judged in-process instead."""
        while not self.lock.acquire(timeout=0.5):
            if self.policy.strict and self.serving:
                _refuse(self.qualname, "threads")
        try:
            yield
        finally:
            self.lock.release()

    def answer(self, fn, along=False, printed=False):
        """Runs `fn()` and sends its value or exception back; `along`: with the shared objects
        the call named, where they changed (a lent object's method); `printed`: with what it
        printed, which the tests' side writes where its own output goes now (a click command's
        help printed by a callback the target returned, into the test runner's stream). An
        answer that is no data (a tests' callback returning a module) fails the call that asked
        for it."""
        capture = _Printed() if printed else None
        try:
            with capture or contextlib.nullcontext():
                value = fn()
            values = {"v": value, "wb": self.named()} if along else {"v": value}
            if printed:
                # (Outermost: a generator the target returned, pulled by a `with` block.)
                self.carried(values)
            body = self.encode(capture.streams(values) if capture else values, answer=True)
            body["op"] = "ok"
        except Gone:
            raise
        except Refused as why:
            # (The program asked for it: its call fails, as any of its calls that cannot be
            # answered across the processes.)
            body = self.failure(RuntimeError("the tests' answer is not data: %s" % why))
        except BaseException as e:
            body = self.failure(e, along, capture)
        if capture:
            capture.put(body)
        self.send(body)

    def failure(self, e, along=False, capture=None):
        wb = {"wb": self.named()} if along else {}
        if capture is not None:
            wb = capture.streams(self.carried(wb))
        try:
            body = self.encode(dict(wb, e=e))
        except Refused as why:
            body = self.encode(dict(wb, e=RuntimeError("%s: %s (%s)" % (type(e).__name__, e, why))))
        body["op"] = "err"
        return body

    def refresh(self, objects):
        """The program's side, before a call of a function it keeps: the tests' current contents
        of the shared objects the exchange that made the function named, which the tests may
        have changed since (a test clears the memo dict it handed a decorator, then calls the
        decorated function). One request: the tests' side answers them back as they are now."""
        body = self.encode({"v": list(objects)})
        body["op"] = "refresh"
        self.result(self.request(body))

    def serve(self, m):
        op = m.get("op")
        if not self.policy.strict and "streams_back" in m:
            _Printed.drop(m.get("streams_back"))
        # The program's side, asked by the tests when no call is under way (a function the
        # target returned, called by a test): an outermost conversation of its own, whose answer
        # brings back what it changed in the shared objects it named (a cache it was handed).
        along = not self.policy.strict and m.get("along") is True
        # (Nested in a call, what it prints is the call's: captured and sent with its answer.)
        printed = along and self.depth == 0 and op in ("cb", "next")
        kept = ()
        if printed:
            self.reset()
            hid = m.get("h")
            kept = self.kept_with.get(hid, ()) if type(hid) is int else ()
            self.received.extend(kept)
        if op == "cb":
            def run():
                args = self.decode(m)
                if kept:
                    # (After the request is read: what the tests' answer names may be in it.)
                    self.refresh(kept)
                fn = self.local_handle(m.get("h"))
                return fn(*args["a"], **_keywords(args.get("k")))

            # (The tests' side writes back along what any function of the tests' changed in the
            # shared objects when the program asks: all the program sees is what it would in one
            # process, the test's changes to objects the two share.)
            self.answer(run, along or (self.policy.strict and m.get("along") is True), printed)
        elif op == "next":
            def pull():
                # (No refresh: a generator is pulled item by item, and what it was made with can
                # be large, a lexer's rules; looking at all of it at each pull cost sqlparse's
                # `get_tokens` 4x.)
                it = self.local_handle(m.get("h"))
                return next(it)

            self.answer(pull, along, printed)
        elif op == "refresh" and self.policy.strict:
            def current():
                # Only what the program names, which it holds already: sent back, each is
                # the tests' own object, and crosses with what changed in it (`Encoder.shared`).
                objects = self.decode(m).get("v")
                if type(objects) is not list:
                    raise Refused("a malformed refresh")
                return objects

            self.answer(current)
        elif op == "get" and m.get("name") == "__signature__":
            self.answer(lambda: self.signature_of(self.local_handle(m.get("h"))))
        elif op == "get" and self.policy.strict and m.get("name") in _OPEN_NAMES:
            self.answer(lambda: getattr(self.local_handle(m.get("h")), m.get("name")))
        elif self.policy.strict and m.get("h") in self.lent and op in ("get", "set", "del", "op"):
            self.serve_lent(m)
        elif op in ("get", "set", "del") and not self.policy.strict:
            # Only the program's objects are open to attribute access: the tests' side lets the
            # program call what the tests handed it (a key function), never look inside it (a
            # function's `__globals__` is the test module's, expected values and all).
            self.touch(m, getattr)
        else:
            self.serve_other(m)

    def signature_of(self, fn):
        """`_signature_of` what this side keeps; of a test's class that has a `__signature__` of
        its own that is no signature (a property, which `inspect` refuses but toolz looks for),
        the program gets a stand-in (`_NotASignature`): `inspect.signature` refuses it as it
        would the property in one process, and it has a `__get__` where that has one."""
        import inspect

        if self.policy.strict and isinstance(fn, type):
            own = getattr(fn, "__signature__", None)
            if own is not None and not isinstance(own, inspect.Signature):
                # It stays here; the program gets a stand-in of its kind (`_NotASignature`).
                return (_NOT_A_SIGNATURE, type(own).__name__, hasattr(own, "__get__"))
        return _signature_of(fn)

    def touch(self, m, read, check=None):
        """Answers a request to get (with `read(obj, name)`), set or delete an attribute of an
        object kept on this side (a value set passed to `check` first)."""

        def attribute():
            obj = self.local_handle(m.get("h"))
            name = m.get("name")
            if not isinstance(name, str):
                raise TypeError("an attribute name that is not a string")
            if m.get("op") == "get":
                return read(obj, name)
            if m.get("op") == "set":
                value = self.decode(m)["v"]
                if check is not None:
                    check(value)
                setattr(obj, name, value)
            else:
                delattr(obj, name)
            return None

        self.answer(attribute)

    def serve_lent(self, m):
        """The program uses an object the tests lent it: reads, sets or deletes an attribute of
        it by a name that is no special one (bar the protocols' methods: `__len__`, `__iter__`,
        `__enter__`...), or compares, hashes or asks membership of it. A method it reads is kept
        on this side and called through the socket, its calls carrying the shared objects both
        sides changed (`named`). Opaque objects answer only comparison and hashing."""
        hid, op, name = m.get("h"), m.get("op"), m.get("name")
        obj = self.local_handle(hid)
        if op == "op":
            how = _LENT_OPERATORS.get(name) or (_LENT_MAKERS.get(name) if self.lent[hid] == "lent" else None)
            if how is None:
                self.fail_unread(m, TypeError("an operation a lent object does not answer (%r)" % (name,)))
                return

            def operate():
                args = self.decode(m).get("a")
                if not isinstance(args, tuple) or len(args) > 1:
                    raise TypeError("a malformed operation")
                return how(obj, *args)

            self.answer(operate)
            return
        special = isinstance(name, str) and name[:2] == "__" and name[-2:] == "__"
        # A name that is only text may be set too (toolz's `curry.__init__` sets `self.__doc__`
        # on a test's subclass of it, as `functools.update_wrapper` does).
        allowed = name in _LENT_PROTOCOL if op == "get" else op == "set" and name in _OPEN_NAMES
        if self.lent[hid] != "lent" or not isinstance(name, str) or (special and not allowed):
            self.fail_unread(m, AttributeError("%s: an object the tests lent is used by its own names, not looked into" % (name,)))
            return
        if _is_mock(obj) and (name in _MOCK_MUTATORS or name.startswith(("_mock_", "_spec_")) or (op != "get" and (name in _MOCK_RECORDS or name.startswith("assert")))):
            # What a mock recorded is the test's evidence: the program makes calls, it does not
            # write, reset or replace the record, nor the assertions that read it.
            self.fail_unread(m, AttributeError("%s: a mock's record of its calls is the test's, not the program's to change" % (name,)))
            return

        def read(obj, name):
            if special:
                # A protocol's method is Python's to look up on the type (`str(Class1)` is
                # `type.__str__` bound to it; `Class1.__str__` would be `object`'s, unbound),
                # as it is stored there (a `staticmethod` `__call__`, `whatever`'s `_ < 3`, is
                # not bound to the object).
                found = _stored_on_type(type(obj), name)
                get = getattr(type(found), "__get__", None)
                value = found if get is None else get(found, obj, type(obj))
            else:
                value = getattr(obj, name)
            if callable(value) and getattr(value, "__self__", None) is obj:
                # The same handle each time it is read; its calls carry what changed.
                kept = self.lent_bound.get((hid, name))
                if kept is not None and getattr(kept, "__func__", None) is getattr(value, "__func__", None):
                    value = kept
                else:
                    self.lent_bound[(hid, name)] = value
                self.lent_methods.add(self.handle(value))
            return value

        self.touch(m, read, _no_program_code(name))

    def fail_unread(self, m, failure):
        """Answers `failure` to a request whose values this side does not need, read all the
        same: the sender counts them as sent from now on (a list the program tried to set on a
        lent object, which it returns later as that same list)."""
        try:
            self.decode(m)
        except Refused:
            pass
        self.send(self.failure(failure))

    def serve_other(self, m):
        name = m.get("name")
        if m.get("op") == "op" and name == "vars":
            fn = self.handles.get(m.get("h")) if type(m.get("h")) is int else None
            if type(fn) is not types.FunctionType:
                self.send(self.failure(AttributeError("__dict__")))
            else:
                # The names of a plain function's plain attributes (`_FunctionAttributes`).
                self.answer(lambda: [a for a in vars(fn) if isinstance(a, str) and a not in _FUNCTION_INSIDES])
            return
        if m.get("op") in ("get", "set", "del") and self.policy.strict and isinstance(name, str) and name not in _FUNCTION_INSIDES:
            fn = self.handles.get(m.get("h")) if type(m.get("h")) is int else None
            if type(fn) is types.FunctionType:
                # The program reads or writes a plain attribute of a function the tests handed
                # it (click's `option` keeps `f.__click_params__` on the test's command
                # function), there, as in one process; never its code, globals or defaults, and
                # never with the program's own code as the value.
                self.touch(m, getattr, _no_program_code(name))
                return
        if m.get("op") in ("get", "set", "del"):
            # An AttributeError, so that `hasattr(fn, "func")` in the program says False.
            failure = AttributeError("%s: what the tests handed over can be called, not looked into" % (m.get("name"),))
        else:
            failure = RuntimeError("an unknown request %r" % (m.get("op"),))
        self.send(self.failure(failure))

    def carried(self, values, with_state=True):
        """`values` with what the program did in its own process that the tests' would have
        seen in one (`Server`): its directory, environment and module state; nothing on the
        tests' side."""
        return values

    def result(self, reply):
        values = self.decode(reply)
        if self.policy.strict:
            _carry_over(self, values)
        if reply.get("op") == "ok":
            return values["v"]
        e = values["e"]
        raise e if isinstance(e, BaseException) else RuntimeError("the other side raised %r" % (e,))


def _no_program_code(name):
    """The check of a value the program sets on a tests' object or function: never a handle of
    the program's that can be called, whose code would become the test's object's behaviour (a
    method the test calls to check the result, replaced by one that says yes). An object of the
    program's that cannot be called (`RemoteValue`: click's `Context.__init__` gives a test's
    subclass the `ExitStack` it made) is set, as in one process."""

    def check(value):
        if type(value) in _HANDLE_TYPES and type(value) not in (RemoteValue, _SaidOf):
            raise AttributeError("%s: the program may not put its own function into an object the tests lent" % (name,))

    return check


# What of a function the tests handed over the program never reads or writes: its code and all
# that reaches the test module (globals, closure cells, defaults, the function it wraps), and
# pytest's marks (a parametrised test's expected values).
_FUNCTION_INSIDES = frozenset(
    ("__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "__dict__", "__func__", "__self__",
     "__builtins__", "__class__", "__call__", "__get__", "__annotations__", "__type_params__", "pytestmark")
)


def _encode_for(peer, values):
    """A request's body; on the tests' side, what is no data among it (a test's object handed to
    a function the program returned) makes the run not isolated, as an argument would."""
    try:
        return peer.encode(values)
    except Refused as why:
        if peer.policy.strict:
            _refuse(peer.qualname, "not_data", why)
        raise


# Special attributes a handle asks the other side for (and the only ones, with plain names, the
# tests' side answers for what it handed over: `functools.wraps` copies them).
_OPEN_NAMES = frozenset(("__name__", "__qualname__", "__module__", "__doc__"))
# What a handle asks the other side for beyond those: its signature, as `_signature_of` gives it.
_ASKED_NAMES = _OPEN_NAMES | {"__signature__", "__wrapped__"}
# The special names Python and its standard library give or look for: never asked of the other
# side (a handle has none of them of its own).
_PYTHON_NAMES = frozenset(
    name
    for t in (object, type, types.FunctionType, types.MethodType, types.ModuleType, types.GeneratorType, int, float, complex, str, bytes,
              list, dict, set, tuple, BaseException, property, io.IOBase, collections.abc.Iterator, contextlib.AbstractContextManager)
    for name in dir(t)
    if name[:2] == "__"
) | {
    "__copy__", "__deepcopy__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__", "__getnewargs_ex__",
    "__fspath__", "__length_hint__", "__index__", "__await__", "__aiter__", "__anext__", "__aenter__", "__aexit__", "__enter__", "__exit__",
    "__class_getitem__", "__mro_entries__", "__set_name__", "__instancecheck__", "__subclasscheck__", "__missing__", "__reversed__",
    "__contains__", "__bool__", "__len__", "__iter__", "__next__", "__set__", "__delete__", "__objclass__", "__isabstractmethod__",
    "__text_signature__", "__slots__", "__weakref__", "__abstractmethods__", "__origin__", "__args__", "__parameters__", "__orig_bases__",
    "__orig_class__", "__final__", "__self_class__", "__fields__", "__dataclass_fields__", "__dataclass_params__", "__match_args__",
    "__array__", "__array_interface__", "__array_struct__", "__array_priority__", "__array_ufunc__", "__array_function__", "__html__",
    "__rich__", "__rich_repr__", "__pytest_wrapped__", "__test__", "__unittest_skip__", "__code__", "__globals__", "__closure__",
    "__defaults__", "__kwdefaults__", "__func__", "__self__", "__builtins__", "__annotations__", "__type_params__", "__file__",
    "__path__", "__spec__", "__loader__", "__package__", "__cached__", "__all__", "__version__",
}

# A default value's stand-in in a signature sent for a handle: that there is one, not what it is.
_SOME_DEFAULT = "<a default value kept in the other process>"


# A tests' class's `__signature__` that is no signature (a property: toolz's tests), said so.
_NOT_A_SIGNATURE = "rgd: a __signature__ that is no signature"


class _NotASignature:
    """The program's stand-in for a tests' class's `__signature__` that is no signature: not an
    `inspect.Signature` (so `inspect.signature` raises `TypeError`, as of the property in one
    process), with a `__get__` where the real one has one (toolz asks `hasattr(func.__signature__,
    "__get__")`)."""

    def __init__(self, kind, descriptor):
        self.kind = kind
        if descriptor:
            self.__get__ = lambda obj, objtype=None: self

    def __getattr__(self, name):
        if name == "__get__":
            raise AttributeError(name)
        raise AttributeError("%s: the %s stays in the tests' process" % (name, self.kind))

    def __repr__(self):
        return "<%s kept in the tests' process>" % self.kind


def _signature_of(fn):
    """The signature of a callable kept on this side, as the other side may see it: parameter
    names and kinds, and whether each has a default (`inspect.signature` of a callback, which a
    function that introspects what it is handed asks for: toolz's `has_keywords`), never the
    default values or annotations themselves (a test's lambda keeps its defaults)."""
    import inspect

    sig = inspect.signature(fn)
    params = [
        p.replace(default=p.empty if p.default is p.empty else _SOME_DEFAULT, annotation=p.empty)
        for p in sig.parameters.values()
    ]
    return sig.replace(parameters=params, return_annotation=sig.empty)


class _Remote:
    """An object that is no data, kept in the process that made it: attributes, methods,
    iteration, indexing, length, truth and `with` go through the socket and come back as data (or
    as more handles). It equals only itself and holds nothing: no comparison, membership or hash
    of the other process's is trusted (an object "equal to anything" stays unequal to all)."""

    __slots__ = ("_peer", "_hid", "__weakref__")

    def __init__(self, peer, hid):
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_hid", hid)

    @property
    def __doc__(self):
        # Asked (a wrapper's docstring, `functools.wraps` copies it), of either side.
        try:
            return _Remote._ask(self, "get", "__doc__")
        except AttributeError:
            return None

    def _ask(self, op, name, value=None):
        peer = object.__getattribute__(self, "_peer")
        body = _encode_for(peer, {"v": value})
        body.update(op=op, h=object.__getattribute__(self, "_hid"), name=name)
        return peer.result(peer.request(body))

    def __getattr__(self, name):
        if name == "__dict__" and type(self) is RemoteMethod:
            # The other side's plain function's attributes (funcy's `update_wrapper` updates the
            # wrapper's `__dict__` with the wrapped one's, either side's): read and written there
            # by their plain names. (Only a plain function's: a handle of any other callable has
            # no `__dict__`, so `getattr(f, "__dict__", {})` in `functools.update_wrapper` gets
            # its default.)
            return _FunctionAttributes(self)
        if name[:2] == "__" and name[-2:] == "__" and name not in _ASKED_NAMES and (name in _PYTHON_NAMES or type(self) not in (RemoteFunction, RemoteMethod)):
            # What Python itself probes (`__dict__`, `__slots__`, `__wrapped__`...): the handle
            # has none of its own, and asking the other side for each would be a round trip.
            # (A function's own such names, click's `__click_params__`, are asked.)
            raise AttributeError(name)
        value = _Remote._ask(self, "get", name)
        if name == "__signature__" and type(value) is tuple and len(value) == 3 and value[0] == _NOT_A_SIGNATURE:
            return _NotASignature(str(value[1]), bool(value[2]))
        return value

    def __setattr__(self, name, value):
        _Remote._ask(self, "set", name, value)

    def __delattr__(self, name):
        _Remote._ask(self, "del", name)

    def _method(self, name, *args):
        try:
            method = _Remote._ask(self, "get", name)
        except AttributeError:
            # What the object does not do is a TypeError, as Python says of `len(3)`: `list()`
            # then asks for a length hint no more.
            raise TypeError("the object kept in the other process has no %s" % name) from None
        return method(*args)

    def __iter__(self):
        return _Remote._method(self, "__iter__")

    def __next__(self):
        return _Remote._method(self, "__next__")

    def __len__(self):
        return _Remote._method(self, "__len__")

    def __bool__(self):
        # Python's own rule: `__bool__`, else `__len__`, else true.
        try:
            return bool(_Remote._method(self, "__bool__"))
        except TypeError:
            pass
        try:
            return _Remote._method(self, "__len__") != 0
        except TypeError:
            return True

    def __getitem__(self, key):
        return _Remote._method(self, "__getitem__", key)

    def __setitem__(self, key, value):
        _Remote._method(self, "__setitem__", key, value)

    def __delitem__(self, key):
        _Remote._method(self, "__delitem__", key)

    def __enter__(self):
        return _Remote._method(self, "__enter__")

    def __exit__(self, *exc):
        return _Remote._method(self, "__exit__", *(None, None, None))

    _unseen = "<object kept in the other process>"

    def __repr__(self):
        try:
            return str(_Remote._method(self, "__repr__"))
        except Exception:
            return type(self)._unseen

    def __str__(self):
        return str(_Remote._method(self, "__str__"))

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        # A copy or a pickle of what stays in the other process (toolz's tests pickle a curried
        # function the program made) cannot be made here: on the tests' side (the tests' doing)
        # the run is judged in-process instead; on the program's, it is the program's failure.
        peer = object.__getattribute__(self, "_peer")
        if peer.policy.strict:
            _refuse(peer.qualname, "copied_handle")
        _cannot("copy what the tests' process keeps")


def _call_other_side(self, /, *args, **kwargs):
    """Calls the object a handle stands for, in the process that holds it."""
    return _Remote._ask(self, "get", "__call__")(*args, **kwargs)


class RemoteValue(_Remote):
    """An object the other process keeps that it says cannot be called (an `ExitStack` the
    program made, stored in a tests' object): used by its names; calling it is a `TypeError`
    here, whatever the other side says, so that it can never stand for a function."""

    __slots__ = ()


class RemoteObject(RemoteValue):
    """An object the other process keeps that can be called."""

    __slots__ = ()

    __call__ = _call_other_side


class _SaidOf(RemoteValue):
    """A program's object that says which class of the standard library's or an installed
    package's it is of (`_known_base`): `isinstance` agrees, nothing else changes."""

    __slots__ = ("_cls",)

    @property
    def __class__(self):
        return object.__getattribute__(self, "_cls")


class _CallableSaidOf(_SaidOf):
    __slots__ = ()

    __call__ = _call_other_side


class _AskedModule:
    """A function handle's `__module__`: asked of the other side, as its `__doc__` is
    (`functools.wraps` copies the wrapped function's module to the wrapper: funcy's tests check
    a decorated test function says its test module); its class's own is this module's."""

    def __get__(self, handle, cls=None):
        if handle is None:
            return __name__
        try:
            return _Remote._ask(handle, "get", "__module__")
        except AttributeError:
            return None

    def __set__(self, handle, value):
        _Remote._ask(handle, "set", "__module__", value)


class _FunctionHandleType(type):
    """The class of function handles, each of which asks its instances' `__module__`
    (`_AskedModule` in its own dict, where Python looks first). A class's `__module__` is read
    from its dict as is (no descriptor applied) unless its metaclass has one to find first: this
    one has the plain string, so the handle classes still say their module."""

    def __new__(mcls, name, bases, namespace):
        namespace["__module__"] = _AskedModule()
        return type.__new__(mcls, name, bases, namespace)


class RemoteFunction(RemoteObject, metaclass=_FunctionHandleType):
    """A callable that stays in the other process; calling it is one request (its attributes,
    `functools.partial`'s `func` say, are read as any handle's)."""

    __slots__ = ()

    def __call__(self, /, *args, **kwargs):
        peer = object.__getattribute__(self, "_peer")
        if not peer.policy.strict and peer.decoding == 0 and _holds_project_objects(peer.policy, args, kwargs):
            # The program calls a test's function with objects of the project's (click's
            # parameter callback handed the context, whose `params` it changes): as a lent
            # method's, the call carries what the program changed in the shared objects so far
            # and its answer what the test's function changed in them. (Not for every callback:
            # a key function called per item would send the state of all of them each time.)
            body = _encode_for(peer, {"a": args, "k": kwargs, "wb": peer.named()})
            body.update(op="cb", h=object.__getattribute__(self, "_hid"), along=True)
            return peer.result(peer.request(body))
        body = _encode_for(peer, {"a": args, "k": kwargs})
        body.update(op="cb", h=object.__getattribute__(self, "_hid"))
        return _asked_along(peer, body)

    def __repr__(self):
        return "<function kept in the other process #%d>" % object.__getattribute__(self, "_hid")

    # A function's `str` is its `repr` (click's help formatting a default that is a test's lambda).
    __str__ = __repr__


def _holds_project_objects(policy, args, kwargs):
    """Whether a call's arguments include an object of a project class."""
    for value in itertools.chain(args, kwargs.values()):
        t = type(value)
        if t.__module__ != "builtins" and policy.project_module(t.__module__) and not isinstance(value, (type, BaseException)):
            return True
    return False


def _asked_along(peer, body):
    """A call or pull of what the other process keeps. Asked by the tests, its answer brings
    back what the program changed in the shared objects the call named, as a target's call does
    (`cache_info` handed the tests' cache, which the program's code expires); not while a
    message is being read (its objects are not all made yet)."""
    if not peer.policy.strict:
        return peer.result(peer.request(body))
    outermost = peer.depth == 0
    body["along"] = peer.decoding == 0
    try:
        reply = peer.request(body)
        _replay_output(reply)
        return peer.result(reply)
    finally:
        if outermost:
            peer.reset()


class RemoteMethod(RemoteFunction):
    """A plain function that stays in the other process: held by a class, it binds as a method,
    as the function itself would, and it says it is a function (`inspect.isfunction`: click
    shows a default that is a test's lambda as "(dynamic)"). Its code, defaults and globals
    stay where they are: only its signature is answered (`_signature_of`)."""

    __slots__ = ()

    @property
    def __class__(self):
        return types.FunctionType

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)


class RemoteIterator(RemoteObject):
    """An iterator or generator that stays in the other process; each item is one request."""

    __slots__ = ()

    def __len__(self):
        raise TypeError("an iterator has no length")

    def __iter__(self):
        return self

    def __next__(self):
        peer = object.__getattribute__(self, "_peer")
        return _asked_along(peer, {"op": "next", "h": object.__getattribute__(self, "_hid"), "n": [], "base": 0, "r": {}})

    def throw(self, typ, val=None, tb=None):
        """A generator's `throw` (a `contextlib.contextmanager` around a generator the program
        returned, at an exception in its block): the exception crosses, its traceback stays."""
        return _Remote._ask(self, "get", "throw")(typ if val is None else val)

    def __repr__(self):
        return "<iterator kept in the other process #%d>" % object.__getattribute__(self, "_hid")


def _asking(name):
    """A lent object's operator `name`, asked of the tests' process."""

    def ask(self, *args):
        return LentObject._op(self, name, *args)

    ask.__name__ = "__%s__" % name
    return ask


class LentObject(_Remote):
    """An object the tests lent the program (`Policy.lendable`): it stays in the tests' process,
    which answers its attributes and methods by their own names, and its comparisons, hash and
    membership (the tests' code is trusted; the program's never is, so the tests' side keeps
    `RemoteObject`'s identity-only equality for what the program hands it). It says it is of the
    project's class it derives from (`isinstance(self, Cache)` of a test's `Cache` subclass)."""

    __slots__ = ("_cls",)

    def __new__(cls, *args, **kwargs):
        maker = cls.__dict__.get("_maker")
        if maker is not None:
            # `type(self).__new__(type(self))` in the program (cachetools' `Cache.__copy__` of a
            # test's subclass): a bare object of the tests' class, made there and lent in turn.
            return LentObject._op(maker, "new", args)
        if kwargs or len(args) != 2 or type(args[0]) is not Server or type(args[1]) is not int:
            _cannot("make an object of the class of an object the tests lent")
        return object.__new__(cls)

    @property
    def __class__(self):
        cls = object.__getattribute__(self, "_cls")
        return LentObject if cls is None else cls

    def __getattr__(self, name):
        if name == "__dict__":
            # `vars(obj)`, `new.__dict__.update(self.__dict__)`: the tests' object's attributes,
            # read and written there by their names, as the program could by hand.
            return _LentAttributes(self)
        if name in _LENT_PROTOCOL:
            # Named by the program's code, not probed by Python (`self.__missing__(key)` in a
            # project's `__getitem__`, a test's subclass defining it): the tests' object answers.
            return _Remote._ask(self, "get", name)
        return _Remote.__getattr__(self, name)

    def __reduce_ex__(self, protocol):
        _cannot("pickle an object the tests lent")

    def __copy__(self):
        # Copied where it lives, as `copy.copy` would in one process; the copy is lent in turn.
        return LentObject._op(self, "copy")

    def __deepcopy__(self, memo):
        return LentObject._op(self, "deepcopy")

    def _op(self, name, *args):
        # (Asked while a message is read, too: a lent object as a key of a dict being built.)
        peer = object.__getattribute__(self, "_peer")
        body = _encode_for(peer, {"a": args})
        body.update(op="op", h=object.__getattribute__(self, "_hid"), name=name)
        return peer.result(peer.request(body))

    # Comparisons, hash and membership: answered by the tests' process (`_LENT_OPERATORS`).
    __eq__ = _asking("eq")
    __ne__ = _asking("ne")
    __lt__ = _asking("lt")
    __le__ = _asking("le")
    __gt__ = _asking("gt")
    __ge__ = _asking("ge")
    __hash__ = _asking("hash")
    __contains__ = _asking("contains")

    def __exit__(self, *exc):
        return _Remote._method(self, "__exit__", *exc)

    _unseen = "<object lent by the tests' process>"


class _LentAttributes(collections.abc.MutableMapping):
    """The program's view of a lent object's `__dict__`: its instance attributes, read, set and
    deleted in the tests' process by name (as `serve_lent` allows any plain name), listed there."""

    __slots__ = ("_lent",)

    def __init__(self, lent):
        self._lent = lent

    def _names(self):
        return LentObject._op(self._lent, "vars")

    def __getitem__(self, name):
        if not isinstance(name, str) or name not in self._names():
            raise KeyError(name)
        return _Remote._ask(self._lent, "get", name)

    def __setitem__(self, name, value):
        if not isinstance(name, str):
            raise TypeError("an attribute name must be a string")
        _Remote._ask(self._lent, "set", name, value)

    def __delitem__(self, name):
        try:
            _Remote._ask(self._lent, "del", name)
        except AttributeError:
            raise KeyError(name) from None

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __repr__(self):
        return "<attributes of an object lent by the tests' process>"


class _FunctionAttributes(_LentAttributes):
    """A view of the other side's plain function's `__dict__`: its plain attributes, by name, as
    that side lets them be read and written (the program never a tests' function's code,
    globals or marks: `serve_other`)."""

    __slots__ = ()

    def __repr__(self):
        return "<attributes of a function kept in the other process>"


class _LentMeta(type):
    """The class of a lent object's own type when the tests named its class (`_lent_type`):
    calling it (`type(self)(...)`, toolz's `bind` of a test's `curry` subclass) makes an object of
    the tests' class in the tests' process, lent in turn."""

    def __call__(cls, *args, **kwargs):
        return cls.__dict__["_maker"](*args, **kwargs)


_LENT_CLASSES = {}  # (the handle class, id of the tests' class handle) -> the type made for it


def _lent_type(base, maker, name):
    """A type of `base` (a lent object's handle class) for the objects of one class the tests
    lent (`maker`, its handle), named as that class, so that `type(value)` says which class the
    program holds an object of."""
    key = (base, id(maker))
    made = _LENT_CLASSES.get(key)
    if made is None:
        made = _LentMeta(name, (base,), {"__slots__": (), "_maker": maker, "__module__": __name__})
        _LENT_CLASSES[key] = made
        _LENT_TYPES.add(made)
        _HANDLE_TYPES.add(made)
    return made


class LentCallable(LentObject):
    """A lent object that can be called (`callable()` of a `LentObject` is false)."""

    __slots__ = ()

    __call__ = _call_other_side


class LentClass(LentObject):
    """A class the tests lent (`Policy.lendable`): calling it makes an instance in the tests'
    process, lent in turn; `isinstance` and `issubclass` against it are asked there of what the
    tests lent (nothing the program made is an instance of a tests' class)."""

    __slots__ = ()

    def __call__(self, /, *args, **kwargs):
        return LentMethod.__call__(self, *args, **kwargs)

    def __instancecheck__(self, obj):
        return type(obj) in _LENT_TYPES and bool(LentObject._op(self, "isinstance", obj))

    def __subclasscheck__(self, cls):
        return type(cls) is LentClass and bool(LentObject._op(self, "issubclass", cls))


class LentMethod(RemoteFunction):
    """A method of a lent object: its call carries the shared objects this call named, where
    they changed, and its answer brings back what the method changed in them (a test's cache
    subclass whose `popitem` the target calls)."""

    __slots__ = ()

    def __call__(self, /, *args, **kwargs):
        peer = object.__getattribute__(self, "_peer")
        # Not while a message is being read (a project class's `__hash__` calling one): the
        # objects of that message are not all made yet, on this side.
        along = peer.decoding == 0
        body = _encode_for(peer, {"a": args, "k": kwargs, "wb": peer.named() if along else []})
        body.update(op="cb", h=object.__getattribute__(self, "_hid"), along=along)
        return peer.result(peer.request(body))


# The program's stand-in for each class the tests lent with an object over a builtin class, and back.
_STAND_INS = {}
_MAKERS = {}


def _stand_in(base, maker, name):
    """What a lent object of a tests' class over the builtin `base` says its class is: a subclass
    of `base` (so `isinstance(value, tuple)` and `Sequence` hold), named as the tests' class,
    whose calls make an object of the tests' class in the tests' process (`maker`): a test's
    named tuple asked for `value.__class__()` raises as there, where `tuple()` would not. Sent
    back, it is the tests' class again (`Encoder.ref`)."""
    made = _STAND_INS.get(id(maker))
    if made is None:

        def __new__(cls, *args, **kwargs):
            return maker(*args, **kwargs)

        try:
            made = type(base)(name, (base,), {"__new__": __new__, "__slots__": (), "__module__": __name__})
        except TypeError:
            # A builtin that takes no subclass here: the object says it is of the builtin, as before.
            return base
        _STAND_INS[id(maker)] = made
        _MAKERS[made] = maker
    return made


def _cannot(what):
    """The program's side, at what cannot be done with an object the tests lent (pickling it,
    making one of a class the tests' side never named): the program's own failure, said as
    such. Nothing the program does here reaches the tests' process or chooses how it is judged."""
    raise TypeError("the program cannot %s: it stays in the tests' process, which rgd keeps apart from the program's" % what)


# (Sets: `_lent_type` adds the types it makes for lent objects of a tests' class.)
_LENT_TYPES = {LentObject, LentCallable, LentClass}
_HANDLE_TYPES = {RemoteFunction, RemoteMethod, RemoteIterator, RemoteObject, RemoteValue, _SaidOf, _CallableSaidOf, LentMethod} | _LENT_TYPES
# A handle's kind as the sender names it, and the proxy the receiver makes of it: the tests'
# side makes no `Lent...` of what the program sends (it trusts none of its comparisons).
_PROXIES_OF_THE_PROGRAM = {"fn": RemoteFunction, "fm": RemoteMethod, "it": RemoteIterator, "obj": RemoteValue, "objc": RemoteObject, "lm": RemoteFunction}
_PROXIES_OF_THE_TESTS = dict(_PROXIES_OF_THE_PROGRAM, lent=LentObject, lentc=LentCallable, lentk=LentClass, opaque=LentObject, lm=LentMethod)
# What the program may ask of a lent object beyond its plain names: the protocols it uses.
_LENT_PROTOCOL = frozenset(
    ("__iter__", "__next__", "__len__", "__bool__", "__getitem__", "__setitem__", "__delitem__", "__enter__", "__exit__",
     "__call__", "__repr__", "__str__", "__missing__", "__length_hint__", "__reversed__", "__index__", "__int__", "__float__")
)
_LENT_OPERATORS = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "contains": operator.contains, "hash": hash,
    "isinstance": lambda cls, obj: isinstance(obj, cls), "issubclass": lambda cls, sub: issubclass(sub, cls),
}
# What the program may have done to a lent object where it lives, as it would in one process:
# copied, listed (its instance attributes' names), or, of a class, a bare object made
# (`cls.__new__(cls, *args)`). Only of objects lent whole, never of opaque ones.
_LENT_MAKERS = {
    "copy": lambda obj: __import__("copy").copy(obj),
    "deepcopy": lambda obj: __import__("copy").deepcopy(obj),
    "vars": lambda obj: [name for name in vars(obj) if isinstance(name, str)],
    "new": lambda cls, args=(): cls.__new__(cls, *args) if isinstance(cls, type) and isinstance(args, tuple) else None,
}


# A handle's `__doc__` is the other side's (the property above), not its class's docstring.
for _handle_class in (RemoteValue, RemoteObject, _SaidOf, _CallableSaidOf, RemoteFunction, RemoteMethod, RemoteIterator, LentObject, LentCallable, LentClass, LentMethod):
    _handle_class.__doc__ = _Remote.__dict__["__doc__"]
del _handle_class


# --- module state --------------------------------------------------------------------------------------

def _behaviour(v):
    """Code rather than state: a module attribute that is a function, class, module or other
    callable (changing one is patching, which cannot be sent as data)."""
    return isinstance(v, (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType, types.MethodType)) or (
        callable(v) and not isinstance(v, (int, float, str, bytes, list, tuple, dict, set, frozenset))
    )


class _KeptDict:
    """A module-level dict's keys and values as last agreed, kept apart so that the check at
    every call walks the dict in C without building a tuple of its items (boltons' urlutils holds
    five tables of 512 entries)."""

    __slots__ = ("keys", "values")

    def __init__(self, d):
        self.keys = tuple(d)
        self.values = tuple(d.values())

    def holds(self, d):
        return len(d) == len(self.keys) and all(map(operator.is_, d, self.keys)) and all(map(operator.is_, d.values(), self.values))


def _stateless(value):
    """An object with nothing in it that can change: no `__dict__`, no slots, not a container
    `_children` looks into (its parts are empty now and always will be)."""
    t = type(value)
    return (
        not isinstance(_own_dict(value), dict)
        and not _slots_of(t)
        and t.__module__ != "collections"
        and not isinstance(value, (list, set, dict, bytearray))
    )


class ModuleState:
    """The project's module globals and class attributes as last agreed between the processes:
    what changed since is sent to the other side (state), or is a patch (behaviour). Called at
    every call on both sides, so the common case is cheap: an identity check per name, a shallow
    look only at the few names that hold data, a rescan only of a namespace whose size changed."""

    def __init__(self, policy):
        self.policy = policy
        self.modules_seen = -1
        self.modules = []  # (name, module)
        # (module, holder) -> [namespace, its size, {attr: (value, shallow or None)}, its values, the data names]
        self.spaces = {}
        self.original = {}  # (module, holder, attr) -> the code first seen there (before any patch)

    def _project_modules(self):
        if len(sys.modules) != self.modules_seen:
            self.modules_seen = len(sys.modules)
            self.modules = [(n, m) for n, m in list(sys.modules.items()) if m is not None and self.policy.project_module(n)]
        return self.modules

    @staticmethod
    def _names(ns):
        for attr, value in list(ns.items()):
            if isinstance(attr, str) and not attr.startswith("__") and not isinstance(value, (staticmethod, classmethod, property)):
                yield attr, value

    @staticmethod
    def _record(value):
        # What it holds one level down (`_children`, as shared objects are compared); none for
        # code, and for a thread-local or lock (each process's own: not module state).
        t = type(value)
        if t in _UNCHANGING_TYPES:
            return (value, _UNCHANGING)
        if _behaviour(value) or t in _BY_NAME:
            return (value, None)
        if t is dict:
            return (value, _KeptDict(value))
        children = _children(value)
        if not children and _stateless(value):
            # An `object()` sentinel, a descriptor: nothing in it can change.
            return (value, _UNCHANGING)
        return (value, children)

    @staticmethod
    def _unchanged(value, kept):
        """Whether a data name's contents are still the parts `kept` of them, by identity."""
        if type(kept) is _KeptDict:
            return kept.holds(value)
        return _same(kept, _children(value))

    def _space(self, key, ns):
        seen = {attr: self._record(v) for attr, v in self._names(ns)}
        for attr, (value, shallow) in seen.items():
            if shallow is None:
                self.original.setdefault(key + (attr,), value)
        self.spaces[key] = [ns, len(ns), seen, tuple(ns.values()), self._data(seen)]

    @staticmethod
    def _data(seen):
        """The names whose contents are looked at by every call: those holding mutable data."""
        return [a for a, r in seen.items() if r[1] is not None and r[1] is not _UNCHANGING]

    def _spaces_now(self):
        """Every project namespace, those not seen before recorded as they are (they start agreed)."""
        for name, module in self._project_modules():
            ns = getattr(module, "__dict__", None)
            if not isinstance(ns, dict):
                continue
            if (name, "") not in self.spaces:
                self._space((name, ""), ns)
                for value in list(ns.values()):
                    if isinstance(value, type) and value.__module__ == name and (name, value.__qualname__) not in self.spaces:
                        self._space((name, value.__qualname__), type.__dict__["__dict__"].__get__(value))

    def changes(self, rebound_only=False):
        """(state changed: [(key, value)], behaviour changed: [(key, value)]) since the last agreement, which
        they then are. `rebound_only`: only in the modules where a name was rebound (compared by
        identity, in C), for an answer made often (a generator's pull); data changed in place
        is found by the next whole look (the next call's answer)."""
        self._spaces_now()
        state, behaviour = [], []
        for (module, holder), space in self.spaces.items():
            ns, size, seen, values, data = space
            if len(ns) == size and all(map(operator.is_, ns.values(), values)):
                # No name rebound (compared in C, by identity): only the data names' contents
                # can have changed.
                if not data or rebound_only:
                    continue
                names = [(a, ns.get(a, _MISSING)) for a in data]
            elif len(ns) == size:
                names = [(a, ns.get(a, _MISSING)) for a in list(seen)]
            else:
                names = list(self._names(ns))
            changed = False
            for attr, value in names:
                was = seen.get(attr)
                if was is not None and was[0] is value and (was[1] is None or was[1] is _UNCHANGING or self._unchanged(value, was[1])):
                    continue
                changed = True
                seen[attr] = self._record(value)
                if value is _MISSING:
                    del seen[attr]
                    continue
                if isinstance(value, types.ModuleType) or (was is None and (_behaviour(value) or self.policy.named(value))):
                    # A submodule bound as it is imported, a function or class defined late: new
                    # code, not a patch of code the program's process has; a sentinel or
                    # singleton first seen now (the module was still importing when the first
                    # call came: boltons' `parse_url('')` at import): the program's process has its
                    # own by that name.
                    continue
                if _behaviour(value) or (was is not None and _behaviour(was[0])):
                    behaviour.append(((module, holder, attr), value))
                else:
                    state.append(((module, holder, attr), value))
            if changed or len(ns) != size:
                self._refresh(space)
        return state, behaviour

    @staticmethod
    def _refresh(space):
        ns, seen = space[0], space[2]
        space[1] = len(ns)
        space[3] = tuple(ns.values())
        space[4] = ModuleState._data(seen)

    def agree(self):
        """What is there now is what both sides hold."""
        self.spaces.clear()
        self.modules_seen = -1
        self._spaces_now()

    def apply(self, changes):
        """Puts the other side's changes in place, and records them as agreed."""
        for (module, holder, attr), value in changes:
            obj = sys.modules.get(module)
            if obj is None:
                continue
            if holder:
                for part in holder.split("."):
                    obj = getattr(obj, part, None)
                    if obj is None:
                        break
                if not isinstance(obj, type):
                    continue
            current = vars(obj).get(attr) if not isinstance(obj, type) else type.__dict__["__dict__"].__get__(obj).get(attr)
            if current is not None and type(current) is type(value) and _mutable(current) and not isinstance(value, type):
                _copy_into(current, value)
                value = current
            else:
                setattr(obj, attr, value)
            space = self.spaces.get((module, holder))
            if space is not None:
                space[2][attr] = self._record(value)
                self._refresh(space)

    def patch(self, key, fn):
        """Puts the tests' replacement of a project function in place (`fn`, a handle: calls go
        back to the tests' process), or the original back (`fn` None), and records it as agreed."""
        module, holder, attr = key
        obj = sys.modules.get(module)
        for part in holder.split(".") if holder and obj is not None else ():
            obj = getattr(obj, part, None)
        if obj is None or (holder and not isinstance(obj, type)):
            return
        if fn is None:
            value = self.original.get(key, _MISSING)
            if value is _MISSING:
                return
        else:
            if not callable(fn):
                raise Refused("a replacement of %s that cannot be called" % _key_name(key))

            # A test's function binds `self` as the method it replaces did; a lent mock or a
            # test object's bound method is put as it is and, like itself, binds none.
            value = _calling_back(fn, attr) if type(fn) is RemoteMethod else fn
        setattr(obj, attr, value)
        space = self.spaces.get((module, holder))
        if space is not None:
            space[2][attr] = self._record(value)
            self._refresh(space)


_MISSING = object()


def _calling_back(fn, name):
    """A plain function named `name` that calls `fn` (a handle of the tests' replacement): put
    where a function was, it binds `self` as the method it replaces did."""

    def value(*args, **kwargs):
        return fn(*args, **kwargs)

    value.__name__ = value.__qualname__ = name
    return value


def _key_name(key):
    module, holder, attr = key
    return ".".join(p for p in (module, holder, attr) if p)


# --- what crosses besides the arguments -------------------------------------------------------------

_log_keeper = []


def _capture_logs():
    """A handler on the root logger that keeps the program's log records as plain data (one
    handler, made once: this runs at every call)."""
    import logging

    if not _log_keeper:

        class Keep(logging.Handler):
            records = []

            def emit(self, record):
                try:
                    self.records.append(
                        {
                            "name": record.name,
                            "levelno": record.levelno,
                            "levelname": record.levelname,
                            "msg": record.getMessage(),
                            "pathname": record.pathname,
                            "lineno": record.lineno,
                            "funcName": record.funcName,
                        }
                    )
                except Exception:
                    pass

        _log_keeper.append(Keep(level=0))
    handler = _log_keeper[0]
    handler.records = []
    logging.getLogger().addHandler(handler)
    return handler.records, handler


class _Bytes(io.RawIOBase):
    """A captured stream's `buffer`: what the program writes as bytes (click's `echo` of bytes
    goes to `sys.stdout.buffer`) joins its text, decoded as UTF-8 (undecodable bytes replaced)."""

    def __init__(self, text):
        io.RawIOBase.__init__(self)
        self.text = text
        self.decoder = __import__("codecs").getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self.text.write(self.decoder.decode(data))
        return len(data)


class _Capture(io.StringIO):
    """What the program prints during a call, text and bytes alike."""

    def __init__(self):
        io.StringIO.__init__(self)
        self.buffer = _Bytes(self)


class _Printed:
    """The program's side, answering: what it prints is captured (and sent with the answer, for
    the tests' side to write where its output goes now). A stream of `sys` the program replaces
    and leaves replaced (click's `CliRunner.isolation`, a generator the tests resume) is carried
    over, as in one process, where the tests' own stream would be the one replaced: it stays the
    program's stream at its later calls, and the answer names it (`streams`) for the tests' side
    to put in place of its own (`_carry_streams`) until the program puts the old one back or the
    tests replace theirs again (`Peer.request`, "streams_back")."""

    # The captures under way, innermost last (a callback of the tests' calls the program again).
    active = []
    # The program's replacements in force: stream name -> the object it put there.
    carried = {}

    def __init__(self):
        self.out, self.err = _Capture(), _Capture()
        # What the call changed of the carried streams: name -> the new object, or None (the
        # tests' own again).
        self.changed = {}
        # What went to the tests' side so far, per stream: a call's output crosses up to
        # OUTPUT_CAP in all, however many messages carry it.
        self.sent = {"out": 0, "err_text": 0}

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr, sys.stdin
        carried = _Printed.carried
        sys.stdout, sys.stderr = carried.get("stdout", self.out), carried.get("stderr", self.err)
        if "stdin" in carried:
            sys.stdin = carried["stdin"]
        _Printed.active.append(self)
        return self

    @staticmethod
    def drop(names):
        """The tests put a stream of their own in place of one the program had carried over: the
        program's stream is no more (its prints go to the tests' new one, as in one process)."""
        for name in names if isinstance(names, list) else ():
            if isinstance(name, str):
                _Printed.carried.pop(name, None)

    @staticmethod
    def so_far(message):
        """Puts what the program printed since its last message into `message`, a request to
        the tests' side: click's `prompt` echoes its text, then calls the input function the
        test runner put in place, which writes too; sent only with the answer, the program's
        part came after the tests' in the test's output."""
        if _Printed.active:
            _Printed.active[-1].take(message)

    def take(self, message):
        """Moves what was printed since the last message into `message` (within the call's
        OUTPUT_CAP per stream)."""
        for key, stream in (("out", self.out), ("err_text", self.err)):
            text = stream.getvalue()
            if not text:
                continue
            room = OUTPUT_CAP - self.sent[key]
            if room > 0:
                message[key] = text[:room]
                self.sent[key] += len(message[key])
            stream.seek(0)
            stream.truncate()

    def __exit__(self, *exc):
        if _Printed.active and _Printed.active[-1] is self:
            _Printed.active.pop()
        for name, now in (("stdout", sys.stdout), ("stderr", sys.stderr), ("stdin", sys.stdin)):
            # The tests' own stream: a capture (this call's, or one an earlier call's code kept
            # and put back), or the stdin the call came with.
            own = isinstance(now, _Capture) if name != "stdin" else now is self.saved[2]
            was = _Printed.carried.get(name)
            if own and was is not None:
                del _Printed.carried[name]
                self.changed[name] = None
            elif not own and now is not was:
                _Printed.carried[name] = now
                self.changed[name] = now
        restored = list(self.saved)
        if _Printed.active:
            # Nested in a call that goes on: a stream this call replaced is the program's from now
            # on, as in one process (an outermost call puts this process's own back; the next
            # call takes up the carried ones again).
            for i, name in enumerate(("stdout", "stderr", "stdin")):
                restored[i] = _Printed.carried.get(name, restored[i])
        sys.stdout, sys.stderr, sys.stdin = restored
        return False

    def patched(self, patches):
        """The tests' patches of their own `sys.stdout` or `sys.stderr` (termcolor's tests set
        `isatty` to say yes) made on the streams this call prints to: a function crosses as a
        handle, called back in the tests' process; data as data."""
        for entry in patches if isinstance(patches, tuple) else ():
            if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] in ("stdout", "stderr") and isinstance(entry[1], str)):
                raise Refused("a malformed patch of a stream")
            name, attr, value = entry
            if attr[:2] == "__" or attr in ("write", "buffer", "getvalue"):
                # (What the channel itself reads of a capture stays its own.)
                continue
            setattr(self.out if name == "stdout" else self.err, attr, value)

    def streams(self, values):
        """`values` (an answer's, before it is encoded) with the streams the call replaced or
        put back. A stream of the process's own (`sys.__stdin__`: click's debugger streams) is
        sent as its name, for the tests' process's own."""
        if self.changed:
            own = {id(getattr(sys, "__%s__" % n, None)): "__%s__" % n for n in ("stdin", "stdout", "stderr")}
            values["streams"] = [(name, own.get(id(now), now) if now is not None else None) for name, now in self.changed.items()]
        return values

    def put(self, body):
        self.take(body)


def _replay_output(reply):
    """What the program printed while answering, written where the tests' output goes now."""
    _write_printed(reply)


# The tests' side: the streams of `sys` the program replaced and left so, as in one process:
# name -> (what is there now, the program's stream as it crossed; what the tests had there).
_carried = {}


def _carry_over(peer, values):
    """The tests' side, reading the program's answer (a call's, or a pull's or callback's
    outermost one): what the program did in its own process that the tests' would have seen in
    one (`Server.carried`), done here: its streams, directory, environment and module data."""
    _carry_streams(values)
    _carry_directory(peer, values.get("moved"))
    _carry_environment(peer, values.get("env"))
    if values.get("state"):
        peer.state.apply(values["state"])


def _carry_streams(values):
    """The tests' side, reading an answer: each stream of `sys` the program replaced is replaced
    here by what it put there (its own object crosses as a handle, a stream the tests had lent it
    as their own); one it put back is the tests' own again. Only what the program could do in
    one process: the verdict never goes through `sys`'s streams."""
    streams = values.get("streams")
    for entry in streams if isinstance(streams, tuple) else ():
        if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] in ("stdout", "stderr", "stdin")):
            continue
        name, now = entry
        if type(now) is str and now in ("__stdin__", "__stdout__", "__stderr__"):
            now = getattr(sys, now)
        kept = _carried.pop(name, None)
        if now is None:
            if kept is not None and getattr(sys, name) is kept[0]:
                setattr(sys, name, kept[1])
            continue
        before = kept[1] if kept is not None and getattr(sys, name) is kept[0] else getattr(sys, name)
        setattr(sys, name, now)
        _carried[name] = (now, before)


def _carry_directory(peer, moved):
    """The tests' side: the program changed its working directory during the call; in one
    process the tests' would have changed, so it does here: inside the project (the same place
    in the tests' copy) or the temporary folder both share. Anywhere else the tests' directory
    stays (a directory there would make the next call not isolated, a fallback the program
    must not be able to choose): the program's next call is sent back to the tests' one."""
    if not isinstance(moved, str) or "\0" in moved:
        return
    root = peer.policy.root
    path = moved if os.path.isabs(moved) else os.path.normpath(os.path.join(root, moved))
    if not ((path + os.sep).startswith(root) or (path + os.sep).startswith(peer.tmp)):
        return
    try:
        os.chdir(path)
    except OSError:
        pass


def _carry_environment(peer, env):
    """The tests' side: what the program set in or removed from its environment, set there too,
    as in one process; never the test runner's or rgd's own variables (pytest's current test,
    which rgd reads to know a test's patches from pytest's own)."""
    if not (isinstance(env, (list, tuple)) and len(env) == 2 and isinstance(env[0], dict) and isinstance(env[1], (list, tuple))):
        return
    ours = _OWN_VARIABLES + ("PYTEST_",)
    for name, value in env[0].items():
        if isinstance(name, str) and isinstance(value, str) and name and "=" not in name and "\0" not in name + value and not name.startswith(ours):
            os.environ[name] = value
    for name in env[1]:
        if isinstance(name, str) and not name.startswith(ours):
            os.environ.pop(name, None)
    peer.env = _environment()


def _streams_back():
    """The tests' side, before a request: the carried streams the tests have since replaced
    with their own (pytest's capture at a test's end, a test's redirect), which the program's
    process uses no more."""
    dropped = [name for name, (now, _) in _carried.items() if getattr(sys, name) is not now]
    for name in dropped:
        del _carried[name]
    return dropped


def _write_printed(message):
    """What the program printed, as a message from it carries it, written where the tests'
    output goes now."""
    out, err = message.get("out"), message.get("err_text")
    if isinstance(out, str) and out:
        sys.stdout.write(out)
    if isinstance(err, str) and err:
        sys.stderr.write(err)


def _replay_logs(records):
    import logging

    for r in records if isinstance(records, list) else ():
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            fields = {k: v for k, v in r.items() if k in ("name", "levelno", "levelname", "msg", "pathname", "lineno", "funcName")}
            fields["args"] = None
            logger = logging.getLogger(r["name"])
            if logger.isEnabledFor(int(r.get("levelno", 0))):
                logger.handle(logging.makeLogRecord(fields))


def _replay_warnings(items, policy):
    import warnings

    for w in items if isinstance(items, list) else ():
        try:
            module, qualname, message, filename, lineno = w
            try:
                category = policy.resolve_class(module, qualname)
                if not issubclass(category, Warning):
                    category = UserWarning
            except Refused:
                category = UserWarning
            warnings.warn_explicit(str(message), category, str(filename), int(lineno))
        except Exception:
            pass


# --- the tests' side ----------------------------------------------------------------------------------

_client = [None]
_serving = [None]  # the program's side: its peer, once serving
# Set by rgd's plugin: called with the reason when a call cannot be isolated (then rgd judges the
# target in-process, labelled so).
on_refusal = None


def _current_test():
    return (os.environ.get("PYTEST_CURRENT_TEST") or "").rsplit(" ", 1)[0]


# What the tests patched outside the project (monkeypatch, unittest.mock) and is still in force,
# as (what, module name or None, attribute, value): a standard module's function replaced by a
# plain function is replaced in the program's process too (calling the test's back); any other
# patch the program's process cannot see, so a call made under one is not isolated.
_patches = {}


class NotIsolated(Exception):
    """The tests handed the target something that is not data: this run judges nothing."""


def _connect():
    peer = _client[0]
    if peer is None:
        cfg = json.loads(os.environ.get("RGD_ISOLATE", "{}"))
        sock = socket.socket(fileno=int(cfg["fd"]))
        sock.setblocking(True)
        os.set_inheritable(sock.fileno(), False)
        policy = Policy(cfg["root"], cfg["project"], True)
        peer = Peer(sock, policy, "the program's process", timeout=float(cfg.get("timeout", 60)))
        peer.state = ModuleState(policy)
        peer.state.agree()
        # Nothing agreed yet: the first call sends the tests' whole environment (the program's
        # process starts with a few variables only: in one process the program sees the tests').
        peer.env = {}
        peer.copied = 0
        peer.tmp = os.path.normpath(cfg.get("tmp") or "/nonexistent") + os.sep
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


def watch_patches():
    """Notes, while they are in force, what pytest's `monkeypatch` and `unittest.mock` patch
    outside the project's modules (the environment and the working directory are sent along)."""
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


# Every reason a run is judged in the tests' process instead, in one place. Each is on the tests'
# side: what the tests pass, patch, hold or do, found in the tests' process before a call is sent
# or while it runs their own code; nothing the program answers or does in its own process leads
# here (its streams, directory, uses of what the tests lent are carried over or are its own
# failure). Outside this module rgd adds three of its own: no target named, the spectrum
# collector, and a target the forwarding stub cannot stand in for (`testrun.rs`).
FALLBACK_CAUSES = {
    "not_data": "the tests passed %s",
    "own_file": "the tests passed the path of their own file %s, which the program's copy does not hold",
    "patched": "the test patched %s, which the program's process cannot see",
    "directory": "the test changed the working directory to %s",
    "weak_reference": "the tests hold a weak reference to an object the processes share, which lives for the whole run here",
    "threads": "the tests call it from several threads while one call runs the tests' code and waits (the processes take one call at a time)",
    "copied_handle": "the tests copied or pickled something the program's process keeps",
    "call_values": "the tests passed %d values in one call",
    "run_values": "the calls copied or compared more than %d values between the processes (the last %d in %s)",
}


def _refuse(qualname, cause, *details):
    """Judges the run in-process for `cause` (`FALLBACK_CAUSES`), said with its `details`."""
    why = FALLBACK_CAUSES[cause] % details if details else FALLBACK_CAUSES[cause]
    reason = "%s: %s" % (qualname, why)
    if on_refusal is not None:
        on_refusal(reason, cause)
    raise NotIsolated(reason)


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
        if path.startswith(root) and _test_path(path[len(root) :].replace(os.sep, "/")) and os.path.exists(path):
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


def _environment():
    """The environment as bytes (a copy made in C: this runs at every call)."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}


# What of the environment each process has of its own (names beginning so): the import path,
# and rgd's own variables. Never sent either way (`_env_diff`, `_carry_environment`).
_OWN_VARIABLES = ("PYTHONPATH", "RGD_")
_OWN_VARIABLES_BYTES = tuple(map(os.fsencode, _OWN_VARIABLES))


def _env_diff(before, now):
    """What changed in the environment: [set: {name: value}, removed: [name]]; never what each
    process has of its own (`_OWN_VARIABLES`)."""
    text = os.fsdecode
    own = _OWN_VARIABLES_BYTES
    return [
        {text(k): text(v) for k, v in now.items() if before.get(k) != v and not k.startswith(own)},
        [text(k) for k in before if k not in now and not k.startswith(own)],
    ]


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
        peer.target_defaults = _stub_defaults(qualname, sys._getframe(1))
        peer.defaults = {id(d): i for i, d in enumerate(peer.target_defaults) if type(d) not in _SCALARS}
    try:
        policy = peer.policy
        active = [w for ws in list(_patches.values()) for w in ws if _outside_project(w, policy)]
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
            elif type(value) in _CALLED_BACK or _is_mock(value):
                # (A mock is lent: the program calls it, the test asserts the calls here.)
                patches.append((key, value))
            else:
                _refuse(qualname, "patched", _key_name(key))
        cwd = os.getcwd()
        if not (cwd + os.sep).startswith(policy.root) and not (cwd + os.sep).startswith(peer.tmp) and cwd + os.sep != policy.root:
            _refuse(qualname, "directory", cwd)
        for given in sorted(_given_files(peer, (args, kwargs), set())):
            # Decided here, of what the tests pass, before the program runs: whether it then
            # opens the path, or fails, cannot choose the tests' process for its verdict.
            _refuse(qualname, "own_file", given[len(policy.root) :])
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
            body = peer.encode(message)
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


# --- the program's side -------------------------------------------------------------------------------

def _stored(namespace, qualname):
    """What `qualname` names in a module's namespace, through classes' own dicts, static and class
    methods and properties opened."""
    parts = qualname.split(".")
    holder = namespace
    for part in parts[:-1]:
        holder = holder[part].__dict__
    stored = holder[parts[-1]] if parts[-1] in holder else _kept_unnamed(holder, qualname)
    if isinstance(stored, (classmethod, staticmethod)):
        return stored.__func__
    if isinstance(stored, property):
        return stored.fget
    return stored


def _kept_unnamed(holder, qualname):
    """A function its class or module no longer names but one of its values keeps (boltons'
    statsutils deletes each `Stats._calc_*` once a `_StatsProperty` holds it as `.func`): found
    among those values' own attributes by its qualified name."""
    for value in list(holder.values()):
        if isinstance(value, (type, types.ModuleType)):
            continue
        try:
            # (A module-level proxy may answer `__dict__` with anything, or raise.)
            own = vars(value)
        except Exception:
            continue
        for kept in list(own.values()) if isinstance(own, dict) else ():
            if isinstance(kept, types.FunctionType) and kept.__qualname__ == qualname:
                return kept
    raise KeyError(qualname)


def _defaults(fn, code=None):
    """A function's default values, positional then keyword-only; unwrapped (`__wrapped__`) down
    to `code` when given (the stub under its decorators)."""
    for _ in range(100):
        if code is None or getattr(fn, "__code__", None) is code or not hasattr(fn, "__wrapped__"):
            break
        fn = fn.__wrapped__
    if code is not None and getattr(fn, "__code__", None) is not code:
        return []
    return list(getattr(fn, "__defaults__", None) or ()) + list((getattr(fn, "__kwdefaults__", None) or {}).values())


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
        self.outside = {}  # (module, attribute) -> (the original, the tests' function called back)

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
            if entry[0] not in sys.modules and (_stdlib_spec(entry[0]) or _installed_spec(entry[0])):
                importlib.import_module(entry[0])
            if not (_is_stdlib_module(entry[0]) or _is_installed_module(entry[0])):
                raise Refused("a patch of %s.%s, which is no module of the standard library's or an installed package's" % entry[:2])
            wanted[(entry[0], entry[1])] = entry[2]
        for key in [k for k in self.outside if k not in wanted]:
            original, _ = self.outside.pop(key)
            setattr(sys.modules[key[0]], key[1], original)
        for key, fn in wanted.items():
            was = self.outside.get(key)
            if was is not None and was[1] is fn:
                continue
            module = sys.modules[key[0]]
            original = was[0] if was is not None else getattr(module, key[1], None)
            # A test's function is called back; the rest is put as it came (a stdin, lent or data).
            called_back = type(fn) in (RemoteFunction, RemoteMethod, LentMethod) and key != ("sys", "stdin")
            setattr(module, key[1], _calling_back(fn, key[1]) if called_back else fn)
            self.outside[key] = (original, fn)

    def serve_other(self, m):
        if m.get("op") != "call":
            return Peer.serve_other(self, m)
        import traceback
        import warnings

        if self.depth == 0:
            self.reset()
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
    cfg = json.loads(os.environ.pop("RGD_ISOLATE"))
    sock = socket.socket(fileno=int(cfg["fd"]))
    sock.setblocking(True)
    os.set_inheritable(sock.fileno(), False)
    policy = Policy(cfg["root"], cfg["project"], False)
    try:
        target, defaults = _resolve_target(importlib.import_module(cfg["module"]), cfg["qualname"])
    except BaseException as e:
        # Every call then fails with what importing the program raised, as a test in one
        # process would have failed (a SyntaxError in the agents' code, a missing name).
        failed, defaults = e, []

        def target(*a, **k):
            raise failed

    server = Server(sock, policy, target, os.path.normpath(cfg["root"]))
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


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    serve()
