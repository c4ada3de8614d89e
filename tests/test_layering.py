"""The layering rules of the tree: dependencies point one way, and `vadar` has no import circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vadar", "api_store", "base_modules", "omni3d_bench")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path) -> set[str]:
    """Our modules that `path` imports anywhere (lazy imports too), except under `if TYPE_CHECKING`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for block in ast.walk(tree) if _type_checking_only(block) for n in ast.walk(block)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in PACKAGES}


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_dependencies_point_one_way():
    for package, forbidden in (("base_modules", {"vadar", "omni3d_bench", "api_store"}),
                               ("omni3d_bench", {"vadar", "api_store"}),
                               ("api_store", {"vadar", "base_modules", "omni3d_bench"})):
        for path in sources(package):
            bad = {name for name in imports(path) if name.split(".")[0] in forbidden}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_vadar_has_no_import_circle():
    modules = {module_name(p): p for p in sources("vadar")}
    graph = {name: {target for target in imports(path) if target in modules and target != name}
             for name, path in modules.items()}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        assert name not in visiting, "import circle: " + " -> ".join([*visiting[visiting.index(name):], name])
        visiting.append(name)
        for target in graph[name]:
            visit(target)
        visiting.pop()
        done.add(name)

    for name in graph:
        visit(name)


def test_the_five_module_names_are_spelled_out_in_one_file():
    spelled = {path.relative_to(ROOT).as_posix() for package in PACKAGES for path in sources(package)
               if '"get_2D_object_size"' in path.read_text(encoding="utf-8")
               or "get_2D_object_size:" in path.read_text(encoding="utf-8")}
    assert spelled == {"base_modules/module.py"}


SANDBOX_PUBLIC = "vadar.sandbox"


def test_nothing_outside_the_sandbox_imports_its_internals():
    for package in PACKAGES:
        for path in sources(package):
            name = module_name(path)
            if name == SANDBOX_PUBLIC or name.startswith(SANDBOX_PUBLIC + "."):
                continue
            inner = {t for t in imports(path) if t.startswith(SANDBOX_PUBLIC + ".")
                     and t.split(".")[2] in {p.stem for p in (ROOT / "vadar/sandbox").glob("*.py")}}
            assert not inner, f"{path.relative_to(ROOT)} reaches into the sandbox: {sorted(inner)}"


def test_the_sandbox_worker_imports_only_the_sandbox_and_the_text_helpers():
    # The worker runs untrusted code; what it imports is all that a program could ever reach.
    allowed = ("vadar.sandbox", "vadar.text")
    for stem in ("worker", "policy", "printing", "codec", "errors"):
        for target in imports(ROOT / "vadar/sandbox" / f"{stem}.py"):
            assert target.startswith(allowed), f"vadar/sandbox/{stem}.py imports {target}"


def test_the_top_of_vadar_holds_few_flat_modules():
    flat = sorted(p.name for p in (ROOT / "vadar").glob("*.py"))
    assert len(flat) <= 8, flat
    assert not [n for n in flat if n.startswith("sandbox")], flat


def test_no_source_file_is_over_400_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for top in (*PACKAGES, "tests", "benchmarks")
            for p in sorted((ROOT / top).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400]
    assert not long, long


def test_no_import_circle_across_our_packages():
    modules = {module_name(p): p for package in PACKAGES for p in sources(package)}
    graph = {name: {t for t in imports(path) if t in modules and t != name} for name, path in modules.items()}
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2:
            return
        assert state.get(name) != 1, "import circle: " + " -> ".join([*trail[trail.index(name):], name])
        state[name] = 1
        for target in sorted(graph[name]):
            visit(target, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        visit(name, [])


# The floors of `vadar/`, lowest first: a package imports only from its own floor or below.
FLOORS = (
    {"text", "config", "prompts"},
    {"sandbox", "llm"},
    {"programs"},
    {"agents"},
    {"library"},
    {"runs"},
    {"report"},
    {"app"},
    {"cli"},
)


def _floor(name: str) -> int | None:
    parts = name.split(".")
    if parts[0] != "vadar" or len(parts) < 2:
        return None
    return next((i for i, rooms in enumerate(FLOORS) if parts[1] in rooms), None)


def test_no_import_runs_back_up_the_floors_of_vadar():
    for path in sources("vadar"):
        own = _floor(module_name(path))
        if own is None:
            continue
        upward = sorted(t for t in imports(path) if (floor := _floor(t)) is not None and floor > own)
        assert not upward, f"{path.relative_to(ROOT)} imports from a floor above it: {upward}"


def test_every_package_of_vadar_has_a_floor():
    packages = {p.name for p in (ROOT / "vadar").iterdir() if (p / "__init__.py").exists()}
    flat = {p.stem for p in (ROOT / "vadar").glob("*.py") if p.stem != "__init__"}
    assert packages | flat <= set().union(*FLOORS), sorted((packages | flat) - set().union(*FLOORS))


CLI_MAY_IMPORT = ("app", "config", "text", "cli")


def test_the_command_line_imports_only_the_python_api_the_config_and_the_text_helpers():
    # The command line is thin over `vadar/app`: whatever a command needs of the floors below is an
    # app method, so the Python API can do everything the command does.
    for path in sources("vadar/cli"):
        beyond = sorted(t for t in imports(path) if t.startswith("vadar.") and t.split(".")[1] not in CLI_MAY_IMPORT)
        assert not beyond, f"{path.relative_to(ROOT)} imports {beyond}"
