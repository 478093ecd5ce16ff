"""What a side does, asked by the other, to what it keeps: reads an attribute or the signature of it (`_read`, `_signature_of`), and, the tests' process, compares, copies or lists what it lent."""

import operator


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


def _read(obj, name):
    """An attribute of an object this side keeps, as Python reads it; `__call__` as a call uses it:
    of its type (a class's own `__call__` is its instances' method, not the class's call)."""
    if name == "__call__" and isinstance(obj, type):
        return type(obj).__call__.__get__(obj, type(obj))
    return getattr(obj, name)


# What the tests' process does for the program to an object it lent: compares, hashes, asks
# membership of it (`LentObject`'s operators).
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
    # (Only the names the program may read: a class's `__dict__` names its `__weakref__` too.)
    "vars": lambda obj: [n for n in obj.__dict__ if isinstance(n, str) and (n[:2] != "__" or n[-2:] != "__" or n in _LENT_PROTOCOL)],
    "new": lambda cls, args=(): cls.__new__(cls, *args) if isinstance(cls, type) and isinstance(args, tuple) else None,
}


from .handles import _LENT_PROTOCOL, _SOME_DEFAULT  # noqa: E402
