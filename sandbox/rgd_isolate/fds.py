"""File descriptors that cross as themselves. A number is only a number in the process that
opened it: the tests' file handed to a `subprocess.Popen` the program's process starts (click's
pager tests), or the program's stream a test hands to `faulthandler`, is another file, or the
channel's own socket, on the other side. So a `fileno()` answer crosses with the descriptor
itself (`SCM_RIGHTS` on the Unix socket), and the asker gets a duplicate that is open on the same
file, as a number of its own process, as in one process.

Never the socket itself, nor a descriptor rgd's plugin keeps (`guarded`: its verdict channel);
each file crosses once per number it has on the sending side (a `fileno()` asked at each write
does not open a descriptor each time)."""

import array
import collections
import os
import socket

# Descriptors of the tests' process that never cross (rgd's plugin adds its verdict channel).
guarded = set()

# Room for the descriptors one read may carry (one per answer; a few answers per read at most).
_SPACE = socket.CMSG_SPACE(8 * array.array("i").itemsize)

# Descriptors received and not yet matched to their answer: past this many, the sender is out
# of step (only a program's process that sends them unasked), and the oldest are closed.
_MAX_WAITING = 16


def recv(sock, size, flags, waiting):
    """`sock.recv`, keeping in `waiting` the descriptors that came with the bytes."""
    data, ancillary, _, _ = sock.recvmsg(size, _SPACE, flags)
    for level, kind, raw in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            waiting.extend(array.array("i", raw[: len(raw) - len(raw) % array.array("i").itemsize]))
    while len(waiting) > _MAX_WAITING:
        os.close(waiting.popleft())
    return data


def send(sock, data, fd=None):
    """`sock.sendall(data)`, with the descriptor `fd` on its first byte."""
    if fd is None:
        sock.sendall(data)
        return
    sent = sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    if sent < len(data):
        sock.sendall(data[sent:])


def received(peer, message):
    """A message just read: one that says it carries a descriptor takes the next one waiting
    (they come in the order their messages do); a number the sender wrote there is dropped, so
    `message["fd"]` is always a descriptor of this process."""
    if message.pop("fd", None) is True and peer.fds_in:
        message["fd"] = peer.fds_in.popleft()


def to_send(peer, fn, value):
    """The descriptor to send with `value`, the answer of `fn`, or None: only a `fileno`'s
    answer that is an open descriptor, neither the channel's socket nor a guarded one."""
    if getattr(fn, "__name__", None) != "fileno" or type(value) is not int or value < 0:
        return None
    if value == peer.sock.fileno() or value in guarded:
        return None
    try:
        os.fstat(value)
    except OSError:
        return None
    return value


def called(peer, message):
    """What a callback request `message` calls, if this side keeps it (its name says whether
    its answer is a descriptor)."""
    hid = message.get("h")
    return peer.handles.get(hid) if type(hid) is int else None


def taken(peer, number, fd):
    """The descriptor received for the other side's `number`: the one received before for the
    same number and file, if any (this one closed), else this one, kept for the run."""
    try:
        st = os.fstat(fd)
    except OSError:
        return number
    key = (number, st.st_dev, st.st_ino)
    kept = peer.fds_kept.get(key)
    if kept is not None:
        os.close(fd)
        return kept
    peer.fds_kept[key] = fd
    return fd


def fresh():
    """A peer's state: the descriptors waiting, and those kept by the other side's number."""
    return collections.deque(), {}
