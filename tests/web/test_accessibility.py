"""The viewer for people who use a keyboard, a screen reader, zoom or cannot tell colours apart, in
headless Chromium against a real `kaeru serve --http`, both backends. Each test is a finding of the
accessibility probe (session 39): what a person relied on and did not get. Names are the browser's
own accessible names (Playwright's role and label queries), not the markup's."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.conftest import Site
from tests.web.test_viewer import mcp, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: str, other: str) -> float:
    """WCAG's contrast ratio of two computed CSS colours (`rgb(…)`)."""

    def parse(css: str) -> tuple[float, float, float]:
        r, g, b = (float(v) for v in re.findall(r"[\d.]+", css)[:3])
        return r, g, b

    light, dark = sorted((_luminance(parse(one)), _luminance(parse(other))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_a_refused_edit_is_an_alert_styled_as_an_error_and_a_success_a_status_inside_main(
    site: Site, page: Any
) -> None:
    """Finding 4: a read-only token's refusal was said in the green box of a success, outside every
    landmark, with no role: a screen-reader user heard nothing about the outcome."""
    sign_in(page, site, site.fixture.rita)
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['new']}")
    page.click("form.edit[data-op=layer] button")
    refused = page.get_by_role("alert")
    assert refused.inner_text().startswith("layer: refused — forbidden:")
    assert "error" in refused.get_attribute("class").split()
    assert page.locator("main #edited[role=alert]").count() == 1
    sign_in(page, site)
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['done']}")
    page.click("form.edit[data-op=layer] button")
    done = page.get_by_role("status")
    assert done.inner_text().startswith("layer: ") and "refused" not in done.inner_text()
    assert "error" not in done.get_attribute("class").split()
    assert page.locator("main #edited[role=status]").count() == 1 and page.get_by_role("alert").count() == 0


def test_every_form_control_has_a_name_and_each_move_names_its_task(site: Site, page: Any) -> None:
    """Finding 5: the board's status selects had no name and sat beside identical "Move" buttons;
    the node page's layer select had none; the reason box was named by a placeholder only."""
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/board?i=web")
    assert page.get_by_role("combobox", name="Move Browser tests to").count() == 1
    assert page.get_by_role("button", name="Move Browser tests").count() == 1
    assert page.get_by_role("button", name="Move Pick a renderer").count() == 1
    page.goto(f"{site.base}/ui/node?i=web&id={ids['decision']}")
    assert page.get_by_label("layer", exact=True).get_attribute("id") == "layer-select"
    assert page.get_by_label("reason", exact=True).get_attribute("id") == "flag-reason"
    assert page.get_by_label("resolution", exact=True).count() == 1
    assert page.get_by_role("textbox", name="Search (literal words)").count() == 1
    for where in ("/ui/", "/ui/board?i=web", f"/ui/node?i=web&id={ids['decision']}", "/ui/reviews?i=web", "/ui/login"):
        page.goto(site.base + where)
        unnamed = page.evaluate(
            """() => [...document.querySelectorAll('select, input:not([type=hidden]), textarea')]
                .filter(e => !e.labels.length && !e.getAttribute('aria-label')).map(e => e.outerHTML)"""
        )
        assert unnamed == [], (where, unnamed)


def test_the_accent_colour_has_a_text_contrast_of_at_least_4_5(site: Site, page: Any) -> None:
    """Finding 6: the nav links, the current view and every button were #2e86ab on white (or white
    on it): 4.1:1, under WCAG 1.4.3's 4.5:1."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/board?i=web")
    pairs = page.evaluate(
        """() => {
            const style = e => getComputedStyle(e);
            const nav = getComputedStyle(document.querySelector('nav.views'));
            const out = [...document.querySelectorAll('nav.views a:not(.here)')].map(a => [style(a).color, nav.backgroundColor]);
            const here = style(document.querySelector('nav.views a.here'));
            out.push([here.color, here.backgroundColor]);
            const button = style(document.querySelector('li.card form.edit button'));
            out.push([button.color, button.backgroundColor]);
            for (const muted of document.querySelectorAll('.column li.empty, .column li.coverage'))
                out.push([style(muted).color, style(muted.closest('.column')).backgroundColor]);
            return out;
        }"""
    )
    assert len(pairs) >= 6
    for ink, ground in pairs:
        assert contrast(ink, ground) >= 4.5, (ink, ground, contrast(ink, ground))


def test_a_superseded_nodes_page_says_so_under_its_heading_before_the_body(site: Site, page: Any) -> None:
    """Finding 9: the heading was followed by the old body at full strength; "currentness
    superseded" was the fourth fact, below it."""
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/node?i=web&id={ids['old']}")
    said = page.locator("#not-in-force")
    assert said.inner_text().startswith("Superseded by Use SVG, not canvas")
    assert said.locator(f"a[data-id='{ids['new']}']").count() == 1
    order = page.evaluate(
        """() => {
            const h1 = document.querySelector('main h1'), note = document.getElementById('not-in-force');
            const body = document.getElementById('body');
            return [!!(h1.compareDocumentPosition(note) & 4), !!(note.compareDocumentPosition(body) & 4)];
        }"""
    )
    assert order == [True, True], "heading, then the notice, then the body"
    page.goto(f"{site.base}/ui/node?i=web&id={ids['new']}")
    assert page.locator("#not-in-force").count() == 0


