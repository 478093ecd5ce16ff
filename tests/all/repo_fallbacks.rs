//! Nothing a program does sends its verdict to the tests' process. Each wrong program below does,
//! in its own process, one of the things that used to make a run in-process (replace its streams,
//! change directory, copy, pickle or look into what the tests lent, make objects of a tests'
//! class, write into the tests' functions and classes, call a tests' callback whose answer is no
//! data, open the tests' files, start threads, raise what cannot cross): every one is judged
//! isolated and fails, and the honest program passes isolated. What still makes a run in-process
//! is the tests' doing (`FALLBACK_CAUSES` in `sandbox/rgd_isolate/refusals.py`): for those, a right and a
//! wrong program are judged in the same place. Needs an interpreter with pytest (see
//! `support::pytest_python`).

use crate::support;

use rgd::repo::run::isolate::Isolation;
use support::one_module::OneModule;

/// The tests hand the target a test's object, a test's function, a test's class and a callback
/// whose answer is a module (no data).
const TESTS: &str = "import types\n\nfrom pkg.m import total\n\n\nclass Checker:\n    def __init__(self):\n        self.seen = []\n\n    def ok(self):\n        return self.seen == [6]\n\n\ndef twice(x):\n    return 2 * x\n\n\ndef a_module():\n    return types\n\n\ndef test_total():\n    c = Checker()\n    assert total([1, 2, 3], c, twice, Checker, a_module) == 12\n    assert c.ok()\n\n\ndef test_again():\n    assert total([4], Checker(), twice, Checker, a_module) == 8\n";

const MODULE: &str = "def total(prices, checker, double, kind, other):\n    ...\n";

const HONEST: &str =
    "def total(prices, checker, double, kind, other):\n    checker.seen.append(sum(prices))\n    return double(sum(prices))\n";

/// Each provokes one former fallback, then answers wrong (or not at all).
const ATTACKS: [(&str, &str); 14] = [
    (
        "replaces its streams",
        "import io\nimport sys\n\n\ndef total(prices, checker, double, kind, other):\n    sys.stdout, sys.stderr, sys.stdin = io.StringIO(), io.StringIO(), io.StringIO('12')\n    return 0\n",
    ),
    (
        "changes directory out of the project",
        "import os\n\n\ndef total(prices, checker, double, kind, other):\n    os.chdir('/')\n    return 0\n",
    ),
    (
        "copies and pickles a lent object",
        "import copy\nimport pickle\n\n\ndef total(prices, checker, double, kind, other):\n    copy.copy(checker)\n    copy.deepcopy(checker)\n    try:\n        pickle.dumps(checker)\n    except Exception:\n        pass\n    return 0\n",
    ),
    (
        "reads a lent object's __dict__ and class",
        "def total(prices, checker, double, kind, other):\n    vars(checker)['seen'] = [6]\n    type(checker).__new__(type(checker))\n    type(checker)()\n    return 0\n",
    ),
    (
        "writes into the tests' function and class",
        "class Yes:\n    def __call__(self, *args):\n        return True\n\n\ndef total(prices, checker, double, kind, other):\n    for target, name, value in ((double, '__code__', None), (double, 'marked', 1), (kind, '__eq__', None), (kind, 'ok', lambda self: True), (checker, 'ok', lambda: True), (checker, 'ok', Yes())):\n        try:\n            setattr(target, name, value)\n        except Exception:\n            pass\n    return 0\n",
    ),
    (
        "reads the insides of the tests' function",
        "def total(prices, checker, double, kind, other):\n    for name in ('__globals__', '__code__', '__closure__', '__defaults__', '__dict__', '__wrapped__', 'pytestmark'):\n        try:\n            getattr(double, name)\n        except Exception:\n            pass\n    return 0\n",
    ),
    (
        "calls back what answers no data",
        "def total(prices, checker, double, kind, other):\n    try:\n        other()\n    except Exception:\n        pass\n    return 0\n",
    ),
    (
        "opens the tests' files",
        "import os\n\n\ndef total(prices, checker, double, kind, other):\n    for path in ('tests/test_m.py', os.path.join(os.getcwd(), 'tests', 'test_m.py')):\n        try:\n            open(path).read()\n        except OSError:\n            pass\n    return 0\n",
    ),
    (
        "calls back from threads",
        "import threading\n\n\ndef total(prices, checker, double, kind, other):\n    threads = [threading.Thread(target=double, args=(1,)) for _ in range(4)]\n    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n    return 0\n",
    ),
    (
        "raises what cannot cross",
        "def total(prices, checker, double, kind, other):\n    class Odd(Exception):\n        pass\n\n    raise Odd(object())\n",
    ),
    (
        "changes the environment and exits its process",
        "import os\n\n\ndef total(prices, checker, double, kind, other):\n    os.environ['PYTEST_CURRENT_TEST'] = 'x'\n    os._exit(0)\n",
    ),
    (
        "leaves the mark of a process the tests started wherever it can",
        "import os\nimport tempfile\n\n\ndef total(prices, checker, double, kind, other):\n    for top in (os.path.dirname(os.getcwd()), tempfile.gettempdir()):\n        for d, dirs, _ in os.walk(top):\n            if d.count(os.sep) - top.count(os.sep) >= 2:\n                dirs[:] = []\n            try:\n                with open(os.path.join(d, '.rgd-isolate-child'), 'a') as f:\n                    f.write('x\\n')\n            except OSError:\n                pass\n    return 0\n",
    ),
    (
        "writes a passing verdict into every descriptor it holds or is handed",
        "import os\n\n\ndef total(prices, checker, double, kind, other):\n    forged = b'{\"t\": \"outcome\", \"status\": \"passed\"}\\n{\"t\": \"end\", \"status\": 0}\\n'\n    for fd in range(64):\n        try:\n            os.write(fd, forged)\n        except OSError:\n            pass\n    return 0\n",
    ),
    (
        "replaces a stream and gets stuck",
        "import sys\nimport time\n\n\nclass Loud:\n    def write(self, text):\n        time.sleep(5)\n        return len(text)\n\n    def flush(self):\n        pass\n\n\ndef total(prices, checker, double, kind, other):\n    sys.stdout = Loud()\n    return 0\n",
    ),
];

#[test]
fn no_program_can_send_its_verdict_to_the_tests_process() {
    let Some(project) = OneModule::new(MODULE, TESTS) else { return };
    let honest = project.run(HONEST, "total");
    assert_eq!(honest.isolation, Isolation::Isolated, "{honest:?}");
    assert!(honest.outcomes.iter().all(|o| o.passed()), "{honest:?}");
    for (what, program) in ATTACKS {
        let run = project.run(program, "total");
        assert_eq!(run.isolation, Isolation::Isolated, "a program that {what}: {run:?}");
        assert_eq!(run.outcomes.len(), 2, "a program that {what}: {run:?}");
        assert!(run.outcomes.iter().all(|o| !o.passed()), "a program that {what} passed: {run:?}");
    }
}

