"""Handles: what stands on one side for an object that stays on the other (functions, iterators, lent objects, stand-ins), and what a program's process cannot do through them."""

import collections
import collections.abc
import contextlib
import io
import itertools
import types


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
            # wrapper's `__dict__` with the wrapped one's), read and written there by their plain
            # names. (Only a plain function's: another callable's handle has no `__dict__`.)
            return _FunctionAttributes(self)
        if name[:2] == "__" and name[-2:] == "__" and name not in _ASKED_NAMES and (name in _PYTHON_NAMES or type(self) not in (RemoteFunction, RemoteMethod)):
            # What Python itself probes (`__dict__`, `__slots__`, `__wrapped__`...): the handle
            # has none of its own, and asking the other side for each would be a round trip.
            # (A function's own such names, click's `__click_params__`, are asked, and the tests
            # ask the program's function for its annotations.)
            if not (name == "__annotations__" and type(self) is RemoteMethod and object.__getattribute__(self, "_peer").policy.strict):
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
    if outermost and body["along"]:
        ask(peer, body)
    reply = None
    try:
        reply = peer.request(body)
        _replay_output(reply)
        return peer.result(reply)
    finally:
        if outermost:
            peer.reset()
            if reply is not None:
                weaken(peer, reply)


class RemoteMethod(RemoteFunction):
    """A plain function that stays in the other process: held by a class, it binds as a method,
    as the function itself would, and it says it is a function (`inspect.isfunction`: click
    shows a default that is a test's lambda as "(dynamic)"). Its code, defaults and globals
    stay where they are: only its signature is answered (`_signature_of`)."""

    __slots__ = ()

    @property
    def __class__(self):
        return types.FunctionType

    # What a decorator reads to name the arguments (voluptuous' `validate`) or count those it
    # must have (funcy's `autocurry`): an empty function's code with this one's name and
    # parameters, never its body, constants or locals, and its defaults, each standing as None.
    __code__ = property(lambda self: _parameters_function(self).__code__)
    __defaults__ = property(lambda self: _parameters_function(self).__defaults__)
    __kwdefaults__ = property(lambda self: _parameters_function(self).__kwdefaults__)

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


class RemoteGenerator(RemoteIterator):
    """A generator that stays in the other process, sent values and closed there: `isinstance`
    says it is one (xmltodict's `parse` tells chunks from a document by `inspect.isgenerator`)."""

    __slots__ = ()
    __class__ = property(lambda self: types.GeneratorType)
    send = property(lambda self: _Remote._ask(self, "get", "send"))
    close = property(lambda self: _Remote._ask(self, "get", "close"))


def _asking(name):
    """A lent object's operator `name`, asked of the tests' process."""

    def ask(self, *args):
        return LentObject._op(self, name, *args)

    ask.__name__ = "__%s__" % name
    return ask


# The program's side's server class, set where it is defined (`program_side`): only a call from
# its own machinery may make a bare object of a lent class (this module never imports it).
_SERVER = [None]


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
        if kwargs or len(args) != 2 or type(args[0]) is not _SERVER[0] or type(args[1]) is not int:
            _cannot("make an object of the class of an object the tests lent")
        return object.__new__(cls)

    @property
    def __class__(self):
        cls = object.__getattribute__(self, "_cls")
        return LentObject if cls is None else cls

    def __getattr__(self, name):
        if name == "__dict__":
            # `vars(obj)`: the tests' object's attributes, read and written there by name, as the
            # program could by hand; asked at once if it has any (a named tuple has not: `vars()`
            # raises here, not at the first read, as voluptuous' `_iterate_object` expects).
            LentObject._op(self, "vars")
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

    # Comparisons, hash and membership: answered by the tests' process (`served._LENT_OPERATORS`).
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
        made.__slots__ = _LENT_SLOTS
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

    # Its own `__init__`, asked there (funcy's `autocurry`); `Peer.proxy` makes one without it.
    __init__ = property(lambda self: _Remote._ask(self, "get", "__init__"))

    def __call__(self, /, *args, **kwargs):
        return LentMethod.__call__(self, *args, **kwargs)

    def __instancecheck__(self, obj):
        return type(obj) in _LENT_TYPES and bool(LentObject._op(self, "isinstance", obj))

    def __subclasscheck__(self, cls):
        return type(cls) is LentClass and bool(LentObject._op(self, "issubclass", cls))


class LentLibraryClass(LentClass):
    """A library class the tests put in code's place (freezegun's `FakeDatetime`: `tests_side.
    _lent_code`), whose metaclass may say a `datetime` the program made is one: asked of all."""

    __slots__ = ()

    def __instancecheck__(self, obj):
        return bool(LentObject._op(self, "isinstance", obj))


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
_LENT_TYPES = {LentObject, LentCallable, LentClass, LentLibraryClass}
_HANDLE_TYPES = {RemoteFunction, RemoteMethod, RemoteIterator, RemoteGenerator, RemoteObject, RemoteValue, _SaidOf, _CallableSaidOf, LentMethod} | _LENT_TYPES


# A handle's kind as the sender names it, and the proxy the receiver makes of it: the tests'
# side makes no `Lent...` of what the program sends (it trusts none of its comparisons).
_PROXIES_OF_THE_PROGRAM = {"fn": RemoteFunction, "fm": RemoteMethod, "it": RemoteIterator, "gen": RemoteGenerator, "obj": RemoteValue, "objc": RemoteObject, "lm": RemoteFunction}


_PROXIES_OF_THE_TESTS = dict(_PROXIES_OF_THE_PROGRAM, lent=LentObject, lentc=LentCallable, lentk=LentClass, libk=LentLibraryClass, opaque=LentObject, lm=LentMethod)


# What the program may ask of a lent object beyond its plain names: the protocols it uses, and
# its class's `__slots__` (`_LENT_SLOTS`).
_LENT_PROTOCOL = frozenset(
    ("__iter__", "__next__", "__len__", "__bool__", "__getitem__", "__setitem__", "__delitem__", "__enter__", "__exit__",
     "__call__", "__repr__", "__str__", "__missing__", "__length_hint__", "__reversed__", "__index__", "__int__", "__float__",
     "__slots__", "__init__")
)


# A handle's `__doc__` is the other side's (the property above), not its class's docstring; a
# lent object's `__slots__` its class's, asked there (voluptuous reads a slotted object by them).
_LENT_SLOTS = property(lambda self: _Remote._ask(self, "get", "__slots__"))
for _handle_class in (RemoteValue, RemoteObject, _SaidOf, _CallableSaidOf, RemoteFunction, RemoteMethod, RemoteIterator, RemoteGenerator, LentObject, LentCallable, LentClass, LentLibraryClass, LentMethod):
    _handle_class.__doc__ = _Remote.__dict__["__doc__"]
    if issubclass(_handle_class, LentObject):
        _handle_class.__slots__ = _LENT_SLOTS
del _handle_class


# Names of the other modules, bound once every module is made (they call each other).
from .common import Refused  # noqa: E402
from .lifetimes import ask, weaken  # noqa: E402
from .output import _replay_output  # noqa: E402
from .refusals import _refuse  # noqa: E402
from .values import _parameters_function  # noqa: E402
