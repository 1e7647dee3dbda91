"""`kaeru call TOOL` — every MCP tool from a terminal, through the same dispatch as a tool call —
and `kaeru tools [TOOL]`, the list of tools and one tool's arguments.

The dedicated commands (`note`, `search`, `read`, `recall`, `context`, …) cover what people type
most; `call` reaches the rest — tasks, `revise`, `claim`, `link`, `forget`, slots, layers, boards,
timelines — with exactly what an agent gets: the same validation, replay, compare-and-set and
envelope (decision 83). Arguments are a JSON object, from the command line or stdin, and/or
`-a key=value` pairs in HTTPie's spelling:

    kaeru call task_update -a initiative=web -a task=ship-v2 -a status=done
    kaeru call revise -a node=01J… -a patch.body="Postgres 16, not 15" -a expected_revision=2-…
    kaeru call task -a initiative=web -a text="write the release notes" -a tags:='["docs"]'
    echo '{"initiative": "web", "node": "db-choice"}' | kaeru call trail -

`key=value` sets a text; `key:=value` sets a JSON value (number, boolean, null, list, object); a
dotted key sets a field inside an object (`patch.body`). Pairs are applied after the JSON object,
so they override it. The result is the compact text an agent reads (`--json`: the envelope); the
exit code follows the envelope: 0 answered, 2 refused, 1 an `internal` or `unavailable` failure.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from typing import TYPE_CHECKING, Any

import click

from kaeru.cli.common import cli, echo_json, exit_code, service_of, settings_of, wants_json
from kaeru.cli.inputs import stdin_text
from kaeru.cli.terminal import json_text, shown, speaks_utf8

if TYPE_CHECKING:
    from kaeru.config import Settings
    from kaeru.mcp.adapter import ToolRegistry
    from kaeru.service import Service


def parse_pairs(pairs: tuple[str, ...], into: dict[str, Any]) -> dict[str, Any]:
    """Apply `key=text` and `key:=json` pairs to `into` (dotted keys reach into objects). A pair may
    override the JSON object's value, but a key given by two pairs is refused (decision 211): the
    second would silently replace the first where a list was likely meant."""
    given: dict[str, str] = {}
    for pair in pairs:
        key, value = _split(pair)
        *parents, last = key.split(".")
        if not last or any(not p for p in parents):
            raise click.BadParameter(f"{pair!r}: an empty name in {key!r}", param_hint="-a/--arg")
        if key in given:
            raise click.BadParameter(
                f"{key!r} is given twice ({given[key]!r}, then {pair!r}): give it once, a list as JSON "
                f'({key}:=\'["a", "b"]\')',
                param_hint="-a/--arg",
            )
        given[key] = pair
        target = into
        for depth, parent in enumerate(parents):
            inner = target.setdefault(parent, {})
            if not isinstance(inner, dict):
                path = ".".join(parents[: depth + 1])
                message = f"{pair!r}: {path!r} is already set to a value, not an object"
                raise click.BadParameter(message, param_hint="-a/--arg")
            target = inner
        target[last] = value
    return into


def _split(pair: str) -> tuple[str, Any]:
    """`key:=json` (a JSON value) or `key=text` (a text), whichever separator comes first."""
    eq = pair.find("=")
    if eq <= 0:
        raise click.BadParameter(f"{pair!r}: expected key=text or key:=json", param_hint="-a/--arg")
    if pair[eq - 1] == ":":
        key, raw = pair[: eq - 1], pair[eq + 1 :]
        try:
            return key, json.loads(raw)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"{pair!r}: {raw!r} is not JSON ({exc.msg})", param_hint="-a/--arg") from exc
    return pair[:eq], pair[eq + 1 :]


def parse_object(raw: str, where: str) -> dict[str, Any]:
    """The arguments' JSON object (from the command line or stdin)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(
            f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", param_hint=where
        ) from exc
    if not isinstance(value, dict):
        raise click.BadParameter(f"the arguments must be a JSON object, not {type(value).__name__}", param_hint=where)
    return value


