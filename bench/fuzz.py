"""Schema-driven fuzzing of every tool through the official MCP client (issue 15).

Each tool's `inputSchema` from `tools/list` feeds `hypothesis-jsonschema`, which draws schema-valid
arguments. Every drawn call is sent twice, in order:

* **valid-shaped** — its references (initiatives, NodeRefs, slots, cursors, revisions, request ids,
  archive paths, search words) swapped, most of the time, for ones that resolve in the seeded vault,
  so calls reach the service instead of stopping at `not_found`;
* **mutated** — the same call with one defect: a wrong type, a missing required or an extra
  property, an out-of-range number, an unknown enum value, deep JSON, or a hostile string (quotes,
  FTS syntax, SQL, NUL, a lone surrogate, a huge string, odd Unicode) in place of a string field.
  Hostile strings are often still valid, so these calls are not all rejected.

Invariants checked on every call: it answers within the per-call timeout; the answer is a tool
result whose structured content is writable as UTF-8 JSON (what a wire transport sends), validates
against the tool's output schema, and whose `isError`
matches `state == rejected`; no issue is `internal`; and a `rejected` call changes nothing (the
vault's content digest — counts and a hash of every node and edge revision, slot state, initiative
and audit record — is the same before and after).

`python -m bench.fuzz` is the long mode (10,000 calls by default; the figures go in
docs/reliability.md). `tests/fuzz/` runs a shorter pass of the same harness on every backend.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import jsonschema_rs
from jsonschema import Draft202012Validator

DEBUG = False

#: Tool states a call may end in.
STATES = ("ok", "applied", "unchanged", "partial", "rejected", "refused")

#: Fields holding a NodeRef (a string id or name, {id}, or {initiative, name}), per tool.
NODE_REF_FIELDS: dict[str, tuple[str, ...]] = {
    "context": ("task",),
    "timeline": ("anchor",),
    "read": ("node",),
    "trail": ("node", "to"),
    "current_state": ("node",),
    "note": ("link_to",),
    "claim": ("about",),
    "revise": ("node",),
    "replace": ("node",),
    "link": ("from", "to"),
    "verdict": ("hypothesis",),
    "evolve": ("source",),
    "review": ("target",),
    "slot": ("node",),
    "forget": ("node",),
    "task": ("link_to",),
    "task_update": ("task",),
    "initiative": ("node",),
}
NODE_LIST_FIELDS: dict[str, tuple[str, ...]] = {"evolve": ("sources",), "layer": ("nodes",)}
TEXT_FIELDS = ("text", "query", "reason", "resolution", "summary", "new_body", "source", "description", "name")

HOSTILE_STRINGS: tuple[str, ...] = (
    "'",
    '"',
    "\"'`;--",
    "'; DROP TABLE nodes; --",
    '"unbalanced',
    "a AND OR NOT b",
    "NEAR(alpha beta, 2)",
    "*",
    "alpha*",
    "^alpha",
    "name:alpha",
    "-alpha",
    "(alpha",
    "alpha)",
    "{alpha beta}",
    '"" "" ""',
    "\x00",
    "alpha\x00beta",
    "\ud800",
    "lone \udfff surrogate",
    " ",
    "\t\n\r",
    "\u200b\u200d\ufeff",
    "\u202eevil\u202c",
    "e\u0301\u0301\u0301\u0301",
    "🐸" * 40,
    "ﬁ ß Σ ς İ ı",
    "../../etc/passwd",
    "%s%n%x",
    "\\u0000",
    "NaN",
    "-1",
    "null",
)


@dataclass
class Pool:
    """What resolves in the vault: harvested from the seed and from every answer since."""

    initiatives: list[str] = field(default_factory=list)
    nodes: dict[str, tuple[str, str, str, str]] = field(
        default_factory=dict
    )  # id -> (revision, name, initiative, type)
    slots: list[str] = field(default_factory=list)
    slot_revisions: list[str] = field(default_factory=list)
    cursors: list[str] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=lambda: [f"fuzz-req-{i}" for i in range(8)])
    paths: list[str] = field(default_factory=lambda: ["fuzz.amg", "fuzz.amg.gz", "fuzz-md", "nested/dir/fuzz.amg"])
    words: list[str] = field(default_factory=list)

    def harvest(self, value: Any, home: str | None = None) -> None:
        """Record every node, slot revision and cursor an answer mentions (`home`: the initiative of
        the call, for nodes a mutation names by id and revision alone)."""
        if isinstance(value, dict):
            if isinstance(value.get("id"), str) and isinstance(value.get("revision"), str):
                if "node_type" in value:
                    initiatives = value.get("initiatives") or []
                    first = initiatives[0] if initiatives and isinstance(initiatives[0], str) else ""
                    kind = str(value.get("node_type"))
                    self.nodes[value["id"]] = (value["revision"], str(value.get("name") or ""), first, kind)
                    if first and first not in self.initiatives:
                        self.initiatives.append(first)
                elif value["id"] in self.nodes:
                    _, name, first, kind = self.nodes[value["id"]]
                    self.nodes[value["id"]] = (value["revision"], name, first, kind)
                else:
                    self.nodes[value["id"]] = (value["revision"], "", home or "", "")
            if isinstance(value.get("slot_revision"), str):
                self.slot_revisions.append(value["slot_revision"])
                del self.slot_revisions[:-50]
            if isinstance(value.get("cursor"), str):
                self.cursors.append(value["cursor"])
                del self.cursors[:-50]
            for item in value.values():
                self.harvest(item, home)
        elif isinstance(value, list):
            for item in value:
                self.harvest(item, home)


@dataclass
class Call:
    tool: str
    arguments: dict[str, Any]
    variant: str  # "valid" or "mutated:<kind>"


@dataclass
class Finding:
    tool: str
    variant: str
    problem: str
    arguments: str

    def to_json(self) -> dict[str, str]:
        return {"tool": self.tool, "variant": self.variant, "problem": self.problem, "arguments": self.arguments}


@dataclass
class Report:
    calls: int = 0
    states: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    codes: Counter[str] = field(default_factory=Counter)
    variants: Counter[str] = field(default_factory=Counter)
    #: States of the valid-shaped calls alone, and why those were rejected (tool: code).
    valid_states: Counter[str] = field(default_factory=Counter)
    valid_rejections: Counter[str] = field(default_factory=Counter)
    rejected_checked: int = 0
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    generation_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "states": {tool: dict(counts) for tool, counts in sorted(self.states.items())},
            "codes": dict(self.codes.most_common()),
            "variants": dict(self.variants.most_common()),
            "valid_shaped_states": dict(self.valid_states.most_common()),
            "valid_shaped_rejections": dict(self.valid_rejections.most_common()),
            "rejected_checked_unchanged": self.rejected_checked,
            "internal": self.codes.get("internal", 0),
            "findings": [f.to_json() for f in self.findings],
            "seconds": round(self.seconds, 1),
            "generation_seconds": round(self.generation_seconds, 1),
        }

    def table(self) -> str:
        lines = ["| tool | calls | " + " | ".join(STATES) + " |", "|---|---:|" + "---:|" * len(STATES)]
        totals: Counter[str] = Counter()
        for tool, counts in sorted(self.states.items()):
            totals.update(counts)
            cells = " | ".join(str(counts.get(s, 0)) for s in STATES)
            lines.append(f"| {tool} | {sum(counts.values())} | {cells} |")
        cells = " | ".join(str(totals.get(s, 0)) for s in STATES)
        lines.append(f"| **all** | **{sum(totals.values())}** | {cells} |")
        return "\n".join(lines)


# -- generation ---------------------------------------------------------------------------------


def generate(schemas: dict[str, dict[str, Any]], per_tool: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """`per_tool` schema-valid argument objects per tool, drawn by hypothesis-jsonschema (seeded)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis_jsonschema import from_schema

    drawn: list[tuple[str, dict[str, Any]]] = []
    for offset, (tool, schema) in enumerate(sorted(schemas.items())):
        found: list[dict[str, Any]] = []

        @settings(
            max_examples=per_tool,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            deadline=None,
        )
        @hypothesis_seed(seed * 1000 + offset)
        @given(from_schema(schema))
        def collect(arguments: dict[str, Any]) -> None:
            found.append(arguments)  # noqa: B023 (run at once, in this iteration)

        collect()
        drawn.extend((tool, arguments) for arguments in found[:per_tool])
    return drawn