/// What still makes a run in-process is the tests': a test that hands over its own file (or a
/// folder holding one: the program's copy has none), holds
/// a weak reference to what it sets on an object the target returned (no call ends there to say
/// what the program still holds), or starts a process that calls the target (python-slugify's
/// `python -m slugify`: it has no channel, and never runs the program's code), is judged in-process with the right program and with a
/// wrong one alike, for the same cause (its key in `FALLBACK_CAUSES`), before the program's
/// answer counts.
#[test]
fn a_fallback_of_the_tests_is_the_same_for_a_right_and_a_wrong_program() {
    let cases = [
        (
            "class Opt:\n    def __init__(self, default):\n        self.default = default\n\n\ndef name(opt):\n    return opt.default.rsplit('/', 1)[-1]\n",
            "from pkg.m import Opt, name\n\n\ndef test_name():\n    assert name(Opt(__file__)) == 'test_m.py'\n",
            "name",
            "own_file",
        ),
        (
            "def make():\n    class Holder:\n        def size(self):\n            return self.box.value\n\n    return Holder()\n",
            "import weakref\n\nfrom pkg.m import make\n\n\nclass Box:\n    def __init__(self, v):\n        self.value = v\n\n\ndef test_weak():\n    cache = weakref.WeakValueDictionary()\n    b = Box(3)\n    cache['b'] = b\n    h = make()\n    h.box = b\n    assert h.size() == 3\n",
            "make",
            "weak_reference",
        ),
        (
            "import os\n\n\ndef names(top):\n    return sorted(n for _, _, found in os.walk(top) for n in found)\n",
            "import os\n\nfrom pkg.m import names\n\n\ndef test_names():\n    assert 'test_m.py' in names(os.path.dirname(os.path.dirname(__file__)))\n",
            "names",
            "own_file",
        ),
        (
            "def double(x):\n    return 2 * x\n",
            "import subprocess\nimport sys\n\n\ndef test_child():\n    out = subprocess.run([sys.executable, '-c', 'from pkg.m import double; print(double(21))'], capture_output=True, text=True)\n    assert out.stdout.strip() == '42', out.stderr\n",
            "double",
            "child_process",
        ),
    ];
    for (module, tests, target, cause) in cases {
        let Some(project) = OneModule::new(module, tests) else { return };
        // The same module with the target (or what it makes) answering nothing.
        let body = module
            .lines()
            .find(|l| l.trim_start().starts_with("return "))
            .expect("a return line");
        let indent = &body[..body.len() - body.trim_start().len()];
        let wrong = module.replace(body, &format!("{indent}return None"));
        for (program, passes) in [(module.to_string(), true), (wrong, false)] {
            let run = project.run(&program, target);
            assert_eq!(run.isolation.cause(), Some(cause), "{run:?}");
            assert_eq!(run.outcomes.iter().all(|o| o.passed()), passes, "{run:?}");
        }
    }
}

/// A process the tests start that calls the target is the tests' cause (above), but one a
/// test's callback starts when the program calls it is the program's doing: that process's
/// failure is the program's, judged isolated. A wrong program that calls such a callback to leave
/// the tests' mark fails isolated; the right one, which does not, passes isolated.
#[test]
fn a_process_started_by_a_callback_the_program_calls_is_the_programs_doing() {
    let module = "def double(x, hook):\n    return 2 * x\n";
    let tests = "import subprocess\nimport sys\n\nfrom pkg.m import double\n\n\ndef spawn():\n    return subprocess.run([sys.executable, '-c', 'from pkg.m import double; print(double(1, None))'], capture_output=True, text=True).stdout\n\n\ndef test_double():\n    assert double(21, spawn) == 42\n";
    let wrong = "def double(x, hook):\n    hook()\n    return 0\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "double", 1, wrong, 0);
}

/// A stdin the test assigns (python-slugify's `loaded_stdin` sets `sys.stdin` to a `StringIO`,
/// no patch) is what the program reads, and what it reads is gone from the tests' stream, as in
/// one process; a program that reads its own gets nothing, and fails.
#[test]
fn a_stdin_the_test_assigned_is_the_programs() {
    let module = "import sys\n\n\ndef read_all():\n    return sys.stdin.read().upper()\n";
    let tests = "import io\nimport sys\n\nfrom pkg.m import read_all\n\n\ndef test_stdin():\n    saved = sys.stdin\n    sys.stdin = io.StringIO('typed')\n    try:\n        assert read_all() == 'TYPED'\n        assert sys.stdin.read() == ''\n    finally:\n        sys.stdin = saved\n";
    let wrong = "import sys\n\n\ndef read_all():\n    return sys.__stdin__.read().upper()\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "read_all", 1, wrong, 0);
}

/// A path into the tests' copy that holds no test (boltons' `iter_find_files` is handed
/// `pathlib.Path` of its package's directory) names the same files of the program's copy, which
/// its process can open, and the paths it answers name the tests' files again: isolated, as in
/// one process (before, the program walked a copy its process cannot open and found nothing).
/// A wrong program (names without their folder) fails.
#[test]
fn a_path_into_the_tests_copy_is_the_same_file_of_the_programs() {
    let module = "import os\n\n\ndef modules(top):\n    return sorted(os.path.join(d, n) for d, _, names in os.walk(top) for n in names if n.endswith('.py'))\n";
    let tests = "import os\nimport pathlib\n\nimport pkg.m\nfrom pkg.m import modules\n\n\ndef test_walk():\n    found = modules(pathlib.Path(pkg.m.__file__).parent)\n    assert pkg.m.__file__ in found and len(found) == 2\n\n\ndef test_as_text():\n    here = os.path.dirname(pkg.m.__file__)\n    assert modules(here) == [os.path.join(here, '__init__.py'), os.path.join(here, 'm.py')]\n";
    let wrong =
        "import os\n\n\ndef modules(top):\n    return sorted(n for _, _, names in os.walk(top) for n in names if n.endswith('.py'))\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "modules", 2, wrong, 0);
}

/// A descriptor is a number only in the process that opened it: a test's file handed to a
/// `subprocess.Popen` the program starts (click's pager tests), or the program's file whose
/// `fileno()` a test writes to, crosses as the descriptor itself, so the bytes land in that
/// file, as in one process (before, the number named another file on the other side, or the
/// channel's socket, which broke the run).
#[test]
fn a_files_descriptor_crosses_as_the_same_file() {
    let module = "import subprocess\nimport sys\n\n\ndef page(text, out):\n    p = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdout.write(sys.stdin.read().upper())'], stdin=subprocess.PIPE, stdout=out)\n    p.communicate(text.encode())\n    return p.returncode\n\n\ndef opened(path):\n    return open(path, 'w')\n";
    let tests = "import os\n\nfrom pkg.m import opened, page\n\n\ndef test_page(tmp_path):\n    path = tmp_path / 'out.txt'\n    with path.open('w') as f:\n        assert page('hello', f) == 0\n    assert path.read_text() == 'HELLO'\n\n\ndef test_write_to_the_programs_file(tmp_path):\n    f = opened(tmp_path / 'x.txt')\n    os.write(f.fileno(), b'hi')\n    f.close()\n    assert (tmp_path / 'x.txt').read_text() == 'hi'\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "page", 2);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "opened", 2);
}

