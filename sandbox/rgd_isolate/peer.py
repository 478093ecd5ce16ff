"""The peer: one end of the socket (`Peer`), its requests and answers, the handles it keeps and serves."""

import collections
import contextlib
import itertools
import json
import os
import socket
import struct
import sys
import threading
from time import perf_counter as _perf_counter  # (bound once: a test may replace `time.perf_counter`)
import types


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
        self.handle_ids, self.hids = {}, 0  # id(object) -> hid; the last hid given
        # The tests' side: what it lends the program (hid -> "lent" or "opaque", `serve_lent`),
        # the methods the program took from those (their calls carry what changed), and those
        # bound methods kept by hid, then name, so that reading one again is the same handle.
        self.lent = {}
        self.lent_methods = set()
        self.lent_bound = {}
        self.sent_now = []  # shared objects this side's messages named in this outermost call
        # The mutable ones of `received` and `sent_now`, once each, and how far each was read (`named`).
        self.named_now, self.named_upto = {}, (0, 0)
        # The tests' side: the strings, tuples and frozensets its messages sent in the run (the
        # first MAX_SENT_VALUES), by value; one sent back equal, of the same types all the way
        # down (`_exact`), is that object (boltons' `remap` tests `value is target_str`).
        self.sent_values = {}
        # Tuples and frozensets by identity across messages (`Encoder.pinned`): the tests' side
        # numbers each it sends (id -> (number, object)); the program's side keeps what it made
        # of each number (number -> object).
        self.pins = {}
        # Project functions that crossed by name (`Policy.function_name`), both ways; the tests'
        # side's code of each module at collection and the patches in force (`Encoder.fresh`).
        self.names_sent, self.by_name = set(), {}
        self.pristine, self.patched_now = {}, frozenset()
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
        # How many of those lists hold each object: the channel's references, not program code's
        # (`lifetimes.report`; dateutil's zones hold bound methods of a `_TZStr` the target made).
        self.kept_with_refs = collections.Counter()
        self.dead = None
        self.depth = 0
        # The target's default values (`_defaults`), and those no data by identity (by place).
        self.target_defaults, self.defaults = [], {}
        # How long shared objects live (`lifetimes`). The tests' side: those the channel holds
        # that can be weakly referenced (id -> object); those it holds weakly (gid -> (weak
        # reference, id)), its own and what it lent; which died since the last call. The
        # program's side: the tests' handles this call named, what a collection found held.
        self.kept_alive, self.loose, self.loose_handles, self.died = {}, {}, {}, [[], []]
        self.proxied_now, self.collected = set(), set()
        # The target of the outermost call (`_call`), which a refusal names.
        self.qualname = "the target"
        self.fds_in, self.fds_kept = _fds.fresh()  # descriptors that crossed (`fds`)

    # identities
    def note_received(self, gid, value):
        self.came_from[id(value)] = (gid, value)
        self.copies[gid] = value
        self.received.append(value)
        self.keeps_alive(value)

    def keeps_alive(self, value):
        if self.policy.strict and type(value).__weakrefoffset__ and not isinstance(value, type):
            self.kept_alive[id(value)] = value

    def sent_object(self, gid):
        obj = recalled(self, "sent", gid)
        if obj is None:
            raise Refused("a reference to an object this side never sent, or let go of")
        return obj

    def copy_of(self, gid):
        try:
            return self.copies[gid]
        except (KeyError, TypeError):
            raise Refused("a reference to an object the other side never sent, or let go of")

    def handle(self, obj):
        hid = self.handle_ids.get(id(obj))
        if hid is None or recalled(self, "handle", hid, obj) is None:
            if len(self.handles) >= 100_000:
                raise Refused("more than 100000 callables kept for the other side")
            self.hids += 1
            hid = self.hids
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
            named = self.kept_with[hid] = self.named()
            self.kept_with_refs.update(map(id, named))
        return hid

    def tests_exception_hid(self, obj):
        """The program's side: the tests' hid of `obj` where it is a tests' exception or the
        stand-in of their exception class (`Decoder.tests_exception_class`), else None."""
        own = self.tests_exceptions.get(id(obj))
        return own[1] if own is not None and own[0] is obj else None

    def local_handle(self, hid):
        obj = recalled(self, "handle", hid)
        if obj is None:
            raise Refused("a reference to a callable this side never sent, or let go of")
        return obj

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
            elif issubclass(made, LentClass):
                p = object.__new__(made)
                _Remote.__init__(p, self, hid)
            else:
                p = made(self, hid)
            if isinstance(p, LentObject):
                if cls is not None and not isinstance(cls, type):
                    raise Refused("a lent object said to be of something that is no class")
                object.__setattr__(p, "_cls", cls)
            self.proxies[key] = p
        if not self.policy.strict:
            self.proxied_now.add(key)
        return p

    def named(self):
        """The shared mutable objects this outermost call's messages named, both ways: sent with
        a call of a lent object's method (and its answer), so that the method, run in the tests'
        process, sees what the program changed in them so far, and the program what it changed."""
        r, s = self.named_upto
        found = self.named_now
        for obj in itertools.chain(self.received[r:], self.sent_now[s:]):
            if id(obj) not in found and _mutable(obj):
                found[id(obj)] = obj
        self.named_upto = (len(self.received), len(self.sent_now))
        return list(found.values())

    def listed(self):
        """Every reference the lists of what this outermost call named hold (`report` counts)."""
        return itertools.chain(self.received, self.sent_now, self.named_now.values())

    def reset(self):
        """After an outermost call: what is written back next time is what the next call brings.
        Identities last as long as either side holds the object (`lifetimes`)."""
        self.received, self.sent_now, self.proxied_now = [], [], set()
        self.named_now, self.named_upto = {}, (0, 0)

    # messages
    def encode(self, values, answer=False, lend=()):
        """A message body holding `values` (a dict of name -> value) as one table. The message's
        own containers (keyword arguments, what is written back, module state, patches) cross
        as tuples: no code of either side holds them, so they are not shared objects to track,
        keep alive and write back at every later call. `answer`: the tests' answer to the
        program's own call (`Encoder.answer`)."""
        values = {name: _envelope(name, v) for name, v in values.items()}
        enc = Encoder(self, answer, values, lend)
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

    def send(self, message, fd=None):
        data = json.dumps(message, separators=(",", ":")).encode()
        if len(data) > MAX_MESSAGE:
            raise Refused("a value of more than %d MB" % (MAX_MESSAGE >> 20))
        try:
            _fds.send(self.sock, struct.pack(">Q", len(data)) + data, fd)
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
        _fds.received(self, message)
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
                b = _fds.recv(self.sock, min(max(n - len(inbox), 1 << 16), 1 << 20), 0, self.fds_in)
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
        end = _perf_counter() + POLL_SECONDS
        while len(inbox) < n:
            try:
                b = _fds.recv(self.sock, min(max(n - len(inbox), 1 << 16), 1 << 20), socket.MSG_DONTWAIT, self.fds_in)
            except BlockingIOError:
                if _perf_counter() > end:
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
            if self.depth == 0 and not (message.get("op") == "call" or message.get("along") is True) and weakly_held(self):
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

    def answer(self, fn, along=False, printed=False, called=None):
        """Runs `fn()` and sends its value or exception back; `along`: with the shared objects
        the call named, where they changed (a lent object's method); `printed`: with what it
        printed, which the tests' side writes where its output goes now (click's help printed
        by a callback the target returned). An answer that is no data fails the call; that of
        a `fileno` (`called`) crosses with the descriptor (`fds`)."""
        capture, fd = _Printed() if printed else None, None
        try:
            with capture or contextlib.nullcontext():
                value = fn()
            fd = _fds.to_send(self, called, value)
            values = {"v": value, "wb": self.named()} if along else {"v": value}
            if printed:
                # (Outermost: a generator the target returned, pulled by a `with` block.)
                self.carried(values)
            body = self.encode(capture.streams(values) if capture else values, answer=True)
            body["op"] = "ok"
            if printed:
                # (What the pull or call named that no program code holds: `lifetimes`.)
                value = values = None
                body.update(report(self, named_ids(self), None))
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
        if fd is not None and body.get("op") == "ok":
            body["fd"] = True
        self.send(body, fd if body.get("fd") else None)

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
        if printed or (not self.policy.strict and self.depth == 0 and op in ("get", "set", "del", "op")):
            # An exchange of its own, also an attribute asked between calls (a generator's
            # `throw`): a bound method made then notes what its object's exchange named (`kept`).
            self.reset()
            bury(self, m.get("dead"))
            hid = m.get("h")
            # (Not a copy of a tests' object that died there since: `bury` let go of it.)
            kept = [obj for obj in self.kept_with.get(hid, ()) if _place(self, obj) is not None] if type(hid) is int else ()
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
            # shared objects when the program asks, as it would see them in one process.)
            self.answer(run, along or (self.policy.strict and m.get("along") is True), printed, _fds.called(self, m))
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
            self.touch(m, _read)
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
            # (`__init__` and `__slots__`: attributes the program's code reads, not protocols.)
            if special and name not in ("__init__", "__slots__"):
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
                methods = self.lent_bound.setdefault(hid, {})
                kept = methods.get(name)
                if kept is not None and getattr(kept, "__func__", None) is getattr(value, "__func__", None):
                    value = kept
                else:
                    methods[name] = value
                self.lent_methods.add(self.handle(value))
            return value

        # A library object with no `__dict__` takes only the attributes its class defines: the
        # program's function set on one (an expat parser's handler) is its class's code's to
        # call, as in one process; any other lent object never takes one (`_no_program_code`).
        library = _own_dict(obj) is None and not self.policy.tests_module(type(obj).__module__) and not _is_mock(obj)
        self.touch(m, read, None if library else _no_program_code(name))

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
            return values["v"] if "fd" not in reply or type(values["v"]) is not int else _fds.taken(self, values["v"], reply["fd"])
        e = values["e"]
        raise e if isinstance(e, BaseException) else RuntimeError("the other side raised %r" % (e,))