def test_the_graph_lists_its_nodes_and_edges_as_text_and_its_links_are_not_inside_an_image(
    site: Site, page: Any
) -> None:
    """Finding 1: the SVG was `role="img"` around focusable links (presentational to assistive
    technology), and its edges read as "refers_to 0.8 targets 0.6 …" without their ends."""
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/graph?i=web")
    assert page.locator("svg#graph").get_attribute("role") != "img"
    drawn = page.locator("svg#graph g.edge").evaluate_all(
        "l => l.map(e => [e.dataset.from, e.dataset.to, e.dataset.type])"
    )
    assert drawn
    rows = page.locator("#graph-text tr.edge-text")
    assert rows.count() == len(drawn)
    names = {n["id"]: n["name"] for n in mcp(site, "timeline", {"initiatives": ["web"], "limit": 100})["data"]["hits"]}
    for source, target, kind in drawn:
        row = page.locator(f"#graph-text tr.edge-text[data-from='{source}'][data-to='{target}']").filter(has_text=kind)
        cells = row.first.locator("td").all_inner_texts()
        assert cells[0].startswith(names[source]) and cells[1] == kind and cells[3].startswith(names[target]), cells
    rule = page.locator(f"#graph-text tr.edge-text[data-from='{ids['rule']}'][data-to='{ids['decision']}']")
    cells = rule.locator("td").all_inner_texts()
    assert cells[0].startswith("No CDN") and cells[1:3] == ["refers_to", "0.8"] and cells[3].startswith("Use SVG")
    listed = page.locator("#graph-text ul.graph-nodes li").evaluate_all("l => l.map(e => e.dataset.id)")
    assert sorted(listed) == sorted(page.locator("svg#graph g.node").evaluate_all("l => l.map(e => e.dataset.id)"))
    assert page.get_by_role("link", name=re.compile(r"^Use canvas \(.*superseded\)$")).count() == 1


def test_the_current_view_is_marked_aria_current(site: Site, page: Any) -> None:
    """Finding 10: only the pill's colour said which view was open."""
    sign_in(page, site)
    for view in ("graph", "board", "timeline", "reviews", "rules"):
        page.goto(f"{site.base}/ui/{view}?i=web")
        current = page.locator("nav.views a[aria-current=page]")
        assert current.count() == 1 and current.inner_text().lower() == view


def test_a_skip_link_leads_to_main_and_an_edit_returns_to_its_card(site: Site, page: Any) -> None:
    """Finding 11: eleven Tabs before the page's first control, and after a Move focus was back on
    the page's top, the card to find again."""
    sign_in(page, site)
    ids = site.fixture.ids
    page.goto(f"{site.base}/ui/board?i=web")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    card = page.locator(f"li.card[data-id='{ids['done']}']")
    card.locator("select[name=status]").select_option("open")
    card.locator("button").click()
    page.wait_for_selector("#edited")
    assert page.url.endswith(f"#card-{ids['done']}")
    assert page.evaluate("document.activeElement.dataset.id") == ids["done"]
    assert page.locator(f".column[data-status=open] li.card[data-id='{ids['done']}']:target").count() == 1


def test_pages_reflow_at_320_css_pixels(site: Site, browser: Any) -> None:
    """Finding 7: at 320 px (400 % zoom) the board's columns stayed side by side (637 px wide), a
    long URL ran out of a node's body and its history, and the page scrolled sideways. Data tables
    (initiatives, the graph's edges) may scroll within themselves (WCAG 1.4.10), not the page."""
    link = "https://example.com/" + "very-long-path-segment-" * 8
    made = mcp(site, "note", {"initiative": "web", "name": "Long link", "text": f"See {link} for details."})
    node = made["data"]["primary"]["id"]
    context = browser.new_context(viewport={"width": 320, "height": 640})
    try:
        page = context.new_page()
        sign_in(page, site)
        views = ("/ui/", "/ui/graph?i=web", "/ui/board?i=web", f"/ui/node?i=web&id={node}", "/ui/timeline?i=web")
        lists = ("/ui/rules?i=web&all=1", f"/ui/links?i=web&id={site.fixture.ids['decision']}")
        for where in views + lists:
            page.goto(site.base + where)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 320, (where, width)
    finally:
        context.close()


