"""How long a shared object lives: as long as either process holds it, as in one process.

The channel holds every shared object it sent or copied, so that the other side can name it by its
identity in a later message (a parser handed over at every call crosses as its identity). Held
there for the whole run, an object the tests let go of would never die, and a test that tells (a
weak reference, a `WeakValueDictionary` cache: dateutil's time zones) would see another program
than one process runs.

So after each outermost call, with no code of either side running, the program's process says
which of the shared objects the call named (and of those the tests asked about) no program code
holds (`report`): its copies of the tests' objects (and what they lent), and its own objects whose
copies the tests hold. The tests' process then holds its own object of each of the first weakly
(`weaken`), where its type allows: it lives as long as the tests hold it. When it dies, the next
call says so (`dead`), and the program's process lets go of its copy too (`bury`). Named again by
either side before that, an object is held strongly again until the next report says otherwise:
what the program gets hold of in a call is kept alive for it, as one process would. The tests'
copies of the program's objects stay held (letting them go changed cachetools' `cached` wrappers,
copies of the program's objects that hold its caches): one the tests hold weakly once the program
let go of it makes the run in-process (`weak_reference`).

What the report cannot see stays held for the run, as before: a cycle that holds a copy until a
collection (collected first for an object the tests hold weak references to), what a handle the
program gave out holds (a generator, a bound method), an object of a type with no weak references
(a list; the weakly referenced objects inside it then live on too). The program's copy of an object
whose class has a `__del__` is never dropped: its `__del__` runs once, on the tests' side.

The report is the program's process's word, as every answer is. A program that says it let go of
what it holds loses nothing the tests still hold, and a later reference to what the tests let go
of is refused; one that says it holds what it let go of keeps the tests' object alive, as a
program that holds it would.
"""

import collections
import functools
import gc
import itertools
import sys
import weakref


def _count(obj):
    return sys.getrefcount(obj)


class _Probe:
    pass


def _calibrated():
    """What `_count` says of an object held once (by a dict), less that one: the interpreter's
    transient references differ between versions, so they are measured."""
    holder = {0: _Probe()}
    return _count(holder[0]) - 1


_TRANSIENT = _calibrated()


def _weakenable(obj):
    t = type(obj)
    return bool(t.__weakrefoffset__) and not isinstance(obj, type)


# The program's side


def bury(peer, dead):
    """The program's side, before a call is read: lets go of its copies of the tests' objects that
    died in the tests' process (`dead`: their ids). A copy whose class has a `__del__` stays (in
    one process it runs once: the tests' did)."""
    for gid in _ids(dead)[0]:
        obj = peer.copies.get(gid)
        if obj is not None and getattr(type(obj), "__del__", None) is None:
            del peer.copies[gid]
            peer.came_from.pop(id(obj), None)
            peer.snaps.pop(id(obj), None)


def _place(peer, obj):
    """Where a shared object stands in the messages about lifetimes, on either side: (0, its id)
    for one of the tests' objects or the program's copy of it, (1, its id) for one of the
    program's or the tests' copy of it, None for none held."""
    key = id(obj)
    back = peer.came_from.get(key)
    if back is not None and back[1] is obj:
        return int(peer.policy.strict), back[0]
    gid = peer.sent_ids.get(key)
    if gid is not None and peer.sent.get(gid) is obj:
        return int(not peer.policy.strict), gid
    return None


def shared(peer, obj):
    """Whether the other side holds `obj` or the object it is a copy of (then it crosses as what
    changed in it)."""
    return _place(peer, obj) is not None or recalled(peer, "sent", peer.sent_ids.get(id(obj)), obj) is not None


def named_ids(peer):
    """The program's side: the ids of the shared objects this outermost call's messages named,
    (the tests' objects' copies, this side's own, the tests' lent objects' handles), taken before
    the call lets go of them."""
    out = set(), set(), {key[0] for key in peer.proxied_now}
    for place in map(functools.partial(_place, peer), peer.named()):
        if place is not None:
            out[place[0]].add(place[1])
    return out


def report(peer, named, asked):
    """The program's side, after an outermost call's answer is encoded and the call's own
    references are gone: of the objects the call named and those the tests asked about (`asked`,
    as `weakly_referenced` sent), those no program code holds: only the channel does. For one the
    tests hold weak references to, a cycle is collected first, once (what still holds it then is
    program code, and a collection at every call would cost more than the call)."""
    asked = _ids(asked)
    loose = [[], []]
    collected = False
    # The lists of what this exchange named hold it too, till the next one starts, and so do
    # the notes of it kept for each handle made in a call (`Peer.kept`): the channel's references.
    listed = collections.Counter(map(id, peer.listed()))
    for side, where, alone in ((0, peer.copies, 2), (1, peer.sent, 1)):
        for gid in sorted(named[side] | asked[side]):
            if gid not in where:
                continue
            # `copies` and the pair in `came_from` hold a copy; `sent` holds an object of ours.
            # (Read from `where` each time: a local name would be one more reference to count.)
            key = id(where[gid])
            alone_here = alone + listed.get(key, 0) + peer.kept_with_refs.get(key, 0)
            if _count(where[gid]) - _TRANSIENT > alone_here and gid in asked[side] and (side, gid) not in peer.collected:
                if not collected:
                    gc.collect()
                    collected = True
                peer.collected.add((side, gid))
            if _count(where[gid]) - _TRANSIENT == alone_here:
                loose[side].append(gid)
    # A lent object's handle: held by `proxies` alone (one per kind it was lent as), it is let go
    # of here; lent again, it is made anew.
    loose.append([])
    for hid in sorted(named[2] | asked[2]):
        keys = [key for key in ((hid, kind) for kind in _LENT_KINDS) if key in peer.proxies]
        if keys and all(_count(peer.proxies[key]) - _TRANSIENT == 1 for key in keys):
            for key in keys:
                del peer.proxies[key]
            loose[2].append(hid)
    return {"loose": loose} if any(loose) else {}


