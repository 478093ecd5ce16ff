"""The channel's codec and bounds, in one interpreter (a socket pair stands for the channel): what
a message may hold, what is refused as data, cycles and shared objects, and the configuration each
side is handed. `.ci/test` runs these with pytest."""

import builtins
import inspect
import json
import operator
import os
import re
import socket
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import rgd_isolate as r  # noqa: E402
from rgd_isolate import config  # noqa: E402


@pytest.fixture
def tests_peer():
    """The tests' peer, and the raw other end of its socket."""
    a, b = socket.socketpair()
    yield r.Peer(a, r.Policy("/nonexistent", [], True), "the program's process", timeout=5), b
    a.close()
    b.close()


@pytest.fixture
def program():
    a, b = socket.socketpair()
    yield r.Peer(a, r.Policy("/nonexistent", [], False), "the tests' process")
    a.close()
    b.close()


def test_a_message_over_the_bound_is_never_read(tests_peer):
    p, b = tests_peer
    b.sendall(struct.pack(">Q", 1 << 40))
    with pytest.raises(r.Gone, match="over the bound"):
        p.recv()


@pytest.mark.parametrize(
    "message",
    [
        {"n": [["t", []]] * (r.MAX_NODES + 1), "base": 0, "r": {"v": 0}},
        {"n": [["t", [0]]], "base": 0, "r": {"v": 0}},
        {"n": [], "base": 0, "r": {"v": ["i", "9" * 5000]}},
        {"n": [["l", [7]]], "base": 0, "r": {"v": 0}},
        {"n": [["o", "unittest.mock", "_ANY", 1, None], ["d", []]], "base": 0, "r": {"v": 0}},
        {"n": [["m", 99]], "base": 0, "r": {"v": 0}},
        {"n": [], "base": 0, "r": {"v": {"x": 1}}},
        {"n": [["bi", "builtins", "__loader__"]], "base": 50, "r": {"v": 0}},
    ],
    ids=["parts", "tuple_cycle", "digits", "out_of_table", "foreign_class", "copy_never_sent", "bad_reference", "builtin_not_site"],
)
def test_what_breaks_a_bound_or_names_what_may_not_cross_is_refused(tests_peer, message):
    p, _ = tests_peer
    with pytest.raises(r.Refused):
        p.decode(message)


def test_a_cycle_through_a_list_survives_and_a_shared_object_crosses_as_its_identity(tests_peer):
    p, _ = tests_peer
    v = p.decode({"n": [["l", [0, "x", [7]]]], "base": 10, "r": {"v": 0}})["v"]
    assert v[0] is v and v[1] == "x" and v[2] == 7
    again = p.encode({"v": v})
    v.append(1)
    changed = p.encode({"v": v})
    assert again["n"][0] == ["back", 10], "unchanged: its identity only"
    assert changed["n"][0][:2] == ["back", 10] and len(changed["n"][0]) == 3, "changed: with its contents"


def test_a_shared_object_is_updated_in_place_and_never_swapped_for_another_kind(tests_peer):
    p, _ = tests_peer
    kept = p.decode({"n": [["d", []]], "base": 20, "r": {"v": 0}})["v"]
    with pytest.raises(r.Refused):
        p.decode({"n": [["m", 20, ["l", []]]], "base": 30, "r": {"v": 0}})
    p.decode({"n": [["m", 20, ["d", [["k", [1]]]]]], "base": 40, "r": {"v": 0}})
    assert kept == {"k": 1}


def test_the_standard_librarys_values_and_functions_cross(tests_peer, program):
    p, _ = tests_peer

    def f(a, /, b: int = 3, *c, d=None, **e) -> str:
        pass

    sig = inspect.signature(f)
    got = p.decode(program.encode({"v": [sig, re.compile("a+").match]}))["v"]
    assert got[0] == sig and got[1]("aa").group() == "aa"
    got = p.decode(program.encode({"v": [max, operator.add, builtins.quit, builtins.help]}))["v"]
    assert got[0] is max and got[1] is operator.add and got[2] is builtins.quit and got[3] is builtins.help


def test_a_callbacks_signature_never_shows_a_default():
    shown = r._signature_of(lambda x, y="expected 42": 0)
    assert list(shown.parameters) == ["x", "y"] and "42" not in str(shown)


def test_a_function_the_program_made_goes_back_to_it_as_itself(tests_peer, program):
    p, _ = tests_peer

    def g(self=None):
        return self

    handle = p.decode(program.encode({"v": g}))["v"]
    assert p.encode({"v": handle})["n"][0][0] == "hb" and type(handle).__name__ == "RemoteMethod"


def test_immutable_nesting_is_bounded_and_a_mutable_chain_is_not(tests_peer, program):
    p, _ = tests_peer
    deep = ()
    for _ in range(2000):
        deep = (deep,)
    with pytest.raises(r.Refused):
        p.encode({"v": deep})
    chain = []
    for _ in range(3000):
        chain = [chain, {"up": chain}]
    got, depth = program.decode(p.encode({"v": chain}))["v"], 0
    while got:
        assert got[1]["up"] is got[0]
        got, depth = got[0], depth + 1
    assert depth == 3000


def test_each_sides_configuration_is_read_field_for_field():
    tests = json.dumps({"fd": 3, "root": "/copy", "project": ["m.py"], "timeout": 2, "tmp": "/t"})
    assert config.read(config.TestsConfig, tests).timeout == 2
    program = json.dumps({"fd": 4, "root": "/p", "project": [], "module": "m", "qualname": "f", "tests_root": "/copy"})
    assert config.read(config.ProgramConfig, program).qualname == "f"
    for cls, text in [
        (config.TestsConfig, program),
        (config.ProgramConfig, tests),
        (config.TestsConfig, tests.replace('"fd": 3', '"fd": "3"')),
        (config.TestsConfig, tests.replace('"fd": 3', '"fd": true')),
        (config.TestsConfig, "[]"),
    ]:
        with pytest.raises(ValueError):
            config.read(cls, text)
