"""Helpers both directions share: a value's state and children, what was sent, deltas of shared dicts and lists, probes of a class's equality, where a qualified name lives."""

import collections
import itertools
import operator
import re
import struct
import sys
import threading
import types


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


def _own_identity(number):
    """Whether a number crossing is an object of its own, whose identity `_keep_sent` keeps: a
    float, or an integer outside the interpreter's small ones (each always the same object)."""
    return type(number) is float or not -6 < number < 257


def _keep_sent(sent, value):
    """The tests' side keeps a string, number, tuple or frozenset it sent (`Peer.sent_values`):
    of equal ones, the one sent last, which is what a program that passes a value through hands
    back (click's `Option.get_default` returning the `flag_value` of the option it was just
    handed, a test's literal that `is` compares, where the run had sent an equal string before;
    natsort's `chain_functions([])(2345) is 2345`)."""
    if sent is not None:
        key = _exact(value)
        if key is not None and (key in sent or len(sent) < MAX_SENT_VALUES):
            sent[key] = value
            if type(key) is tuple and (key[0] is tuple or key[0] is frozenset):
                # Its shape, so that a tuple the program sends of a shape never sent is not
                # looked up part by part (`_as_sent`). (No key `_exact` makes starts with a str.)
                sent["shape", key[0], len(value)] = True


def _as_sent(sent, value):
    """What the tests' side sent equal to `value`, exactly, if it did; else `value`."""
    if sent is None:
        return value
    t = type(value)
    if (t is tuple or t is frozenset) and ("shape", t, len(value)) not in sent:
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

# `datetime`'s classes as the interpreter made them: a test may put its own there (freezegun).
_DATETIME = types.SimpleNamespace(**vars(__import__("datetime")))
# Classes whose objects hold nothing that changes (a subclass adding no state is a value too).
_VALUE_BASES = _IMMUTABLE_BASES + (_DATETIME.date, _DATETIME.time, _DATETIME.timedelta)


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


# Objects without a reduction that are still not lent, each for a measured reason: an `re.Match`
# that cannot be made again from a pattern that can (`_remade_match`: a search's match whose
# spans depend on where the search began). Lent, such matches failed markdown's released
# `BacktickInlineProcessor.handleMatch` isolated where it passes in one process (not yet
# understood), so a run handed one stays in-process (`not_data`). A match of a pattern that has
# no source to be made from (`_remade_pattern`) is lent: there is no value to send.
_NOT_LENT = frozenset((("re", "Match"),))


def _remade_pattern(p):
    """Whether a compiled pattern can be made again from its source and flags (what `copy` and
    `pickle` do): not one `re` compiled from an already parsed pattern (`re.Scanner`'s, which
    markdown's `attr_list` keeps as a module global), whose source is None."""
    return type(p.pattern) in (str, bytes)


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
    """Whether `module.qualname` names `cls` (`_thread.lock`, a class no name holds, does not).
    Once named, always taken to be (asked of every project object sent)."""
    if _NAMED.get(cls) == module:
        return True
    obj = sys.modules.get(module)
    for part in cls.__qualname__.split("."):
        obj = getattr(obj, part, None)
    if obj is cls:
        _NAMED[cls] = module
        return True
    return False


_NAMED = {}  # class -> the module found to name it


def _held_class(module, qualname):
    """The one class saying it is `module.qualname` that a module of the same package holds as a
    global, though `module` does not name it: a class a factory made (cerberus' `SchemaValidator`,
    made by `utils.validator_factory` and bound in `schema`). Both processes import the package
    from the same source and run the same code to make it; where one has not made it yet, or holds
    two such classes, None."""
    top = module.partition(".")[0] if isinstance(module, str) else None
    found = None
    for name, mod in list(sys.modules.items()) if top else ():
        if mod is None or not (name == top or name.startswith(top + ".")):
            continue
        for v in list(getattr(mod, "__dict__", {}).values()):
            if isinstance(v, type) and v is not found and v.__module__ == module and v.__qualname__ == qualname:
                if found is not None:
                    return None
                found = v
    return found


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
        # A C class whose instances are no bigger than an object's, but for a `__dict__` and a
        # weak reference slot, holds nothing of its own (`datetime.tzinfo`, under dateutil's
        # `tzfile`; io's abstract bases).
        own = base.__basicsize__ - _POINTER * (bool(base.__dictoffset__) + bool(base.__weakrefoffset__))
        if own <= object.__basicsize__ and not base.__itemsize__:
            continue
        return base
    return None


_POINTER = struct.calcsize("P")


def _parameters_function(fn):
    """`def NAME(PARAMETERS): pass`, with the parameters `fn`'s signature says (from the other
    side: `_signature_of`), defaults standing as None; AttributeError where the names are not
    identifiers."""
    import inspect
    import keyword

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        raise AttributeError("__code__") from None
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in sig.parameters):
        raise AttributeError("__code__")
    params = [p.replace(default=p.empty if p.default is p.empty else None, annotation=p.empty) for p in sig.parameters.values()]
    # (`inspect` prints them as a `def` writes them: `/` and `*` where they go.)
    parameters = str(sig.replace(parameters=params, return_annotation=sig.empty))
    name = getattr(fn, "__name__", None)
    name = name if isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) else "function"
    made = {}
    exec(compile("def %s%s:\n    pass\n" % (name, parameters), "<a function kept in the other process>", "exec"), made)
    return made[name]


