"""A tool call made as the server makes it, its answer checked against both output schemas a tool
has: the one it declares in `tools/list` and the full one it loosens (the contract's own for
`search`, `claim`, `revise`). For tests whose subject is an answer's shape or size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator

from kaeru.api.outputs import output_for
from kaeru.mcp.server import build_server
from kaeru.service import Service


def checked_calls(service: Service) -> Callable[..., dict[str, Any]]:
    """`run(tool, **args)`: the envelope, after both schemas accepted it."""
    server = build_server(service)

    def run(tool: str, **args: Any) -> dict[str, Any]:
        envelope = server.registry.run(tool, args)
        spec = server.registry.specs[tool]
        for schema in (spec.output_schema, output_for(tool, spec.kind)):
            problems = list(Draft202012Validator(schema).iter_errors(envelope))
            assert not problems, problems[0].message
        return envelope

    return run