#: The node type a tool's main reference should have to get past `not_found`/`invalid_argument`.
WANTS_TYPE = {"verdict": "hypothesis", "task_update": "task", "context": "task"}
TIME_FIELDS = ("at", "as_of", "since", "until", "occurred_at", "due")
TIMES = ("2026-12-01T10:00:00Z", "2020-01-01", "2099-01-01T00:00:00+02:00", "2026-11-30T23:59:59.999Z", "1970-01-01")
STATUSES = ("open", "in-progress", "blocked", "done")


def _node_ref(pool: Pool, rng: random.Random, home: str | None = None, node_type: str | None = None) -> Any:
    ids = sorted(pool.nodes)
    if rng.random() < 0.85:
        fitting = [
            i
            for i in ids
            if (home is None or pool.nodes[i][2] == home) and (node_type is None or pool.nodes[i][3] == node_type)
        ]
        ids = fitting or ids
    node_id = rng.choice(ids)
    _, name, home, _ = pool.nodes[node_id]
    form = rng.random()
    if form < 0.5:
        return node_id
    if form < 0.7:
        return {"id": node_id}
    if name and home and form < 0.9:
        return {"initiative": home, "name": name}
    return name or node_id


def with_refs(tool: str, arguments: dict[str, Any], pool: Pool, rng: random.Random, p: float = 0.85) -> dict[str, Any]:
    """`arguments` with (most of) its references swapped for ones that resolve in the vault."""
    args = dict(arguments)

    def hit() -> bool:
        return rng.random() < p

    home = rng.choice(pool.initiatives) if pool.initiatives else None
    if "initiative" in args and tool != "initiatives" and home and hit():
        args["initiative"] = home
    wanted = WANTS_TYPE.get(tool)
    for name in TIME_FIELDS:
        if isinstance(args.get(name), str) and hit():
            args[name] = rng.choice(TIMES)
    if tool == "task_update" and "status" in args and hit():
        args["status"] = rng.choice(STATUSES)
    if isinstance(args.get("initiatives"), list) and pool.initiatives and hit():
        args["initiatives"] = rng.sample(pool.initiatives, rng.randint(1, min(3, len(pool.initiatives))))
    if pool.nodes:
        for name in NODE_REF_FIELDS.get(tool, ()):
            if name in args and hit() and not (tool == "initiative" and name == "to"):
                args[name] = _node_ref(pool, rng, home, wanted)
        for name in NODE_LIST_FIELDS.get(tool, ()):
            if isinstance(args.get(name), list) and hit():
                args[name] = [_node_ref(pool, rng, home) for _ in range(rng.randint(1, 3))]
        for holder in ("evidence", "applicability"):
            inner = args.get(holder)
            key = "node" if holder == "evidence" else "task"
            if isinstance(inner, dict) and key in inner and hit():
                args[holder] = {**inner, key: _node_ref(pool, rng, home)}
        if "expected_revision" in args and hit():
            args["expected_revision"] = _revision_of(args, pool, tool) or rng.choice(list(pool.nodes.values()))[0]
    if tool == "initiative" and "to" in args and pool.initiatives and hit():
        args["to"] = rng.choice([*pool.initiatives, "fuzz-renamed", "fuzz-merged"])
    if pool.slots:
        if "slot" in args and hit():
            args["slot"] = rng.choice(pool.slots)
        options = args.get("options")
        if isinstance(options, dict) and "slot" in options and hit():
            args["options"] = {**options, "slot": rng.choice(pool.slots)}
    if "expected_slot_revision" in args and pool.slot_revisions and hit():
        args["expected_slot_revision"] = rng.choice(pool.slot_revisions)
    if "cursor" in args and pool.cursors and hit():
        args["cursor"] = rng.choice(pool.cursors)
    if "request_id" in args and hit():
        args["request_id"] = rng.choice(pool.request_ids)
    if tool == "archive" and hit():
        args["path"] = rng.choice(pool.paths)
    if pool.words:
        for name in ("text", "query"):
            if isinstance(args.get(name), str) and hit():
                args[name] = " ".join(rng.sample(pool.words, rng.randint(1, 3)))
    return args


