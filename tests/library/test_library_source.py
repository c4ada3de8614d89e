"""A stored helper is exactly one plain `def`: nothing in it runs before the program."""

import pytest

from api_store import ApiStore
from sandbox_namespace import IMAGE
from vadar.library.implementation_log import StoreLog
from vadar.agents.api import ApiAgent, TestContext
from vadar.library.hand import HandLibraryError, parse_functions
from vadar.programs.namespace import library_functions
from vadar.llm.doubles import ScriptedLLM
from vadar.sandbox import LibraryFunction, LibrarySourceError, Sandbox, check_library_source

SIX = [[float(i), 0.0, float(i) + 1, 1.0] for i in range(6)]

ATTACKS = {
    "walrus default": ("_count_objects",
                       "def _count_objects(image, _unused=(loc := (lambda *a, **k: [[0.0, 0.0, 1.0, 1.0]]))):\n"
                       "    return 1\n"),
    "lambda default": ("_count_objects", "def _count_objects(image, f=lambda: 1):\n    return f()\n"),
    "decorator": ("_deep", "@((depth := (lambda *a, **k: 99.0)) and (lambda f: f))\ndef _deep(image):\n"
                           "    return 1\n"),
    "top-level final_result": ("_x", "final_result = 'from library'\ndef _x(image):\n    return 1\n"),
    "top-level after def": ("_x", "def _x(image):\n    return 1\nloc = None\n"),
    "global in body": ("_x", "def _x(image):\n    global final_result\n    final_result = 3\n    return 1\n"),
    "other name": ("_x", "def loc(image, noun):\n    return []\n"),
}


def loc(image, noun):
    return [list(b) for b in SIX]


def depth(image, bbox):
    return 2.0


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox() as box:
        yield box


@pytest.mark.parametrize("name, source", ATTACKS.values(), ids=list(ATTACKS))
def test_definition_time_code_is_refused_when_checked(name, source):
    with pytest.raises(LibrarySourceError):
        check_library_source(name, source)


def test_plain_helpers_with_constant_defaults_pass():
    check_library_source("_f", 'def _f(image, noun="cube", k=-1, s=+0.5, flag=None, *, t=True):\n'
                               '    """Doc."""\n    g = lambda x=loc: x\n    return k\n')


@pytest.mark.parametrize("name, source", ATTACKS.values(), ids=list(ATTACKS))
def test_the_worker_refuses_them_and_modules_stay_recorded(sandbox, name, source):
    namespace = {"image": IMAGE, "loc": loc, "depth": depth, name: LibraryFunction(name, source)}
    if name == "_x" and source.startswith("def loc"):
        namespace = {"image": IMAGE, "loc": loc, "depth": depth, "_x": LibraryFunction("_x", source)}
    result = sandbox.execute('final_result = len(loc(image, "objects"))', namespace, timeout_s=10)
    assert result.error is not None and "NotAllowed" in result.error and result.value is None
    assert result.value != 1 and result.value != "from library"
    # Without the helper, the same program answers 6 and records its call.
    clean = sandbox.execute('final_result = len(loc(image, "objects"))',
                            {"image": IMAGE, "loc": loc}, timeout_s=10)
    assert clean.value == 6 and [c.name for c in clean.calls] == ["loc"]


def test_a_helper_stored_under_another_key_cannot_bind_a_module(sandbox):
    with pytest.raises(ValueError, match="stored under the name"):
        sandbox.execute("final_result = 1", {"image": IMAGE, "loc": loc,
                                             "_helper": LibraryFunction("loc", "def loc(i, n):\n    return []\n")})


def test_bad_stored_helpers_are_left_out_of_namespaces():
    store = ApiStore.memory()
    for name, source in [("_good", "def _good(image):\n    return 1\n"), *ATTACKS.values()]:
        if name not in store:
            store.propose(name, "(image)", "Doc.")
        store.implement(name, source)
    functions = library_functions(store.functions())
    assert list(functions) == ["_good"]
    store.close()


@pytest.mark.parametrize("source", [
    '@staticmethod\ndef _f(image):\n    """Doc."""\n    return 1\n',
    'def _f(image, k=(loc := 1)):\n    """Doc."""\n    return 1\n',
    'final_result = "from library"\n\ndef _f(image):\n    """Doc."""\n    return 1\n',
])
def test_library_add_refuses_them(source):
    with pytest.raises(HandLibraryError):
        parse_functions(source)


@pytest.mark.parametrize("attack", [
    "def _center_x(bbox, _u=(loc := (lambda *a, **k: []))):\n    return 1.0",
    "@((depth := (lambda *a, **k: 99.0)) and (lambda f: f))\ndef _center_x(bbox):\n    return 1.0",
])
def test_the_api_agent_refuses_them_and_retries(attack):
    store = ApiStore.memory()
    store.propose("_center_x", "(bbox: BBox) -> float", "Horizontal centre of a box.")
    llm = ScriptedLLM([f"```python\n{attack}\n```", "```python\ndef _center_x(bbox):\n    return 1.0\n```"])
    context = TestContext("How many objects?", {"image": "img", "loc": loc, "depth": depth})
    with Sandbox() as box:
        report = ApiAgent(llm, store, log=StoreLog(store), executor=lambda c, ns: box.execute(c, dict(ns), timeout_s=10)).implement(
            ["_center_x"], [context])
    assert report.implemented == ["_center_x"] and report.attempts["_center_x"] == 2
    assert store.attempts("_center_x")[0].error.startswith("library function _center_x:")
    assert "@" not in store.current("_center_x").code and ":=" not in store.current("_center_x").code
    store.close()


@pytest.mark.parametrize("program", ["o = ValueError.mro()[-1]\nfinal_result = 1",
                                     "o = getattr(ValueError, 'mro')()[-1]\nfinal_result = 1",
                                     "f = getattr\no = f(KeyError, 'm' + 'ro')\nfinal_result = 1"])
def test_programs_have_no_route_to_object(sandbox, program):
    result = sandbox.execute(program, {"image": IMAGE}, timeout_s=10)
    assert result.error is not None and "restricted name" in result.error and not result.has_final_result


def test_hasattr_and_getattr_with_a_default_say_mro_is_absent(sandbox):
    result = sandbox.execute("final_result = [hasattr(int, 'mro'), getattr(int, 'mro', 7)]", {"image": IMAGE})
    assert result.value == [False, 7]