@cli.command()
@click.argument("tool")
@click.argument("arguments", required=False)
@click.option("-a", "--arg", "pairs", multiple=True, metavar="KEY=TEXT|KEY:=JSON", help="One argument (repeat).")
@click.pass_context
def call(ctx: click.Context, tool: str, arguments: str | None, pairs: tuple[str, ...]) -> None:
    """Call any MCP tool: ARGUMENTS is a JSON object (or - to read it from stdin), -a adds or
    overrides one argument. `kaeru tools` lists the tools, `kaeru tools TOOL` shows one's arguments."""
    from kaeru.mcp.pinned import pinned_listing

    args: dict[str, Any] = {}
    if arguments is not None:
        if arguments == "-" and sys.stdin is None:  # `<&-`
            raise click.UsageError(
                "stdin is closed: nothing to read for ARGUMENTS '-' (give the JSON object, or pipe it in)"
            )
        raw = stdin_text() if arguments == "-" else arguments
        args = parse_object(raw, "stdin" if arguments == "-" else "ARGUMENTS")
    parse_pairs(pairs, args)
    # The tool's name and its arguments are checked before the vault is opened: opening creates a
    # vault that is not there, and a mistyped --vault was left holding an empty one by a call that
    # was refused anyway (an unknown tool, a missing argument).
    catalogue = _tools(settings_of(ctx))
    if not catalogue.has(tool):
        raise unknown_tool(tool, list(catalogue.specs))
    if refused(catalogue, tool, args):
        envelope = catalogue.run(tool, args)  # the refusal, answered as a call answers it
    else:
        listed = {t["name"]: t for t in pinned_listing() or []}
        reads = bool(listed.get(tool, {}).get("annotations", {}).get("readOnlyHint"))
        # `context` writes only bookkeeping of an initiative that exists (decision 27): a vault that
        # is not there is refused as for `kaeru context`, not created by a mistyped `--vault`.
        service = service_of(ctx, existing=reads or tool == "context")
        envelope = _tools(service.rt.settings, service).run(tool, args)
    if wants_json(ctx):
        echo_json(envelope)
    else:
        from kaeru.mcp.render import compact

        # The text an agent reads, as it reads it (its issues, its `next:` in the tool's words),
        # stored text `shown`; what a person types next is said on stderr.
        click.echo(shown(compact(envelope, settings_of(ctx).zone())))
        if (following := (envelope.get("continuation") or {}).get("next_arguments")) is not None:
            # Still JSON, nothing raw; escaped past ASCII where stderr is not UTF-8 (`echo_json`).
            arguments = json_text(json.dumps(following, ensure_ascii=not speaks_utf8(err=True)))
            click.echo(f"(next page: kaeru call {tool} {shlex.quote(arguments)})", err=True)
    for hint in typed_hints(envelope, pairs):
        click.echo(hint, err=True)
    ctx.exit(exit_code(envelope))


@cli.command()
@click.argument("name", required=False)
@click.pass_context
def tools(ctx: click.Context, name: str | None) -> None:
    """List the MCP tools (name, read/write, title), or show one tool's description and arguments
    (what `kaeru call NAME` takes); --json prints the tools of `tools/list` (or NAME's) as JSON
    (name, title, description, schemas, annotations)."""
    from kaeru.mcp.pinned import pinned_listing

    settings = settings_of(ctx)  # what a tool is needs no vault: none is opened (decision 194)
    listing = pinned_listing(settings.structured)
    pinned = listing is not None
    if listing is None:
        listing = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in _tools(settings).list_tools()]
    if name is not None:
        found = [t for t in listing if t["name"] == name]
        if not found:
            raise unknown_tool(name, [t["name"] for t in listing])
        if wants_json(ctx):
            echo_json(found[0])
        else:
            click.echo(describe_tool(found[0], _exact_input(settings, name, pinned=pinned)))
        return
    if wants_json(ctx):
        echo_json(listing)
        return
    for tool in listing:
        annotations = tool.get("annotations") or {}
        mode = "read " if annotations.get("readOnlyHint") else "write"
        title = tool.get("title") or annotations.get("title") or tool.get("description", "").split("\n", 1)[0]
        click.echo(f"{tool['name']:<14} {mode}  {title}")


#: A JSON Schema type as a person says it.
_TYPE_WORDS = {"number": "a number", "integer": "a whole number", "boolean": "true or false", "array": "a list"}


def typed_hints(envelope: dict[str, Any], pairs: tuple[str, ...]) -> list[str]:
    """For each argument given as text (`-a weight=0.9`) that the tool wanted as a number, boolean,
    list or object, the `KEY:=JSON` spelling that gives it: "'0.9' is not of type 'number'" left a
    person to find that form in `--help`."""
    split = (pair.partition("=") for pair in pairs)
    texts = {key: value for key, _, value in split if not key.endswith(":")}  # `key:=json` is typed already
    hints = []
    for issue in envelope.get("issues") or ():
        wanted = re.search(r"is not of type '(\w+)'", issue.get("message") or "")
        field = issue.get("field")
        if issue.get("code") != "invalid_argument" or not wanted or field not in texts:
            continue
        value = texts[field]
        example = json.dumps([value], ensure_ascii=False) if wanted[1] == "array" else value
        kind = _TYPE_WORDS.get(wanted[1], wanted[1])
        hints.append(
            f"(-a {field}=… gives a text; {kind} is given as JSON with :=, e.g. -a {field}:={shlex.quote(example)})"
        )
    return hints


