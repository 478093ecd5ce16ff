"""Decoding: a message's table read back with the receiver's own classes (`Decoder`), refusing what the policy does not allow."""

import base64
import collections
import operator
import re
import sys
import types


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
        self.inward = peer.policy.inward  # (the program's side: the tests' paths as its own)
        # Mutable objects this message made or filled: what both sides now agree they hold.
        self.fresh = []
        self.later = []  # (index, node, object) made empty deep down, filled by `finish`

    def get(self, i, whole=False):
        """The value node `i` stands for. `whole`: its contents are read at once (an object's
        attributes, a builtin base's contents, an exception's arguments), so it is never made
        empty to be filled later."""
        t = type(i)
        if t is str:
            return _as_sent(self.values_sent, i) if self.inward is None else self.inward(i)
        if t is not int:
            value = self.scalar(i, t)
            if t is list and self.values_sent is not None and _own_identity(value):
                # A number the tests sent, handed back equal: that object (`_keep_sent`).
                return _as_sent(self.values_sent, value)
            return value
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

    def finish(self):  # (the objects `get` made empty deep down, each filled from the top level)
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
        elif isinstance(obj, BaseException) and ((k == "x" and (t.__module__, t.__qualname__, len(n)) == (n[1], n[2], 5)) or (k == "xs" and len(n) == 3)):
            args, state = self.get(n[-2], True), self.get(n[-1], True)
            if type(args) is not tuple or not isinstance(state, dict):
                raise Refused("an exception's new contents that are not its arguments and attributes")
            obj.args = args
            d = _own_dict(obj)
            for name in [a for a in d if not a.startswith("__") and a not in state] if isinstance(d, dict) else ():
                del d[name]
            self.fill(obj, state)
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
            # The program's side: the tests' side numbered this very object (`Encoder.pinned`;
            # the tests' side reads none: one the program forged would name nothing there).
            pin = n[2] if self.values_sent is None and len(n) > 2 and type(n[2]) is int else None
            # Its parts are read either way (a list in it the tests changed since is updated).
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
                module = self.peer.policy.import_lifted(n[1])
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
        if k == "pf":
            # A project's function by its name (`Policy.function_name`).
            fn = peer.policy.named_function(n, peer.names_sent)
            if not peer.policy.strict:
                peer.by_name[id(fn)] = (n[1], n[2], fn)
            return fn
        if k == "hb":
            return peer.local_handle(n[1])
        if k == "glob":
            return peer.policy.global_value(n[1], n[2])
        if k == "mod":
            return peer.policy.shared_module(n[1])
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
            e = self.exception(n)
            if (type(e).__module__, type(e).__qualname__) == (n[1], n[2]) and _mutable(e):
                # Shared as the sender's object: it goes back as that object, and what this
                # side changes in it (an `__init__` given it) is written back.
                self.made(i, e)
            return e
        if k == "xk" and not peer.policy.strict:
            return self.tests_exception_class(n)
        if k == "xo" and not peer.policy.strict:
            # Shared: what the program sets in it is written back (voluptuous' `Invalid.__init__`).
            return self.made(i, self.tests_exception(n))
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
        if type(value) in _BY_SET_STATE:
            try:
                value.__setstate__(state)
            except (TypeError, ValueError) as e:
                raise Refused("a state %s.%s does not take (%s)" % (type(value).__module__, type(value).__qualname__, e))
            return
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
            dt = _DATETIME
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

            if n[2] not in ("PurePath", "PurePosixPath", "Path", "PosixPath") or not isinstance(n[3], str):
                raise Refused("an unknown kind of path")
            return getattr(pathlib, n[2])(n[3] if self.inward is None else self.inward(n[3]))
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
        if kind == "Match":
            import re

            pattern, text = self.get(n[2]), self.get(n[3])
            if len(n) != 7 or not isinstance(pattern, re.Pattern) or n[4] not in ("match", "fullmatch") or type(n[5]) is not int or type(n[6]) is not int:
                raise Refused("a match that is not one")
            try:
                made = getattr(pattern, n[4])(text, n[5], n[6])
            except TypeError as e:
                raise Refused("a match that is not one (%s)" % e)
            if made is None:
                raise Refused("a match that does not match here")
            return made
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


# Names of the other modules, bound once every module is made (they call each other).
from .common import DEFER_DEPTH, MAX_DEPTH, MAX_INT_DIGITS, MAX_NODES, MAX_SENT_VALUES, Refused  # noqa: E402
from .handles import LentClass, _stand_in  # noqa: E402
from .modules import _is_stdlib_module, _stdlib_spec  # noqa: E402
from .values import _DATETIME, _BUILTIN_DESCRIPTORS, _BY_SET_STATE, _CONSTANTS, _DEFERRABLE, _mutable, _own_identity, _DELTA_DICTS, _DELTA_LISTS, _DICT_VIEWS, _IMMUTABLE_BASES, _PATTERN_METHODS, _as_sent, _blank, _builtin_base, _builtin_class, _by_class_name, _equals_anything, _own_dict, _own_reduction, _replace_slice, _slots_of, _state  # noqa: E402