/// The channel looks at a project's module data without asking an object for more than its
/// type: itsdangerous 2.0 keeps a deprecated `json` module whose `__getattribute__` warns at
/// every attribute asked, an error under its tests' `filterwarnings` (before, every test of a
/// run failed, or none ran: `isinstance` asks such an object for `__class__`).
#[test]
fn a_module_object_that_warns_at_every_attribute_is_looked_at_without_one() {
    let module = "import types\nimport warnings\n\n\nclass Deprecated(types.ModuleType):\n    def __getattribute__(self, item):\n        warnings.warn('deprecated', DeprecationWarning, stacklevel=2)\n        return getattr(types, item)\n\n\nold = Deprecated('old')\n\n\ndef double(x):\n    return 2 * x\n";
    let tests = "import warnings\n\nimport pytest\n\nfrom pkg.m import double\n\nwarnings.simplefilter('error', DeprecationWarning)\npytestmark = pytest.mark.filterwarnings('error')\n\n\ndef test_double():\n    assert double(2) == 4\n\n\ndef test_a_tuple():\n    assert double((1,)) == (1, 1)\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "double", 2);
}

/// A function the program makes is asked for its annotations (boltons' `FunctionBuilder.get_func`
/// sets them, and its tests check them): before, its handle had none.
#[test]
fn the_programs_function_answers_for_its_annotations() {
    let module =
        "def make(kind):\n    def f(a: kind, b=1) -> str:\n        return str(a)\n\n    f.__annotations__['b'] = int\n    return f\n";
    let tests = "from pkg.m import make\n\n\ndef test_annotations():\n    f = make(float)\n    assert f.__annotations__ == {'a': float, 'b': int, 'return': str}\n    assert f(2.5) == '2.5'\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "make", 1);
}

/// A test's patch of its own `sys.stdout` (termcolor's tests make `isatty` say yes) is made on
/// the stream the program prints to, calling the test's function back: isolated, as in one
/// process; a program that moves into a folder of the project moves the tests there too; and a
/// test's patch of a module outside the project is made in the program's process.
#[test]
fn a_patched_stream_and_a_changed_directory_are_carried_over() {
    let module = "import os\nimport sys\n\n\ndef colour(text):\n    return '\\x1b[1m' + text if sys.stdout.isatty() else text\n\n\ndef enter(where):\n    os.chdir(where)\n    return os.path.basename(os.getcwd())\n";
    let tests = "import os\nimport sys\n\nfrom pkg.m import colour, enter\n\n\ndef test_tty(monkeypatch):\n    monkeypatch.setattr(sys.stdout, 'isatty', lambda: True)\n    assert colour('a') == '\\x1b[1ma'\n\n\ndef test_no_tty():\n    assert colour('a') == 'a'\n\n\ndef test_enter(monkeypatch):\n    monkeypatch.chdir(os.getcwd())\n    assert enter('pkg') == 'pkg'\n    assert os.path.basename(os.getcwd()) == 'pkg'\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "colour", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "enter", 3);
    // A test's patch of an installed package's or the standard library's module, by a function
    // (called back) or by data, is made in the program's process too.
    let module =
        "import string\n\nfrom packaging import version\n\n\ndef shown(text):\n    return str(version.parse(text)), string.digits\n";
    let tests = "import string\n\nfrom packaging import version\n\nfrom pkg.m import shown\n\n\ndef test_patched(monkeypatch):\n    monkeypatch.setattr(version, 'parse', lambda text: 'v' + text)\n    monkeypatch.setattr(string, 'digits', '01')\n    assert shown('1.0') == ('v1.0', '01')\n\n\ndef test_as_it_is():\n    assert shown('1.0') == ('1.0', '0123456789')\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "shown", 2);
}

/// An element tree's element the tests hand over crosses as the state its own `__setstate__`
/// takes, and what the program changes in it (markdown's tree processors set attributes and add
/// children in place) comes back into the tests' own elements: a right program passes isolated,
/// a wrong one fails isolated.
#[test]
fn an_element_the_program_changes_in_place_comes_back() {
    let module = "import xml.etree.ElementTree as ET\n\n\ndef mark(root):\n    for p in root.iter('p'):\n        p.set('class', 'x')\n    ET.SubElement(root, 'hr')\n    return len(root)\n";
    let tests = "import xml.etree.ElementTree as ET\n\nfrom pkg.m import mark\n\n\ndef test_marked():\n    root = ET.fromstring('<div><p>a</p><p>b</p></div>')\n    first = root[0]\n    assert mark(root) == 3\n    assert first.get('class') == 'x' and root[0] is first\n    assert ET.tostring(root) == b'<div><p class=\"x\">a</p><p class=\"x\">b</p><hr /></div>'\n\n\ndef test_empty():\n    root = ET.Element('div')\n    assert mark(root) == 1 and root[0].tag == 'hr'\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "mark", 2, &module.replace("'x'", "'y'"), 1);
}

/// A tests' function's `__code__`, read by a decorator to name its arguments (voluptuous'
/// `validate`), is the code of an empty function with its name and parameters: the right
/// program passes isolated, and what the test's body holds (its constants, its locals) stays in
/// the tests' process.
#[test]
fn a_tests_functions_code_says_its_parameters_and_nothing_of_its_body() {
    let check = "def check(a, b, *rest, c=1, **more):\n    secret = 'the expected value'\n    return a, secret\n";
    let module = "def named(func, args):\n    code = func.__code__\n    return dict(zip(code.co_varnames[:code.co_argcount], args))\n";
    let tests =
        format!("from pkg.m import named\n\n\n{check}\n\ndef test_named():\n    assert named(check, (1, 2, 3)) == {{'a': 1, 'b': 2}}\n");
    support::one_module::passes_isolated_as_in_one_process(module, &tests, "named", 1);
    // What a program that looks further sees (in one process: the body's constant and local).
    let module =
        "def peek(func):\n    code = func.__code__\n    return [code.co_name, code.co_varnames, code.co_consts, code.co_kwonlyargcount]\n";
    let tests = format!(
        "from pkg.m import peek\n\n\n{check}\n\ndef test_peek():\n    name, names, consts, kwonly = peek(check)\n    assert (name, names[:4], kwonly) == ('check', ('a', 'b', 'c', 'rest'), 1)\n    assert 'the expected value' not in repr(consts) and 'secret' not in names\n"
    );
    let Some(project) = OneModule::new(module, &tests) else { return };
    project.passes_isolated(module, "peek", 1);
}