# Names of the other modules, bound once every module is made (they call each other).
from .common import Gone, MAX_DEPTH, MAX_MESSAGE, POLL_BACKOFF, POLL_SECONDS, Refused  # noqa: E402
from . import fds as _fds  # noqa: E402
from .decode import Decoder  # noqa: E402
from .encode import Encoder  # noqa: E402
from .lifetimes import _place, bury, named_ids, recalled, report, weakly_held  # noqa: E402
from .served import _LENT_MAKERS, _LENT_OPERATORS, _read, _signature_of  # noqa: E402
from .handles import LentCallable, LentClass, LentObject, RemoteObject, RemoteValue, _CallableSaidOf, _FUNCTION_INSIDES, _HANDLE_TYPES, _LENT_PROTOCOL, _NOT_A_SIGNATURE, _OPEN_NAMES, _PROXIES_OF_THE_PROGRAM, _PROXIES_OF_THE_TESTS, _Remote, _SaidOf, _lent_type, _no_program_code  # noqa: E402
from .output import _Printed, _carried, _carry_over, _streams_back, _write_printed  # noqa: E402
from .refusals import _refuse  # noqa: E402
from .values import _MOCK_MUTATORS, _MOCK_RECORDS, _SHARED_KINDS, _SHARED_STD, _children, _envelope, _is_mock, _keywords, _mutable, _own_dict, _stored_on_type  # noqa: E402
