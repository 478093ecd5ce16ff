"""What crosses between the two processes, by the general rule (`rgd_isolate.Policy.reducible`,
`plain_state`): the codec of each side, round trip, in one interpreter (a socket pair stands for
the channel; no process is started). `.ci/test` runs these with pytest."""

import argparse
import ast
import os
import pathlib
import re
import socket
import sys
import types

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import rgd_isolate as iso  # noqa: E402


@pytest.fixture
def sides(tmp_path):
    """(the tests' peer, the program's peer), joined by a socket pair."""
    a, b = socket.socketpair()
    root = str(tmp_path / "project")
    tests = iso.Peer(a, iso.Policy(root, [], True), "the program's process")
    program = iso.Peer(b, iso.Policy(root, [], False), "the tests' process")
    yield tests, program
    a.close()
    b.close()


def across(sender, receiver, value):
    """`value` as the receiver reads it from what the sender encodes."""
    return receiver.decode(sender.encode({"v": value}))["v"]


def test_an_ast_node_crosses_as_its_attributes_both_ways(sides):
    tests, program = sides
    fn = ast.parse("def f(a):\n    return a").body[0]
    copy = across(tests, program, fn)
    assert type(copy) is ast.FunctionDef and copy is not fn
    assert ast.unparse(copy) == "def f(a):\n    return a"
    back = across(program, tests, copy)
    assert back is fn, "an object the tests sent comes back as itself"


def test_an_argparse_parser_crosses_and_parses(sides):
    tests, program = sides
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--x", type=int, default=1)
    copy = across(tests, program, parser)
    assert copy.parse_args(["--x", "3"]).x == 3 and copy.prog == "tool"


def test_a_path_into_the_tests_copy_crosses_as_the_same_path_of_the_programs(tmp_path):
    a, b = socket.socketpair()
    tests_root, program_root = str(tmp_path / "copy"), str(tmp_path / "program")
    tests = iso.Peer(a, iso.Policy(tests_root, [], True), "the program's process")
    program = iso.Peer(b, iso.Policy(program_root, [], False), "the tests' process")
    program.policy.swap_roots(tests_root)
    given = [tests_root, tests_root + "/pkg/m.py", pathlib.Path(tests_root, "pkg"), "see " + tests_root + "/x", tests_root + "2/m.py"]
    assert across(tests, program, given) == [
        program_root,
        program_root + "/pkg/m.py",
        pathlib.Path(program_root, "pkg"),
        "see " + program_root + "/x",
        tests_root + "2/m.py",  # another folder whose name starts as the copy's: left alone
    ]
    back = across(program, tests, {program_root + "/pkg": pathlib.PurePath(program_root, "m.py")})
    assert back == {tests_root + "/pkg": pathlib.PurePath(tests_root, "m.py")}
    # The tests' side never swaps: what it is sent is what the program's process said.
    assert across(tests, tests, program_root) == program_root
    a.close()
    b.close()


def test_combined_flags_cross_as_their_value(sides):
    tests, program = sides

    flags = re.I | re.S
    assert across(tests, program, flags) == flags
    assert across(program, tests, re.M | re.X) == re.M | re.X


def test_a_flag_member_that_does_not_exist_is_refused(sides):
    tests, program = sides
    body = program.encode({"v": re.I})
    node = next(n for n in body["n"] if isinstance(n, list) and n and n[0] == "e")
    node[3], node[4:] = "NOT_A_MEMBER", []
    with pytest.raises(iso.Refused):
        tests.decode(body)


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """A module of an installed package (its file under site-packages), with a matcher that
    equals anything, a plain class, and a class with a pickling of its own."""
    module = types.ModuleType("fake_matchers")
    module.__file__ = str(tmp_path / "site-packages" / "fake_matchers" / "__init__.py")

    class Anything:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = object.__hash__

    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def __eq__(self, other):
            return type(other) is Point and (self.x, self.y) == (other.x, other.y)

        __hash__ = object.__hash__

    class Pair:
        def __init__(self, a, b):
            self.ab = (a, b)

        def __reduce__(self):
            return (Pair, self.ab)

    class AnythingMade(Anything):
        def __init__(self, *args):
            self.args = args

        def __reduce__(self):
            return (AnythingMade, self.args)

    return _module_of(monkeypatch, module, Anything, Point, Pair, AnythingMade)