/// An exception's `__init__` as the target (voluptuous' `Invalid`): what it sets on the object
/// the tests made comes back into that object; a wrong `__init__` fails isolated.
#[test]
fn an_exceptions_init_sets_the_tests_own_exception() {
    let module = "class Invalid(Exception):\n    def __init__(self, message, path=None):\n        Exception.__init__(self, message)\n        self._path = path or []\n\n    @property\n    def path(self):\n        return self._path\n";
    let tests = "import pytest\n\nfrom pkg.m import Invalid\n\n\ndef test_raised():\n    with pytest.raises(Invalid) as caught:\n        raise Invalid('bad', ['k'])\n    assert caught.value.path == ['k'] and str(caught.value) == 'bad'\n\n\ndef test_made():\n    assert Invalid('x').path == []\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "Invalid.__init__", 2, &module.replace("path or []", "[]"), 1);
}

/// A target under `functools.lru_cache` (soupsieve's `_cached_css_compile`, whose tests clear
/// its cache): its `cache_clear` and `cache_info` are there in-process, where rgd's plugin
/// watches it, as isolated.
#[test]
fn a_cached_target_keeps_its_cache_functions_in_the_tests_process() {
    let module = "import functools\n\n\n@functools.lru_cache(maxsize=8)\ndef square(x):\n    return x * x\n";
    let tests = "from pkg.m import square\n\n\ndef test_cached():\n    square.cache_clear()\n    assert square(3) == 9 and square(3) == 9\n    assert square.cache_info().hits == 1\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "square", 1);
}

/// A test's patch of a builtin (natsort's tests patch `builtins.print` with a mock) reaches the
/// project's code in the program's process, and goes when the patch does; a module handed over
/// (itsdangerous' serializer holds `json`) crosses by its name. A right program passes isolated;
/// one that prints elsewhere fails isolated.
#[test]
fn a_patched_builtin_reaches_the_projects_code_and_a_module_crosses_by_name() {
    let module = "def shout(text, codec):\n    print(codec.dumps(text.upper()))\n    return len(text)\n";
    let tests = "import builtins\nimport json\nfrom unittest import mock\n\nfrom pkg.m import shout\n\n\ndef test_mocked():\n    with mock.patch('builtins.print') as p:\n        assert shout('a', json) == 1\n    p.assert_called_once_with('\"A\"')\n\n\ndef test_replaced(monkeypatch):\n    seen = []\n    monkeypatch.setattr(builtins, 'print', seen.append)\n    assert shout('ab', json) == 2\n    assert seen == ['\"AB\"']\n\n\ndef test_printed(capsys):\n    assert shout('b', json) == 1\n    assert capsys.readouterr().out == '\"B\"\\n'\n";
    let around = "import sys\n\n\ndef shout(text, codec):\n    sys.stdout.write(codec.dumps(text.upper()) + '\\n')\n    return len(text)\n";
    // Only the test that reads the output passes.
    support::one_module::right_passes_and_wrong_fails(module, tests, "shout", 3, around, 1);
}

/// What has no reduction at all is lent, as the tests' own objects are: markdown's HTML
/// extractor is handed a `TreeBuilder`. The program uses it where it lives (the builder the test
/// then closes holds what the program built, and the element its `start` answers is lent back),
/// a right program passes isolated and a wrong one fails isolated. An `re.Match` is not lent
/// (`_NOT_LENT`, for a measured reason) but crosses as the way to make it again (its pattern, its
/// string, where it starts and ends), which the other side's own `re` does.
#[test]
fn an_object_without_a_reduction_is_lent() {
    let module = "def backticks(m):\n    return m.group(2).strip(), m.start(0), m.end(0)\n\n\ndef build(builder, tag):\n    builder.start(tag, {})\n    builder.data('x')\n    builder.end(tag)\n    return tag\n";
    let tests = "import re\nimport xml.etree.ElementTree as ET\n\nfrom pkg.m import backticks, build\n\n\ndef test_match():\n    m = re.search(r'(`+)(.+?)\\1', 'a `code` b')\n    assert backticks(m) == ('code', 2, 8)\n\n\ndef test_builder():\n    b = ET.TreeBuilder()\n    assert build(b, 'p') == 'p'\n    root = b.close()\n    assert (root.tag, root.text) == ('p', 'x')\n";
    support::one_module::right_passes_and_wrong_fails(
        module,
        tests,
        "build",
        2,
        &module.replace("builder.data('x')", "builder.data('y')"),
        1,
    );
    let shifted = module.replace("m.start(0)", "m.start(0) + 1");
    support::one_module::right_passes_and_wrong_fails(module, tests, "backticks", 2, &shifted, 1);
}

/// An object of the standard library's that the program makes and keeps (boltons' spooled file
/// makes its buffer on first use, in the program's process, and stores it on the object the tests
/// handed it; a text stream cannot cross by value) says which class it is of: the tests'
/// `isinstance(buffer, TextIOBase)` agrees, as in one process, and its methods are asked where it
/// lives. It still equals only itself.
#[test]
fn an_object_the_program_keeps_says_its_class() {
    let module = "import io\n\n\nclass Spool:\n    @property\n    def buffer(self):\n        try:\n            return self._buffer\n        except AttributeError:\n            self._buffer = io.TextIOWrapper(io.BytesIO(), encoding='utf-8')\n        return self._buffer\n\n    def closed(self):\n        return self.buffer.closed\n\n    def rolled(self):\n        return not isinstance(self.buffer, io.TextIOBase)\n";
    let tests = "import io\n\nfrom pkg.m import Spool\n\n\ndef test_fresh():\n    s = Spool()\n    assert not s.closed()\n    assert not s.rolled()\n    s.buffer.write('abc')\n    s.buffer.seek(0)\n    assert s.buffer.read() == 'abc'\n    assert s.buffer != io.StringIO('abc')\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "Spool.closed", 1);
}

/// A tests' function's `__dict__` is a view of its plain attributes, read and written in the
/// tests' process by name (funcy's `update_wrapper` updates a test's function's `__dict__`), never
/// its code or marks; and an object of an installed package's class that its module does not name
/// (`whatever`'s, made on the fly) is lent rather than sent by a name the other side cannot find.
#[test]
fn a_tests_functions_attributes_and_an_unnamed_class_are_used_where_they_live() {
    let module = "def tag(fn):\n    fn.__dict__.update({'tagged': True})\n    return sorted(fn.__dict__)\n\n\ndef apply(f, x):\n    return f(x) if callable(f) else None\n";
    let tests = "import pytest\n\nfrom pkg.m import apply, tag\n\n\n@pytest.mark.slow\ndef test_tag():\n    def f():\n        pass\n\n    f.extra = 1\n    assert tag(f) == ['extra', 'tagged']\n    assert f.tagged is True\n\n\ndef test_unnamed_class():\n    Made = type('Made', (), {'__call__': lambda self, x: x + 1})\n    Made.__module__ = 'collections'\n    Made.__qualname__ = 'NoSuchName'\n    assert apply(Made(), 2) == 3\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "tag", 2);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "apply", 2);
    // Any other callable of the tests' has no `__dict__` here: `functools.update_wrapper` gets
    // its default, as cachetools' `cached` does of a test's bound method.
    let module = "import functools\n\n\ndef wrap(f):\n    return functools.update_wrapper(lambda *a: f(*a), f)\n";
    let tests = "from pkg.m import wrap\n\n\nclass C:\n    def f(self, x):\n        return 2**x\n\n\ndef test_wrap_a_method():\n    assert wrap(C().f)(3) == 8\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "wrap", 1);
}

