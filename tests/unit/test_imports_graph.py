"""The import graph of the package and bench/, read with `ast`: imports inside functions count, relative imports are
resolved, and a package's __init__ counts where importing one of its modules runs it. No cycle, no private name
(`_x`) imported from another module, images/ on tasks' public names only, and at most MAX_FLAT modules left flat in
tasks/ (the rest live in capability packages: issue 28)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINKED = ("schemas", "tasks", "flows", "images", "docker")  # top-level folders linked as tcobench.<name>
MAX_FLAT = 12


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: list[tuple[str, int]] = field(default_factory=list)  # (imported module, line)
    private: list[tuple[str, str, int]] = field(default_factory=list)  # (module, private name, line)


def _module_files() -> dict[str, tuple[Path, bool]]:
    """Every module of the package (through its linked folders, each once) and of bench/, by dotted name."""
    found: dict[str, tuple[Path, bool]] = {}
    roots = [(ROOT / "tcobench", "tcobench"), (ROOT / "bench", "bench")]
    roots += [(ROOT / name, f"tcobench.{name}") for name in LINKED]
    for folder, prefix in roots:
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder)
            if folder.name == "tcobench" and rel.parts[0] in LINKED:
                continue  # reached through the link's target folder
            parts = [prefix, *rel.with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth; those under `if TYPE_CHECKING:` never run and are left out."""
    nodes: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def _graph() -> dict[str, Module]:
    files = _module_files()
    modules = {name: Module(name, path, pkg) for name, (path, pkg) in files.items()}
    for module in modules.values():
        tree = ast.parse(module.path.read_text("utf-8"))
        bound: dict[str, str] = {}  # local name -> internal module it is bound to
        for node in _import_nodes(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        module.imports.append((alias.name, node.lineno))
                        if alias.asname:
                            bound[alias.asname] = alias.name
                continue
            base = _resolve(node.module, node.level, module.name, module.is_package)
            if node.level == 0 and module.name.startswith("bench.") and f"bench.{base}" in modules:
                base = f"bench.{base}"  # bench scripts put bench/ on sys.path and import its helpers by name
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    module.imports.append((full, node.lineno))
                    bound[alias.asname or alias.name] = full
                elif base in modules:
                    module.imports.append((base, node.lineno))
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        module.private.append((base, alias.name, node.lineno))
        for used in ast.walk(tree):  # module._name, where module was imported above
            if (
                isinstance(used, ast.Attribute)
                and isinstance(used.value, ast.Name)
                and used.value.id in bound
                and used.attr.startswith("_")
                and not used.attr.startswith("__")
            ):
                module.private.append((bound[used.value.id], used.attr, used.lineno))
    return modules


GRAPH = _graph()


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _edges(modules: dict[str, Module]) -> dict[str, list[tuple[str, int]]]:
    """What importing each module runs: the modules it imports, and their packages' __init__ (those that are not
    its own ancestors, which are initialised already)."""
    edges: dict[str, list[tuple[str, int]]] = {}
    for name, m in modules.items():
        own = set(_ancestors(name))
        found = []
        for target, line in m.imports:
            found.append((target, line))
            found += [(p, line) for p in _ancestors(target) if p in modules and p not in own and p != name]
        edges[name] = found
    return edges


EDGES = _edges(GRAPH)


def _cycles(modules: dict[str, Module], edges_of: dict[str, list[tuple[str, int]]] | None = None) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself), Tarjan's algorithm."""
    pairs = edges_of if edges_of is not None else {name: m.imports for name, m in modules.items()}
    edges = {name: sorted({target for target, _ in pairs[name]}) for name in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a deep graph does not hit the recursion limit
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))

    for name in edges:
        if name not in index:
            visit(name)
    return found


def _describe(component: list[str]) -> str:
    members = set(component)
    lines = {
        f"  {name}:{line} imports {target}" for name in component for target, line in EDGES[name] if target in members
    }
    return "\n".join(sorted(lines))