def test_diff_insertions_are_marked_by_more_than_colour(site: Site, page: Any) -> None:
    """Finding 8: an insertion differed from the text around it by its green only."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['decision']}")
    marks = page.locator("td.diff ins, td.diff del").evaluate_all(
        """l => l.map(e => [e.tagName, getComputedStyle(e).textDecorationLine, getComputedStyle(e, '::before').content])"""
    )
    assert marks
    for tag, line, before in marks:
        assert line == ("underline" if tag == "INS" else "line-through"), (tag, line)
        assert ("+" if tag == "INS" else "−") in before, (tag, before)


def test_repeated_link_texts_carry_their_context(site: Site, page: Any) -> None:
    """Finding 12: "board", "timeline", … once per initiative, each going elsewhere, under an empty
    header; "as of then" once per revision."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/")
    assert page.get_by_role("link", name="board of web", exact=True).count() == 1
    assert page.get_by_role("columnheader", name="views").count() == 1
    page.goto(f"{site.base}/ui/node?i=web&id={site.fixture.ids['decision']}")
    names = page.locator("a.asof-link").evaluate_all("l => l.map(e => e.textContent)")
    assert len(names) == 2 and len(set(names)) == 2 and all(n.startswith("as of then") for n in names)


def _drawn_nodes(page: Any) -> list[dict[str, str]]:
    """Each drawn node: its type, its disc's fill, its letters and their fill."""
    drawn: list[dict[str, str]] = page.locator("svg#graph g.node").evaluate_all(
        """l => l.map(g => {
            const glyph = g.querySelector('text.glyph');
            return {id: g.dataset.id, type: g.dataset.type, state: g.dataset.currentness,
                    fill: getComputedStyle(g.querySelector('circle')).fill,
                    glyph: glyph ? glyph.textContent : '', ink: glyph ? getComputedStyle(glyph).fill : ''};
        })"""
    )
    return drawn


def test_a_nodes_type_is_drawn_by_more_than_its_colour(site: Site, page: Any) -> None:
    """WCAG 1.4.1: a node's type was its disc's fill alone, lost to a reader who cannot tell the
    colours apart and on a monochrome print. Each type now has its own letters on the disc, legible
    on it (4.5:1), and every node link's accessible name says the type."""
    from playwright.sync_api import expect

    sign_in(page, site)
    page.goto(f"{site.base}/ui/graph?i=web")
    drawn = _drawn_nodes(page)
    letters: dict[str, set[str]] = {}
    for node in drawn:
        assert node["glyph"].strip(), node
        letters.setdefault(node["type"], set()).add(node["glyph"])
        if node["state"] == "current":
            assert contrast(node["ink"], node["fill"]) >= 4.5, node
        link = page.locator("svg#graph a").filter(has=page.locator(f"g.node[data-id='{node['id']}']"))
        expect(link).to_have_accessible_name(re.compile(rf"\({re.escape(node['type'])}, "))
    assert len(letters) >= 3, letters
    assert all(len(marks) == 1 for marks in letters.values()), "one type, one set of letters"
    assert len({next(iter(m)) for m in letters.values()}) == len(letters), "two types never share their letters"


def test_the_graph_legend_shows_each_types_mark_and_name(site: Site, page: Any) -> None:
    """The legend was a coloured dot before each type's name: which dot was which node's type, only
    the colour said. Each entry now draws the type's mark as the graph does, letters and colour."""
    sign_in(page, site)
    page.goto(f"{site.base}/ui/graph?i=web")
    keys = page.locator(".legend .swatch.key").evaluate_all(
        """l => l.map(e => [e.lastChild.textContent, e.querySelector('text.glyph')?.textContent,
                            getComputedStyle(e.querySelector('circle')).fill])"""
    )
    legend = {name: (glyph, fill) for name, glyph, fill in keys}
    assert len(legend) == len(keys), "one entry a type"
    drawn = _drawn_nodes(page)
    assert {n["type"] for n in drawn} == set(legend)
    for node in drawn:
        if node["state"] == "current":
            assert legend[node["type"]] == (node["glyph"], node["fill"]), (node, legend[node["type"]])
        assert legend[node["type"]][0] == node["glyph"], node
