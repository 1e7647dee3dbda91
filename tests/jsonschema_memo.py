"""hypothesis-jsonschema, made to build each property's strategy once instead of once a draw.

`from_schema` generates an object key by key; for every key of every object drawn it builds that
property's strategy anew (`merged_as_strategies`: resolve `$ref`s, canonicalise, build), which was
most of the contract tests' time (a profile of one: 14 of its 15 s). Building a strategy draws
nothing, and a built strategy can be drawn from any number of times, so one built once per schema
draws exactly what one built each time does: the same choices give the same documents, and the
tests generate the same examples as before, only sooner.

The function patched is private to hypothesis-jsonschema (pinned <0.24 in pyproject.toml); if it
is not there, nothing is patched and the tests are as slow as they were, not wrong.
"""

from __future__ import annotations

from typing import Any

_CACHE: dict[tuple[str, int, int], tuple[Any, Any, Any]] = {}


def install() -> None:
    """Memoise `hypothesis_jsonschema._from_schema.merged_as_strategies` (idempotent)."""
    from hypothesis_jsonschema import _from_schema
    from hypothesis_jsonschema._encode import encode_canonical_json

    build = getattr(_from_schema, "merged_as_strategies", None)
    if build is None or getattr(build, "_kaeru_memo", False):
        return

    def merged_as_strategies(schemas: list[Any], *, alphabet: Any, custom_formats: Any) -> Any:
        key = (encode_canonical_json(schemas), id(alphabet), id(custom_formats))
        hit = _CACHE.get(key)
        # The alphabet and formats are held by the entry, so their ids cannot be reused meanwhile.
        if hit is not None and hit[0] is alphabet and hit[1] is custom_formats:
            return hit[2]
        strategy = build(schemas, alphabet=alphabet, custom_formats=custom_formats)
        _CACHE[key] = (alphabet, custom_formats, strategy)
        return strategy

    merged_as_strategies._kaeru_memo = True  # type: ignore[attr-defined]
    _from_schema.merged_as_strategies = merged_as_strategies
