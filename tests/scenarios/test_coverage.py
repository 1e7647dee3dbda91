"""Coverage derived from the schemas: every enum value of every tool's input schema is sent by some
scenario step — counted from the arguments the scenarios actually send, not from labels.

Removing the only step that sends a value (a mode's scenario, say) makes
`test_every_enum_value_is_sent` fail; `test_coverage_counts_only_what_is_sent` proves the mechanism
for every value at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.scenarios.coverage import covering_steps, forms_sent, report, required, required_forms, uncovered
from tests.scenarios.driver import Recorder
from tests.scenarios.runner import record_all
from tests.scenarios.scenarios import SCENARIOS

REPORT = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"

Recorded = tuple[dict[str, dict[str, Any]], Recorder]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Every scenario run once in process (SQLite, no round trips), every call recorded."""
    return anyio.run(record_all, tmp_path_factory.mktemp("coverage"))


def test_every_enum_value_is_sent(recorded: Recorded) -> None:
    inputs, recorder = recorded
    missing = uncovered(inputs, recorder.calls)
    assert not missing, "enum values no scenario step sends (add a step):\n" + "\n".join(
        f"  {tool}.{path} = {value!r}" for tool, path, value in missing
    )


def test_every_reference_form_is_sent(recorded: Recorded) -> None:
    """Each tool is sent every form of each reference it accepts: name string, {id}, {initiative, name};
    evidence as {node} and {method}."""
    inputs, recorder = recorded
    missing = sorted(required_forms(inputs) - set(forms_sent(inputs, recorder.calls)))
    assert not missing, "reference forms no scenario step sends:\n" + "\n".join(
        f"  {tool}: {name} as {form}" for tool, name, form in missing
    )


def test_every_tool_is_called(recorded: Recorded) -> None:
    inputs, recorder = recorded
    assert set(inputs) - {call.tool for call in recorder.calls} == set()


def test_coverage_counts_only_what_is_sent(recorded: Recorded) -> None:
    """Dropping the steps that send a value leaves that value uncovered — for every value."""
    inputs, recorder = recorded
    covered = covering_steps(inputs, recorder.calls)
    assert required(inputs) <= set(covered)
    for slot, steps in covered.items():
        rest = [call for call in recorder.calls if f"{call.scenario}/{call.step}" not in steps]
        assert slot in uncovered(inputs, rest), f"{slot} still counted without {steps}"


def test_report_is_current(recorded: Recorded) -> None:
    inputs, recorder = recorded
    listed = [(item.name, item.reason if item.defect else "") for item in SCENARIOS]
    want = report(inputs, recorder.calls, listed) + "\n"
    assert REPORT.read_text() == want, "docs/scenarios.md is stale: run python scripts/gen_scenario_report.py"


def _undescribed(schema: Any, root: dict[str, Any], path: str, out: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        schema = root.get("$defs", {}).get(ref.split("/")[-1], {})
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            _undescribed(branch, root, path, out)
    for name, child in schema.get("properties", {}).items():
        if not (isinstance(child, dict) and child.get("description")):
            out.append(f"{path}{name}")
        _undescribed(child, root, f"{path}{name}.", out)


def test_every_parameter_is_described(recorded: Recorded) -> None:
    inputs, _ = recorded
    missing: list[str] = []
    for tool, schema in sorted(inputs.items()):
        _undescribed(schema, schema, f"{tool}.", missing)
    assert not missing, f"{len(missing)} parameters without a description, e.g. {sorted(set(missing))[:10]}"
