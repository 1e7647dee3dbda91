"""What every tool request is made of: the base model, the shared field types and the schema generator.

A request model says what a tool accepts in one place. For the non-contract tools the served input
schema is generated from it (`api/schemas.py`); the published contract tools (`search`, `claim`,
`revise`) keep serving their contract files and get models with the same fields, so every service
takes a model (decision 14.T1).

Validation happens once, at the edge (`api/requests.py`: the compiled JSON Schema validator), then
the model is built with `model_construct`, without validating twice. So a field's Python type is
what the schema guarantees, and a nested value (a NodeRef, a reminder, options) stays the JSON it
was sent as: `Ref` is a string or an object, `Json` an object the use case parses.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, WithJsonSchema
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema

from kaeru.errors import InvalidArgument


def ref(name: str) -> WithJsonSchema:
    """The schema of a field that is one of the contract's `$defs` (`NodeRef`, `Slot`, ...).

    Written as a placeholder (`x-def`) that `api/schemas.py` turns into a `$ref` and whose `$defs`
    it copies from the contract, so a NodeRef means the same in every tool."""
    return WithJsonSchema({"x-def": name})


def one_of(values: Iterable[str]) -> WithJsonSchema:
    """A string field taking one of `values` (usually a domain enum's values, not restated)."""
    return WithJsonSchema({"type": "string", "enum": list(values)})


def values(enum: type[StrEnum], leave_out: Iterable[str] = ()) -> list[str]:
    return [member.value for member in enum if member.value not in set(leave_out)]


#: A node reference: an id or exact name, {id}, or {initiative, name} (contract `$defs/NodeRef`).
Ref = Annotated[str | dict[str, str], ref("NodeRef")]
#: A structured argument validated by its `$defs` schema and parsed by the use case.
Json = dict[str, Any]
#: Non-empty text.
Text = Annotated[str, Field(min_length=1)]
#: An initiative name (the 128 characters the storage keeps).
InitiativeName = Annotated[str, Field(min_length=1, max_length=128)]
#: A node name.
NodeName = Annotated[str, Field(min_length=1, max_length=200)]
#: A free tag.
Tag = Annotated[str, Field(min_length=1, max_length=128)]
#: A git branch name as the client reports it (`main`, `feat/auth`): no spaces, bounded.
Branch = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^\S+$")]
#: Several initiatives, each named once.
Initiatives = Annotated[list[Text], Field(min_length=1, json_schema_extra={"uniqueItems": True})]
#: The characters of body text an answer may carry: bounds and default declared once.
BUDGET_MIN, BUDGET_MAX, BUDGET_DEFAULT = 512, 64000, 8000
Budget = Annotated[int, Field(ge=BUDGET_MIN, le=BUDGET_MAX)]
#: An edge weight.
Weight = Annotated[float, Field(ge=0, le=1)]

REQUEST_ID = "Idempotency key: a retry replays the first result."
EXPECTED_REVISION = "Your last-read revision: refused if the node changed since."


class Request(BaseModel):
    """A tool's arguments, validated at the edge. Unknown fields are refused by the schema."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True, defer_build=True)

    #: Per model, set once when the class is built: wire name → field name, and the defaults.
    _names: ClassVar[dict[str, str]] = {}
    _defaults: ClassVar[dict[str, Any]] = {}
    _renamed: ClassVar[bool] = False
    #: The arguments as sent, kept by `trusted` (None for a model built by pydantic validation).
    _wire: dict[str, Any] | None = PrivateAttr(None)
    #: A tool whose arguments depend on its action: the field that chooses (`action`, `mode`), and
    #: per argument (wire name) the choices it is for. Given with another, it is refused
    #: (`misapplied`) rather than ignored — `initiative attach` with `to` answered `unchanged`.
    APPLIES: ClassVar[tuple[str, dict[str, tuple[str, ...]]] | None] = None
    #: Per argument (wire name), the arguments it is for, one of which the call must send: given
    #: without them it is refused (`misapplied`) rather than ignored — `note` with `edge_type` and no
    #: `link_to` was applied with no edge, and the agent believed the two nodes linked.
    NEEDS: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._names = {(info.alias or name): name for name, info in cls.model_fields.items()}
        cls._renamed = any(wire != name for wire, name in cls._names.items())
        cls._defaults = {name: info.default for name, info in cls.model_fields.items() if not info.is_required()}
        # `trusted` shares the defaults between instances: only immutable ones (no factories).
        assert all(isinstance(v, str | int | float | bool | None) for v in cls._defaults.values()), cls.__name__

    @classmethod
    def trusted(cls, args: dict[str, Any]) -> Self:
        """The model of arguments the tool's input schema has accepted: built, not validated again.

        What `model_construct` does, without its per-field work (it cost more than validating;
        bench/validation.py, decision 14.T2): the schema has already checked every value."""
        if cls._renamed:  # a wire name that is not the field's (link's `from`)
            names = cls._names
            values = {**cls._defaults, **{names[key]: value for key, value in args.items()}}
            given = {names[key] for key in args}
        else:
            values = {**cls._defaults, **args}
            given = set(args)
        request = cls.__new__(cls)
        put = object.__setattr__
        put(request, "__dict__", values)
        put(request, "__pydantic_fields_set__", given)
        put(request, "__pydantic_extra__", None)
        put(request, "__pydantic_private__", {"_wire": args})
        return request

    @classmethod
    def misapplied(cls, args: dict[str, Any]) -> InvalidArgument | None:
        """The refusal of an argument `args` give (not null) that their action does not use, or
        that they give without the argument it is for."""
        for name, partners in cls.NEEDS:
            if args.get(name) is not None and all(args.get(p) is None for p in partners):
                return InvalidArgument(
                    f"{name} applies only with {' or '.join(partners)}, which the call does not send: "
                    f"send {' or '.join(partners)}, or leave {name} out",
                    field=name,
                )
        if cls.APPLIES is None:
            return None
        selector, applies = cls.APPLIES
        chosen = args.get(selector, cls._defaults.get(cls._names.get(selector, selector)))
        for name, choices in applies.items():
            if args.get(name) is not None and chosen not in choices:
                return InvalidArgument(
                    f"{name} does not apply to {selector} {chosen!r}: it is for {', '.join(choices)}", field=name
                )
        return None

    def wire(self) -> dict[str, Any]:
        """The arguments as sent (the fields that were given, by their wire names): what replay
        keys, cursors and continuations are computed from."""
        # Read straight from pydantic's private store: `self._wire` goes through `__getattr__`, slow.
        private = self.__pydantic_private__
        sent = private.get("_wire") if private else None
        if sent is not None:
            return sent  # type: ignore[no-any-return]
        return self.model_dump(by_alias=True, exclude_unset=True, warnings=False)

    def given(self, name: str) -> bool:
        """True when the caller sent field `name` (even as null)."""
        return name in self.model_fields_set


class WireSchema(GenerateJsonSchema):
    """JSON Schema as the wire wants it: an optional field is absent, not null (a nullable field
    says so with its own `WithJsonSchema`), and no titles."""

    def nullable_schema(self, schema: CoreSchema) -> JsonSchemaValue:  # type: ignore[override]
        return self.generate_inner(schema["schema"])  # type: ignore[typeddict-item]

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _clean(node: Any) -> Any:
    """Drop what the wire schema does not say: titles and `default: null` (absent means absent)."""
    if isinstance(node, dict):
        return {
            key: _clean(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str)) and not (key == "default" and value is None)
        }
    if isinstance(node, list):
        return [_clean(item) for item in node]
    return node


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of `model` as served (contract `$defs` still as `x-def` placeholders)."""
    schema: dict[str, Any] = _clean(model.model_json_schema(schema_generator=WireSchema))
    schema.setdefault("required", [])
    return schema