_LENT_KINDS = ("lent", "lentc", "lentk", "libk", "opaque")


def _ids(parts):
    """(the tests' objects' ids, the program's, the lent handles') of a message, each a set."""
    out = [set(), set(), set()]
    if isinstance(parts, (list, tuple)):
        for i, part in enumerate(parts[:3]):
            if isinstance(part, (list, tuple)):
                out[i] = {g for g in part if type(g) is int}
    return out


# The tests' side


def weaken(peer, reply):
    """The tests' side, once an answer is read: holds weakly what the program's process said no
    code of its holds, where the type allows (it dies with the tests' last reference; `_died`
    notes it for the next call): the tests' own objects and what they lent."""
    theirs, ours, lent = _ids(reply.get("loose"))
    for gid in theirs:
        obj = peer.sent.get(gid)
        if obj is not None and _weakenable(obj):
            key = id(obj)
            del peer.sent[gid]
            peer.loose[gid] = (weakref.ref(obj, _died(peer.died[0], gid)), key)
            peer.kept_alive.pop(key, None)
    for gid in ours:
        # A copy of the program's own object stays held (letting it go broke cachetools'
        # `cached` wrappers, copied objects of the program's that hold its caches); one the
        # tests hold weakly may then outlive the program's: that run is judged in-process.
        obj = peer.copies.get(gid)
        if obj is not None and weakref.getweakrefcount(obj):
            _refuse(peer.qualname, "weak_reference")
    for hid in lent:
        # (A lent object's bound methods kept for the program hold it: it stays.)
        obj = peer.handles.get(hid)
        if peer.lent.get(hid) == "lent" and hid not in peer.lent_bound and obj is not None and _weakenable(obj):
            key = id(obj)
            del peer.handles[hid]
            peer.loose_handles[hid] = (weakref.ref(obj, _died(peer.died[1], hid)), key)
            peer.kept_alive.pop(key, None)


def _died(dead, gid):
    # Runs wherever the collector runs: it only notes.
    return lambda _ref: dead.append(gid)


def recalled(peer, kind, gid, value=None):
    """What this side holds as `gid` in `kind`'s table ("sent": its own objects it sent, "handle":
    what it keeps for the other side), or None. Held weakly and alive (and `value`, where given),
    it is held strongly again until the next report: named again, it is the program's again."""
    if type(gid) is not int:
        return None
    strong, weak = _TABLES[kind]
    obj = getattr(peer, strong).get(gid)
    if obj is not None:
        return obj if value is None or obj is value else None
    entry = getattr(peer, weak).get(gid)
    obj = entry[0]() if entry is not None else None
    if obj is None or (value is not None and obj is not value):
        return None
    del getattr(peer, weak)[gid]
    getattr(peer, strong)[gid] = obj
    peer.keeps_alive(obj)
    return obj


# (The tests' copies of the program's objects are never held weakly: `weaken`.)
_TABLES = {"sent": ("sent", "loose"), "handle": ("handles", "loose_handles")}


def dead(peer):
    """The tests' side, as an outermost call is sent: the ids of their objects that died since the
    last call, each forgotten here, as [ids], or None."""
    objects, lent = peer.died
    for hid in lent:
        # (The program's process let go of its handle when it said so.)
        entry = peer.loose_handles.pop(hid, None)
        if entry is not None and peer.handle_ids.get(entry[1]) == hid:
            del peer.handle_ids[entry[1]]
            peer.lent.pop(hid, None)
    del lent[:]
    if not objects:
        return None
    out = objects[:]
    del objects[:]
    for gid in out:
        entry = peer.loose.pop(gid, None)
        if entry is not None and peer.sent_ids.get(entry[1]) == gid:
            del peer.sent_ids[entry[1]]
            peer.snaps.pop(entry[1], None)
    return [out]


def ask(peer, body):
    """The tests' side, as an outermost call or pull is sent: what died here since the last one,
    and what the channel holds that the tests hold weakly, for the program's process to let go of
    the one and to say again of the other whether its code holds it."""
    for name, ids in (("dead", dead(peer)), ("weak", weakly_referenced(peer))):
        if ids:
            body[name] = ids


def weakly_referenced(peer):
    """The tests' side, as a call is sent: the shared objects the channel holds strongly that the
    tests hold weak references to, by id ((the tests' own, the copies of the program's, what they
    lent)), for the program's process to say again whether its code holds them, or None."""
    out = [[], [], []]
    # (Filtered in C: the channel may hold thousands of objects, and this runs at every call.)
    for obj in filter(weakref.getweakrefcount, peer.kept_alive.values()):
        key = id(obj)
        hid = peer.handle_ids.get(key)
        place = (2, hid) if hid is not None and peer.handles.get(hid) is obj else _place(peer, obj)
        if place is not None:
            out[place[0]].append(place[1])
    return out if any(out) else None


def weakly_held(peer):
    """The tests' side, before a request that is no call (a function the target returned, called
    by a test): no report ends it, so an object held here that the tests hold weakly (a
    `WeakValueDictionary` cache: cachetools') may outlive the program's hold on it, which a test
    could tell. Whether there is one (then the run is judged in-process: `weak_reference`)."""
    return any(map(weakref.getweakrefcount, peer.kept_alive.values()))


from .refusals import _refuse  # noqa: E402