def _remade_match(m):
    """How the other side makes the same `re.Match` again, from its pattern and string with its
    own `re` (the same engine in both processes): (`match` or `fullmatch`, its start, an end
    position) where that gives back every group's span, else None. Its `pos` is then where it
    starts (the position its search began at is not kept)."""
    p, text, start = m.re, m.string, m.start()
    if not _remade_pattern(p):
        return None
    for how, endpos in (("match", m.endpos), ("fullmatch", m.endpos), ("fullmatch", m.end())):
        again = getattr(p, how)(text, start, endpos)
        if again is not None and again.regs == m.regs:
            return how, start, endpos
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
        # (A handle's class answers `__slots__` with a property, of the object it stands for.)
        for s in slots if hasattr(slots, "__iter__") else ():
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


# Classes of the standard library's or an installed package's whose state is the dict their own
# `__getstate__` gives and `__setstate__` takes (`Policy.plain_state`): an element tree's element.
_BY_SET_STATE = set()


def _state(obj):
    """An instance's attributes: its `__dict__` and slots, as a dict (or, for a class of
    `_BY_SET_STATE`, the state its own `__getstate__` gives)."""
    if type(obj) in _BY_SET_STATE:
        return dict(obj.__getstate__())
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


def _base_value(value, base):
    """The builtin value under an object of a project class over `base`, read by the builtin's
    own methods: never the class's `__str__` or `__iter__` (voluptuous' `VirtualPathComponent`,
    a `str` whose `__str__` adds brackets, crossed bracketed twice)."""
    if base is dict:
        return dict(dict.items(value))
    if base in (str, int, float, bytes):
        return getattr(base, "__%s__" % ("bytes" if base is bytes else base.__name__))(value)
    return base(base.__iter__(value))


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
    if t in _BY_SET_STATE:
        return _built_state_parts(value.__getstate__())
    parts = tuple(itertools.chain.from_iterable(_state(value).items()))
    if isinstance(value, BaseException):
        return parts + (_SEP, value.args)
    base = _builtin_base(t)
    if base is list or base is set:
        parts += (_SEP,) + tuple(base.__iter__(value))
    elif base is dict:
        parts += (_SEP,) + tuple(itertools.chain.from_iterable(dict.items(value)))
    return parts


def _built_state_parts(state):
    """`_children` of a state a class's own `__getstate__` builds at each call: a list or dict
    in it is made anew each time (an `ElementTree.Element`'s children and, when empty, its
    attributes), so it is compared by what it holds, one level down, never by its identity,
    which would make every such object look changed at every call (and the program's stale
    copy be written over what the tests changed since)."""
    parts = []
    for name, x in dict(state).items():
        # Its names too are made anew (in C): compared as the one interned string of each.
        parts.append(sys.intern(name) if type(name) is str else name)
        t = type(x)
        if t is list:
            parts += (_SEP, *x, _SEP)
        elif t is dict:
            parts += (_SEP, *itertools.chain.from_iterable(x.items()), _SEP)
        else:
            parts.append(x)
    return tuple(parts)


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


# The nodes whose objects the receiver notes as shared (`Decoder.made`, `instance`): the sender
# records the same, so that both agree on which identities last.
_SHARED_KINDS = frozenset(("l", "d", "S", "ba", "o", "x", "xo"))


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


def _mutable(value):
    t = type(value)
    if t in _MUTABLE_BUILTINS:
        return True
    if isinstance(value, BaseException):
        # Shared, and what changes in it written back (voluptuous' `Invalid.__init__` sets its
        # path on the object the tests made); a builtin one too, which a test may raise through
        # the program and then find by `is` (python-slugify's `raised.value is error`).
        return True
    if t.__module__ == "collections" and t.__qualname__ in ("OrderedDict", "Counter", "defaultdict", "deque"):
        return True
    return t not in _SCALARS and t not in (tuple, frozenset) and not isinstance(value, type) and (
        hasattr(value, "__dict__") or bool(_slots_of(t)) or t in _BY_SET_STATE
    )


def _stored(namespace, qualname):
    """What `qualname` names in a module's namespace, through classes' own dicts, static and class
    methods and properties opened."""
    parts = qualname.split(".")
    holder = namespace
    for part in parts[:-1]:
        holder = holder[part].__dict__
    name = parts[-1]
    if len(parts) > 1 and name.startswith("__") and not name.endswith("__") and name not in holder:
        # A private method is stored under its mangled name (cerberus' `__validate_required_fields`).
        name = "_%s%s" % (parts[-2].lstrip("_"), name)
    stored = holder[name] if name in holder else _kept_unnamed(holder, qualname)
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


# Names of the other modules, bound once every module is made (they call each other).
from .common import MAX_SENT_VALUES, Refused  # noqa: E402
from .modules import _bare, _is_installed_module, _is_stdlib_module  # noqa: E402
