"""No module-level mutable state (issue 14): state lives in objects that own it, caches are bounded.

Parses every module under `src/kaeru` with `ast` and fails on:

- a `global` statement;
- a module-level name that the code mutates (`X[k] = v`, `X.append(...)`, `X += ...`, `del X[k]`),
  in its own module or through an import of it;
- a module-level object of a stateful kind (a container built by a call, a lock, a thread-local,
  an instance of one of kaeru's own classes) that is not an allowed, bounded cache;
- `functools.cache`/`lru_cache` on anything not allowed below (they are keyed by their arguments:
  a cache keyed by texts keeps every text alive);
- a change to the process environment (`os.environ[...] = ...`, `os.environ.setdefault`, `os.putenv`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kaeru"

#: Module-level objects that hold state on purpose: (module, name) → why that is fine.
ALLOWED_OBJECTS: dict[tuple[str, str], str] = {
    ("kaeru.storage.sql.dialect", "SQLITE"): "SQLite's dialect: constants and pure methods, no state",
    ("kaeru.storage.sql.dialect", "POSTGRES"): (
        "PostgreSQL's dialect: its only state memoises the rendering of the program's own SQL texts "
        "(a fixed set), cleared past 4,096 entries"
    ),
    ("kaeru.service.requests", "REQUESTS"): (
        "a read-only mapping of the tool names to their request models, each model's module imported "
        "when it is looked up (decision 16.S1); it holds nothing itself"
    ),
    ("kaeru.cli.inputs", "FILE_NAME"): (
        "a click parameter type marking arguments that name files (never re-read as UTF-8); it holds nothing"
    ),
    ("kaeru.domain.text", "TOKENISER"): (
        "the process's one tokeniser: the storage backends tokenise through kaeru.domain.text's "
        "functions, and its memos are BoundedCaches bounded by bytes (decision 14.Y1)"
    ),
}

#: Functions allowed to carry `functools.cache`/`lru_cache`: (module prefix, name) → why.
ALLOWED_CACHES: dict[tuple[str, str], str] = {
    ("kaeru.api.schemas", "contract_schema"): (
        "a loader of packaged files: keyed by the names of the few schema files shipped in the package"
    ),
    ("kaeru.api.schemas", "_pinned_inputs"): (
        "a loader of one packaged file (inputs.json, every tool's exact input schema): no argument, one entry"
    ),
    ("kaeru.api.requests", "parser_for"): (
        "one compiled parser per tool name: input_for refuses any other name (an exception is not "
        "cached), so it holds at most one entry per tool"
    ),
    ("kaeru.storage.migrate", "shipped_names"): (
        "the names of the migrations one package ships, read from its files: keyed by the two engines' packages"
    ),
    ("kaeru.storage.migrate", "shipped"): (
        "the open-time queries of one package's migrations, made from `shipped_names`: one entry per engine"
    ),
    ("kaeru.storage", "_json_tuple"): (
        "decodes a node's initiative list; lru_cache(maxsize=8192) of short JSON lists of initiative ids"
    ),
}

#: Methods that change the object they are called on (lists, dicts, sets, deques, ordered dicts).
MUTATING_METHODS = frozenset(
    {
        "append",
        "appendleft",
        "extend",
        "extendleft",
        "insert",
        "remove",
        "pop",
        "popleft",
        "popitem",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "sort",
        "reverse",
        "rotate",
        "move_to_end",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "__setitem__",
        "__delitem__",
    }
)
#: Calls whose result is a mutable container or a stateful object.
STATEFUL_CALLS = frozenset(
    {
        "dict",
        "list",
        "set",
        "bytearray",
        "defaultdict",
        "OrderedDict",
        "Counter",
        "deque",
        "ChainMap",
        "WeakValueDictionary",
        "WeakKeyDictionary",
        "WeakSet",
        "local",
        "Lock",
        "RLock",
        "Condition",
        "Semaphore",
        "BoundedSemaphore",
        "Event",
        "Queue",
        "SimpleQueue",
        "LifoQueue",
        "PriorityQueue",
    }
)
CACHE_DECORATORS = frozenset({"cache", "lru_cache"})
ENVIRON_WRITERS = frozenset({"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"})


@dataclass(frozen=True)
class Module:
    name: str
    tree: ast.Module

    @staticmethod
    def parse(name: str, source: str) -> Module:
        return Module(name, ast.parse(source))


def _modules() -> list[Module]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append(Module.parse(name, path.read_text()))
    return found


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _module_names(module: Module) -> dict[str, ast.stmt]:
    """The names a module binds at its top level to values (assignments, not defs or imports)."""
    names: dict[str, ast.stmt] = {}
    for stmt in module.tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    names[node.id] = stmt
    return names


def _root(node: ast.expr) -> ast.expr:
    """What a subscript or attribute chain changes: `X` of `X[k]` and `X.items[k]`, or `m.X` of
    `m.X[k]` (a name, or an attribute of a name)."""
    while isinstance(node, ast.Subscript | ast.Attribute) and not (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    ):
        node = node.value
    return node


def _in_functions(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node inside a function body, once: code that runs after import (building a constant
    table at import time is not state)."""
    seen: set[int] = set()
    for scope in ast.walk(tree):
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for node in ast.walk(scope):
                if id(node) not in seen:
                    seen.add(id(node))
                    yield node


