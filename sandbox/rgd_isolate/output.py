"""What crosses besides the arguments: printed output and replaced streams, logs, warnings, the directory and the environment, carried over to the tests' process."""

import io
import os
import sys


_log_keeper = []


def _capture_logs():
    """A handler on the root logger that keeps the program's log records as plain data (one
    handler, made once: this runs at every call)."""
    import logging

    if not _log_keeper:

        class Keep(logging.Handler):
            records = []

            def emit(self, record):
                try:
                    self.records.append(
                        {
                            "name": record.name,
                            "levelno": record.levelno,
                            "levelname": record.levelname,
                            "msg": record.getMessage(),
                            "pathname": record.pathname,
                            "lineno": record.lineno,
                            "funcName": record.funcName,
                        }
                    )
                except Exception:
                    pass

        _log_keeper.append(Keep(level=0))
    handler = _log_keeper[0]
    handler.records = []
    logging.getLogger().addHandler(handler)
    return handler.records, handler


class _Bytes(io.RawIOBase):
    """A captured stream's `buffer`: what the program writes as bytes (click's `echo` of bytes
    goes to `sys.stdout.buffer`) joins its text, decoded as UTF-8 (undecodable bytes replaced)."""

    def __init__(self, text):
        io.RawIOBase.__init__(self)
        self.text = text
        self.decoder = __import__("codecs").getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self.text.write(self.decoder.decode(data))
        return len(data)


class _Capture(io.StringIO):
    """What the program prints during a call, text and bytes alike."""

    def __init__(self):
        io.StringIO.__init__(self)
        self.buffer = _Bytes(self)


class _Printed:
    """The program's side, answering: what it prints is captured (and sent with the answer, for
    the tests' side to write where its output goes now). A stream of `sys` the program replaces
    and leaves replaced (click's `CliRunner.isolation`, a generator the tests resume) is carried
    over, as in one process, where the tests' own stream would be the one replaced: it stays the
    program's stream at its later calls, and the answer names it (`streams`) for the tests' side
    to put in place of its own (`_carry_streams`) until the program puts the old one back or the
    tests replace theirs again (`Peer.request`, "streams_back")."""

    # The captures under way, innermost last (a callback of the tests' calls the program again).
    active = []
    # The program's replacements in force: stream name -> the object it put there.
    carried = {}

    def __init__(self):
        self.out, self.err = _Capture(), _Capture()
        # What the call changed of the carried streams: name -> the new object, or None (the
        # tests' own again).
        self.changed = {}
        # What went to the tests' side so far, per stream: a call's output crosses up to
        # OUTPUT_CAP in all, however many messages carry it.
        self.sent = {"out": 0, "err_text": 0}

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr, sys.stdin
        carried = _Printed.carried
        sys.stdout, sys.stderr = carried.get("stdout", self.out), carried.get("stderr", self.err)
        if "stdin" in carried:
            sys.stdin = carried["stdin"]
        _Printed.active.append(self)
        return self

    @staticmethod
    def drop(names):
        """The tests put a stream of their own in place of one the program had carried over: the
        program's stream is no more (its prints go to the tests' new one, as in one process)."""
        for name in names if isinstance(names, list) else ():
            if isinstance(name, str):
                _Printed.carried.pop(name, None)

    @staticmethod
    def so_far(message):
        """Puts what the program printed since its last message into `message`, a request to
        the tests' side: click's `prompt` echoes its text, then calls the input function the
        test runner put in place, which writes too; sent only with the answer, the program's
        part came after the tests' in the test's output."""
        if _Printed.active:
            _Printed.active[-1].take(message)

    def take(self, message):
        """Moves what was printed since the last message into `message` (within the call's
        OUTPUT_CAP per stream)."""
        for key, stream in (("out", self.out), ("err_text", self.err)):
            text = stream.getvalue()
            if not text:
                continue
            room = OUTPUT_CAP - self.sent[key]
            if room > 0:
                message[key] = text[:room]
                self.sent[key] += len(message[key])
            stream.seek(0)
            stream.truncate()

    def __exit__(self, *exc):
        if _Printed.active and _Printed.active[-1] is self:
            _Printed.active.pop()
        for name, now in (("stdout", sys.stdout), ("stderr", sys.stderr), ("stdin", sys.stdin)):
            # The tests' own stream: a capture (this call's, or one an earlier call's code kept
            # and put back), or the stdin the call came with.
            own = isinstance(now, _Capture) if name != "stdin" else now is self.saved[2]
            was = _Printed.carried.get(name)
            if own and was is not None:
                del _Printed.carried[name]
                self.changed[name] = None
            elif not own and now is not was:
                _Printed.carried[name] = now
                self.changed[name] = now
        restored = list(self.saved)
        if _Printed.active:
            # Nested in a call that goes on: a stream this call replaced is the program's from now
            # on, as in one process (an outermost call puts this process's own back; the next
            # call takes up the carried ones again).
            for i, name in enumerate(("stdout", "stderr", "stdin")):
                restored[i] = _Printed.carried.get(name, restored[i])
        sys.stdout, sys.stderr, sys.stdin = restored
        return False

    def patched(self, patches):
        """The tests' patches of their own `sys.stdout` or `sys.stderr` (termcolor's tests set
        `isatty` to say yes) made on the streams this call prints to: a function crosses as a
        handle, called back in the tests' process; data as data."""
        for entry in patches if isinstance(patches, tuple) else ():
            if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] in ("stdout", "stderr") and isinstance(entry[1], str)):
                raise Refused("a malformed patch of a stream")
            name, attr, value = entry
            if attr[:2] == "__" or attr in ("write", "buffer", "getvalue"):
                # (What the channel itself reads of a capture stays its own.)
                continue
            setattr(self.out if name == "stdout" else self.err, attr, value)

    def streams(self, values):
        """`values` (an answer's, before it is encoded) with the streams the call replaced or
        put back. A stream of the process's own (`sys.__stdin__`: click's debugger streams) is
        sent as its name, for the tests' process's own."""
        if self.changed:
            own = {id(getattr(sys, "__%s__" % n, None)): "__%s__" % n for n in ("stdin", "stdout", "stderr")}
            values["streams"] = [(name, own.get(id(now), now) if now is not None else None) for name, now in self.changed.items()]
        return values

    def put(self, body):
        self.take(body)


