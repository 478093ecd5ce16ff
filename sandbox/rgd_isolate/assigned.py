"""The tests' changes by assignment to code outside the project: freezegun puts its `FakeDatetime`
and `fake_time` into `datetime`, `time` and every module that imported them, without `monkeypatch`
or `mock`. Found by comparing each module's code with what it held when collection ended, and
carried over as a `monkeypatch` of it is (`tests_side._forwarded`)."""

import itertools
import operator
import sys
import types


class Assignments:
    """The code (functions, classes, modules) of every module of the standard library's and of
    installed packages as collection left it, and what of it the tests replaced since. Every
    call looks, in C, at the modules the project's code names and at what was found replaced
    (`near`: hundreds of names); at all of them (thousands) when a test starts or one of those
    changed: a patcher that changes what the project reaches changes the rest at the same time."""

    def __init__(self):
        self.modules, self.spaces, self.attrs, self.originals = (), (), (), ()
        self.near_base = ()
        self.near = ((), (), ())  # namespaces, names, values as last seen
        self.seen = ()  # every watched name's value as last seen
        self.test = None
        self.found = []  # (module name, attribute, value) replaced, as of the last look

    def baseline(self, policy, pristine, project):
        """`pristine`: module name -> [(attribute, code)] of every imported module; `project`:
        (name, module) of the project's (`ModuleState._project_modules`)."""
        modules, spaces, attrs, originals = [], [], [], []
        named = _named_by(project)
        near = []
        for name, kept in pristine.items():
            module = sys.modules.get(name)
            if module is None or not _watched(policy, name):
                continue
            ns = _own_dict(module)
            if ns is None:
                continue
            for attr, value in kept:
                if name in named:
                    near.append(len(attrs))
                modules.append(name)
                spaces.append(ns)
                attrs.append(attr)
                originals.append(value)
        self.modules, self.spaces, self.attrs, self.originals = tuple(modules), tuple(spaces), tuple(attrs), tuple(originals)
        self.near_base = tuple(near)
        self.test = None
        self._look()

    def replaced(self, test):
        """What the tests replaced by assignment and is still in place: (module name, attribute,
        value)."""
        spaces, attrs, seen = self.near
        if not all(map(operator.is_, map(dict.get, spaces, attrs), seen)):
            self._look()
        elif test != self.test and not all(map(operator.is_, map(dict.get, self.spaces, self.attrs), self.seen)):
            self._look()
        self.test = test
        return self.found

    def _look(self):
        self.seen = now = tuple(map(dict.get, self.spaces, self.attrs))
        changed = list(itertools.compress(range(len(now)), map(operator.is_not, now, self.originals)))
        self.found = [(self.modules[i], self.attrs[i], now[i]) for i in changed if _the_tests(self.modules[i], now[i])]
        near = sorted(set(self.near_base).union(changed))
        self.near = (tuple(self.spaces[i] for i in near), tuple(self.attrs[i] for i in near), tuple(now[i] for i in near))


def _watched(policy, name):
    """A module whose replaced code the program's process must see too: one that crosses by its
    name (the standard library's or an installed package's, never the test runner's or rgd's)
    outside the project and the tests."""
    return not policy.project_module(name) and not policy.tests_module(name) and policy.module_crosses(name)


def _the_tests(module, value):
    """Whether `value`, put in `module`, is the tests' doing rather than the test runner's
    (pytest's hooks, set around every test: `sys.unraisablehook`) or the package's own (code
    of its own package, set as it is first used: both processes do that themselves)."""
    if _is_mock(value):
        return True
    code = isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type))
    owner = str(getattr(value, "__module__", None) if code else type(value).__module__).partition(".")[0]
    return not (owner in _RUNNERS or owner.startswith("pytest_") or owner == module.partition(".")[0])


def _named_by(project):
    """The modules the project's modules name: those they hold, and those of the functions and
    classes they imported (`from datetime import datetime`)."""
    named = set()
    for _, module in project:
        for value in list((_own_dict(module) or {}).values()):
            if isinstance(value, types.ModuleType):
                named.add(_own_dict(value).get("__name__"))
            elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
                named.add(value.__module__)
    return named


from .modules import _RUNNERS  # noqa: E402
from .values import _is_mock, _own_dict  # noqa: E402