def _revision_of(args: dict[str, Any], pool: Pool, tool: str) -> str | None:
    """The current revision (as far as the pool knows) of the node the call is about."""
    for name in NODE_REF_FIELDS.get(tool, ()):
        ref = args.get(name)
        node_id = ref.get("id") if isinstance(ref, dict) else ref
        if isinstance(node_id, str) and node_id in pool.nodes:
            return pool.nodes[node_id][0]
    return None


def _other_type(value: Any, rng: random.Random) -> Any:
    options: list[Any] = [17, -3.5, True, None, [], ["x"], {}, {"x": 1}, "string", 10**20]
    kind = type(value)
    candidates = [o for o in options if type(o) is not kind]
    return rng.choice(candidates)


def _deep(depth: int, rng: random.Random) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return schema.get("$defs", {}).get(ref.split("/")[-1], node)  # type: ignore[no-any-return]
    return node


def _hostile(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.04:
        return "x" * rng.choice((70_000, 1_000_000, 4_000_001))
    if roll < 0.08:
        return (
            "".join(chr(rng.randint(0x20, 0x2FFFF)) for _ in range(rng.randint(1, 400)))
            .encode("utf-8", "surrogatepass")
            .decode("utf-8", "replace")
        )
    return rng.choice(HOSTILE_STRINGS)


def _string_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_paths(item, (*path, i))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    copied = list(value)
    copied[head] = _set(copied[head], rest, new)
    return copied


def mutate(arguments: dict[str, Any], schema: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
    """`arguments` with one defect, and the defect's kind."""
    args = dict(arguments)
    properties: dict[str, Any] = schema.get("properties", {})
    required = [r for r in schema.get("required", []) if r in args]
    numeric = [
        name
        for name, spec in properties.items()
        if isinstance(spec, dict) and _resolve(schema, spec).get("type") in ("integer", "number")
    ]
    enums = [name for name, spec in properties.items() if isinstance(spec, dict) and "enum" in _resolve(schema, spec)]
    kinds = ["wrong_type", "extra_property", "hostile_string", "hostile_string", "hostile_string", "deep_json"]
    kinds += ["missing_required"] * bool(required) + ["out_of_range"] * bool(numeric) + ["bad_enum"] * bool(enums)
    kind = rng.choice(kinds)
    if kind == "wrong_type":
        name = rng.choice(sorted(properties) or ["initiative"])
        args[name] = _other_type(args.get(name, ""), rng)
    elif kind == "extra_property":
        # A hostile key too: a refusal names its field by the key (decision 239).
        keys = ["zz_extra", "Initiative", "__proto__", "", "initiative "]
        key = rng.choice(HOSTILE_STRINGS) if rng.random() < 0.5 else rng.choice(keys)
        args[key] = rng.choice([1, "x", None])
    elif kind == "missing_required":
        del args[rng.choice(required)]
    elif kind == "out_of_range":
        name = rng.choice(numeric)
        spec = _resolve(schema, properties[name])
        picks: list[Any] = [-1, 10**30, -(2**63) - 1, 2**63, 1e308, -1e308, 0.5]
        if "maximum" in spec:
            picks.append(spec["maximum"] + 1)
        if "minimum" in spec:
            picks.append(spec["minimum"] - 1)
        args[name] = rng.choice(picks)
    elif kind == "bad_enum":
        name = rng.choice(enums)
        args[name] = rng.choice(["", "ALL", "nonexistent_value", "ok\x00", 3])
    elif kind == "deep_json":
        name = rng.choice(sorted(properties) or ["initiative"])
        args[name] = _deep(rng.choice((30, 120, 240)), rng)  # the SDK client serialises ≤ ~255 levels
    else:
        paths = list(_string_paths(args))
        if paths:
            args = _set(args, rng.choice(paths), _hostile(rng))
        else:
            args[rng.choice(["initiative", "text", "query"])] = _hostile(rng)
    return args, kind


def calls_for(
    drawn: list[tuple[str, dict[str, Any]]], schemas: dict[str, dict[str, Any]], pool: Pool, rng: random.Random
) -> Iterator[Call]:
    """Each drawn call valid-shaped (references resolved), then mutated, interleaved across tools."""
    order = list(drawn)
    rng.shuffle(order)
    for tool, arguments in order:
        valid = with_refs(tool, arguments, pool, rng)
        yield Call(tool, valid, "valid")
        mutated, kind = mutate(valid, schemas[tool], rng)
        yield Call(tool, mutated, f"mutated:{kind}")


# -- the seeded vault ---------------------------------------------------------------------------

Caller = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

SEED_WORDS = (
    *("frog", "pond", "lily", "retry", "backoff", "schema", "migration", "cursor", "ledger", "sqlite"),
    *("postgres", "latency", "budget", "cache", "token", "parser", "refactor", "deploy", "rollback", "canary"),
)


async def seed_vault(call: Caller, pool: Pool) -> None:
    """A few initiatives with notes of every kind, claims, tasks, links, slots, a board and reviews."""
    pool.words = list(SEED_WORDS)
    rng = random.Random(7)
    for initiative in ("alpha", "beta", "gamma"):
        pool.initiatives.append(initiative)
        ids: list[str] = []
        for i, kind in enumerate(("observation", "decision", "rule", "reference", "idea", "jot", "entity", "concept")):
            args: dict[str, Any] = {
                "initiative": initiative,
                "text": f"{initiative} {kind} {i}: " + " ".join(rng.sample(SEED_WORDS, 6)),
                "kind": kind,
                "name": f"{initiative}-{kind}",
                "tags": [kind, "seed"],
            }
            if kind == "reference":
                args["source"] = "https://example.org/spec"
            if ids:
                args["link_to"] = ids[-1]
                args["edge_type"] = "derived_from"
            if kind == "rule":
                args["options"] = {"slot": "policy"}
            if kind == "decision":
                args["options"] = {"slot": "current-plan", "layer": "hot"}
            envelope = await call("note", args)
            pool.harvest(home=initiative, value=envelope)
            primary = envelope["data"]["primary"]
            if primary:
                ids.append(primary["id"])
        claim = await call(
            "claim", {"initiative": initiative, "text": f"{initiative} retry fixes latency", "about": ids[0]}
        )
        pool.harvest(home=initiative, value=claim)
        for status in ("open", "in-progress", "done"):
            pool.harvest(
                home=initiative,
                value=await call(
                    "task",
                    {
                        "initiative": initiative,
                        "text": f"{initiative} task {status} canary",
                        "status": status,
                        "link_to": ids[1],
                    },
                ),
            )
        pool.harvest(
            home=initiative,
            value=await call(
                "link", {"initiative": initiative, "from": ids[2], "to": ids[3], "edge_type": "causal", "weight": 0.7}
            ),
        )
        pool.harvest(
            home=initiative,
            value=await call(
                "review", {"initiative": initiative, "action": "flag", "target": ids[4], "reason": "stale?"}
            ),
        )
        pool.harvest(
            home=initiative, value=await call("search", {"initiatives": [initiative], "text": "seed", "limit": 2})
        )
    pool.harvest(
        await call(
            "initiative",
            {
                "initiative": "alpha",
                "action": "set_board",
                "columns": [{"key": "open"}, {"key": "in-progress"}, {"key": "blocked"}, {"key": "done"}],
            },
        )
    )
    pool.harvest(await call("archive", {"action": "export", "path": "fuzz.amg"}))
    for node_id, (_, _, home, _) in list(pool.nodes.items()):  # names and types of every seeded node
        if home:
            pool.harvest(await call("read", {"initiative": home, "node": node_id}))
    pool.slots = ["policy", "current-plan", "owner"]


# -- running ------------------------------------------------------------------------------------


@dataclass
class Target:
    """The server under test: how to call a tool, the tools' schemas, and the vault's digest."""

    call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]]
    input_schemas: dict[str, dict[str, Any]]
    output_schemas: dict[str, dict[str, Any]]
    digest: Callable[[], Any]


