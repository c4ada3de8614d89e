"""Known ways out of a Python sandbox; every one must end as a program error, nothing more."""

from __future__ import annotations

import pytest

from base_modules.types import Image
from vadar.sandbox import Sandbox
from vadar.sandbox.codec import CodecError, decode

def host_echo(x):
    return x


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


ESCAPES = {
    "subclasses walk": "final_result = ().__class__.__bases__[0].__subclasses__()",
    "mro walk": "final_result = [].__class__.__mro__[1].__subclasses__()",
    "mro method": "final_result = int.mro()[1].__subclasses__()",
    "mro via getattr": "o = int.mro()[1]\nfinal_result = getattr(o, '__subclasses__')()",
    "import os": "import os\nfinal_result = os.listdir('/')",
    "import subprocess": "import subprocess",
    "import sys": "import sys\nfinal_result = sys.modules",
    "from os import path": "from os import path",
    "relative import": "from . import sandbox",
    "dunder import": "final_result = __import__('os')",
    "builtins name": "final_result = __builtins__",
    "module private attr": "import math\nfinal_result = math.__loader__",
    "from module private": "from statistics import _normal_dist_inv_cdf",
    "module internals": "from statistics import sys",
    "open": "final_result = open('/etc/passwd').read()",
    "eval": "final_result = eval('1 + 1')",
    "exec": "exec('x = 1')",
    "compile": "final_result = compile('1', 'x', 'eval')",
    "globals": "final_result = globals()",
    "vars": "final_result = vars()",
    "locals": "final_result = locals()",
    "dir": "final_result = dir()",
    "input": "final_result = input()",
    "breakpoint": "breakpoint()",
    "getattr dunder": "final_result = getattr(1, '__class__')",
    "getattr private": "final_result = getattr(host_echo, '_x')",
    "setattr": "setattr(host_echo, 'x', 1)",
    "format attr": "final_result = '{0.__class__}'.format(1)",
    "format globals": "def f():\n    pass\nfinal_result = '{.__globals__}'.format(f)",
    "str.format unbound": "final_result = str.format('{0.__class__}', 1)",
    "format_map": "final_result = '{a.__class__}'.format_map({'a': 1})",
    "format builtin": "final_result = format(1, '')",
    "fstring attr": "final_result = f'{(1).__class__}'",
    "fstring globals": "def f():\n    pass\nfinal_result = f'{f.__globals__}'",
    "generator frame": "def g():\n    yield 1\nfinal_result = g().gi_frame.f_globals",
    "generator code": "def g():\n    yield 1\nfinal_result = g().gi_code",
    "function globals": "def f():\n    pass\nfinal_result = f.__globals__",
    "function code": "final_result = (lambda: 0).__code__",
    "host closure": "final_result = host_echo.__closure__",
    "print self": "final_result = print.__self__",
    "traceback frame": "try:\n    1 / 0\nexcept Exception as e:\n    final_result = e.__traceback__.tb_frame",
    "tb_frame name": "try:\n    1 / 0\nexcept Exception as e:\n    t = e.with_traceback(None)\n    final_result = t.tb_frame",
    "type three args": "final_result = type('X', (), {})",
    "type subclasses": "final_result = type(1).__subclasses__()",
    "object builtin": "final_result = object",
    "class definition": "class X:\n    pass",
    "dunder method class": "class X:\n    def __init__(self):\n        pass",
    "rebind getattr guard": "_getattr_ = lambda o, n: 1\nfinal_result = (1).__class__",
    "rebind print guard": "_print = 1",
    "tmp name": "_tmp0 = 1",
    "dunder argument": "def f(__x):\n    return 1",
    "dunder variable": "__x = 1",
    "async": "async def f():\n    pass",
    "except star": "try:\n    pass\nexcept* Exception:\n    pass",
    "nonlocal": "def f():\n    x = 1\n    def g():\n        nonlocal x\n    return g",
    "modify module": "import math\nmath.pi = 3",
    "modify host function": "host_echo.x = 1",
    "modify image": "image.width = 1",
    "secret via echo": "final_result = host_echo(host_echo)",
}


@pytest.mark.parametrize("code", ESCAPES.values(), ids=ESCAPES.keys())
def test_escape_is_blocked(sandbox, code):
    namespace = {"host_echo": host_echo, "image": Image("i", "/p.png", 4, 3)}
    result = sandbox.execute(code, namespace, timeout_s=5)
    assert result.error is not None, result
    assert result.infrastructure_error is None
    assert not result.has_final_result and result.value is None


def test_sandbox_still_works_after_the_corpus(sandbox):
    assert sandbox.execute("final_result = 'fine'", {}).value == "fine"


def test_private_names_are_hidden_from_getattr_and_hasattr(sandbox):
    code = "final_result = [hasattr(1, '__class__'), hasattr(1, 'real'), getattr(1, 'zz', 'dflt')]"
    assert sandbox.execute(code, {}).value == [False, True, "dflt"]


def test_state_does_not_leak_between_programs(sandbox):
    sandbox.execute("import math\nleak = 1\nd = {}\nd['x'] = 1", {})
    result = sandbox.execute("final_result = leak", {})
    assert "NameError: name 'leak' is not defined\n" in result.error


@pytest.mark.parametrize(
    "tree",
    [
        {"C": "os.system", "f": [["command", "true"]]},
        {"R": ["os", "system"]},
        {"L": [1], "T": [2], "x": 3},
        {"D": [[{"L": []}, 1]]},
        {"L": 5},
        {"C": "base_modules.types.Image", "f": [["image_id", "x"]]},
    ],
)
def test_host_decoder_rejects_unregistered_or_malformed_data(tree):
    def make(key, values):
        raise CodecError(f"unknown dataclass {key}")

    with pytest.raises(CodecError):
        decode(tree, make)


def test_host_decoder_rejects_deep_nesting():
    tree: object = 1
    for _ in range(200):
        tree = {"L": [tree]}
    with pytest.raises(CodecError):
        decode(tree, lambda key, values: None)