def _replay_output(reply):
    """What the program printed while answering, written where the tests' output goes now."""
    _write_printed(reply)


# The tests' side: the streams of `sys` the program replaced and left so, as in one process:
# name -> (what is there now, the program's stream as it crossed; what the tests had there).
_carried = {}


def _carry_over(peer, values):
    """The tests' side, reading the program's answer (a call's, or a pull's or callback's
    outermost one): what the program did in its own process that the tests' would have seen in
    one (`Server.carried`), done here: its streams, directory, environment and module data."""
    _carry_streams(values)
    _carry_directory(peer, values.get("moved"))
    _carry_environment(peer, values.get("env"))
    if values.get("state"):
        peer.state.apply(values["state"], data_only=True)


def _carry_streams(values):
    """The tests' side, reading an answer: each stream of `sys` the program replaced is replaced
    here by what it put there (its own object crosses as a handle, a stream the tests had lent it
    as their own); one it put back is the tests' own again. Only what the program could do in
    one process: the verdict never goes through `sys`'s streams."""
    streams = values.get("streams")
    for entry in streams if isinstance(streams, tuple) else ():
        if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] in ("stdout", "stderr", "stdin")):
            continue
        name, now = entry
        if type(now) is str and now in ("__stdin__", "__stdout__", "__stderr__"):
            now = getattr(sys, now)
        kept = _carried.pop(name, None)
        if now is None:
            if kept is not None and getattr(sys, name) is kept[0]:
                setattr(sys, name, kept[1])
            continue
        before = kept[1] if kept is not None and getattr(sys, name) is kept[0] else getattr(sys, name)
        setattr(sys, name, now)
        _carried[name] = (now, before)