def _module_of(monkeypatch, module, *classes):
    """`module`, holding `classes` by their names, imported for the test."""
    for cls in classes:
        cls.__module__, cls.__qualname__ = module.__name__, cls.__name__
        setattr(module, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def test_an_installed_class_crosses_by_its_reduction(sides, installed):
    tests, program = sides
    point = across(program, tests, installed.Point(1, 2))
    assert type(point) is installed.Point and point == installed.Point(1, 2)
    pair = across(program, tests, installed.Pair(3, 4))
    assert type(pair) is installed.Pair and pair.ab == (3, 4)
    # Only the program's objects cross through their reduction (a copy, never written back):
    # a tests' one the program could change in place is not copied.
    with pytest.raises(iso.Refused):
        tests.encode({"v": installed.Pair(3, 4)})


def test_a_matcher_that_equals_anything_never_crosses_from_the_program(sides, installed):
    tests, program = sides
    seen = across(program, tests, installed.Anything())
    assert type(seen) is not installed.Anything
    assert seen != 3 and not (seen == 3), "it stays a handle, equal only to itself"
    # A message crafted to send one as its attributes is refused by the tests' side.
    body = program.encode({"v": installed.Point(1, 2)})
    node = next(n for n in body["n"] if isinstance(n, list) and n and n[0] == "o")
    node[2] = "Anything"
    with pytest.raises(iso.Refused):
        tests.decode(body)


def test_a_matcher_with_a_pickling_of_its_own_never_crosses_either(sides, installed):
    tests, program = sides
    seen = across(program, tests, installed.AnythingMade())
    assert type(seen) is not installed.AnythingMade and seen != 3
    # Crafted: a reduction naming it, which the tests' side makes and then refuses.
    body = program.encode({"v": installed.Pair(3, 4)})
    node = next(n for n in body["n"] if isinstance(n, list) and n and n[0] == "rd")
    node[2] = "AnythingMade"
    with pytest.raises(iso.Refused, match="equals anything"):
        tests.decode(body)


def test_a_reduction_naming_a_class_that_never_said_so_is_refused(sides, installed):
    """A message may name any class; the receiver calls one only where its own class defines
    the reduction that names it (`Pair`), never another (`Point`, or `subprocess.Popen`)."""
    tests, program = sides
    body = program.encode({"v": installed.Pair(3, 4)})
    node = next(n for n in body["n"] if isinstance(n, list) and n and n[0] == "rd")
    node[2] = "Point"
    with pytest.raises(iso.Refused):
        tests.decode(body)
    __import__("subprocess")  # imported, as the tests' process may have it

    node[1], node[2] = "subprocess", "Popen"
    with pytest.raises(iso.Refused):
        tests.decode(body)


@pytest.mark.parametrize(
    "cls, plain",
    [(ast.FunctionDef, True), (argparse.Namespace, True), (re.Pattern, False), (types.SimpleNamespace, True)],
)
def test_which_classes_are_their_attributes(cls, plain):
    assert iso._plain_reduction(cls) is plain


def test_what_holds_a_process_or_a_finalizer_is_never_copied(tmp_path):
    import subprocess
    import tempfile
    import threading

    policy = iso.Policy(str(tmp_path), [], True)
    for cls in (subprocess.Popen, tempfile.SpooledTemporaryFile, threading.Thread):
        assert not policy.reducible(cls) and not policy.plain_state(cls), cls


def test_the_tests_answer_lends_a_library_object_but_never_a_frame(sides):
    """What the tests answer to the program's own call and cannot cross is lent where it is an
    object of the standard library's or an installed package's (an `array`, whose reduction
    names a function of its module's); the interpreter's own objects (a frame, whose `f_locals`
    would be a test's) stay refused."""
    import array

    tests, program = sides
    numbers = array.array("i", [1, 2])
    tests.encode({"v": numbers}, answer=True)
    assert tests.handles[1] is numbers and tests.lent[1] == "lent"
    with pytest.raises(iso.Refused, match="not data"):
        tests.encode({"v": array.array("i", [3])})
    with pytest.raises(iso.Refused):
        tests.encode({"v": sys._getframe()}, answer=True)
    with pytest.raises(iso.Refused):
        tests.encode({"v": (lambda: 0).__code__}, answer=True)


@pytest.fixture
def tests_module(monkeypatch, tmp_path):
    """A test module of the project's folder (`Policy.tests_module`) with an exception class."""
    module = types.ModuleType("tests.test_fake")
    module.__file__ = str(tmp_path / "project" / "tests" / "test_fake.py")

    class MyError(ValueError):
        pass

    class Mine(MyError):
        pass

    return _module_of(monkeypatch, module, MyError, Mine)


def test_a_tests_exception_crosses_as_a_stand_in_and_comes_back_as_itself(sides, tests_module):
    tests, program = sides
    err = tests_module.Mine("boom", 2)
    got = across(tests, program, err)
    assert isinstance(got, ValueError) and got.args == ("boom", 2) and type(got).__name__ == "Mine"
    stand_in = across(tests, program, tests_module.MyError)
    assert isinstance(got, stand_in), "the stand-ins keep the tests' classes' bases"
    assert across(tests, program, err) is got, "the same exception is the same object each time"
    assert across(program, tests, got) is err
    assert across(program, tests, stand_in) is tests_module.MyError
    made = across(program, tests, stand_in("new"))
    assert type(made) is tests_module.MyError and made.args == ("new",)


def test_the_program_cannot_make_a_tests_class_of_what_is_no_exception_class(sides, tests_module):
    tests, program = sides
    across(tests, program, tests_module.MyError)
    lent = tests.handle(tests_module)  # something the tests keep that is no exception class
    def made_of(hid):
        return tests.decode({"n": [["xn", hid, 1, 2], ["t", ["x"]], ["d", []]], "base": 0, "r": {"v": 0}})["v"]

    assert type(made_of(tests.handle(tests_module.MyError))) is tests_module.MyError
    with pytest.raises(iso.Refused):
        made_of(lent)
    for kind in ("xk", "xo"):
        # What only the tests' side sends is no node the tests' side reads.
        with pytest.raises(iso.Refused):
            tests.decode({"n": [[kind, 1, "tests.test_fake", "MyError", []]], "base": 0, "r": {"v": 0}})


def test_a_module_crosses_by_its_name_but_never_one_of_the_runners(sides):
    tests, program = sides
    import json

    assert across(tests, program, {"serializer": json})["serializer"] is json, "the receiver's own module"
    assert across(program, tests, [json, os.path])[1] is os.path
    with pytest.raises(iso.Refused):
        across(tests, program, pytest)
    assert across(program, tests, iso) is not iso, "the program's rgd_isolate stays a handle of its own"


def test_the_tests_side_never_imports_a_module_the_program_names(sides):
    tests, program = sides
    import json

    message = program.encode({"v": json})
    text = __import__("json").dumps(message)
    assert '["mod", "json"]' in text
    sys.modules.pop("antigravity", None)
    with pytest.raises(iso.Refused):
        tests.decode(__import__("json").loads(text.replace('["mod", "json"]', '["mod", "antigravity"]')))
    assert "antigravity" not in sys.modules


def test_an_element_crosses_by_its_state_and_the_programs_changes_come_back_in_place(sides):
    tests, program = sides
    import xml.etree.ElementTree as ET

    root = ET.Element("div", {"class": "a"})
    child = ET.SubElement(root, "p")
    child.text = "x"
    copy = across(tests, program, root)
    assert type(copy) is ET.Element and copy is not root and ET.tostring(copy) == ET.tostring(root)
    ET.SubElement(copy, "span").text = "y"
    copy.set("id", "1")
    copy[0].text = "z"
    back = across(program, tests, copy)
    assert back is root and root[0] is child, "the tests' own elements, changed in place"
    assert ET.tostring(root) == b'<div class="a" id="1"><p>z</p><span>y</span></div>'


def test_an_element_the_program_left_alone_is_not_written_over_what_the_tests_changed(sides):
    """An element's `__getstate__` builds its names, children list and (empty) attributes anew at
    every call: were they compared by identity, the program's untouched copy would look changed
    at each answer and be written over the tests' tree (markdown's treeprocessors, iterated by a
    target `Registry.__iter__`, lost every inline change: 97 of 123 tests failed)."""
    tests, program = sides
    import xml.etree.ElementTree as ET

    root = ET.Element("div")
    ET.SubElement(root, "p").text = "*em*"
    copy = across(tests, program, root)
    root[0].text = "<em>em</em>"  # the tests change their tree after the call
    answer = program.encode({"v": copy})
    assert answer["n"][0] == ["back", answer["n"][0][1]], "the copy goes back as its identity alone"
    assert tests.decode(answer)["v"] is root and root[0].text == "<em>em</em>"
    copy.set("id", "1")  # what the program does change still comes back
    assert across(program, tests, copy) is root and root.get("id") == "1"


def test_a_match_crosses_as_the_way_to_make_it_again(sides):
    tests, program = sides
    m = re.compile(r"(?<=a)(b+)(c)?").search("xabbbd", 1)
    copy = across(tests, program, m)
    assert type(copy) is re.Match and copy is not m
    assert (copy.regs, copy.group(1), copy.lastindex, copy.string) == (m.regs, "bbb", 1, "xabbbd")
    full = re.compile(r"a|ab").fullmatch("ab")
    assert across(program, tests, full).span() == (0, 2), "made again by fullmatch where match would stop short"
    data = re.compile(rb"\d+").match(b"12ab")
    assert across(tests, program, data).group() == b"12"


def test_a_pattern_with_no_source_is_lent_not_made_from_none(sides):
    """`re.Scanner` compiles a parsed pattern, whose `pattern` is None: it has no source to be
    made from again (markdown's `attr_list._scanner`, changed by every scan the tests run, was
    sent as module state and broke the program's decoding: 32 tests failed per function). Such a
    pattern, and a match of it, are lent by the tests and kept by the program; a pattern with a
    source still crosses as it."""
    tests, program = sides
    scanner = re.Scanner([(r"\d+", None), (r"[a-z]+", None)])
    scanner.scan("12ab")
    match = scanner.scanner.scanner("12").match()
    assert scanner.scanner.pattern is None and match is not None
    tests.encode({"v": (scanner.scanner, match)})
    assert [tests.handles[h] for h in sorted(tests.lent)] == [scanner.scanner, match]
    assert set(tests.lent.values()) == {"lent"}
    plain = across(tests, program, re.compile("a+", re.I))
    assert type(plain) is re.Pattern and plain.pattern == "a+" and plain.flags & re.I
    own = re.Scanner([(r"x", None)]).scanner
    assert program.encode({"v": own})["n"][0][0] == "h", "the program's stays the program's, a handle"


def test_an_object_of_a_class_its_module_does_not_name_stays_the_programs(sides):
    """attrs makes a tuple class per decorated class (`_AndValidatorAttributes`), bound to no
    module name: the tests' side could not make one, so the program keeps it (a handle)."""
    import collections

    tests, program = sides
    made = collections.namedtuple("MadeAttributes", "a b", module="json")
    back = across(program, tests, made(1, 2))
    assert not isinstance(back, tuple) and back == back


def test_what_the_program_sets_on_an_exception_the_tests_made_comes_back(sides):
    """voluptuous' tests raise its `Invalid`, whose `__init__` (the target) sets the error's path
    on the object the tests made: the program's changes come back into that very object."""
    tests, program = sides
    error = argparse.ArgumentError(None, "bad")
    copy = across(tests, program, error)
    assert type(copy) is argparse.ArgumentError and copy is not error
    copy.path = ["a"]
    copy.args = ("worse",)
    back = across(program, tests, copy)
    assert back is error and error.path == ["a"] and error.args == ("worse",)
    assert across(tests, program, KeyError("k")).args == ("k",), "a builtin exception is a value"


def test_a_number_the_tests_sent_comes_back_as_itself(sides):
    """As strings do: a program that passes a number through hands back what one process would
    (natsort's `chain_functions([])(2345) is 2345`)."""
    import json

    tests, program = sides

    def wire(sender, receiver, value):
        return receiver.decode(json.loads(json.dumps(sender.encode({"v": value}))))["v"]

    big, real = int("2345"), float("2.5")
    assert wire(program, tests, wire(tests, program, big)) is big
    assert wire(program, tests, wire(tests, program, real)) is real
    assert wire(program, tests, 10**20) == 10**20


@pytest.fixture
def project_sides(tmp_path, monkeypatch):
    """Both peers with one project module, `pkg.mod`, defining `Self` and `Other` (functions)."""
    root = str(tmp_path / "project")
    module = types.ModuleType("pkg.mod")
    module.__file__ = os.path.join(root, "pkg", "mod.py")

    def Self():
        raise AssertionError("never called")

    def Other():
        return 1

    for fn in (Self, Other):
        fn.__module__, fn.__qualname__ = module.__name__, fn.__name__
        setattr(module, fn.__name__, fn)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    a, b = socket.socketpair()
    tests = iso.Peer(a, iso.Policy(root, ["pkg/mod.py"], True), "the program's process")
    program = iso.Peer(b, iso.Policy(root, ["pkg/mod.py"], False), "the tests' process")
    yield tests, program, module
    a.close()
    b.close()


def test_a_project_function_crosses_by_its_name_and_only_back_by_one_the_tests_sent(project_sides):
    """voluptuous' schemas hold its `Self` function, which its compiler finds by `is`: handed
    over as a handle, the program called it as a validator. A project's function crosses as the
    program's own of that name; of the target's module (whose other functions the agents may
    have changed) the program names back only what the tests named (any other function of its
    stays a handle), and a name the tests never sent is refused."""
    tests, program, module = project_sides
    for side in (tests, program):
        side.policy.target_module = module.__name__
    schema = {"a": module.Self}
    got = across(tests, program, schema)
    assert got["a"] is module.Self, "the program's own function of that name (one interpreter here)"
    assert across(program, tests, module.Self) is module.Self
    assert program.encode({"v": module.Other})["n"][0][0] == "h", "a function the tests never named: a handle"
    forged = program.encode({"v": module.Self})
    forged["n"][0][2] = "Other"
    with pytest.raises(iso.Refused, match="not one"):
        tests.decode(forged)


def test_a_function_of_a_module_outside_the_agents_code_comes_back_as_the_tests_own(project_sides):
    """itsdangerous' signer keeps its module's `_lazy_sha1`, which its tests compare with theirs
    (`==`): a handle of the program's made 10 of its tests fail isolated for each function of
    its serializer module. Of a module outside the agents' code, the program names back any
    function it holds under its name, and the tests' process takes its own; a name the module
    does not hold is refused, and so is one of the target's module the tests never sent."""
    tests, program, module = project_sides
    for side in (tests, program):
        side.policy.target_module = "pkg.target"
    sent = program.encode({"v": module.Other})
    assert sent["n"][0] == ["pf", module.__name__, "Other"]
    assert tests.decode(sent)["v"] is module.Other, "never named by the tests, and still their own"
    missing = program.encode({"v": module.Other})
    missing["n"][0][2] = "Added"
    with pytest.raises(iso.Refused, match="not one"):
        tests.decode(missing)
    for side in (tests, program):
        side.policy.target_module = module.__name__
    with pytest.raises(iso.Refused, match="not one"):
        tests.decode(sent)



def test_a_project_function_of_a_module_the_program_has_not_imported_yet_is_found(tmp_path, monkeypatch):
    """markdown's `attr_list._scanner` holds its module's functions; the program's process had
    not imported that extension when the tests' module state named them: it imports it."""
    root = tmp_path / "project"
    (root / "late_pkg").mkdir(parents=True)
    (root / "late_pkg" / "__init__.py").write_text("")
    (root / "late_pkg" / "late.py").write_text("def handler(s, token):\n    return token\n")
    monkeypatch.syspath_prepend(str(root))
    files = ["late_pkg/__init__.py", "late_pkg/late.py"]
    a, b = socket.socketpair()
    tests = iso.Peer(a, iso.Policy(str(root), files, True), "the program's process")
    program = iso.Peer(b, iso.Policy(str(root), files, False), "the tests' process")
    import late_pkg.late

    sent = late_pkg.late.handler
    body = tests.encode({"v": sent})
    monkeypatch.delitem(sys.modules, "late_pkg.late")  # as the program's process has it
    got = program.decode(body)["v"]
    assert got is sys.modules["late_pkg.late"].handler and got is not sent
    a.close()
    b.close()


def test_a_private_method_target_is_found_under_its_mangled_name():
    """cerberus' targets include `BareValidator.__validate_required_fields`, which the class
    stores as `_BareValidator__validate_required_fields`."""

    class _Validator:
        def __check(self):
            return "checked"

    ns = {"_Validator": _Validator}
    assert iso._stored(ns, "_Validator.__check")(None) == "checked"


def test_an_object_of_a_class_a_factory_made_stays_where_it_is(tmp_path, monkeypatch):
    """cerberus makes `SchemaValidator` with `utils.validator_factory` on first use (so it says it
    is `cerberus.validator.SchemaValidator`, a name that module never binds) and holds it in
    `cerberus.schema`: the tests' validators held one, copied to a program that had not made that
    class yet, and 1,836 of cerberus' outcomes differed. Such an object stays where it is, lent by
    the tests (the program's kept, as before); the class itself crosses as the one a module of
    its package holds, where the receiver has made it, else not at all."""
    root = tmp_path / "project"
    (root / "fact_pkg").mkdir(parents=True)
    (root / "fact_pkg" / "__init__.py").write_text("")
    (root / "fact_pkg" / "utils.py").write_text(
        "class Base:\n    pass\n\ndef factory(name):\n    return type(name, (Base,), {})\n"
    )
    (root / "fact_pkg" / "schema.py").write_text("from .utils import factory\nMade = factory('Made')\n")
    monkeypatch.syspath_prepend(str(root))
    files = ["fact_pkg/__init__.py", "fact_pkg/utils.py", "fact_pkg/schema.py"]
    a, b = socket.socketpair()
    tests = iso.Peer(a, iso.Policy(str(root), files, True), "the program's process")
    program = iso.Peer(b, iso.Policy(str(root), files, False), "the tests' process")
    from fact_pkg import schema, utils

    lent = tests.encode({"v": schema.Made()})["n"]
    assert lent[0][0] == "h" and lent[0][2] == "lent", "lent, not copied"
    assert program.encode({"v": schema.Made()})["n"][0][0] == "h", "the program's: kept"
    assert across(program, tests, schema.Made) is schema.Made, "the class, by the name its package holds"
    schema.Other = utils.factory("Made")  # a second class of that name: which one is unknown
    with pytest.raises(iso.Refused, match="does not define"):
        across(program, tests, schema.Made)
    a.close()
    b.close()


def test_a_temporary_file_the_tests_hand_over_is_lent_but_never_a_loader(sides):
    """What holds a file, a process or a socket is never copied; the tests' own is lent, as a
    stream is (cerberus' tests normalise a document holding a `NamedTemporaryFile`: refused, 3
    of its functions were judged in-process). An object of the interpreter's machinery (a loader,
    which would read files where it lives) is never lent: a copy reads the program's own."""
    import importlib.machinery
    import tempfile

    tests, _ = sides
    with tempfile.NamedTemporaryFile(mode="w+") as f:
        node = tests.encode({"v": f})["n"][0]
        assert node[0] == "h" and node[2].startswith("lent")
    loader = importlib.machinery.SourceFileLoader("x", "/nonexistent/x.py")
    assert tests.encode({"v": loader})["n"][0][0] == "o"


def test_a_c_base_with_nothing_of_its_own_hides_no_state():
    """dateutil's `tzfile` is a project class over `datetime.tzinfo`, a C class whose instances
    hold nothing beyond an object's: its attributes are the whole value (its 20 functions were all
    judged in-process as `not_data`). A C base that holds a function (`functools.partial`) or a
    buffer (`io.StringIO`) still hides state."""
    import datetime
    import functools
    import io

    class Zone(datetime.tzinfo):
        pass

    class Curried(functools.partial):
        pass

    class Buffer(io.StringIO):
        pass

    class Raw(io.RawIOBase):
        pass

    assert iso._hidden_state_base(Zone) is None and iso._hidden_state_base(Raw) is None
    assert iso._hidden_state_base(Curried) is functools.partial
    assert iso._hidden_state_base(Buffer) is io.StringIO


def test_a_calls_own_tuples_keep_nothing_alive_and_what_the_program_let_go_of_is_held_weakly(sides):
    """A call's arguments and keyword pairs are the message's own tuples: pinned for the run (as
    a tuple the tests hand over is), they kept every argument alive on both sides. What the
    program's process says no code of its holds, the tests' side then holds weakly: it dies with
    the tests' last reference, and the next call says so, where the program lets go of its copy;
    what program code holds is not said."""
    import collections
    import gc
    import weakref

    tests, program = sides
    box, kept = collections.OrderedDict(a=1), collections.OrderedDict(b=2)
    message = tests.encode({"a": (box,), "k": (("key", kept),)})
    assert not tests.pins, "no tuple of the call's own pinned"
    args = program.decode(message)
    gids = {obj["a" if "a" in obj else "b"]: gid for gid, obj in program.copies.items()}
    held_by_program = args["k"][0][1]
    named = iso.lifetimes.named_ids(program)
    del args
    program.reset()
    said = iso.lifetimes.report(program, named, None)
    assert said == {"loose": [[gids[1]], [], []]}, "the copy no program code holds, only"
    tests.reset()  # (as the call ends)
    iso.lifetimes.weaken(tests, said)
    assert gids[1] not in tests.sent and gids[2] in tests.sent, "held weakly once the program let go of it"
    ref = weakref.ref(box)
    assert iso.lifetimes.recalled(tests, "sent", gids[1], box) is box and gids[1] in tests.sent, "named again: held"
    iso.lifetimes.weaken(tests, said)
    del box
    gc.collect()
    assert ref() is None, "dies with the tests' last reference"
    dead = iso.lifetimes.dead(tests)
    assert dead == [[gids[1]]]
    iso.lifetimes.bury(program, dead)
    assert gids[1] not in program.copies and gids[2] in program.copies, "the program's copy let go of"
    assert held_by_program == {"b": 2}


def test_a_tuple_holding_a_shared_object_and_a_handle_the_call_made_keep_nothing_alive(sides):
    """A tuple the tests hand over that holds one of their objects is not pinned for the run (a
    tuple is never held weakly: it would keep that object alive on both sides); and the note a
    handle made in the call keeps of what the call named (`Peer.kept`) is the channel's, not
    program code's (dateutil's zones hold the bound methods of an object the program made)."""
    import collections
    import gc
    import weakref

    tests, program = sides
    box = collections.OrderedDict(a=1)
    message = tests.encode({"a": ((box, 1), ("plain", 2))})
    assert len(tests.pins) == 1, "only the tuple of plain values is pinned"
    args = program.decode(message)
    (gid,) = program.copies
    program.kept(lambda: None)
    named = iso.lifetimes.named_ids(program)
    del args
    program.reset()
    said = iso.lifetimes.report(program, named, None)
    assert said == {"loose": [[gid], [], []]}, "held by the channel's notes only"
    tests.reset()
    iso.lifetimes.weaken(tests, said)
    ref = weakref.ref(box)
    del box
    gc.collect()
    assert ref() is None, "dies with the tests' last reference"


def test_what_a_test_assigns_outside_the_project_is_found_but_not_the_runners_or_the_packages_own():
    """freezegun assigns its clock into the standard library's modules with no monkeypatch: such a
    replacement is found (in full when a test starts), and is gone when put back; what the test
    runner sets (its hooks) and what a package sets from its own code (lazy setup) are not the
    tests' doing and are not reported."""
    import email.utils

    import _pytest.monkeypatch

    policy = iso.Policy("/nonexistent/", [], True)
    pristine = {"email.utils": [(a, x) for a, x in vars(email.utils).items() if iso._behaviour(x)]}
    watch = iso.assigned.Assignments()
    watch.baseline(policy, pristine, ())
    assert watch.replaced("t1") == []

    def frozen(*args, **kwargs):
        return "Wed, 01 Jan 2020 00:00:00 -0000"

    real = email.utils.formatdate
    email.utils.formatdate = frozen
    try:
        assert watch.replaced("t2") == [("email.utils", "formatdate", frozen)]
        email.utils.formatdate = email.utils.format_datetime  # the package's own code
        assert watch.replaced("t3") == []
        email.utils.formatdate = _pytest.monkeypatch.derive_importpath  # the test runner's
        assert watch.replaced("t4") == []
    finally:
        email.utils.formatdate = real
    assert watch.replaced("t5") == []


def test_an_attribute_asked_between_calls_notes_nothing_the_last_call_named(sides):
    """cachetools' `ttl_cache` wrapper holds the program's `Condition`; a test's call of the
    wrapper enters it, asking the program for `__enter__` between calls. The bound method made
    then noted every shared object the last call named (its TTL cache and all its links), and
    each later call of it refreshed them all: 256 calls of one test ran past the bench's limit.
    Asked between calls, an attribute is an exchange of its own: the method notes what the
    exchange that made its object named (a generator's `throw`, the list its call was handed)."""
    import threading

    tests, program = sides
    made_with = across(tests, program, [0])  # what the call that made the lock named
    hid = program.kept(threading.Condition())
    program.reset()
    across(tests, program, [1, 2])  # what the last call named, written back with its answer
    program.serve({"n": [], "base": 0, "r": {"v": None}, "op": "get", "h": hid, "name": "__enter__"})
    method = tests.recv()["n"][0]
    assert method[0] == "h" and method[1] != hid
    assert program.kept_with[method[1]] == [made_with], "nothing else of the last call noted with the method"


def test_a_test_named_class_a_function_makes_is_lent_but_not_one_pytest_collects(tmp_path, monkeypatch):
    """click's `test_with_resource_exception` makes a `TestContext` (a context manager) in the
    test and hands one to the target: pytest collects no class a function makes, so it is lent
    like any object of the tests'. One named so at a module's top level, or holding test
    methods, is never lent: it could hand the program the tests themselves."""
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_lend.py").write_text(
        "def made():\n    class TestContext:\n        pass\n    return TestContext()\n\n\n"
        "class TestSuite:\n    pass\n\n\n"
        "def helper():\n    class Holder:\n        def test_x(self):\n            pass\n    return Holder()\n"
    )
    monkeypatch.syspath_prepend(str(root / "tests"))
    monkeypatch.delitem(sys.modules, "test_lend", raising=False)
    import test_lend

    policy = iso.Policy(str(root), [], True)
    assert policy.lendable(test_lend.made()) == "lent"
    assert policy.lendable(test_lend.TestSuite()) is None
    assert policy.lendable(test_lend.helper()) is None


