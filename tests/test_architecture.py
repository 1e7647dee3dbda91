"""The layer rule (DESIGN §1): domain ← storage ← service ← {api, mcp, cli, export}; no outward imports.

Parses every module's imports with `ast`, so a violation fails here before it becomes a tangle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kaeru"

#: What each layer may import from inside the package (besides itself and the shared modules).
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "storage": {"domain"},
    "service": {"domain", "storage"},
    "api": {"domain", "service"},
    "export": {"domain", "storage", "service", "api"},
    "mcp": {"domain", "service", "api", "storage", "export", "web"},
    "cli": {"domain", "service", "api", "storage", "mcp", "export", "semantic", "web"},
    # The web viewer reads and writes through the tools' handlers, handed to it by the server that
    # mounts it: never the storage, never the MCP layer itself (issue 19).
    "web": {"domain", "service", "api"},
    "semantic": {"service"},
}
SHARED = {"errors", "config", "__init__"}
#: Third-party packages only the edge layers may import.
EDGE_ONLY = {"mcp": {"mcp", "mcp_types", "starlette", "uvicorn"}, "cli": {"click", "rich"}}
#: Besides its own edge layer, who else may import such a package.
EDGE_ALSO = {"uvicorn": {"cli"}, "starlette": {"web"}}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_layers_import_only_inward() -> None:
    violations: list[str] = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).parts
        layer = rel[0] if len(rel) > 1 else None
        if layer is None:
            continue
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "kaeru":
                parts = name.split(".")
                target = parts[1] if len(parts) > 1 else "__init__"
                if target in SHARED or target == layer:
                    continue
                if target not in ALLOWED.get(layer, set()):
                    violations.append(f"{path.relative_to(SRC)} imports {name} ({layer} → {target})")
            else:
                for edge, packages in EDGE_ONLY.items():
                    if top in packages and layer != edge and layer not in EDGE_ALSO.get(top, set()):
                        violations.append(f"{path.relative_to(SRC)} imports {top}, which only {edge}/ may use")
    assert not violations, "\n".join(violations)


def test_domain_has_no_io_clock_or_randomness() -> None:
    forbidden = {"os", "time", "random", "secrets", "socket", "sqlite3", "apsw", "psycopg", "pathlib"}
    for path in (SRC / "domain").rglob("*.py"):
        used = {name.split(".")[0] for name in _imports(path)} & forbidden
        assert not used, f"{path.name} imports {used}"
        assert "datetime.now" not in path.read_text(), f"{path.name} reads the clock"


#: Modules that may build a store (call `open_store`, construct a backend's store): the composition
#: roots. Everything else is handed one.
COMPOSITION_ROOTS = {"mcp/server.py", "cli/app.py"}
BACKENDS = ("kaeru.storage.sqlite", "kaeru.storage.postgres", "kaeru.storage.factory")


def test_services_never_import_a_backend() -> None:
    """The service is written against `storage.base` alone; which engine runs is the roots' choice."""
    violations = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in (SRC / "service").rglob("*.py")
        for name in _imports(path)
        if name.startswith(BACKENDS)
    ]
    assert not violations, "\n".join(violations)


def test_only_the_composition_roots_build_a_store() -> None:
    builders = {"open_store", "SqliteStore", "PostgresStore"}
    violations: list[str] = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("storage/") or rel in COMPOSITION_ROOTS:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            named = node.names if isinstance(node, ast.ImportFrom) else []
            called = node.func if isinstance(node, ast.Call) else None
            if any(alias.name in builders for alias in named) or (
                isinstance(called, ast.Name | ast.Attribute)
                and (called.id if isinstance(called, ast.Name) else called.attr) in builders
            ):
                violations.append(f"{rel}:{node.lineno} builds a store")
    assert not violations, "\n".join(violations)


def test_the_sql_layer_is_written_once() -> None:
    """`storage/sql/` is engine-neutral: no driver, no backend; the backends build on it."""
    for path in (SRC / "storage" / "sql").rglob("*.py"):
        used = [
            n
            for n in _imports(path)
            if n.split(".")[0] in ("apsw", "psycopg", "psycopg_pool") or n.startswith(BACKENDS)
        ]
        assert not used, f"{path.name} imports {used}"


#: Issue 14's bound on a module's size: a module a newcomer can read whole.
MODULE_LINES = 500
#: …and on the median module.
MEDIAN_LINES = 200


def test_modules_stay_small() -> None:
    sizes = {path.relative_to(SRC).as_posix(): len(path.read_text().splitlines()) for path in SRC.rglob("*.py")}
    too_long = {name: lines for name, lines in sizes.items() if lines > MODULE_LINES}
    assert not too_long, f"modules over {MODULE_LINES} lines: {too_long}"
    ordered = sorted(sizes.values())
    assert ordered[len(ordered) // 2] <= MEDIAN_LINES


#: A measured figure in a comment or docstring: microseconds, an approximate or ranged time, or a
#: speed-up ("~40 ms", "7–9 µs", "3× faster"). Such figures go stale as the code around them changes;
#: they belong with their measurement in docs/decisions.md, which a comment names instead (issue 14).
MEASURED = re.compile(
    r"\d\s?µs\b"
    r"|~\s?\d[\d.,]*\s?(?:ms|s)\b"
    r"|\d\s?[–-]\s?\d+(?:\.\d+)?\s?(?:ms|s)\b"
    r"|\d(?:\.\d+)?\s?× (?:faster|slower|cheaper)"
    r"|\d\s?% (?:faster|slower|cheaper)"
)


def test_comments_say_why_not_how_many_microseconds() -> None:
    # Migrations are frozen as committed (tests/upgrade/migrations.sha256): their text is history.
    found = [
        f"{path.relative_to(SRC).as_posix()}:{number}: {line.strip()}"
        for path in SRC.rglob("*.py")
        if "migrations" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if MEASURED.search(line)
    ]
    assert not found, "measured figures in comments (name the decision instead):\n" + "\n".join(found)