#[test]
fn a_tests_exception_class_crosses_as_a_stand_in_and_comes_back_as_itself() {
    let module = "def retry(errors, f, times=3):\n    for _ in range(times - 1):\n        try:\n            return f()\n        except errors:\n            pass\n    return f()\n\n\ndef call(f):\n    return f()\n\n\ndef make(cls, *args):\n    return cls(*args)\n";
    let tests = "import pytest\n\nfrom pkg.m import call, make, retry\n\n\nclass MyError(ValueError):\n    pass\n\n\ndef test_retry():\n    tries = []\n\n    def flaky():\n        tries.append(1)\n        if len(tries) < 3:\n            raise MyError('again')\n        return 'done'\n\n    assert retry(MyError, flaky) == 'done'\n    with pytest.raises(TypeError):\n        retry(MyError, lambda: 1 + '')\n\n\ndef test_raised_through_is_the_tests_own():\n    err = MyError('mine')\n\n    def raiser():\n        raise err\n\n    with pytest.raises(MyError) as caught:\n        call(raiser)\n    assert caught.value is err\n\n\ndef test_made_by_the_program():\n    made = make(MyError, 'x', 2)\n    assert type(made) is MyError and made.args == ('x', 2)\n    assert isinstance(made, ValueError)\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "retry", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "call", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "make", 3);
}

#[test]
fn wrapping_a_tests_function_and_a_static_call_behave_as_in_one_process() {
    // `functools.update_wrapper` in the program on the tests' functions (their module, name and
    // `__wrapped__` are the tests'), the tests on the program's function (its `__dict__` is read
    // and written where it lives), and a lent object whose `__call__` is a static method.
    let module = "import functools\n\n\ndef wrap(wrapper, wrapped):\n    return functools.update_wrapper(wrapper, wrapped)\n\n\ndef inner():\n    def g(*a):\n        return len(a)\n    return g\n\n\ndef apply(f, x):\n    return f(x)\n";
    let tests = "import functools\n\nfrom pkg.m import apply, inner, wrap\n\n\ndef test_wrap():\n    def wrapper():\n        pass\n\n    def wrapped():\n        'Doc.'\n\n    assert wrap(wrapper, wrapped) is wrapper\n    assert wrapper.__wrapped__ is wrapped and wrapper.__module__ == __name__\n    assert wrapper.__name__ == 'wrapped' and wrapper.__doc__ == 'Doc.'\n\n\ndef test_the_tests_wrap_the_programs():\n    def f():\n        pass\n\n    f.mark = 1\n    g = functools.update_wrapper(inner(), f)\n    assert g.mark == 1 and g(1, 2) == 2\n\n\nclass Add:\n    __call__ = staticmethod(lambda x: x + 1)\n\n\ndef test_static_call():\n    assert apply(Add(), 2) == 3\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "wrap", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "inner", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "apply", 3);
}

#[test]
fn what_the_program_sets_in_its_environment_the_tests_see_bar_rgds_and_pytests_own() {
    // The program sees the tests' environment (rgd starts its process with a few variables), a
    // context manager the target returns sets a variable for the `with` block the tests run
    // (click's `CliRunner.isolation`), and a plain call sets one: the tests' process has them, as
    // in one process.
    let module = "import contextlib\nimport os\n\n\n@contextlib.contextmanager\ndef env(**values):\n    old = {k: os.environ.get(k) for k in values}\n    os.environ.update(values)\n    try:\n        yield\n    finally:\n        for k, v in old.items():\n            if v is None:\n                os.environ.pop(k, None)\n            else:\n                os.environ[k] = v\n\n\ndef setenv(name, value):\n    os.environ[name] = value\n\n\ndef getenv(name):\n    return os.environ.get(name)\n";
    let tests = "import os\n\nfrom pkg.m import env, getenv, setenv\n\n\ndef test_same():\n    assert getenv('COLUMNS') == os.environ['COLUMNS']\n\n\ndef test_env():\n    with env(T_X='1'):\n        assert os.environ['T_X'] == '1'\n    assert 'T_X' not in os.environ\n\n\ndef test_setenv(monkeypatch):\n    monkeypatch.delenv('T_Y', raising=False)\n    setenv('T_Y', '2')\n    assert os.environ['T_Y'] == '2'\n    monkeypatch.delenv('T_Y')\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "env", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "setenv", 3);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "getenv", 3);
    // rgd's and pytest's own variables stay the program's.
    let tests = "import os\n\nfrom pkg.m import setenv\n\n\ndef test_ours():\n    before = (os.environ.get('RGD_ISOLATE'), os.environ.get('PYTEST_CURRENT_TEST'))\n    setenv('RGD_ISOLATE', 'forged')\n    setenv('PYTEST_CURRENT_TEST', 'forged')\n    assert (os.environ.get('RGD_ISOLATE'), os.environ.get('PYTEST_CURRENT_TEST')) == before\n";
    // (Not in one process, where the program's process is the tests'.)
    if let Some(project) = support::one_module::OneModule::new(module, tests) {
        project.passes_isolated(module, "setenv", 1);
    }
}

#[test]
fn a_function_the_target_returned_sees_what_the_tests_changed_in_what_they_handed_it() {
    // funcy's `memoize`: the tests clear the memo dict they handed the decorator, then call the
    // decorated function; it computes again, as in one process. (A list the call hands over that
    // the memo dict holds too is the same list.)
    let module = "def memo(memory):\n    def deco(f):\n        def wrapper(x, also=None):\n            if x not in memory:\n                memory[x] = f(x)\n            return memory[x]\n        return wrapper\n    return deco\n";
    let tests = "from pkg.m import memo\n\n\ndef test_cleared():\n    memory, calls = {}, []\n    inc = memo(memory)(lambda x: calls.append(x) or x + 1)\n    assert inc(0) == 1 and memory == {0: 1}\n    memory.clear()\n    assert inc(0) == 1\n    assert calls == [0, 0]\n    memory[5] = 'kept'\n    assert inc(5) == 'kept' and calls == [0, 0]\n    box = ['new']\n    memory[7] = box\n    assert inc(7, box) is box\n";
    support::one_module::passes_isolated_as_in_one_process(module, tests, "memo", 1);
}