def test_a_library_object_in_module_data_is_looked_at_one_level_down(tmp_path, monkeypatch):
    """markdown's modules hold `logging.getLogger('MARKDOWN')`, whose level cache fills whenever
    either side logs: looked at two levels down (as a registry object of the project's is, with
    its table), the logger was module data that changed at every call, and crossed as no data
    (every function of markdown judged in-process). A library's object is compared one level
    down; a project object's parts still two."""
    import logging

    root = tmp_path / "project"
    (root / "logpkg").mkdir(parents=True)
    (root / "logpkg" / "__init__.py").write_text(
        "import logging\n\nlogger = logging.getLogger('logpkg-test')\n\n\n"
        "class Registry:\n    def __init__(self):\n        self.table = {}\n\n\nregistry = Registry()\n"
    )
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "logpkg", raising=False)
    import logpkg

    state = iso.ModuleState(iso.Policy(str(root), ["logpkg/__init__.py"], True))
    state.agree()
    logpkg.logger.isEnabledFor(logging.INFO)  # fills the logger's level cache
    assert state.changes() == ([], [])
    logpkg.registry.table["x"] = 1
    changed, _ = state.changes()
    assert [key for key, _ in changed] == [("logpkg", "", "registry")]


def test_a_process_the_tests_started_never_uses_the_channel_and_leaves_a_mark(tmp_path, monkeypatch):
    """A process the tests start (python-slugify's `python -m slugify`), or a fork of theirs that
    holds their peer, calls the stub: it has no channel of its own, so it leaves a mark with the
    time and fails, and the tests' process finds the mark after the test (`child_process`) unless
    it was made while the tests' process ran code for the program."""
    import json
    import time

    from rgd_isolate import tests_side

    root = tmp_path / "copy"
    root.mkdir()
    config = {"fd": 999, "root": str(root), "project": [], "timeout": 1.0, "tmp": str(tmp_path)}
    monkeypatch.setenv("RGD_ISOLATE", json.dumps(config))
    monkeypatch.setattr(tests_side, "_owner", [os.getpid() + 1])  # the tests' process is another
    monkeypatch.setattr(tests_side, "_client", [object()])  # a fork holds the parent's peer
    with pytest.raises(RuntimeError, match="no channel"):
        tests_side.call("f", (), {})
    mark = (root / ".rgd-isolate-child").read_text()
    assert float(mark.split()[0]) <= time.monotonic()
    said = []
    monkeypatch.setattr(iso.refusals, "on_refusal", lambda why, cause: said.append(cause))
    monkeypatch.setattr(tests_side, "_client", [None])
    assert tests_side.children_checked() and said == ["child_process"]
    assert not (root / ".rgd-isolate-child").exists()
    assert not tests_side.children_checked(), "said once"