def _carry_directory(peer, moved):
    """The tests' side: the program changed its working directory during the call; in one
    process the tests' would have changed, so it does here: inside the project (the same place
    in the tests' copy) or the temporary folder both share. Anywhere else the tests' directory
    stays (a directory there would make the next call not isolated, a fallback the program
    must not be able to choose): the program's next call is sent back to the tests' one."""
    if not isinstance(moved, str) or "\0" in moved:
        return
    root = peer.policy.root
    path = moved if os.path.isabs(moved) else os.path.normpath(os.path.join(root, moved))
    if not ((path + os.sep).startswith(root) or (path + os.sep).startswith(peer.tmp)):
        return
    try:
        os.chdir(path)
    except OSError:
        pass


def _carry_environment(peer, env):
    """The tests' side: what the program set in or removed from its environment, set there too,
    as in one process; never the test runner's or rgd's own variables (pytest's current test,
    which rgd reads to know a test's patches from pytest's own)."""
    if not (isinstance(env, (list, tuple)) and len(env) == 2 and isinstance(env[0], dict) and isinstance(env[1], (list, tuple))):
        return
    ours = _OWN_VARIABLES + ("PYTEST_",)
    for name, value in env[0].items():
        if isinstance(name, str) and isinstance(value, str) and name and "=" not in name and "\0" not in name + value and not name.startswith(ours):
            os.environ[name] = value
    for name in env[1]:
        if isinstance(name, str) and not name.startswith(ours):
            os.environ.pop(name, None)
    peer.env = _environment()


def _streams_back():
    """The tests' side, before a request: the carried streams the tests have since replaced
    with their own (pytest's capture at a test's end, a test's redirect), which the program's
    process uses no more."""
    dropped = [name for name, (now, _) in _carried.items() if getattr(sys, name) is not now]
    for name in dropped:
        del _carried[name]
    return dropped


def _write_printed(message):
    """What the program printed, as a message from it carries it, written where the tests'
    output goes now."""
    out, err = message.get("out"), message.get("err_text")
    if isinstance(out, str) and out:
        sys.stdout.write(out)
    if isinstance(err, str) and err:
        sys.stderr.write(err)


def _replay_logs(records):
    import logging

    for r in records if isinstance(records, list) else ():
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            fields = {k: v for k, v in r.items() if k in ("name", "levelno", "levelname", "msg", "pathname", "lineno", "funcName")}
            fields["args"] = None
            logger = logging.getLogger(r["name"])
            if logger.isEnabledFor(int(r.get("levelno", 0))):
                logger.handle(logging.makeLogRecord(fields))


def _replay_warnings(items, policy):
    import warnings

    for w in items if isinstance(items, list) else ():
        try:
            module, qualname, message, filename, lineno = w
            try:
                category = policy.resolve_class(module, qualname)
                if not issubclass(category, Warning):
                    category = UserWarning
            except Refused:
                category = UserWarning
            warnings.warn_explicit(str(message), category, str(filename), int(lineno))
        except Exception:
            pass


def _environment():
    """The environment as bytes (a copy made in C: this runs at every call)."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}


# What of the environment each process has of its own (names beginning so): the import path,
# and rgd's own variables. Never sent either way (`_env_diff`, `_carry_environment`).
_OWN_VARIABLES = ("PYTHONPATH", "RGD_")


_OWN_VARIABLES_BYTES = tuple(map(os.fsencode, _OWN_VARIABLES))


def _env_diff(before, now):
    """What changed in the environment: [set: {name: value}, removed: [name]]; never what each
    process has of its own (`_OWN_VARIABLES`)."""
    text = os.fsdecode
    own = _OWN_VARIABLES_BYTES
    return [
        {text(k): text(v) for k, v in now.items() if before.get(k) != v and not k.startswith(own)},
        [text(k) for k in before if k not in now and not k.startswith(own)],
    ]


# Names of the other modules, bound once every module is made (they call each other).
from .common import OUTPUT_CAP, Refused  # noqa: E402
