"""The channel's bounds and limits, its two errors (a value refused, a peer gone), and the marker of a missing value."""




MAX_MESSAGE = 64 << 20


MAX_NODES = 1_000_000


# Strings, numbers, tuples and frozensets whose identity the tests' side keeps for the run (`Peer.sent_values`).
MAX_SENT_VALUES = 100_000


MAX_DEPTH = 400


# Below this depth a mutable object's contents are made from the top level, both ways (`Encoder.
# finish`, `Decoder.later`): only immutable nesting (tuples in tuples) counts against MAX_DEPTH.
DEFER_DEPTH = 100


MAX_INT_DIGITS = 4300


# More values than this copied in one call's arguments, or in all the calls of a run, and the
# target is judged in-process instead (what did not change since the last call is not copied
# again; this bounds a suite that hands over new large values at every call). Counted on the
# tests' side, of what it sends: the program cannot choose the fallback.
COPY_LIMIT = 100_000


RUN_COPY_LIMIT = 2_000_000


# Scalars of a shared object that are only compared (by identity, in C) count as one copied
# value per this many: about the ratio of the two costs, measured on cachetools' tables.
SCALARS_PER_COPY = 32


# A read first polls the socket for this long before it sleeps in the kernel. The two processes
# take turns, so the waiting one would sleep at every call; on a virtual machine waking a sleeping
# CPU costs 40 to 600 µs, more than a call's own work (3,000 calls of `f(i)` took 0.9 s sleeping,
# 0.5 s polling). Polling yields the CPU to anything else that is ready to run.
POLL_SECONDS = 0.001


# After polls in a row that missed, up to this many reads sleep at once before one polls again.
POLL_BACKOFF = 64


OUTPUT_CAP = 64 << 10


TRACE_CAP = 4000


class Refused(Exception):
    """A value that is not data (its type named), or a message that breaks a bound."""


class Gone(Exception):
    """The other process ended, or did not answer in time."""


_MISSING = object()