def _short(arguments: dict[str, Any]) -> str:
    try:
        text = repr(arguments)
    except RecursionError:
        return "<too deep to print>"
    return text if len(text) <= 400 else text[:400] + f"… ({len(text)} chars)"


def _checked_unchanged(target: Target, before: Any, report: Report, call: Call, how: str) -> Any:
    """The vault's digest after a call that must have changed nothing; a finding if it did."""
    after = target.digest()
    report.rejected_checked += 1
    if after != before:
        report.findings.append(
            Finding(call.tool, call.variant, f"a {how} call changed the vault", _short(call.arguments))
        )
    return after


async def run(
    target: Target,
    calls: Iterator[Call],
    pool: Pool,
    report: Report,
    timeout: float = 30.0,
    progress: Callable[[Report], None] | None = None,
) -> None:
    """Send every call, check the invariants, tally states; findings go in `report.findings`."""
    fast = {name: jsonschema_rs.validator_for(schema) for name, schema in target.output_schemas.items()}
    before: Any = None
    started = time.perf_counter()
    for call in calls:
        if before is None:
            before = target.digest()
        report.calls += 1
        if progress is not None and report.calls % 1000 == 0:
            progress(report)
        report.variants[call.variant.split(":")[-1]] += 1
        try:
            with anyio.fail_after(timeout):
                result = await target.call_tool(call.tool, call.arguments)
        except TimeoutError:
            report.findings.append(
                Finding(call.tool, call.variant, f"no answer within {timeout} s", _short(call.arguments))
            )
            report.states[call.tool]["hang"] += 1
            before = None
            continue
        except Exception as exc:
            report.findings.append(
                Finding(
                    call.tool, call.variant, f"call raised {type(exc).__name__}: {exc!s:.200}", _short(call.arguments)
                )
            )
            report.states[call.tool]["error"] += 1
            before = None
            continue
        if getattr(result, "refused_by_transport", False):
            # Refused before any tool ran (`bench.fuzz_wire`: a body the SDK's HTTP parser cannot
            # read): there is no envelope to check, only that nothing changed.
            report.states[call.tool]["refused"] += 1
            before = _checked_unchanged(target, before, report, call, "refused")
            continue
        envelope = result.structured_content
        if not isinstance(envelope, dict):
            report.findings.append(Finding(call.tool, call.variant, "no structured envelope", _short(call.arguments)))
            before = None
            continue
        state = envelope.get("state")
        report.states[call.tool][str(state)] += 1
        if call.variant == "valid":
            report.valid_states[str(state)] += 1
            if state == "rejected":
                codes = ",".join(str(i.get("code")) for i in envelope.get("issues") or [])
                report.valid_rejections[f"{call.tool}: {codes}"] += 1
                if DEBUG:
                    print("VALID-REJECTED", call.tool, _short(call.arguments), envelope.get("issues"))
        for issue in envelope.get("issues") or []:
            if state == "rejected" or issue.get("code") == "internal":
                report.codes[str(issue.get("code"))] += 1
            if issue.get("code") == "internal":
                report.findings.append(
                    Finding(call.tool, call.variant, f"internal: {issue.get('message')}", _short(call.arguments))
                )
        if not fast[call.tool].is_valid(envelope):
            error = next(iter(Draft202012Validator(target.output_schemas[call.tool]).iter_errors(envelope)), None)
            where = "/".join(str(p) for p in error.absolute_path) if error else "?"
            message = error.message[:200] if error else "?"
            report.findings.append(
                Finding(
                    call.tool,
                    call.variant,
                    f"envelope off its output schema at {where}: {message}",
                    _short(call.arguments),
                )
            )
        try:  # what every wire transport writes: a lone surrogate in an answer killed the stdio server
            json.dumps(envelope, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            report.findings.append(
                Finding(call.tool, call.variant, f"answer not writable as UTF-8: {exc}", _short(call.arguments))
            )
        if bool(result.is_error) != (state == "rejected"):
            report.findings.append(
                Finding(
                    call.tool, call.variant, f"isError={result.is_error} with state {state}", _short(call.arguments)
                )
            )
        if state == "rejected":
            before = _checked_unchanged(target, before, report, call, "rejected")
        else:
            initiative = call.arguments.get("initiative")
            pool.harvest(envelope, initiative if isinstance(initiative, str) else None)
            before = None
    report.seconds += time.perf_counter() - started


async def fuzz(
    target: Target,
    *,
    per_tool: int,
    seed: int,
    timeout: float = 30.0,
    progress: Callable[[Report], None] | None = None,
    report: Report | None = None,
) -> Report:
    """Seed the vault, draw `per_tool` calls per tool, send each valid-shaped and mutated (tallied
    into `report`, a new one by default)."""
    report = report if report is not None else Report()
    pool = Pool()

    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await target.call_tool(tool, arguments)
        envelope = result.structured_content
        assert isinstance(envelope, dict) and envelope["state"] != "rejected", (tool, envelope)
        return envelope

    await seed_vault(call, pool)
    started = time.perf_counter()
    drawn = await anyio.to_thread.run_sync(generate, target.input_schemas, per_tool, seed)
    report.generation_seconds += time.perf_counter() - started
    calls = calls_for(drawn, target.input_schemas, pool, random.Random(seed))
    await run(target, calls, pool, report, timeout, progress)
    return report


# -- the long mode ------------------------------------------------------------------------------


#: Calls per round of the long mode: each round gets a fresh seeded vault, so the digest taken
#: around every rejected call (a full read of the vault) stays as cheap as in the first round.
ROUND_CALLS = 1000


async def _main_async(args: argparse.Namespace) -> Report:
    report = Report()
    rounds = max(1, math.ceil(args.calls / ROUND_CALLS))
    for round_no in range(rounds):
        await _round(args, report, seed=args.seed * 1000 + round_no, calls=min(ROUND_CALLS, args.calls))
    return report


async def _round(args: argparse.Namespace, report: Report, *, seed: int, calls: int) -> None:
    from mcp import Client

    from bench.vaults import new_vault
    from kaeru.export.archive import content_digest
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    vault = new_vault(args.backend, "fuzz", Path(args.workdir) if args.workdir else None, keep=False)
    try:
        settings = vault.settings()
        store = open_store(settings)
        try:
            kaeru = build_server(Service(store, settings))
            async with Client(kaeru.server, mode="legacy", cache=None) as client:
                listing = await client.list_tools()
                target = Target(
                    call_tool=client.call_tool,
                    input_schemas={t.name: t.input_schema for t in listing.tools},
                    output_schemas={t.name: t.output_schema or {} for t in listing.tools},
                    digest=lambda: content_digest(store),
                )
                per_tool = math.ceil(calls / 2 / len(listing.tools))
                await fuzz(
                    target, per_tool=per_tool, seed=seed, timeout=args.timeout, progress=_progress, report=report
                )
        finally:
            store.close()
    finally:
        vault.drop()


def _progress(report: Report) -> None:
    print(f"... {report.calls} calls, {len(report.findings)} findings", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--calls",
        type=int,
        default=10_000,
        help=f"calls to make (half valid-shaped, half mutated), in rounds of {ROUND_CALLS} on a fresh vault each",
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0, help="per-call timeout, seconds")
    parser.add_argument("--workdir", help="where the temporary vault goes")
    parser.add_argument("--out", help="write the JSON report here")
    args = parser.parse_args(argv)
    report = anyio.run(_main_async, args)
    print(report.table())
    summary = report.to_json()
    print(
        f"\n{report.calls} calls on {args.backend} (seed {args.seed}) in {report.seconds:.0f} s "
        f"(+{report.generation_seconds:.0f} s generating); rejected calls digest-checked: {report.rejected_checked}; "
        f"internal: {summary['internal']}; findings: {len(report.findings)}"
    )
    print("variants:", dict(report.variants.most_common()))
    print("rejection codes:", dict(report.codes.most_common()))
    print("valid-shaped calls:", dict(report.valid_states.most_common()))
    print("valid-shaped rejections:", dict(report.valid_rejections.most_common()))
    for finding in report.findings[:50]:
        print(f"FINDING {finding.tool} [{finding.variant}] {finding.problem}\n    {finding.arguments}")
    if args.out:
        Path(args.out).write_text(json.dumps({"backend": args.backend, "seed": args.seed, **summary}, indent=1))
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