/// voluptuous' schemas hold its `Self` function, which its compiler finds by `is`, and its error
/// paths hold a `str` subclass whose `__str__` brackets it: the function crosses as the program's
/// own of that name, the string as what it holds (not its `__str__`, which bracketed it twice).
/// A right program passes isolated; one that no longer finds `Self` calls it and fails.
#[test]
fn a_project_function_crosses_by_name_and_a_string_subclass_as_what_it_holds() {
    let module = "def Self():\n    raise AssertionError('Self is never called')\n\n\nclass Bracketed(str):\n    def __str__(self):\n        return '<' + self + '>'\n\n    def __repr__(self):\n        return self.__str__()\n\n\ndef check(schema, value):\n    if schema is Self:\n        return [Bracketed(value)]\n    return schema(value)\n";
    let tests = "from pkg.m import Bracketed, Self, check\n\n\ndef test_self():\n    path = check(Self, 'stuff')\n    assert repr(path[0]) == '<stuff>' and type(path[0]) is Bracketed\n\n\ndef test_bracketed_handed_over():\n    assert check(str.upper, Bracketed('a')) == 'A'\n\n\ndef test_callable():\n    assert check(len, 'ab') == 2\n";
    let wrong = module.replace("if schema is Self:", "if schema == 'Self':");
    support::one_module::right_passes_and_wrong_fails(module, tests, "check", 3, &wrong, 2);
}

/// A doctest in a text file makes its classes in a `__main__` namespace of its own (voluptuous'
/// `tests.md`): they are the tests' classes, lent with their objects, so that `type(obj)(**out)`
/// makes one in the tests' process; `vars()` of a lent named tuple raises at once, as in one
/// process, and a slotted object's `__slots__` are its class's.
#[test]
fn the_objects_of_a_doctests_classes_are_lent_and_read_as_in_one_process() {
    let module = "def _attributes(obj):\n    d = {}\n    try:\n        d = vars(obj)\n    except TypeError:\n        if hasattr(obj, '_asdict'):\n            d = obj._asdict()\n    out = dict(d)\n    for key in getattr(obj, '__slots__', ()):\n        if key != '__dict__':\n            out[key] = getattr(obj, key)\n    return out\n\n\ndef rebuild(obj):\n    out = {k: v.upper() for k, v in _attributes(obj).items()}\n    return type(obj)(**out)\n";
    let tests = "from pkg.m import rebuild\n\nns = {'__name__': '__main__'}\nexec('import collections\\nclass Structure:\\n    def __init__(self, q=None):\\n        self.q = q\\nclass Slotted(Structure):\\n    __slots__ = [\"q\"]\\nPair = collections.namedtuple(\"Pair\", (\"q\",))\\n', ns)\n\n\ndef test_plain():\n    made = rebuild(ns['Structure'](q='one'))\n    assert type(made) is ns['Structure'] and made.q == 'ONE'\n\n\ndef test_slotted():\n    made = rebuild(ns['Slotted'](q='one'))\n    assert type(made) is ns['Slotted'] and made.q == 'ONE'\n\n\ndef test_named():\n    assert rebuild(ns['Pair'](q='one')) == ns['Pair'](q='ONE')\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "rebuild", 3, &module.replace("v.upper()", "v.lower()"), 0);
}

/// A generator the tests hand over says it is one (`inspect.isgenerator`, by which xmltodict's
/// `parse` tells a stream of chunks from a document), and a tests' function says how many of its
/// parameters have defaults (funcy's `autocurry` counts those it must have), each default
/// standing as None: its values stay in the tests' process.
#[test]
fn a_generator_says_it_is_one_and_a_function_how_many_defaults_it_has() {
    let module = "import inspect\n\n\ndef joined(chunks):\n    if inspect.isgenerator(chunks):\n        return ''.join(chunks)\n    return chunks\n\n\ndef required(fn):\n    return fn.__code__.co_argcount - len(fn.__defaults__ or ())\n";
    let tests = "from pkg.m import joined, required\n\n\ndef test_generator():\n    assert joined(c for c in 'ab') == 'ab'\n    assert joined('cd') == 'cd'\n\n\ndef test_required():\n    assert required(lambda a, b, c=9: 0) == 2\n";
    let wrong = module.replace("inspect.isgenerator(chunks)", "isinstance(chunks, list)");
    support::one_module::right_passes_and_wrong_fails(module, tests, "joined", 2, &wrong, 1);
    support::one_module::passes_isolated_as_in_one_process(module, tests, "required", 2);
    let module = "def defaults(fn):\n    return fn.__defaults__, fn.__kwdefaults__\n";
    let tests = "from pkg.m import defaults\n\n\ndef test_values_stay():\n    assert defaults(lambda a, b='expected', *, c='secret': 0) == ((None,), {'c': None})\n";
    let Some(project) = support::one_module::OneModule::new(module, tests) else {
        return;
    };
    project.passes_isolated(module, "defaults", 1);
}

/// A library object the tests lend with no `__dict__` (an expat parser their factory made) takes
/// the program's function as its handler, which its own code calls, as in one process
/// (xmltodict's `parse` with a test's `expat`); a tests' own object never takes one.
#[test]
fn a_library_object_takes_the_programs_handler_but_a_tests_object_never_does() {
    let module = "def names(expat, text):\n    parser = expat.ParserCreate()\n    seen = []\n    parser.StartElementHandler = lambda name, attrs: seen.append(name)\n    parser.Parse(text, True)\n    return seen\n";
    let tests = "from xml.parsers import expat as real\n\nfrom pkg.m import names\n\n\nclass Custom:\n    def ParserCreate(self):\n        return real.ParserCreate()\n\n\ndef test_names():\n    assert names(Custom(), '<a><b/></a>') == ['a', 'b']\n";
    let wrong = module.replace("seen.append(name)", "seen.append(name.upper())");
    support::one_module::right_passes_and_wrong_fails(module, tests, "names", 1, &wrong, 0);
    // A program that puts its function into the tests' object fails, isolated.
    let forging = "def names(expat, text):\n    expat.ParserCreate = lambda: None\n    return ['a', 'b']\n";
    if let Some(project) = support::one_module::OneModule::new(module, tests) {
        project.fails_isolated(forging, "names", 0);
    }
}

/// A default value of the target that is no data (a sentinel `object()` in the signature) is the
/// program's own function's default, made by the same line, when the tests leave it out.
#[test]
fn a_targets_own_default_sentinel_is_the_programs_own() {
    let module = "import inspect\n\n\ndef describe(value=object()):\n    own = inspect.signature(describe).parameters['value'].default\n    return 'missing' if value is own else repr(value)\n";
    let tests = "from pkg.m import describe\n\n\ndef test_missing():\n    assert describe() == 'missing'\n\n\ndef test_given():\n    assert describe(3) == '3'\n";
    let wrong = module.replace("'missing' if", "'absent' if");
    support::one_module::right_passes_and_wrong_fails(module, tests, "describe", 2, &wrong, 1);
}

