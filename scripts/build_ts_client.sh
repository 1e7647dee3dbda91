#!/usr/bin/env bash
# Rebuild tests/data/ts-client/client.mjs, the official TypeScript MCP SDK client that
# tests/wire/test_ts_client.py runs with `node`, and LICENSES.txt beside it. Not run by the tests
# (they use the committed bundle and need no npm); needs node, npm and the npm registry.
#
#   scripts/build_ts_client.sh            the exact versions of source/package-lock.json (npm ci;
#                                         without a lock, those of package.json, and it writes one)
#   scripts/build_ts_client.sh --latest   the newest SDK and esbuild; updates the lock and package.json
#
# Then review the diff, run the test, and update the versions and size in the folder's README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
HERE=tests/data/ts-client
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cp "$HERE/source/client.mjs" "$HERE/source/build.mjs" "$HERE/source/package.json" "$WORK/"
if [ -f "$HERE/source/package-lock.json" ]; then
    cp "$HERE/source/package-lock.json" "$WORK/"
fi
(
    cd "$WORK"
    if [ "${1:-}" = "--latest" ]; then
        npm install --no-audit --no-fund --save-exact @modelcontextprotocol/sdk@latest
        npm install --no-audit --no-fund --save-exact --save-dev esbuild@latest
    elif [ -f package-lock.json ]; then
        npm ci --no-audit --no-fund
    else
        npm install --no-audit --no-fund
    fi
)
cp "$WORK/package.json" "$WORK/package-lock.json" "$HERE/source/"
(cd "$WORK" && node build.mjs "$ROOT/$HERE")
ls -l "$HERE/client.mjs" "$HERE/LICENSES.txt"
