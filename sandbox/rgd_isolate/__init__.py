"""rgd's isolation of a repository target (`rgd solve --repo`, `rgd fix`): the agents' function
runs in a process of its own, apart from the tests that judge it.

Two processes share one socket and this module:

* the **tests' process** (pytest, the project's modules, the tests, rgd's plugin): the target's
  body there is a stub, `return __import__("rgd_isolate").call(QUALNAME, args, kwargs)`;
* the **program's process** (`serve()`): the project's modules with the agents' function spliced
  in and no test file at all, answering calls.

Only data crosses, both ways: builtins and containers, instances of the project's own classes
(rebuilt from their attributes with the receiver's own copy of the class, never a class the sender
made: a class the project does not define is refused by name), a fixed list of the standard
library's value types, enum members, named tuples and exceptions. Shared references and cycles
survive (a message is a table of nodes); an object that came from the other side goes back as
itself (`result is arg`). A mutable object keeps its identity on both sides for as long as either
holds it (`lifetimes`: what only the channel holds dies, as in one process): sent again, it crosses
as that identity with its contents only where they changed since the sides last agreed (a parser handed over at every call sends its position, not its tokens again). After a
call, every mutable object the call named is written back the same way into the tests' objects (a
list it sorted, `self`'s attributes). Callables and iterators stay where they were made and are
called or pulled through the socket. One thread's call at a time: tests that call from threads
take turns on the socket.

What is no data but the tests' own (an object of a test's class, a stream, a lock) the tests'
process lends: it stays there, and the program uses it through a handle by its own names, never
its class's code or a method's globals (`Policy.lendable`, `Peer.serve_lent`); copying it, making
another of its class or reading its attributes as a whole is done there too.

What the program does in its own process that would change the tests' in one process is carried
over: a stream of `sys` it replaces (`_Printed`), the directory it moves to within the project
(`_carry_directory`), a plain attribute it sets on a tests' function or class. What it cannot do
across the processes is its own failure, said as such (`_cannot`): nothing the program does
chooses how it is judged. What the tests can neither send nor lend (a test case, a patch the
program's process cannot see: `FALLBACK_CAUSES`, the one list) is no verdict: the stub reports it
to rgd (`on_refusal`), which then judges the target in-process, where the verdict is only ever
"unverified", never solved. What the program cannot send back is the program's failure: the
test sees an error.

Messages are bounded: a length prefix checked before anything is read (`MAX_MESSAGE`), at most
`MAX_NODES` nodes, `MAX_DEPTH` levels of immutable nesting (mutable chains are made from the top
level: `DEFER_DEPTH`), `MAX_INT_DIGITS` digits in an integer.
"""

from .common import COPY_LIMIT, DEFER_DEPTH, Gone, MAX_DEPTH, MAX_INT_DIGITS, MAX_MESSAGE, MAX_NODES, MAX_SENT_VALUES, OUTPUT_CAP, POLL_BACKOFF, POLL_SECONDS, RUN_COPY_LIMIT, Refused, SCALARS_PER_COPY, TRACE_CAP, _MISSING  # noqa: F401
from .modules import _NEVER_STATE, _PLAIN, _STDLIB, _bare, _installed_spec, _is_installed_module, _is_stdlib_module, _plain_reduction, _spec_origin, _stdlib_spec  # noqa: F401
from .refusals import FALLBACK_CAUSES, NotIsolated, _refuse, _said  # noqa: F401
from .values import _BUILTIN_BASES, _BUILTIN_DESCRIPTORS, _BY_NAME, _CONSTANTS, _DEFERRABLE, _DELTA_DICTS, _DELTA_LISTS, _DICT_VIEWS, _ENVELOPES, _GENEROUS, _HEAPTYPE, _IMMUTABLE_BASES, _MOCK_MUTATORS, _MOCK_RECORDS, _MUTABLE_BUILTINS, _NOT_LENT, _PATTERN_METHODS, _PLAIN_DICTS, _Probe, _SAFE_INT, _SCALARS, _SCALAR_SET, _SEP, _SHARED_KINDS, _SHARED_STD, _SLOTS, _STD_VALUE_CLASSES, _UNCHANGING, _UNCHANGING_TYPES, _as_sent, _blank, _builtin_base, _builtin_class, _by_class_name, _children, _defaults, _dict_delta, _envelope, _equals_anything, _exact, _find_slots, _flag_type, _generous, _hidden_state_base, _is_mock, _keep_sent, _kept_unnamed, _keywords, _known_base, _list_delta, _mutable, _named_by, _own_dict, _own_reduction, _replace_slice, _same, _slots_of, _state, _stored, _stored_on_type, _viewed_dict  # noqa: F401
from .policy import Policy, _LENT_STD, _STATE_CLASSES  # noqa: F401
from .output import _Bytes, _Capture, _OWN_VARIABLES, _OWN_VARIABLES_BYTES, _Printed, _capture_logs, _carried, _carry_directory, _carry_environment, _carry_over, _carry_streams, _env_diff, _environment, _log_keeper, _replay_logs, _replay_output, _replay_warnings, _streams_back, _write_printed  # noqa: F401
from .handles import LentCallable, LentClass, LentLibraryClass, LentMethod, LentObject, RemoteFunction, RemoteGenerator, RemoteIterator, RemoteMethod, RemoteObject, RemoteValue, _ASKED_NAMES, _AskedModule, _CallableSaidOf, _FUNCTION_INSIDES, _FunctionAttributes, _FunctionHandleType, _HANDLE_TYPES, _LENT_CLASSES, _LENT_PROTOCOL, _LENT_TYPES, _LentAttributes, _LentMeta, _MAKERS, _NOT_A_SIGNATURE, _NotASignature, _OPEN_NAMES, _PROXIES_OF_THE_PROGRAM, _PROXIES_OF_THE_TESTS, _PYTHON_NAMES, _Remote, _SOME_DEFAULT, _STAND_INS, _SaidOf, _asked_along, _asking, _call_other_side, _cannot, _encode_for, _holds_project_objects, _lent_type, _no_program_code, _stand_in  # noqa: F401
from .encode import Encoder  # noqa: F401
from .decode import Decoder  # noqa: F401
from .state import ModuleState, _KeptDict, _behaviour, _calling_back, _copy_into, _key_name, _stateless  # noqa: F401
from .peer import Peer, _stack_for  # noqa: F401
from .served import _LENT_MAKERS, _LENT_OPERATORS, _read, _signature_of  # noqa: F401
from .program_side import Server, _resolve_target, _serving, serve  # noqa: F401
from .tests_side import _CALLED_BACK, _OWN_FUNCTIONS, _OWN_MODULES, _STREAMS, _call, _client, _connect, _current_test, _forwarded, _given_files, _outside_project, _patch_entry, _patches, _stub_defaults, _test_path, baseline, call, children_checked, watch_patches  # noqa: F401