def _within(private_module: str, importer: str) -> bool:
    """A private module (`pkg._x`) may be imported from within its package `pkg` (and that package's sub-packages)."""
    package = private_module.rsplit(".", 1)[0]
    return importer.startswith(package + ".")


def test_graph_found_the_package_and_bench() -> None:
    names = set(GRAPH)
    assert {"tcobench.cli.main", "tcobench.tasks.load.measure", "tcobench.flows.nightly", "bench._common"} <= names
    assert GRAPH["tcobench.tasks.load.loadgen"].imports, "imports were not read"


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH, EDGES)
    assert not cycles, "import cycles (imports inside functions count):\n" + "\n\n".join(map(_describe, cycles))


def test_no_private_name_imported_from_another_module() -> None:
    found = [
        f"{m.name}:{line} uses {target}.{name}"
        for m in GRAPH.values()
        for target, name, line in m.private
        if target != m.name
    ]
    assert not found, "private names used across modules (make them public or move the code):\n" + "\n".join(found)


def test_private_modules_are_imported_from_their_own_package_only() -> None:
    found = [
        f"{m.name}:{line} imports {target}"
        for m in GRAPH.values()
        for target, line in m.imports
        if any(part.startswith("_") and part != "__init__" for part in target.split(".")[1:])
        and not _within(
            next(
                target.rsplit(".", k)[0]
                for k in range(len(target.split(".")))
                if target.rsplit(".", k)[0].rsplit(".", 1)[-1].startswith("_")
            ),
            m.name,
        )
    ]
    assert not found, "private modules imported from outside their package:\n" + "\n".join(found)


def test_images_import_public_names_of_tasks_only() -> None:
    found = [
        f"{m.name}:{line} imports {target}"
        for m in GRAPH.values()
        if m.name.startswith("tcobench.images")
        for target, line in m.imports
        if target.startswith("tcobench.tasks") and any(p.startswith("_") for p in target.split("."))
    ]
    found += [
        f"{m.name}:{line} uses {target}.{name}"
        for m in GRAPH.values()
        if m.name.startswith("tcobench.images")
        for target, name, line in m.private
        if target.startswith("tcobench.tasks")
    ]
    assert not found, "\n".join(found)


def test_tasks_keeps_at_most_twelve_flat_modules() -> None:
    flat = sorted(p.stem for p in (ROOT / "tasks").glob("*.py") if p.name != "__init__.py")
    assert len(flat) <= MAX_FLAT, f"{len(flat)} modules flat in tasks/ (at most {MAX_FLAT}): {flat}"


def test_the_checks_catch_a_cycle_and_a_private_import() -> None:
    """The cycle finder and the private-name reader on a made-up graph, so a check that cannot fail is caught."""
    fake = {
        "a": Module("a", ROOT, False, imports=[("b", 1)]),
        "b": Module("b", ROOT, False, imports=[("c", 2)]),
        "c": Module("c", ROOT, False, imports=[("a", 3)]),
        "d": Module("d", ROOT, False, imports=[("a", 4)]),
    }
    assert _cycles(fake) == [["a", "b", "c"]]
    # importing p.q runs package p's __init__: p imports r, r imports p.q -> a cycle through the package
    pkg = {
        "p": Module("p", ROOT, True, imports=[("r", 1)]),
        "p.q": Module("p.q", ROOT, False),
        "r": Module("r", ROOT, False, imports=[("p.q", 2)]),
    }
    assert _cycles(pkg) == []
    assert _cycles(pkg, _edges(pkg)) == [["p", "r"]]
    assert _resolve("x", 2, "tcobench.tasks.load.measure", False) == "tcobench.tasks.x"
    assert _resolve(None, 1, "tcobench.tasks.load", True) == "tcobench.tasks.load"
    tree = ast.parse("def f():\n    from tcobench.tasks.load.measure import _private\n")
    assert [n.module for n in _import_nodes(tree) if isinstance(n, ast.ImportFrom)] == ["tcobench.tasks.load.measure"]
