"""Where a run leaves isolation: the one list of causes on the tests' side (`FALLBACK_CAUSES`), each said to rgd's plugin (`on_refusal`), which then judges the target in-process, unverified."""




# Set by rgd's plugin: called with the reason when a call cannot be isolated (then rgd judges the
# target in-process, labelled so).
on_refusal = None


class NotIsolated(Exception):
    """The tests handed the target something that is not data: this run judges nothing."""


# Every reason a run is judged in the tests' process instead, in one place. Each is on the tests'
# side: what the tests pass, patch, hold or do, found in the tests' process before a call is sent
# or while it runs their own code; nothing the program answers or does in its own process leads
# here (its streams, directory, uses of what the tests lent are carried over or are its own
# failure). Outside this module rgd adds three of its own: no target named, the spectrum
# collector, and a target the forwarding stub cannot stand in for (`testrun.rs`).
FALLBACK_CAUSES = {
    "not_data": "the tests passed %s",
    "own_file": "the tests passed the path of their own file or folder %s, which the program's copy does not hold",
    "patched": "the test patched %s, which the program's process cannot see",
    "directory": "the test changed the working directory to %s",
    "weak_reference": "the tests hold a weak reference to an object the processes share that the program made, or that they set on what it returned outside a call, which the processes keep for the run",
    "threads": "the tests call it from several threads while one call runs the tests' code and waits (the processes take one call at a time)",
    "copied_handle": "the tests copied or pickled something the program's process keeps",
    "call_values": "the tests passed %d values in one call",
    "run_values": "the calls copied or compared more than %d values between the processes (the last %d in %s)",
    "child_process": "the tests started a process that called it (%s), which has no channel to the program's process",
}


def _said(qualname, cause, *details):
    """Says to rgd's plugin that the run is judged in-process for `cause` (`FALLBACK_CAUSES`),
    with its `details`; the reason."""
    why = FALLBACK_CAUSES[cause] % details if details else FALLBACK_CAUSES[cause]
    reason = "%s: %s" % (qualname, why)
    if on_refusal is not None:
        on_refusal(reason, cause)
    return reason


def _refuse(qualname, cause, *details):
    """Judges the run in-process for `cause`: said (`_said`), and the call goes no further."""
    raise NotIsolated(_said(qualname, cause, *details))