def _mutations(tree: ast.AST) -> Iterator[tuple[ast.expr, int]]:
    """(the expression mutated, line) for each in-place change in a function of `tree`."""
    for node in _in_functions(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript):
                    yield _root(target), node.lineno
                elif isinstance(node, ast.AugAssign) and isinstance(target, ast.Name):
                    yield target, node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
            yield _root(node.func.value), node.lineno


def _imported(module: Module) -> dict[str, str]:
    """Local name → "module.NAME" for each name imported from a kaeru module (`from m import NAME`,
    `from kaeru import m`), and alias → module for each kaeru module imported whole."""
    bound: dict[str, str] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kaeru"):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kaeru"):
                    bound[alias.asname or alias.name] = alias.name
    return bound


def mutated_module_names(modules: list[Module]) -> list[str]:
    """Every mutation of a module-level name, in its module or through an import."""
    owners = {m.name: set(_module_names(m)) for m in modules}
    found: list[str] = []
    for module in modules:
        own = owners[module.name]
        imported = _imported(module)
        for target, line in _mutations(module.tree):
            qualified: str | None = None
            if isinstance(target, ast.Name):
                if target.id in own and not _is_local(module.tree, target.id, line):
                    qualified = f"{module.name}.{target.id}"
                elif target.id in imported:
                    owner, _, name = imported[target.id].rpartition(".")
                    if name in owners.get(owner, set()):
                        qualified = imported[target.id]
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                base = target.value.id
                owner = imported.get(base)
                if base in own and not _is_local(module.tree, base, line):
                    qualified = f"{module.name}.{base}"
                elif owner is not None and target.attr in owners.get(owner, set()):
                    qualified = f"{owner}.{target.attr}"
                elif owner is not None and owner.rpartition(".")[2] in owners.get(owner.rpartition(".")[0], set()):
                    qualified = owner
            if qualified is not None:
                found.append(f"{module.name}:{line} mutates {qualified}")
    return found


