"""The tools called as a limited token, as the HTTP transport calls them: the token's grants read
from the store on each request, so a grant a rename or merge changed applies at once. Shared by the
tests of grants across renames and merges."""

from __future__ import annotations

from typing import Any

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store


def token(service: Service, name: str, initiatives: list[str]) -> str:
    """A new limited token `name` granted `initiatives`: its secret."""
    secret, _ = grants.add_token(service.rt, name, initiatives, False, "owner")
    return secret


def as_token(service: Service, store: Store, secret: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """`tool` called with the token `secret` as it is stored now (its grants read per request)."""
    record = grants.verify(store, secret, service.rt.now())
    assert record is not None
    with grants.acting(grants.principal_of(record)):
        return build_server(service).registry.run(tool, args)


def initiative_names(service: Service) -> list[str]:
    """The vault's initiatives by name, sorted."""
    with service.store.read() as session:
        return sorted(i.name for i in session.all_initiatives())


def messages(answer: dict[str, Any], code: str) -> list[str]:
    """The messages of an answer's issues of `code`, in order."""
    return [i["message"] for i in answer["issues"] if i["code"] == code]
