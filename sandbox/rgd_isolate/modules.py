"""Whose module a class comes from: the standard library's, an installed package's; and whether a class's instances are plain state by their reduction."""

import copyreg
import importlib.util
import os
import sys
import types


_STDLIB = os.path.normpath(os.path.dirname(os.__file__)) + os.sep


def _is_stdlib_module(name):
    module = sys.modules.get(name) if name != "__main__" else None
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
    unchanged source in both processes, which use one interpreter. Never `__main__`: each
    process's own (the test runner in the tests', where a text file's doctest makes its classes
    in a `__main__` namespace of its own: `Policy.tests_module`)."""
    module = sys.modules.get(name) if isinstance(name, str) and name != "__main__" else None
    f = getattr(module, "__file__", None)
    if not isinstance(f, str):
        return False
    parts = os.path.normpath(os.path.abspath(f)).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


# The test runner's packages, the test case's and rgd's own: nothing of theirs crosses as data,
# not even a module by its name.
_RUNNERS = frozenset(("_pytest", "pytest", "pluggy", "py", "unittest", "doctest", "rgd_isolate", "rgd_verdict", "rgd_verdict_impl", "rgd_spectra"))


# Packages whose objects never cross as their attributes, whatever their reduction: the test
# runner's (its objects reach the session, the tests and their outcomes), the test case's, rgd's
# own (`_RUNNERS`), and those whose objects stand for what a process has (threads, processes, sockets, event
# loops, queues between threads): a copy of one would be another.
_NEVER_STATE = _RUNNERS | frozenset(
    ("threading", "_thread", "subprocess", "multiprocessing", "concurrent", "asyncio", "selectors", "socket", "socketserver",
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
    if getattr(cls, "__getstate__", None) is getattr(object, "__getstate__", None) and not hasattr(cls, "__setstate__"):
        made = _made_bare(cls)
        state = made[1] if made is not None else None
        ok = made is not None and (
            state is None or type(state) is dict or (type(state) is tuple and len(state) == 2 and all(x is None or type(x) is dict for x in state))
        )
    _PLAIN[cls] = ok
    return ok


def _made_bare(cls):
    """(a bare instance, the state its reduction gives) where `cls`'s own reduction makes an
    instance bare (`copyreg.__newobj__(cls)` or `cls()` with no arguments) and hands it that state
    only, with no items; None otherwise, or where the class has a finalizer (it holds something
    besides its state, and a bare one would run it when collected). What `_plain_reduction` and
    `_set_state_reduction` ask of a bare instance made here, never of what the other side sends."""
    if any("__del__" in vars(k) for k in cls.__mro__):
        return None
    blank = _bare(cls)
    if blank is None:
        return None
    try:
        rv = blank.__reduce_ex__(4)
    except Exception:
        return None
    if not (isinstance(rv, tuple) and 2 <= len(rv) <= 6):
        return None
    fn, args, rest = rv[0], rv[1], list(rv[2:]) + [None] * (6 - len(rv))
    made = (fn is cls and args == ()) or (fn is copyreg.__newobj__ and args == (cls,))
    if not made or any(x is not None for x in rest[1:]):
        return None
    return blank, rest[0]


_SET_STATE = {}  # class -> whether its instances are a state dict set by its own `__setstate__`


def _set_state_reduction(cls):
    """Whether `cls`'s own reduction makes an instance bare and then hands it a dict of state
    through the class's own `__setstate__` (an `xml.etree.ElementTree.Element`: its tag, text,
    attributes and children), with no items and no finalizer. Such an object is that dict: it
    crosses as it (read by `__getstate__`) and is put back, in place, by `__setstate__`, so what
    the program changes in it comes back as attributes do. Asked of a bare instance made here."""
    known = _SET_STATE.get(cls)
    if known is not None:
        return known
    ok = False
    if any("__setstate__" in vars(k) for k in cls.__mro__ if k is not object):
        made = _made_bare(cls)
        if made is not None and type(made[1]) is dict:
            try:
                ok = type(made[0].__getstate__()) is dict
            except Exception:
                ok = False
    _SET_STATE[cls] = ok
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
