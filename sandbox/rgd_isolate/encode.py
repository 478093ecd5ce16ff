"""Encoding: a message's table of nodes (`Encoder`), shared objects as identities with their changes, reductions, lent handles."""

import base64
import builtins
import collections
import copyreg
import itertools
import sys
import types


class Encoder:
    """One message's table of nodes. Scalars are written in place (a string as itself, an integer
    as `[n]`, a float as `["f", hex]`); other values are nodes of the table, referred to by index.
    An object the other side already holds a copy of (one it sent, `came_from`, or one this side
    sent before, `sent_ids`) crosses as its identity, with its contents only when they changed
    since the two sides last agreed on them (`snaps`): a parser handed over at every call sends
    its position, not its tokens. `peer.handle()` keeps callables and iterators on this side."""

    def __init__(self, peer, answer=False, values=None, lend=()):
        self.peer = peer
        self.values_sent = peer.sent_values if peer.policy.strict else None
        self.outward = peer.policy.outward  # (the program's side: its paths as the tests')
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
        # The message's own tuples (a call's arguments, its keyword pairs): no code holds them,
        # and pinned they would keep what they hold alive for the run (`lifetimes`).
        self.envelopes = set()
        self.lend_now = set(map(id, lend))  # the tests' objects this message lends whatever they are
        for name, v in (values or {}).items():
            if type(v) is tuple and name in ("a", "k"):
                self.envelopes.add(id(v))
                if name == "k":
                    self.envelopes.update(map(id, v))
        # Whether this is the tests' answer to the program's call, which lends what the
        # standard library's or an installed package's objects cannot cross as (`fresh`).
        self.answer = answer

    def ref(self, value, depth=0):
        t = type(value)
        if t is str:
            self.values += 1
            _keep_sent(self.values_sent, value)
            return value if self.outward is None else self.outward(value)
        if t is int:
            self.values += 1
            if _own_identity(value):
                _keep_sent(self.values_sent, value)
            return [value] if -_SAFE_INT < value < _SAFE_INT else ["i", str(value)]
        if value is None or t is bool:
            self.values += 1
            return value
        if t is float:
            self.values += 1
            _keep_sent(self.values_sent, value)
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
        """A tuple's or frozenset's node. One of plain values (and such tuples) the tests' side
        keeps for the run (the first MAX_SENT_VALUES) both by value (`_keep_sent`) and as that
        very object, numbered: sent again in a later message (an item a lent view yields, a second
        call), it is the same object on the program's side too, as in one process (boltons'
        `remap` caches by `id`: two keys holding one tuple are one entry there, two apart). Kept,
        its `id` is not reused, so that `id` names it for the run."""
        if self.values_sent is None or id(v) in self.envelopes:
            return node
        _keep_sent(self.values_sent, v)
        pins = self.peer.pins
        if not all(type(x) in _SCALAR_SET or id(x) in pins for x in v):
            # One holding an object of its own identity, kept for the run, would keep that object
            # alive on both sides (`lifetimes`: a tuple is never held weakly): made anew each time.
            return node
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
        if gid is not None and recalled(peer, "sent", gid, v) is v:
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
            peer = self.peer
            if isinstance(v, BaseException) and (peer.policy.tests_exception(t) if peer.policy.strict else peer.tests_exception_hid(v) is not None):
                # A tests' exception one side changed: its arguments and attributes.
                return [tag, gid, ["xs", *self.exception_parts(v, depth)]]
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
        if lent is not None and lent in peer.lent and recalled(peer, "handle", lent, v) is v:
            # Lent before (`lendable`): the same handle again.
            return self.lent(lent, t, depth)
        if id(v) in self.lend_now:
            return self.lend(v, "lent", t, depth)
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
        if t is types.ModuleType:
            name = getattr(v, "__name__", None)
            if isinstance(name, str) and sys.modules.get(name) is v and peer.policy.module_crosses(name):
                # A module crosses by its name; the other side has its own from the same
                # source (itsdangerous' serializer holds the `json` it serializes with). Not one
                # a test changed by assignment (xmltodict's `expat.ParserCreate = handler`): the
                # program's own would not have the change.
                # (What `monkeypatch` or `mock` patched is carried over as such: `_forwarded`.)
                kept = peer.pristine.get(name, ()) if peer.policy.strict else ()
                ns = vars(v)
                if any(ns.get(a, _MISSING) is not x and (name, a) not in peer.patched_now for a, x in kept):
                    _refuse(peer.qualname, "patched", "%s (changed by assignment)" % name)
                return ["mod", name]
        if isinstance(v, type):
            # A class names code, not state: any class the other side has by the same name (the
            # project's, the standard library's) may be sent; the tests' side only takes back
            # those whose instances may cross (`Decoder`, strict).
            module = v.__module__
            known = module == "builtins" or peer.policy.project_module(module) or _is_stdlib_module(module)
            if not peer.policy.strict and (not known or (module != "builtins" and not _by_class_name(peer.policy, v)) or id(v) in _late(peer)):
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
        if t is types.FunctionType:
            named = peer.policy.function_name(v) if peer.policy.strict else peer.by_name.get(id(v))
            if named is not None and (peer.policy.strict or named[2] is v):
                # A project's function by its name: the program's own (`Policy.function_name`);
                # the program names back only those the tests named (`Peer.by_name`).
                if peer.policy.strict:
                    peer.names_sent.add(named)
                return ["pf", named[0], named[1]]
            named = None if peer.policy.strict else peer.policy.function_name(v)
            if named is not None and peer.policy.names_back(named[0]):
                return ["pf", named[0], named[1]]
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
            return ["h", peer.kept(v), "gen" if t is types.GeneratorType else "it"]
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
        if kind in ("project", "ntuple") and ("<" in t.__qualname__ or not _named_by(t, t.__module__) or id(t) in _late(peer)):
            # An object of a class made by running code, not named by its module (boltons'
            # `make_sentinel`, attrs' `_AndValidatorAttributes` tuple class, cerberus'
            # `SchemaValidator`, which a factory makes on first use) or named only by the
            # program's call (`ModuleState.late`): the other side may have no such class to make
            # it from, so it stays here, the program's kept, the tests' lent.
            if peer.policy.strict:
                return self.lend(v, "lent", t, depth)
            return ["h", peer.handle(v), "objc" if callable(v) else "obj"]
        if kind == "ntuple":
            return ["nt", t.__module__, t.__qualname__, [self.ref(x, depth) for x in tuple.__iter__(v)], self.ref(_state(v), depth)]
        if kind == "exc":
            return self.exception(v, depth)
        if kind == "project":
            base = _builtin_base(t)
            content = None
            if base is not None:
                content = self.ref(_base_value(v, base), depth)
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
        # a tests' object the program would change in place is not copied there; the tests'
        # objects cross as their attributes (or the state their own `__setstate__` takes, an
        # element tree's element: written back), lent, or not at all.
        # (A value the tests hand over too, whose class adds nothing to an immutable base:
        # freezegun's `FakeDatetime` of a frozen clock.)
        value = not peer.policy.strict or (issubclass(t, _VALUE_BASES) and not _own_dict(v) and not _slots_of(t))
        reduced = self.reduced(v, t, depth) if value and peer.policy.reducible(t) else None
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
            kind = "lentk" if self.peer.policy.tests_module(obj.__module__) else "libk"
        elif kind == "lent" and callable(obj):
            # Only what can be called says it can (`callable(m)`: toolz asks it of all it is handed).
            kind = "lentc"
        node = ["h", hid, kind, None if base is None else self.ref(base, depth)]
        if kind not in ("lentk", "libk") and t is not base and (base is not None and base.__module__ == "builtins" or self.peer.policy.tests_module(t.__module__)):
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
        for name in _members(type(e)):
            # What a builtin exception keeps in its own fields (`ImportError(name=...)`, errno).
            field = getattr(e, name, None)
            if name not in state and field is not None:
                state[name] = field
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
            return ["std", "path", name, str(v) if self.outward is None else self.outward(str(v))]
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
            # Its source and flags; one with no source (`_remade_pattern`) is lent or kept.
            return ["std", "Pattern", self.ref(v.pattern, depth), v.flags] if _remade_pattern(v) else None
        if module == "re" and name == "Match":
            # A match crosses as the way to make it again there (its pattern, its string, where
            # it starts and ends); one that cannot be made again is lent or refused (`_NOT_LENT`).
            again = _remade_match(v)
            if again is None:
                return None
            return ["std", "Match", self.ref(v.re, depth), self.ref(v.string, depth), *again]
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


