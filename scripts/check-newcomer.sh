#!/usr/bin/env bash
# A newcomer's first contact, from the packed tarball (issue 20, "How it is checked"):
#  1. the README's Getting started in an empty folder: its `sh` block run line by line as written
#     (`npm install tablekit` installs the tarball instead), then the example with `npx tsx index.ts`
#     and with `npx tsc && node index.js` (TypeScript 7, what `npm install typescript` gives today);
#  2. tablekit/server and tablekit/testing resolve, createTestContext() gives a working context, and
#     `tablekit --version` prints the packed version;
#  3. `npx tablekit init app`, then `npm install`, `npm start`, `npm test` there.
# Needs the npm registry (the project's other packages), nothing else: no server, no Docker.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

cd "$repo"
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -n 1)"
version="$(node -p 'require("./package.json").version')"
echo "newcomer: packed $tarball"

# The Getting started section's first sh block and first ts block.
section() {
  node -e '
    const text = require("node:fs").readFileSync(process.argv[1], "utf8");
    const start = text.indexOf("\n## Getting started");
    if (start < 0) throw new Error("README.md has no Getting started section");
    const end = text.indexOf("\n## ", start + 1);
    const body = text.slice(start, end < 0 ? undefined : end);
    const match = new RegExp("^```" + process.argv[2] + "\\n([\\s\\S]*?)^```$", "m").exec(body);
    if (!match) throw new Error(`Getting started has no ${process.argv[2]} block`);
    process.stdout.write(match[1]);
  ' "$repo/README.md" "$1"
}

mkdir "$work/first"
cd "$work/first"
section sh >"$work/setup.sh"
section ts >index.ts
while IFS= read -r line; do
  case "$line" in "" | "#"*) continue ;; esac
  command="${line//npm install tablekit/npm install $tarball}"
  echo "newcomer \$ $command"
  bash -euo pipefail -c "$command"
done <"$work/setup.sh"

echo "newcomer \$ npx tsx index.ts"
with_tsx="$(npx tsx index.ts)"
echo "$with_tsx"
echo "newcomer \$ npx tsc && node index.js"
npx tsc
with_tsc="$(node index.js)"
if [ "$with_tsx" != "$with_tsc" ]; then
  echo "newcomer: tsx and tsc + node printed different output:" >&2
  diff <(echo "$with_tsx") <(echo "$with_tsc") >&2 || true
  exit 1
fi

echo "newcomer: subpaths and version"
node --input-type=module -e '
  import { startTableServer } from "tablekit/server";
  import { createTestContext, faultyStore } from "tablekit/testing";
  if (typeof startTableServer !== "function" || typeof faultyStore !== "function") throw new Error("missing exports");
  const { db, store, close } = await createTestContext();
  await store.createTable("Newcomer");
  console.log(`createTestContext: ${store.name}, tables ${(await store.listTables()).join(",")}`);
  if (typeof db.repository !== "function") throw new Error("no context");
  await close();
'
printed="$(npx tablekit --version)"
case "$printed" in *"$version"*) echo "tablekit --version: $printed" ;; *)
  echo "newcomer: tablekit --version printed '$printed', expected $version" >&2
  exit 1
  ;;
esac

echo "newcomer \$ npx tablekit init app"
TABLEKIT_INIT_SPEC="file:$tarball" npx tablekit init app
cd app
npm install
npm start
npm test
echo "newcomer: all steps passed"