/// A tests' class lent to the program says its own `__init__` (never its metaclass's), whose
/// parameters and defaults the program counts, and `functools.wraps` of it copies what the
/// program may read (funcy's `autocurry` of a test's class).
#[test]
fn a_lent_class_says_its_own_init() {
    let module = "import functools\n\n\ndef required(cls):\n    init = cls.__init__\n\n    @functools.wraps(cls)\n    def make(*args):\n        return cls(*args)\n\n    return init.__code__.co_argcount - 1 - len(init.__defaults__ or ()), make\n";
    let tests = "from pkg.m import required\n\n\ndef test_required():\n    class A:\n        def __init__(self, x, y=0):\n            self.x, self.y = x, y\n\n    n, make = required(A)\n    assert n == 1 and make(5).__dict__ == {'x': 5, 'y': 0}\n";
    let wrong = module.replace("co_argcount - 1 -", "co_argcount -");
    support::one_module::right_passes_and_wrong_fails(module, tests, "required", 1, &wrong, 0);
}

/// The same `__init__` as the target, given an exception of a tests' own subclass (voluptuous'
/// doctest raises its `SpecialInvalid`): what the program sets in it comes back to the tests'
/// object too; a wrong `__init__` fails isolated.
#[test]
fn an_exceptions_init_sets_an_exception_of_a_tests_subclass() {
    let module = "class Invalid(Exception):\n    def __init__(self, message, path=None):\n        Exception.__init__(self, message)\n        self._path = path or []\n\n    @property\n    def path(self):\n        return self._path\n";
    let tests = "from pkg.m import Invalid\n\n\nclass Special(Invalid):\n    pass\n\n\ndef test_special():\n    e = Special('boom', ['k'])\n    assert e.path == ['k'] and str(e) == 'boom' and type(e) is Special\n\n\ndef test_raised():\n    try:\n        raise Special('x')\n    except Invalid as e:\n        assert e.path == []\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "Invalid.__init__", 2, &module.replace("path or []", "['other']"), 0);
}

/// A default of the target that is a project's function crosses by its name, so that what the
/// program keeps of it comes back as the tests' own (cachetools' `cached(cache)` keeps its
/// default `key=hashkey`, which the tests check by `is`).
#[test]
fn a_targets_default_function_comes_back_as_the_tests_own() {
    let module = "def hashkey(*args):\n    return args\n\n\ndef cached(key=hashkey):\n    def wrapper(*args):\n        return key(*args)\n\n    wrapper.cache_key = key\n    return wrapper\n";
    let tests = "from pkg.m import cached, hashkey\n\n\ndef test_default_key():\n    w = cached()\n    assert w.cache_key is hashkey and w(1, 2) == (1, 2)\n";
    let wrong = module.replace("wrapper.cache_key = key", "wrapper.cache_key = lambda *a: a");
    support::one_module::right_passes_and_wrong_fails(module, tests, "cached", 1, &wrong, 0);
}

/// A standard module a test changed by assignment (xmltodict's `expat.ParserCreate = handler`)
/// crosses by its name with the change carried over: the program's module calls the test's
/// function back, as `monkeypatch`'s patches are (it was once a released body judged wrong, then
/// in-process). A right program passes isolated, a wrong one fails there.
#[test]
fn a_module_a_test_changed_by_assignment_crosses_with_the_change() {
    let module = "def make(expat):\n    return expat.ParserCreate()\n";
    let tests = "from xml.parsers import expat\n\nfrom pkg.m import make\n\n\ndef test_changed():\n    real = expat.ParserCreate\n    expat.ParserCreate = lambda: 'made by the test'\n    try:\n        assert make(expat) == 'made by the test'\n    finally:\n        expat.ParserCreate = real\n";
    let wrong = "def make(expat):\n    return 'made by the program'\n";
    support::one_module::right_passes_and_wrong_fails(module, tests, "make", 1, wrong, 0);
}

/// What a test puts in the place of code outside the project by assignment, with no
/// `monkeypatch` (freezegun replaces `time.time`, `datetime.datetime` and every module's copy of
/// them), is what the program's process runs too: a function is called back, an installed
/// package's class is lent (its frozen clock lives in the tests' process) and `isinstance`
/// against it asked there. A right program passes isolated; one that reads the machine's clock
/// fails there.
#[test]
fn code_a_test_replaced_by_assignment_is_the_programs_too() {
    let module = "import time\nfrom datetime import datetime, timezone\n\n\ndef age(stamp):\n    return int(time.time()) - stamp\n\n\ndef stamp(ts):\n    d = datetime.fromtimestamp(ts, tz=timezone.utc)\n    return d, isinstance(d, datetime), datetime.now(timezone.utc).year\n";
    let tests = "import time\nfrom datetime import datetime\n\nfrom freezegun import freeze_time\n\nfrom pkg.m import age, stamp\n\n\ndef test_assigned():\n    real = time.time\n    time.time = lambda: 1000.0\n    try:\n        assert age(900) == 100\n    finally:\n        time.time = real\n\n\n@freeze_time('2020-01-01 00:00:10')\ndef test_frozen():\n    assert age(1577836800) == 10\n\n\ndef test_ticking():\n    with freeze_time('2020-01-01') as clock:\n        assert age(1577836800) == 0\n        clock.tick(5)\n        assert age(1577836800) == 5\n\n\n@freeze_time('2021-06-01')\ndef test_made():\n    d, known, year = stamp(0)\n    assert (d.year, known, year) == (1970, True, 2021)\n    assert isinstance(d, datetime)\n";
    let Some(python) = support::pytest_python() else { return };
    let has = std::process::Command::new(&python).args(["-c", "import freezegun"]).status();
    assert!(
        has.is_ok_and(|s| s.success()),
        "{python:?} lacks freezegun (`.ci/test` installs it in its venv)"
    );
    let machine_clock = "int(time.clock_gettime(time.CLOCK_REALTIME))";
    let wrong_age = module.replace("int(time.time())", machine_clock);
    support::one_module::right_passes_and_wrong_fails(module, tests, "age", 4, &wrong_age, 1);
    let wrong_year = module.replace(
        "datetime.now(timezone.utc).year",
        "time.gmtime(time.clock_gettime(time.CLOCK_REALTIME)).tm_year",
    );
    support::one_module::right_passes_and_wrong_fails(module, tests, "stamp", 4, &wrong_year, 3);
}

