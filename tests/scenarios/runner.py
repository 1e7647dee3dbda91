"""Running scenarios: in process over an SDK client (with the per-step amg round trip), or over a
connected client to a `kaeru serve` subprocess (round trip once, at the end)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import new_vault
from tests.scenarios import roundtrip
from tests.scenarios.driver import Driver, Recorder
from tests.scenarios.scenarios import SCENARIOS, Scenario


def params() -> list[Any]:
    """The scenarios as pytest params; a scenario asserting a known defect's fix is a strict xfail."""
    out = []
    for item in SCENARIOS:
        marks = [pytest.mark.xfail(strict=True, reason=item.reason)] if item.defect else []
        out.append(pytest.param(item, id=item.name, marks=marks))
    return out


async def _attempt(item: Scenario, driver: Driver) -> Exception | None:
    try:
        await item.run(driver)
    except Exception as failure:  # re-raised by the caller, outside the task group
        return failure
    return None


async def _attempt_check(label: str, text: str, ask: roundtrip.Ask, workdir: Path, backend: str) -> Exception | None:
    try:
        await roundtrip.check(label, text, ask, workdir, backend=backend)
    except Exception as failure:
        return failure
    return None


async def schemas(client: Any) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(input schemas, output schemas) by tool: the exact input schemas the server validates with (the
    NodeRef forms and enums the coverage counts; tools/list serves hints outside the contract, decision
    18.M1), and the output schemas tools/list declares."""
    from kaeru.api.schemas import input_for

    listing = await client.list_tools()
    inputs = {tool.name: input_for(tool.name) for tool in listing.tools}
    outputs = {tool.name: tool.output_schema for tool in listing.tools if tool.output_schema}
    return inputs, outputs


async def run_in_process(
    item: Scenario,
    service: Service,
    workdir: Path,
    recorder: Recorder,
    *,
    round_trip: bool = True,
    backend: str = "sqlite",
) -> None:
    """One scenario through an in-process SDK client; after every mutating step, the amg round trip
    into a fresh SQLite vault (cheap: a file), and for another backend once more at the end into a
    fresh vault on that backend (where even ranking must agree)."""
    kaeru = build_server(service)
    async with Client(kaeru.server, mode="legacy", cache=None) as client:
        _, outputs = await schemas(client)

        async def ask(tool: str, args: dict[str, Any]) -> dict[str, Any]:
            return kaeru.registry.run(tool, args)

        checked: list[str] = []  # the export verified after the previous step

        async def after_step(label: str) -> None:
            text = roundtrip.archive_text(service.store)
            if checked and text == checked[-1]:
                return  # nothing recorded since the last check: same archive, same answers
            previous = checked[-1] if checked else None
            await roundtrip.check(label, text, ask, workdir, previous, ranked_apart=backend != "sqlite")
            checked.append(text)

        driver = Driver(client, outputs, recorder, item.name, after_step if round_trip else None)
        failure = await _attempt(item, driver)
        if failure is None and round_trip and backend != "sqlite":
            label = f"{item.name} (end, {backend})"
            failure = await _attempt_check(label, roundtrip.archive_text(service.store), ask, workdir, backend)
    if failure is not None:  # raised outside the client's task group, so it is not wrapped in a group
        raise failure


def _initiatives_sent(calls: list[Any]) -> set[str]:
    names: set[str] = set()
    for call in calls:
        if isinstance(call.args.get("initiative"), str):
            names.add(call.args["initiative"])
        if call.tool == "initiative" and isinstance(call.args.get("to"), str):
            names.add(call.args["to"])
        names.update(n for n in call.args.get("initiatives", []) if isinstance(n, str))
    return names


async def run_session(client: Any, vault_dir: Path, workdir: Path, backend: str) -> dict[str, Exception | None]:
    """Every scenario, one after the other, over one connected client (one server, one vault: the
    scenarios keep to their own initiatives). After each scenario the server exports that scenario's
    initiatives through the `archive` tool, and the file's import must reproduce the server's answers.
    Returns each scenario's failure (None when it passed)."""
    _, outputs = await schemas(client)

    async def ask(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        envelope: dict[str, Any] = result.structured_content
        return envelope

    results: dict[str, Exception | None] = {}
    for item in SCENARIOS:
        recorder = Recorder()
        driver = Driver(client, outputs, recorder, item.name)
        failure = await _attempt(item, driver)
        if failure is None:
            try:
                listed = await driver.ok("roundtrip", "initiatives", {})
                live = {entry["name"] for entry in listed["data"]["initiatives"]}
                mine = sorted(_initiatives_sent(recorder.calls) & live)
                exported = await driver.ok(
                    "roundtrip",
                    "archive",
                    {"action": "export", "path": f"roundtrip-{item.name}.amg", "initiatives": mine},
                )
                written = Path(exported["data"]["artifacts"][0]["path"])
                assert written.is_relative_to(vault_dir), written
                await roundtrip.check(f"{item.name} (end)", written.read_text(), ask, workdir, backend=backend)
            except Exception as raised:  # reported per scenario by the caller
                failure = raised
        results[item.name] = failure
    return results


async def record_all(workdir: Path) -> tuple[dict[str, dict[str, Any]], Recorder]:
    """Run every scenario in process, each on a fresh SQLite vault under `workdir`, without round
    trips, recording every call. Returns the input schemas from tools/list and the recorder. A
    scenario asserting a known defect's fix may fail (its calls are recorded up to the failure); any
    other failure is raised."""
    recorder = Recorder()
    inputs: dict[str, dict[str, Any]] = {}
    for item in SCENARIOS:
        spec = new_vault("sqlite", workdir / item.name)
        service = Service(open_store(spec.settings()), spec.settings())
        try:
            if not inputs:
                async with Client(build_server(service).server, mode="legacy", cache=None) as client:
                    inputs, _ = await schemas(client)
            if item.defect:
                with contextlib.suppress(Exception):
                    await run_in_process(item, service, workdir, recorder, round_trip=False)
            else:
                await run_in_process(item, service, workdir, recorder, round_trip=False)
        finally:
            service.store.close()
    return inputs, recorder
