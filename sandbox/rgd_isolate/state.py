"""Module state: the project modules' data both processes start from, what changed, and how the other side applies it."""

import itertools
import operator
import sys
import types


def _behaviour(v):
    """Code rather than state: a module attribute that is a function, class, module or other
    callable (changing one is patching, which cannot be sent as data)."""
    t = type(v)  # (not `isinstance`, which would ask the object for `__class__`: `_names`)
    return issubclass(t, (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType, types.MethodType)) or (
        callable(v) and not issubclass(t, (int, float, str, bytes, list, tuple, dict, set, frozenset))
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


# How many mutable parts of a module's data are looked into too, at every call (`_record`).
_DEEP_PARTS = 8


class _Deep:
    """A module data name's contents as last agreed, and those of its few mutable parts."""

    __slots__ = ("shallow", "parts", "snaps")

    def __init__(self, shallow, parts):
        self.shallow, self.parts, self.snaps = shallow, tuple(parts), tuple(map(_children, parts))


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
        self.late = set()  # the program's side: ids of the classes it made under new names (sent as handles)

    def _project_modules(self):
        if len(sys.modules) != self.modules_seen:
            self.modules_seen = len(sys.modules)
            self.modules = [(n, m) for n, m in list(sys.modules.items()) if m is not None and self.policy.project_module(n)]
        return self.modules

    @staticmethod
    def _names(ns):
        for attr, value in list(ns.items()):
            # (By its type: `isinstance` asks an object for `__class__` too, and itsdangerous'
            # deprecated `json` module warns at every attribute asked, an error under its tests.)
            if isinstance(attr, str) and not attr.startswith("__") and not issubclass(type(value), (staticmethod, classmethod, property)):
                yield attr, value

    def _record(self, value):
        # What it holds one level down (`_children`, as shared objects are compared), and two for
        # a few mutable parts of a container or a project object (`_Deep`); none for code, and
        # for a thread-local or lock (each process's own: not module state).
        t = type(value)
        if t in _UNCHANGING_TYPES:
            return (value, _UNCHANGING)
        if _behaviour(value) or t in _BY_NAME or issubclass(t, _Remote):
            # (A handle holds nothing here: module data the other side lent, compared by identity.)
            return (value, None)
        children = _children(value)
        shallow = _KeptDict(value) if t is dict else children
        if not children and _stateless(value):
            # An `object()` sentinel, a descriptor: nothing in it can change.
            return (value, _UNCHANGING)
        # (Scalars only, the common case, told in C; else at most one part more than looked into.)
        mutable = () if set(map(type, children)) <= _SCALAR_SET else (c for c in children if type(c) not in _SCALAR_SET and _mutable(c))
        # (Not a library's object: a `logging.Logger` fills its level cache at every call, and
        # it crosses as no data. markdown's module loggers sent all its functions in-process.)
        deep = t.__module__ == "builtins" or self.policy.project_module(t.__module__)
        inner = list(itertools.islice(mutable, _DEEP_PARTS + 1)) if deep else ()
        if inner and len(inner) <= _DEEP_PARTS:
            # A few mutable parts (a registry object and its table, cerberus' `schema_registry`):
            # theirs too, so that what a test adds to the table is carried over.
            return (value, _Deep(shallow, inner))
        return (value, shallow)

    @staticmethod
    def _unchanged(value, kept):
        """Whether a data name's contents are still the parts `kept` of them, by identity."""
        if type(kept) is _Deep:
            return ModuleState._unchanged(value, kept.shallow) and all(map(_same, kept.snaps, map(_children, kept.parts)))
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
            # (Past its class's `__getattribute__`: itsdangerous' deprecated `json` module warns.)
            ns = _own_dict(module)
            if not isinstance(ns, dict):
                continue
            if (name, "") not in self.spaces:
                self._space((name, ""), ns)
                for value in list(ns.values()):
                    if issubclass(type(value), type) and value.__module__ == name and (name, value.__qualname__) not in self.spaces:
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
                if was is None and not self.policy.strict and issubclass(type(value), type) and not holder:
                    # A class bound under a new name (cerberus binds `Validator` in `utils` and
                    # `SchemaValidator`, a factory's class, in `schema` on first use): the tests'
                    # process, which never ran that code, binds it too, only where it has no
                    # such name (`apply`): by its name where its module names it otherwise, else
                    # as a handle (`late`), whose objects are made here.
                    if not _named_by(value, value.__module__) or (value.__module__, value.__qualname__) == (module, attr):
                        self.late.add(id(value))
                    state.append(((module, holder, attr), value))
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

    def apply(self, changes, data_only=False):
        """Puts the other side's changes in place, and records them as agreed. `data_only` (the
        program's, read by the tests' process): data in the place of data only. An honest
        program's process never sends more (`changes` keeps code apart); one that rewrote its
        own copy of this module could otherwise put its function in the place of a project
        function the tests' process runs after the call."""
        places = []
        for (module, holder, attr), value in changes:
            obj = self._module(module)
            if obj is None:
                continue
            if holder:
                for part in holder.split("."):
                    obj = getattr(obj, part, None)
                    if obj is None:
                        break
                if not isinstance(obj, type):
                    continue
            space = vars(obj) if not isinstance(obj, type) else type.__dict__["__dict__"].__get__(obj)
            current = space.get(attr)
            # (A class the program bound under a name the tests' module does not have, this
            # process's own or the handle of one the program made: what the tests' code finds by
            # that name would only exist if the program's code had bound it.)
            made = (type(value) in _HANDLE_TYPES or issubclass(type(value), type)) and attr not in space and not holder
            if data_only and (_behaviour(current) or (_behaviour(value) and not made)):
                raise Refused("code in the place of %s.%s%s" % (module, holder + "." if holder else "", attr))
            places.append((module, holder, attr, value, obj, current))
        for module, holder, attr, value, obj, current in places:
            if current is not None and type(current) is type(value) and _mutable(current) and not issubclass(type(value), type):
                _copy_into(current, value)
                value = current
            else:
                setattr(obj, attr, value)
            space = self.spaces.get((module, holder))
            if space is not None:
                space[2][attr] = self._record(value)
                self._refresh(space)

    def _module(self, name):
        """The module a change names. On the program's side, a project module the tests' process
        imported and this one not yet is imported first, as it is there (click's tests patch
        `_termui_impl`, which the target imports only when it runs: the patch was dropped), and
        its namespace recorded as it is before the change."""
        module = sys.modules.get(name)
        if module is None and not self.policy.strict and self.policy.project_module(name):
            try:
                module = self.policy.import_lifted(name)
            except Exception:
                return None
            self._spaces_now()
        return module

    def patch(self, key, fn):
        """Puts the tests' replacement of a project function in place (`fn`, a handle: calls go
        back to the tests' process), or the original back (`fn` None), and records it as agreed."""
        module, holder, attr = key
        obj = self._module(module)
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


def _calling_back(fn, name):
    """A plain function named `name` that calls `fn` (a handle of the tests' replacement): put
    where a function was, it binds `self` as the method it replaces did."""

    def value(*args, **kwargs):
        return fn(*args, **kwargs)

    value.__name__ = value.__qualname__ = name
    return value


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
    elif t in _BY_SET_STATE:
        target.__setstate__(_state(source))
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


def _key_name(key):
    module, holder, attr = key
    return ".".join(p for p in (module, holder, attr) if p)


# Names of the other modules, bound once every module is made (they call each other).
from .common import Refused, _MISSING  # noqa: E402
from .decode import Decoder  # noqa: E402
from .handles import _HANDLE_TYPES, RemoteMethod, _Remote  # noqa: E402
from .values import _SCALAR_SET, _BY_NAME, _BY_SET_STATE, _named_by, _UNCHANGING, _UNCHANGING_TYPES, _builtin_base, _children, _mutable, _own_dict, _same, _slots_of, _state  # noqa: E402