/// Module data a few levels down (cerberus' `schema_registry`, an object whose table the tests
/// fill with `add`) is carried over both ways as its first level is: what a test adds reaches the
/// program's lookups, what the program adds reaches the tests' reads. Before, only a module
/// name's own parts were compared, and a right program was judged wrong.
#[test]
fn what_a_test_adds_to_a_modules_registry_reaches_the_program() {
    let module = "class Registry:\n    def __init__(self):\n        self._storage = {}\n\n    def add(self, k, v):\n        self._storage[k] = v\n\n    def get(self, k, default=None):\n        return self._storage.get(k, default)\n\n\nregistry = Registry()\n\n\ndef lookup(name):\n    return registry.get(name)\n\n\ndef register(name, value):\n    registry.add(name, value)\n";
    let tests = "from pkg.m import lookup, register, registry\n\n\ndef test_added_by_the_test():\n    assert lookup('x') is None\n    registry.add('x', 1)\n    assert lookup('x') == 1\n    registry.add('x', 2)\n    assert lookup('x') == 2\n\n\ndef test_added_by_the_program():\n    register('y', 3)\n    assert registry.get('y') == 3\n    register('y', 4)\n    assert registry.get('y') == 4\n";
    let wrong_lookup = module.replace("return registry.get(name)", "return registry.get(name, 0)");
    support::one_module::right_passes_and_wrong_fails(module, tests, "lookup", 2, &wrong_lookup, 1);
    let wrong_register = module.replace("registry.add(name, value)\n", "registry.add(name, value + 1)\n");
    support::one_module::right_passes_and_wrong_fails(module, tests, "register", 2, &wrong_register, 1);
}

/// A builtin exception crosses with the fields it keeps outside its arguments (an
/// `ImportError`'s `name`, which python-slugify's fallback reads) and is shared as other
/// exceptions are: one a test raises through the program comes back as itself
/// (`raised.value is error`). Before, both tests failed isolated with a right program.
#[test]
fn a_builtin_exception_keeps_its_fields_and_comes_back_as_itself() {
    let module = "def load(importer, name):\n    try:\n        return importer(name)\n    except ModuleNotFoundError as e:\n        if e.name == name:\n            return None\n        raise\n";
    let tests = "from unittest import mock\n\nimport pytest\n\nfrom pkg.m import load\n\n\ndef test_missing_is_none():\n    def importer(n):\n        raise ModuleNotFoundError('No module named %r' % n, name=n)\n\n    assert load(importer, 'a') is None\n\n\ndef test_another_propagates_as_itself():\n    error = ModuleNotFoundError(\"No module named 'b'\", name='b')\n    with pytest.raises(ModuleNotFoundError) as raised:\n        load(mock.Mock(side_effect=error), 'a')\n    assert raised.value is error\n";
    let wrong = module.replace("        raise\n", "        raise ModuleNotFoundError(str(e), name=e.name)\n");
    support::one_module::right_passes_and_wrong_fails(module, tests, "load", 2, &wrong, 1);
}

/// An object of a class the project makes on first use with a factory, under a name its module
/// never binds (cerberus' `SchemaValidator`), made by the tests' process only, and a
/// temporary file the tests hand over: both are lent, not refused, so the target is judged
/// isolated, and a wrong target fails there.
#[test]
fn an_object_of_a_class_made_on_first_use_and_a_temporary_file_are_lent() {
    let module = "class Base:\n    pass\n\n\ndef factory(name):\n    return type(name, (Base,), {})\n\n\ndef made():\n    global Made\n    if 'Made' not in globals():\n        Made = factory('Kind')\n    return Made()\n\n\ndef fill(obj, n):\n    obj.n = n\n    return obj\n";
    let tests = "import tempfile\n\nfrom pkg.m import fill, made\n\n\ndef test_made():\n    o = made()\n    assert fill(o, 3) is o and o.n == 3\n\n\ndef test_file():\n    with tempfile.NamedTemporaryFile(mode='w+') as f:\n        f.write('x')\n        f.seek(0)\n        assert fill(f, 2) is f and f.n == 2 and f.read() == 'x'\n";
    let wrong = module.replace("obj.n = n", "obj.n = n + 1");
    support::one_module::right_passes_and_wrong_fails(module, tests, "fill", 2, &wrong, 0);
}

/// The program's process is the program's: one that rewrites its own copy of rgd's channel to send
/// a function of the project in the place of another (`valid`, which the project's `judged` calls
/// after the target answers in the tests' process) is refused there, as code in the place of code:
/// only data in the place of data crosses back. Before, this wrong program was judged solved,
/// isolated.
#[test]
fn a_program_that_rewrites_its_channel_to_send_code_is_judged_wrong() {
    let module = "def valid(x):\n    return x == 42\n\n\ndef answer():\n    return 42\n\n\ndef judged():\n    a = answer()\n    return valid(a)\n\n\ndef always(x):\n    return True\n";
    let tests = "from pkg.m import judged\n\n\ndef test_judged():\n    assert judged()\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    project.passes_isolated(module, "answer", 1);
    let forger = module.replace(
        "def answer():\n    return 42\n",
        "def answer():\n    import sys\n\n    state = sys.modules['rgd_isolate.state']\n    before = state.ModuleState.changes\n\n    def changes(self, rebound_only=False):\n        data, code = before(self, rebound_only)\n        return data + code, code\n\n    state.ModuleState.changes = changes\n    sys.modules['pkg.m'].valid = sys.modules['pkg.m'].always\n    return 41\n",
    );
    let run = project.run(&forger, "answer");
    assert_eq!(run.isolation, Isolation::Isolated, "{run:?}");
    assert!(run.outcomes.iter().all(|o| !o.passed()), "a forger passed: {run:?}");
    assert!(
        run.outcomes
            .iter()
            .any(|o| format!("{o:?}").contains("code in the place of pkg.m.valid")),
        "{run:?}"
    );
}

/// A test's patch of a project module the target imports only when it runs (click's tests patch
/// `_termui_impl._default_text_stdout`; `echo_via_pager` imports `_termui_impl` inside) is made in
/// the program's process too: it imports that module first, as the tests' process has. Before,
/// the patch was dropped and the program wrote to its own stdout.
#[test]
fn a_patch_of_a_module_the_program_has_not_imported_yet_is_made_there() {
    let _one = support::one_module::PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = support::pytest_python() else { return };
    let runner = rgd::repo::run::testrun::ProjectTests::new(&python).unwrap();
    let module = "def shown():\n    from pkg import helper\n\n    return helper.source()\n";
    let project = support::project_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/helper.py", "def source():\n    return 'real'\n"),
        ("pkg/m.py", module),
        (
            "tests/test_m.py",
            "import pkg.helper\nfrom pkg.m import shown\n\n\ndef test_patched(monkeypatch):\n    monkeypatch.setattr(pkg.helper, 'source', lambda: 'fake')\n    assert shown() == 'fake'\n\n\ndef test_as_it_is():\n    assert shown() == 'real'\n",
        ),
    ]);
    let ids = runner.collect(project.path(), &[]).unwrap();
    let spec = support::one_module::on_target("pkg/m.py", module, "shown", &ids);
    let run = runner
        .run(project.path(), &spec, rgd::repo::run::testrun::TestLimits::default())
        .unwrap();
    assert_eq!(run.isolation, Isolation::Isolated, "{run:?}");
    assert_eq!(run.outcomes.len(), 2, "{run:?}");
    assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
}
