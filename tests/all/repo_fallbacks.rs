//! Nothing a program does sends its verdict to the tests' process. Each wrong program below does,
//! in its own process, one of the things that used to make a run in-process (replace its streams,
//! change directory, copy, pickle or look into what the tests lent, make objects of a tests'
//! class, write into the tests' functions and classes, call a tests' callback whose answer is no
//! data, open the tests' files, start threads, raise what cannot cross): every one is judged
//! isolated and fails, and the honest program passes isolated. What still makes a run in-process
//! is the tests' doing (`FALLBACK_CAUSES` in `sandbox/rgd_isolate.py`): for those, a right and a
//! wrong program are judged in the same place. Needs an interpreter with pytest (see
//! `support::pytest_python`).

use crate::support;

use rgd::repo::isolate::Isolation;
use support::one_module::OneModule;

/// The tests hand the target a test's object, a test's function, a test's class and a callback
/// whose answer is a module (no data).
const TESTS: &str = "import types\n\nfrom pkg.m import total\n\n\nclass Checker:\n    def __init__(self):\n        self.seen = []\n\n    def ok(self):\n        return self.seen == [6]\n\n\ndef twice(x):\n    return 2 * x\n\n\ndef a_module():\n    return types\n\n\ndef test_total():\n    c = Checker()\n    assert total([1, 2, 3], c, twice, Checker, a_module) == 12\n    assert c.ok()\n\n\ndef test_again():\n    assert total([4], Checker(), twice, Checker, a_module) == 8\n";

const MODULE: &str = "def total(prices, checker, double, kind, other):\n    ...\n";

const HONEST: &str =
    "def total(prices, checker, double, kind, other):\n    checker.seen.append(sum(prices))\n    return double(sum(prices))\n";

/// Each provokes one former fallback, then answers wrong (or not at all).
const ATTACKS: [(&str, &str); 12] = [
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

/// What still makes a run in-process is the tests': a test that hands over its own file, or
/// holds a weak reference to what it handed over, is judged in-process with the right program
/// and with a wrong one alike, for the same cause (its key in `FALLBACK_CAUSES`), before the
/// program's answer counts.
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
            "def peek(box):\n    return box.value\n",
            "import gc\nimport weakref\n\nfrom pkg.m import peek\n\n\nclass Box:\n    def __init__(self, v):\n        self.value = v\n\n\ndef test_weak():\n    cache = weakref.WeakValueDictionary()\n    b = Box(3)\n    cache['b'] = b\n    assert peek(b) == 3\n",
            "peek",
            "weak_reference",
        ),
    ];
    for (module, tests, target, cause) in cases {
        let Some(project) = OneModule::new(module, tests) else { return };
        // The same module with the target answering nothing.
        let body = module
            .lines()
            .find(|l| l.trim_start().starts_with("return "))
            .expect("a return line");
        let wrong = module.replace(body, "    return None");
        for (program, passes) in [(module.to_string(), true), (wrong, false)] {
            let run = project.run(&program, target);
            assert_eq!(run.isolation.cause(), Some(cause), "{run:?}");
            assert_eq!(run.outcomes.iter().all(|o| o.passed()), passes, "{run:?}");
        }
    }
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
