"""The initiatives page finds an initiative by the start of its name (a probe of a vault of 10,003
initiatives: the page lists 100, most active first, and "less active →" was the only way on, so a
quiet project was a hundred pages away; `/?prefix=bigproj` was ignored). Over HTTP against a real
`kaeru serve --http` and in headless Chromium, both backends."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from kaeru.domain.timefmt import fmt
from kaeru.storage.factory import open_store
from tests.web.conftest import ADMIN, Site
from tests.web.test_viewer import get, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

#: Initiatives sharing a start: more than the page's 100.
AREAS = 105


def listed(site: Site, path: str, token: str = ADMIN) -> tuple[list[str], str]:
    """The initiatives a page lists, in order, and the page."""
    status, body = get(site.base + path, {"Authorization": f"Bearer {token}"})
    assert status == 200, body
    return [unescape(n) for n in re.findall(r'<tr class="initiative" data-name="([^"]*)"', body)], body


def link(body: str, anchor: str) -> str | None:
    found = re.search(rf'<a id="{anchor}" href="([^"]+)"', body)
    return unescape(found.group(1)) if found else None


def test_a_prefix_lists_the_initiatives_whose_names_start_with_it(site: Site) -> None:
    """Case-insensitive, as the `initiatives` tool's `prefix`; the box keeps the words and a link
    leads back to every initiative."""
    names, body = listed(site, "/ui/?prefix=PAY")
    assert names == ["payroll"]
    assert "whose name starts with “PAY”, 1 of 1" in body
    assert re.search(r'<label for="prefix">[^<]+</label><input id="prefix" name="prefix"[^>]* value="PAY">', body)
    assert link(body, "every-initiative") == "/ui/"
    assert sorted(listed(site, "/ui/")[0]) == ["big", "payroll", "web"]


def test_a_prefix_is_shown_escaped_and_a_miss_says_so(site: Site) -> None:
    """What the box held comes back as text, never as markup (the Content-Security-Policy would
    stop a script; the page must not carry one either)."""
    typed = '<img src=x>"q'
    names, body = listed(site, f"/ui/?prefix={quote(typed)}")
    assert names == []
    assert typed not in body and "<img" not in body
    assert 'value="&lt;img src=x&gt;&quot;q"' in body
    assert "no initiative whose name starts with “&lt;img src=x&gt;&quot;q”" in body


def test_a_prefix_keeps_to_the_grants(site: Site) -> None:
    """A token limited to `web` finds `web`, and nothing of `payroll` by its start."""
    assert listed(site, "/ui/?prefix=w", site.fixture.alice)[0] == ["web"]
    names, body = listed(site, "/ui/?prefix=pay", site.fixture.alice)
    assert names == [] and "payroll" not in body


def test_a_prefix_pages_on_and_back_to_the_first_page(site: Site) -> None:
    """Past 100 matches "less active →" keeps the prefix, and the next page links back to the first."""
    store = open_store(site.vault.settings())
    try:
        with store.write() as session:
            start = datetime(2026, 1, 1, tzinfo=UTC)
            for n in range(AREAS):
                session.create_initiative(f"area-{n:03d}", fmt(start + timedelta(seconds=n)))
    finally:
        store.close()
    newest_first = [f"area-{n:03d}" for n in reversed(range(AREAS))]
    first, body = listed(site, "/ui/?prefix=area")
    assert first == newest_first[:100]
    assert "whose name starts with “area”, 100 of 105" in body
    assert link(body, "first-page") is None
    following = link(body, "next-page")
    assert following is not None and parse_qs(urlsplit(following).query)["prefix"] == ["area"]
    rest, body = listed(site, following)
    assert rest == newest_first[100:]
    assert link(body, "first-page") == "/ui/?prefix=area" and link(body, "next-page") is None
    assert listed(site, "/ui/?prefix=area")[0] == first


def test_the_name_box_is_labelled_and_filters_without_a_script(site: Site, page: Any) -> None:
    """A person types the start of a name into a labelled box and presses Show: the page runs no
    script, the form is a plain GET."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/")
    box = page.get_by_label("Name starts with", exact=True)
    assert box.count() == 1
    box.fill("bi")
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_url(re.compile(r"/ui/\?prefix=bi$"))
    assert page.locator("tr.initiative").evaluate_all("rows => rows.map(r => r.dataset.name)") == ["big"]
    assert page.get_by_role("search", name="initiatives by name").count() == 1
    page.get_by_role("link", name="every initiative").click()
    page.wait_for_url(re.compile(r"/ui/$"))
    assert page.locator("tr.initiative").count() >= 3