def _is_local(tree: ast.Module, name: str, line: int) -> bool:
    """Whether `name` at `line` is a function's own variable (bound inside the enclosing function)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        end = node.end_lineno or node.lineno
        if not node.lineno <= line <= end:
            continue
        declared_global = any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(node))
        if declared_global:
            return False
        arguments = node.args
        params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        params |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        if name in params:
            return True
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id == name and isinstance(inner.ctx, ast.Store):
                return True
    return False


def stateful_objects(modules: list[Module]) -> list[str]:
    """Module-level names bound to a stateful object and not in ALLOWED_OBJECTS."""
    own_classes: set[str] = set()
    for module in modules:
        own_classes |= {n.name for n in ast.walk(module.tree) if isinstance(n, ast.ClassDef)}
    found: list[str] = []
    for module in modules:
        for name, stmt in _module_names(module).items():
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            if not isinstance(value, ast.Call):
                continue
            callee = _callee(value)
            if (callee in STATEFUL_CALLS or callee in own_classes) and (module.name, name) not in ALLOWED_OBJECTS:
                found.append(f"{module.name}:{stmt.lineno} {name} = {callee}(...)")
    return found


def unlisted_caches(modules: list[Module]) -> list[str]:
    found: list[str] = []
    for module in modules:
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if _callee(decorator) in CACHE_DECORATORS and not any(
                    module.name.startswith(prefix) and node.name == name for prefix, name in ALLOWED_CACHES
                ):
                    found.append(f"{module.name}:{node.lineno} @{_callee(decorator)} on {node.name}")
    return found


def globals_used(modules: list[Module]) -> list[str]:
    return [
        f"{m.name}:{n.lineno} global {', '.join(n.names)}"
        for m in modules
        for n in ast.walk(m.tree)
        if isinstance(n, ast.Global)
    ]


def _is_environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def environment_changes(modules: list[Module]) -> list[str]:
    found: list[str] = []
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ENVIRON_WRITERS and _is_environ(node.func.value):
                    found.append(f"{module.name}:{node.lineno} os.environ.{node.func.attr}")
                elif node.func.attr in ("putenv", "unsetenv"):
                    found.append(f"{module.name}:{node.lineno} os.{node.func.attr}")
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
                targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Subscript) and _is_environ(target.value):
                        found.append(f"{module.name}:{node.lineno} os.environ[...] changed")
    return found


# --- the rules, applied to src/kaeru --------------------------------------------------------------


def test_no_global_statements() -> None:
    assert not globals_used(_modules())


def test_no_module_level_name_is_mutated() -> None:
    """Module-level dicts, lists and sets are constants: nothing writes to them after import."""
    found = mutated_module_names(_modules())
    assert not found, "module-level state; move it into an object that owns it:\n" + "\n".join(found)


def test_no_unlisted_module_level_stateful_objects() -> None:
    found = stateful_objects(_modules())
    assert not found, "module-level stateful objects (allow only bounded caches, with a reason):\n" + "\n".join(found)


def test_no_unlisted_function_caches() -> None:
    found = unlisted_caches(_modules())
    assert not found, "functools caches keep their arguments alive; use a BoundedCache owned by an object:\n" + (
        "\n".join(found)
    )


def test_the_process_environment_is_not_changed() -> None:
    found = environment_changes(_modules())
    assert not found, "\n".join(found)


# --- the checker itself catches what it is for ------------------------------------------------------


def _one(source: str, name: str = "kaeru.example") -> list[Module]:
    return [Module.parse(name, source)]


def test_checker_finds_mutations_of_module_level_containers() -> None:
    source = (
        "SEEN = {}\nORDER = []\nCOUNT = 0\n"
        "def remember(k, v):\n    SEEN[k] = v\n    ORDER.append(k)\n"
        "def bump():\n    global COUNT\n    COUNT += 1\n"
    )
    modules = _one(source)
    assert len(mutated_module_names(modules)) == 3
    assert globals_used(modules) == ["kaeru.example:8 global COUNT"]


def test_checker_finds_mutations_through_an_import() -> None:
    owner = Module.parse("kaeru.a", "REGISTRY = {}\n")
    user = Module.parse(
        "kaeru.b",
        "from kaeru.a import REGISTRY\nfrom kaeru import a\n"
        "def register(k):\n    REGISTRY[k] = 1\n    a.REGISTRY.setdefault(k, 2)\n",
    )
    assert mutated_module_names([owner, user]) == [
        "kaeru.b:4 mutates kaeru.a.REGISTRY",
        "kaeru.b:5 mutates kaeru.a.REGISTRY",
    ]


def test_checker_ignores_constants_and_local_variables() -> None:
    source = (
        "LIMITS = {'a': 1}\nSEEN = []\n"
        "def f(SEEN):\n    SEEN.append(LIMITS['a'])\n"
        "def g():\n    LIMITS = {}\n    LIMITS['b'] = 2\n    return LIMITS\n"
        "BY_FIRST = {}\nfor _w in ('ab', 'cd'):\n    BY_FIRST.setdefault(_w[0], []).append(_w)\n"
    )
    assert mutated_module_names(_one(source)) == []


def test_checker_finds_stateful_objects_caches_and_environment_changes() -> None:
    source = (
        "import functools, os, threading\nfrom collections import defaultdict\n"
        "class Memo: ...\n"
        "_LOCK = threading.Lock()\nBY_KEY = defaultdict(list)\nMEMO = Memo()\nPATTERN = str.maketrans('a', 'b')\n"
        "@functools.lru_cache(maxsize=None)\ndef parse(text): return text\n"
        "def load():\n    os.environ['HF_HUB_OFFLINE'] = '1'\n    os.environ.setdefault('X', '1')\n"
    )
    modules = _one(source)
    assert [f.split(" ", 1)[1] for f in stateful_objects(modules)] == [
        "_LOCK = Lock(...)",
        "BY_KEY = defaultdict(...)",
        "MEMO = Memo(...)",
    ]
    assert unlisted_caches(modules) == ["kaeru.example:9 @lru_cache on parse"]
    assert len(environment_changes(modules)) == 2
