"""The frame every viewer page shares: the header, the views' navigation, the notice of an edit and
the `<main>` that holds the page; and the sign-in page.

Kept apart from the pages so each stays readable. What the frame does for people who cannot see
the colours or use a mouse (an accessibility probe found each missing): a "Skip to content" link
first; the current view marked `aria-current="page"`, not by its colour alone; the search and
recall boxes named; the notice of an edit inside `<main>`, a refusal as an alert styled as an
error (it was in the green box of a success, outside every landmark, and no screen reader said it).
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

PREFIX = "/ui"
#: The views of an initiative, in the navigation's order: (path, label).
VIEWS = (("graph", "Graph"), ("board", "Board"), ("timeline", "Timeline"), ("reviews", "Reviews"), ("rules", "Rules"))


def url(path: str, **params: Any) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None and v != ""}, doseq=True)
    return f"{PREFIX}{path}" + (f"?{query}" if query else "")


def hidden(text: str) -> str:
    """Words a screen reader says and the eye does not need (what a "Move" button moves)."""
    return f'<span class="vh">{escape(text)}</span>'


def state_of(request: Request, name: str) -> Any:
    """What the app's checks left for the page in the request's state (`principal`, `csrf`, `notice`)."""
    state: Any = request.scope.get("state", {})
    return state.get(name) if isinstance(state, dict) else None


def csrf_field(request: Request) -> str:
    """The signed-in session's CSRF token as a form's hidden field; none without a session (a bearer
    header, or the local admin with no token set: the Origin check alone holds there)."""
    csrf = state_of(request, "csrf")
    return f'<input type="hidden" name="csrf" value="{escape(csrf)}">' if csrf else ""


def notice(request: Request) -> str:
    """What the last edit did (`edited=ID`, set by the edit's redirect, found by the app among the
    outcomes it kept): a status, or an alert styled as an error for a refusal. An id it does not
    know shows nothing: the URL names an outcome, it never carries the words shown."""
    found = state_of(request, "notice")
    if found is None:
        return ""
    if found.refused:
        return f'<p class="notice error" role="alert" tabindex="-1" id="edited">{escape(found.text)}</p>'
    return f'<p class="notice" role="status" tabindex="-1" id="edited">{escape(found.text)}</p>'


def frame(title: str, body: str, who: str, initiative: str | None, request: Request) -> str:
    nav = ""
    if initiative:
        current = request.url.path.rsplit("/", 1)[-1]
        items = "".join(
            f'<a class="here" aria-current="page" href="{escape(url("/" + key, i=initiative))}">{label}</a>'
            if current == key
            else f'<a href="{escape(url("/" + key, i=initiative))}">{label}</a>'
            for key, label in VIEWS
        )
        # Each box shows its own view's words: after a search the recall box held them too.
        query = escape(request.query_params.get("q", ""))
        asked = {current: query} if current in ("search", "recall") else {}
        nav = (
            f'<nav class="views" aria-label="views of {escape(initiative)}"><strong dir="auto">{escape(initiative)}</strong>{items}'
            f'<form class="ask" action="{PREFIX}/search" method="get" role="search" aria-label="search"><input type="hidden" name="i" value="{escape(initiative)}">'
            f'<input name="q" id="search-box" dir="auto" aria-label="Search (literal words)" placeholder="search (literal)" value="{asked.get("search", "")}">'
            f"<button>Search</button></form>"
            f'<form class="ask" action="{PREFIX}/recall" method="get" role="search" aria-label="recall"><input type="hidden" name="i" value="{escape(initiative)}">'
            f'<input name="q" id="recall-box" dir="auto" aria-label="Recall (what you need)" placeholder="recall (explain)" value="{asked.get("recall", "")}">'
            f"<button>Recall</button></form></nav>"
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · kaeru</title>"
        f'<link rel="stylesheet" href="{PREFIX}/static/style.css"></head><body>'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header><a class="brand" href="{PREFIX}/">kaeru</a><span class="who">as {escape(who)}</span>'
        f'<form action="{PREFIX}/logout" method="post">{csrf_field(request)}<button class="link">sign out</button></form></header>'
        f'{nav}<main id="main" tabindex="-1"><h1 dir="auto">{escape(title)}</h1>{notice(request)}{body}</main></body></html>'
    )


def login_html(problem: str | None) -> str:
    error = f'<p class="error" role="alert">{escape(problem)}</p>' if problem else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sign in · kaeru</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="stylesheet" href="{PREFIX}/static/style.css"></head><body><main class="login">'
        f"<h1>kaeru</h1>{error}<p>This vault needs a token: the sign-in link <code>kaeru ui</code> printed "
        "(with <code>kaeru serve --http</code>, the server's <code>KAERU_AUTH_TOKEN</code>), or a person's "
        "token (<code>kaeru token add NAME</code>).</p>"
        f'<form method="post" action="{PREFIX}/login"><label for="token">Token</label> <input type="password" name="token" id="token" '
        'placeholder="token" autocomplete="off"><button>Sign in</button></form></main></body></html>'
    )


def problem_html(title: str, problem: str) -> str:
    """A page that says why a request was refused before any view ran (its Origin, its size)."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · kaeru</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="stylesheet" href="{PREFIX}/static/style.css"></head><body><main class="login">'
        f'<h1>{escape(title)}</h1><p class="error" role="alert">{escape(problem)}</p>'
        f'<p><a href="{PREFIX}/">Back to the viewer</a></p></main></body></html>'
    )
