#!/usr/bin/env bash
# Build LangChain's Agent Chat UI for the browser test, from the npm registry alone.
#
# Scaffolds create-agent-chat-app@0.1.6 (vite), keeps only its web app (the monorepo's own
# `npm install` fails with ERESOLVE on a better-sqlite3 peer of the agents app), installs it
# with `npm ci` against the package.json and lockfile committed beside this script, and
# builds it with vite. The scaffold's own package.json asks for `turbo: latest`, which goes
# stale against any lockfile the day turbo publishes; the committed one pins what the lock has.
# The result is cached in build/agent-chat-ui/ and reused while this script and the lockfile
# are unchanged. Prints the folder of the built app (index.html) as its last line.
#
#   tests/browser/setup_chat_ui.sh            # build, or reuse the cached build
#   PARAVT_CHAT_UI_DIR=/tmp/ui tests/browser/setup_chat_ui.sh
#
# To refresh the pins: run the scaffold below, pin `latest` ranges in its apps/web/package.json,
# `npm install` there, and copy package.json and package-lock.json to tests/browser/chat-ui/.
set -euo pipefail

SCAFFOLD=create-agent-chat-app@0.1.6
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${PARAVT_CHAT_UI_DIR:-$ROOT/build/agent-chat-ui}"
PINS="$HERE/chat-ui"
KEY="$(cat "$0" "$PINS/package.json" "$PINS/package-lock.json" | sha256sum | cut -c1-16)"

mkdir -p "$(dirname "$OUT")"
exec 9>"$OUT.lock"
flock 9 # one build at a time; a second caller waits, then reuses it

if [[ -f "$OUT/web/dist/index.html" && "$(cat "$OUT/stamp" 2>/dev/null)" == "$KEY" ]]; then
    echo "$OUT/web/dist"
    exit 0
fi

for tool in node npm npx; do
    command -v "$tool" >/dev/null || { echo "setup_chat_ui: $tool is not installed" >&2; exit 3; }
done
echo "setup_chat_ui: building Agent Chat UI ($SCAFFOLD, node $(node --version)) in $OUT" >&2
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
started=$SECONDS
npx --yes "$SCAFFOLD" --yes --framework vite --project-name scaffold \
    --package-manager npm --install-deps false --include-agent react >&2
mv scaffold/apps/web web
rm -rf scaffold
cp "$PINS/package.json" "$PINS/package-lock.json" web/
cd web
npm ci --no-audit --no-fund --loglevel=error >&2
npx vite build --logLevel warn >&2
echo "$KEY" >"$OUT/stamp"
echo "setup_chat_ui: built in $((SECONDS - started)) s" >&2
echo "$OUT/web/dist"