def _late(peer):
    """The ids of the classes the program's call bound under new names (`ModuleState.late`)."""
    return getattr(getattr(peer, "state", None), "late", ())


# Names of the other modules, bound once every module is made (they call each other).
from .common import DEFER_DEPTH, MAX_DEPTH, MAX_NODES, MAX_SENT_VALUES, Refused, SCALARS_PER_COPY, _MISSING  # noqa: E402
from .refusals import _refuse  # noqa: E402
from .handles import _MAKERS  # noqa: E402
from .lifetimes import recalled  # noqa: E402
from .modules import _is_stdlib_module  # noqa: E402
from .values import _VALUE_BASES, _own_dict, _slots_of  # noqa: E402
from .values import _BUILTIN_DESCRIPTORS, _DELTA_DICTS, _DELTA_LISTS, _DICT_VIEWS, _PATTERN_METHODS, _PLAIN_DICTS, _SAFE_INT, _SCALARS, _SCALAR_SET, _SEP, _base_value, _builtin_base, _builtin_class, _by_class_name, _children, _dict_delta, _equals_anything, _flag_type, _is_mock, _keep_sent, _known_base, _list_delta, _mutable, _named_by, _own_identity, _own_reduction, _remade_match, _remade_pattern, _same, _state, _viewed_dict  # noqa: E402


_MEMBERS = {}


def _members(cls):
    """The fields the builtin classes under exception class `cls` keep outside its `__dict__`
    and arguments (`name` and `path` of an `ImportError`, `errno` of an `OSError`)."""
    got = _MEMBERS.get(cls)
    if got is None:
        kinds = (types.MemberDescriptorType, types.GetSetDescriptorType)
        got = _MEMBERS[cls] = tuple(
            n for k in cls.__mro__ if k.__module__ == "builtins" for n, d in vars(k).items() if type(d) in kinds and n[:2] != "__" and n != "args"
        )
    return got
