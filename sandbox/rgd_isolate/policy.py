"""What counts as whose class: the project's modules, the tests'; what crosses by value, by name, lent, or not at all (`Policy`)."""

import contextlib
import importlib.util
import os
import re
import sys
import types


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


# The standard library's modules whose objects hold a resource of the process (a file, a child
# process, a socket, a queue): never copied, lent where the tests hand one over. (Not `sys`,
# `importlib`, `gc` and the like, which `_NEVER_STATE` also keeps from copies: lent, they would
# reach the interpreter of the tests' process, a loader the test files.)
_RESOURCE_MODULES = frozenset(
    ("tempfile", "subprocess", "socket", "ssl", "selectors", "queue", "sqlite3", "mmap", "concurrent", "multiprocessing", "asyncio", "threading", "_thread", "io", "_io")
)


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
        # Around finding and importing a module the other side names (`Server.lifted`).
        self.lifted = contextlib.nullcontext
        # The module of the agents' code (the target's): its other functions may be the
        # program's own too (`program_names`), so none of them is named back by the program.
        self.target_module = None
        # The program's side: what a string that crosses names of the tests' copy, as its own
        # copy's, and back (`swap_roots`); None on the tests' side and until set.
        self.inward = self.outward = None

    def swap_roots(self, tests_root):
        """The program's side, whose process cannot open the tests' copy: a path into it that
        crosses (a package's directory, `pathlib.Path(pkg.__file__)`) names the same file of
        the program's copy, which holds the same files but the tests', and a path of the
        program's copy it sends names the tests' (its module's `__file__`), so each side sees
        paths as in one process. Only a whole path's root is swapped: a sibling directory whose
        name starts as the root's is left alone."""
        theirs, ours = os.path.normpath(tests_root), self.root[:-1]

        def swap(old, new):
            pattern = re.compile(re.escape(old) + r"(?=/|\Z)")
            return lambda s: pattern.sub(lambda _: new, s) if old in s else s

        self.inward, self.outward = swap(theirs, ours), swap(ours, theirs)

    def import_lifted(self, name, only_found=False):
        """Imports `name` as the tests' process did, before any test's patch (`Server.lifted`).
        `only_found`: only a module of the standard library's or an installed package's that is
        found (finding one imports its package: lifted too), else None."""
        with self.lifted():
            if only_found and not (_stdlib_spec(name) or _installed_spec(name)):
                return None
            return importlib.import_module(name)

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
        return t.__module__ is not None and self.project_module(t.__module__) and not issubclass(t, (type, BaseException))

    def function_name(self, fn):
        """(module, qualified name) of a plain function a project module defines and still holds
        under that name (through classes, by their own dicts), or None: such a function crosses
        from the tests by its name, as the program's own function of that name (voluptuous'
        schemas hold its `Self` function, which its compiler finds by `is`)."""
        module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
        if not isinstance(qualname, str) or "<" in qualname or not self.project_module(module):
            return None
        return (module, qualname) if self.project_function(module, qualname) is fn else None

    def named_function(self, n, sent):
        """The function a node `["pf", module, qualname]` names: on the program's side its own of
        that name; on the tests' side one of the names they `sent`, or one of a project module
        the tests' process has imported that is not the target's (the same source in both
        processes: `names_back`), their own function."""
        named = (n[1], n[2]) if len(n) == 3 and isinstance(n[1], str) and isinstance(n[2], str) else None
        if named is not None and self.strict and named not in sent and not self.names_back(named[0]):
            named = None
        fn = self.project_function(*named) if named is not None else None
        if fn is None:
            raise Refused("a function of the project's that is not one (%r)" % (n[1:],))
        return fn

    def names_back(self, module):
        """Whether the program's process names back its function of a project `module` the tests
        never named (itsdangerous' signer keeps `_lazy_sha1`, which its tests compare with theirs
        by `==`): one of a module outside the agents' code, which the tests' process imported, so
        the tests' function of that name has the program's source. Safe whatever the program
        claims: a name stands only for the tests' own function, which the program could have
        handed back itself. (The target's module may hold other functions the agents changed;
        the tests' copy holds the module's own.)"""
        return module != self.target_module and self.target_module is not None and (
            not self.strict or module in sys.modules
        ) and self.project_module(module)

    def project_function(self, module, qualname):
        """What a project module holds as `qualname` (read through class dicts: no descriptor
        runs), if it is a plain function; else None. The module is imported where it was not
        yet (the program's process imports what its calls need: markdown's extensions)."""
        try:
            obj = (sys.modules.get(module) or self.import_lifted(module)) if self.project_module(module) else None
        except Exception:
            obj = None
        for part in qualname.split(".") if obj is not None else ():
            d = _own_dict(obj)
            obj = d.get(part) if isinstance(d, (dict, types.MappingProxyType)) else None
        return obj if type(obj) is types.FunctionType else None

    def tests_module(self, name):
        """A module of the tests': a file of the project's folder that is not the project's (a
        test module, a conftest, a helper beside them); and, in the tests' process, `__main__`,
        which there is the test runner: a class that says it is of it was made by a text file's
        doctest, whose namespace is a `__main__` of its own (voluptuous' `tests.md`)."""
        if name == "__main__" and self.strict:
            return True
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
        refused (a reduction through a function of its module's, which the receiver never calls,
        a copy of which the program could change without it coming back)."""
        if t.__module__.partition(".")[0] in _RESOURCE_MODULES and _is_stdlib_module(t.__module__) and "<" not in t.__qualname__:
            # What holds a file, a process, a socket or a queue is never copied (`reducible`):
            # the tests' own is lent (cerberus' tests hand over a temporary file).
            return True
        if not self.library_class(t):
            return False
        if (t.__module__, t.__qualname__) in _NOT_LENT:
            # (An `re.Match` of a pattern without a source is lent: `_NOT_LENT`.)
            return t.__module__ == "re" and not _remade_pattern(value.re)
        if t.__module__ == "re" and t.__qualname__ == "Pattern":
            # Its reduction is its source, which one made from a parsed pattern does not have.
            return not _remade_pattern(value)
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
            # (A class named `Test...` that a function makes is none: pytest collects only those
            # of a module or of a test class. click's `test_with_resource_exception` makes its
            # `TestContext`, a context manager it hands the target.)
            named = klass.__name__.startswith("Test") and "<locals>" not in klass.__qualname__
            if named or any(isinstance(n, str) and n.startswith("test") for n in vars(klass)):
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
            if self.project_module(klass.__module__) and "<" not in klass.__qualname__ and _named_by(klass, klass.__module__):
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
            todo = [(attr, v) for attr, v in list((_own_dict(module) or {}).items()) if isinstance(attr, str)]
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
        module = sys.modules.get(module_name) or self.import_lifted(module_name)
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

    def module_crosses(self, name):
        """Whether the module `name` crosses by its name: one of the project's, the standard
        library's or an installed package's, which the other side has from the same source;
        never the test runner's or rgd's own (`_RUNNERS`), nor a test module."""
        if not isinstance(name, str) or name.partition(".")[0] in _RUNNERS:
            return False
        return self.project_module(name) or _is_stdlib_module(name) or _is_installed_module(name)

    def shared_module(self, name):
        """The receiver's own module `name` (`module_crosses`): the tests' side only one it has
        imported already; the program's side imports it if need be, as its code would."""
        if not isinstance(name, str) or name.partition(".")[0] in _RUNNERS:
            raise Refused("a module that does not cross by name (%r)" % (name,))
        module = sys.modules.get(name)
        if module is None and not self.strict:
            module = self.import_lifted(name, only_found=not self.project_module(name))
        if not isinstance(module, types.ModuleType) or not self.module_crosses(name):
            raise Refused("a module that does not cross by name (%r)" % (name,))
        return module

    def resolve_class(self, module_name, qualname):
        """The receiver's own class `module.qualname`: the project's (imported if need be),
        builtins', or an allowed standard-library one; else Refused naming it."""
        if not isinstance(module_name, str) or not isinstance(qualname, str) or "<" in qualname:
            raise Refused("a class the project does not define (%r)" % (qualname,))
        if not self.strict and module_name not in sys.modules:
            # The program's side may be handed a class of the standard library's or an installed
            # package's that its code has not imported yet.
            self.import_lifted(module_name, only_found=True)
        if module_name == "builtins" or self.project_module(module_name) or _is_stdlib_module(module_name) or _is_installed_module(module_name):
            module = sys.modules.get(module_name)
            if module is None:
                module = self.import_lifted(module_name)
        else:
            raise Refused("a value of type %s.%s, which the project does not define" % (module_name, qualname))
        obj = module
        for part in qualname.split("."):
            obj = type.__dict__["__dict__"].__get__(obj).get(part) if isinstance(obj, type) else vars(obj).get(part)
            if obj is None:
                break
        if obj is None and module_name != "builtins":
            obj = _held_class(module_name, qualname)
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
        if not self.reducible(cls) or _generous(cls):
            return False
        if _plain_reduction(cls):
            return True
        if _set_state_reduction(cls):
            # Its state is what `__getstate__` says, put back by `__setstate__` (`_state`).
            _BY_SET_STATE.add(cls)
            return True
        return False


# Names of the other modules, bound once every module is made (they call each other).
from .common import Refused, _MISSING  # noqa: E402
from .modules import _NEVER_STATE, _RUNNERS, _installed_spec, _is_installed_module, _is_stdlib_module, _plain_reduction, _set_state_reduction, _stdlib_spec  # noqa: E402
from .values import _BY_NAME, _BY_SET_STATE, _DICT_VIEWS, _IMMUTABLE_BASES, _NOT_LENT, _builtin_base, _generous, _remade_pattern, _held_class, _hidden_state_base, _is_mock, _named_by, _own_dict, _viewed_dict  # noqa: E402