def refused(catalogue: ToolRegistry, tool: str, args: dict[str, Any]) -> bool:
    """Whether a call of `tool` with `args` is refused before it reaches the vault: text that
    cannot be stored, or arguments its request model refuses (what `ToolRegistry.run` checks
    first, so `catalogue.run` answers such a call without a service)."""
    from kaeru.domain.surrogates import refusal_of_unstorable
    from kaeru.errors import KaeruError

    if refusal_of_unstorable(args) is not None:
        return True
    try:
        catalogue.specs[tool].parser.parse(args)
    except KaeruError:
        return True
    return False


def _exact_input(settings: Settings, name: str, *, pinned: bool) -> dict[str, Any]:
    """The exact input schema of the tool `name` (the one every call is validated by): made from its
    request model alone when the listing is the pinned one (no SDK imported, no other tool built:
    decision 199), else from the built tools."""
    if pinned:
        from kaeru.api.schemas import input_for

        return input_for(name)
    return _tools(settings).specs[name].input_schema


def _tools(settings: Settings, service: Service | None = None) -> ToolRegistry:
    """The tools as `kaeru serve` registers them (text and structured output as `settings` say),
    without the MCP SDK or a server around them (decision 200): over `service`, a call from the
    terminal runs the same validation and handler; without one, a catalogue of what each tool
    is — its exact input schema, or the listing when the pinned one is not there — opening no vault."""
    from kaeru.mcp.adapter import Output, ToolRegistry
    from kaeru.mcp.tools import register_tools

    output = Output(text=settings.text, structured=settings.structured)
    registry = ToolRegistry(service, output=output) if service is not None else ToolRegistry.catalogue(output)
    register_tools(registry)
    return registry


def unknown_tool(name: str, names: list[str]) -> click.UsageError:
    """The usage error for a tool name that is none: the close names, or every name."""
    from kaeru.domain.similar import suggest

    close = suggest(name, names)
    return click.UsageError(
        f"no tool named {name!r}; " + (f"did you mean {', '.join(close)}?" if close else f"tools: {', '.join(names)}")
    )


def describe_tool(tool: dict[str, Any], schema: dict[str, Any]) -> str:
    """A tool's description (as `tools/list` serves it) and its arguments — name, type, bounds,
    default, description — from the exact schema every call is validated by (the served one is a
    looser hint outside the published contract, decision 18.M1): a terminal user's help for
    `kaeru call`."""
    required = set(schema.get("required") or ())
    title = f"{tool['name']} — {tool['title']}" if tool.get("title") else tool["name"]
    lines = [title, "", tool.get("description", ""), "", "Arguments:"]
    for key, prop in (schema.get("properties") or {}).items():
        need = "required" if key in required else "optional"
        extra = f", default {json.dumps(prop['default'])}" if "default" in prop else ""
        lines.append(f"  {key} ({_type_of(prop)}, {need}{extra})")
        if prop.get("description"):
            lines.append(f"      {prop['description']}")
    alternatives = [" + ".join(a["required"]) for a in schema.get("anyOf") or () if a.get("required")]
    if alternatives:
        lines.append("  needs at least one of: " + " | ".join(alternatives))
    for name, definition in (schema.get("$defs") or {}).items():
        if name == "NodeRef":
            lines.append("  NodeRef: a node's id or exact name, " + '{"id": …} or {"initiative": …, "name": …}')
        else:
            lines.append(f"  {name}: {_type_of(definition)}")
    lines += ["", f"kaeru call {tool['name']} -a key=text -a key:=json   (or a JSON object, or - for stdin)"]
    return "\n".join(lines)


def _type_of(prop: dict[str, Any]) -> str:
    """A property's type in a few words: `string`, `integer 512..64000`, `list of: a, b`, `NodeRef`."""
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "enum" in prop:
        return "one of: " + ", ".join(str(v) for v in prop["enum"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(dict.fromkeys(_type_of(p) for p in prop[key]))
    if prop.get("properties"):
        needed = set(prop.get("required") or ())
        fields = [f"{k}: {_type_of(v)}{'' if k in needed else ' (optional)'}" for k, v in prop["properties"].items()]
        return "{" + ", ".join(fields) + "}"
    kind = prop.get("type")
    words = "|".join(kind) if isinstance(kind, list) else str(kind or "any")
    if kind == "array" and isinstance(prop.get("items"), dict):
        inner = _type_of(prop["items"])
        words = f"list of: {inner.removeprefix('one of: ')}" if "enum" in prop["items"] else f"list of {inner}"
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        words += f" {'' if low is None else low}..{'' if high is None else high}"
    return words
