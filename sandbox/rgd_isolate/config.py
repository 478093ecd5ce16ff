"""What rgd hands each side in `RGD_ISOLATE` (JSON), as one typed structure per side: the Rust
side writes `TestsConfig` and `ProgramConfig` (`src/repo/run/isolate.rs`) with the same fields,
and a test checks that the two agree. A field missing, unknown or of the wrong type is an error
that names it, never a default."""

import dataclasses
import json


@dataclasses.dataclass(frozen=True)
class Channel:
    """What either side is handed first: its end of the socket, the copy it runs in and the
    project's modules there (`Channel` on the Rust side)."""

    fd: int
    root: str
    project: list


@dataclasses.dataclass(frozen=True)
class TestsConfig(Channel):
    """The tests' side: how long one call may take, the temporary folder both processes share."""

    timeout: float
    tmp: str


@dataclasses.dataclass(frozen=True)
class ProgramConfig(Channel):
    """The program's side (its copy holds no test file): the target's module and qualified name,
    and the tests' copy, which it cannot open (`Policy.swap_roots`)."""

    module: str
    qualname: str
    tests_root: str


def read(cls, text):
    """`text` (JSON) as `cls`, checked field by field."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("RGD_ISOLATE is not an object")
    fields = {f.name: f.type for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    missing = sorted(set(fields) - set(data))
    if unknown or missing:
        raise ValueError("RGD_ISOLATE for %s: unknown %s, missing %s" % (cls.__name__, unknown, missing))
    for name, kind in fields.items():
        value = data[name]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else isinstance(value, kind) and not isinstance(value, bool)
        if not ok:
            raise ValueError("RGD_ISOLATE for %s: %s is %r, not %s" % (cls.__name__, name, value, kind.__name__))
    return cls(**data)
