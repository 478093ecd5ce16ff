"""Entry point of the WebAssembly sandbox component (built by componentize-py).

Only modules imported while the component is built exist inside it: the CPython standard library is
not shipped as files. The list below covers what HumanEval, MBPP and APPS solutions import (measured
over the canonical solutions) plus what generated code commonly reaches for.
"""

# Preloaded for programs under test.
import array  # noqa: F401
import bisect  # noqa: F401
import calendar  # noqa: F401
import cmath  # noqa: F401
import collections  # noqa: F401
import copy  # noqa: F401
import csv  # noqa: F401
import dataclasses  # noqa: F401
import datetime  # noqa: F401
import decimal  # noqa: F401
import enum  # noqa: F401
import fractions  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import json  # noqa: F401
import math  # noqa: F401
import numbers  # noqa: F401
import operator  # noqa: F401
import queue  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import statistics  # noqa: F401
import string  # noqa: F401
import struct  # noqa: F401
import textwrap  # noqa: F401
import time  # noqa: F401
import typing  # noqa: F401
import unicodedata  # noqa: F401
import warnings  # noqa: F401
import abc  # noqa: F401
import contextlib  # noqa: F401
import types  # noqa: F401
import base64  # noqa: F401
import difflib  # noqa: F401
import pprint  # noqa: F401
import zlib  # noqa: F401
import ast  # noqa: F401  (the runner imports it lazily for call-based tasks)
import gc

import runner
from wit_world import exports


class Run(exports.Run):
    def run(self) -> None:
        runner.main()

# Every object made so far lives in the component's snapshot, in every instance. Moved to the
# collector's permanent generation, they are never traversed again: without this, the first full
# collection of each run walked the whole preloaded standard library (a fifth of the CPU time of
# judging HumanEval's 164 hidden suites).
gc.freeze()
