import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ValidationError } from "../errors.js";
import { packageVersion } from "./package-version.js";

/** Options of `runInit`. */
export interface InitOptions {
  /**
   * How the project's package.json names tablekit (default `TABLEKIT_INIT_SPEC` from the environment,
   * else `^<this version>`). CI points it at a packed tarball: `file:/tmp/tablekit-0.1.0.tgz`.
   */
  tablekitSpec?: string | undefined;
  /** Write into a folder that is not empty (files of the same name are overwritten). Default false. */
  force?: boolean | undefined;
}

/** What `runInit` wrote. */
export interface InitResult {
  /** The project folder, absolute. */
  dir: string;
  /** The files written, relative to `dir`, in the order written. */
  files: string[];
}

/**
 * `tablekit init [dir]`: writes a runnable project into `dir` (created if missing; it must be empty
 * unless `force`): package.json (`"type": "module"`, `start` and `test` scripts), a tsconfig for Node 20
 * with standard decorators, `src/models.ts`, `src/main.ts`, `test/models.test.ts` (with
 * `tablekit/testing`), a docker-compose.yml with Azurite and `tablekit serve`, and a short README.
 * `npm install && npm start && npm test` there need no server.
 */
export function runInit(dir: string, options: InitOptions = {}): InitResult {
  const root = resolve(dir);
  if (existsSync(root) && readdirSync(root).length > 0 && !options.force) {
    throw new ValidationError(
      "init-not-empty",
      `${root} is not empty; choose a new folder, or pass --force to write into it`,
    );
  }
  const version = packageVersion();
  const spec =
    options.tablekitSpec ??
    process.env.TABLEKIT_INIT_SPEC ??
    (version === undefined ? "latest" : `^${version}`);
  const files = projectFiles(packageName(root), spec);
  for (const [file, text] of files) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return { dir: root, files: files.map(([file]) => file) };
}

/** An npm package name from the folder's name (lower case; letters, digits, `-`, `.`, `_`). */
function packageName(root: string): string {
  const name = basename(root)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+/, "");
  return name === "" ? "tablekit-app" : name;
}

/** The project's files, path and text. */
function projectFiles(name: string, spec: string): Array<[string, string]> {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return [
    [
      "package.json",
      json({
        name,
        version: "0.1.0",
        private: true,
        type: "module",
        scripts: {
          start: "tsx src/main.ts",
          test: "vitest run",
          typecheck: "tsc --noEmit",
          serve: "tablekit serve",
        },
        dependencies: { tablekit: spec },
        devDependencies: {
          "@types/node": "^20.19.0",
          tsx: "^4.20.0",
          typescript: "^5.9.3",
          vitest: "^4.0.0",
        },
      }),
    ],
    [
      "tsconfig.json",
      json({
        compilerOptions: {
          // Node 20 runs ES2022 natively; decorators are compiled down (standard decorators: no
          // experimentalDecorators, so every column names its `type`).
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          types: ["node"],
          strict: true,
          noUncheckedIndexedAccess: true,
          verbatimModuleSyntax: true,
          skipLibCheck: true,
          outDir: "dist",
        },
        include: ["src", "test", "vitest.config.ts"],
      }),
    ],
    [".gitignore", "node_modules/\ndist/\n"],
    ["src/models.ts", MODELS],
    ["src/main.ts", MAIN],
    ["test/models.test.ts", TEST],
    ["vitest.config.ts", VITEST_CONFIG],
    ["docker-compose.yml", COMPOSE],
    ["README.md", readme(name)],
  ];
}

const MODELS = `import { Column, Entity } from "tablekit";

/** A task in a list: one partition per list, tasks in id order within it. */
@Entity({ table: "Tasks", partitionKey: "{list}", rowKey: "task_{id:6}" })
export class Task {
  @Column({ type: "String" }) list!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) title!: string;
  @Column({ type: "Boolean" }) done!: boolean;
}
`;

const MAIN = `import { AzureStore, MemoryStore, TableContext } from "tablekit";
import { Task } from "./models.js";

// With TABLEKIT_CONNECTION_STRING set (e.g. "UseDevelopmentStorage=true" with \`docker compose up\`),
// the tasks go to that account; without it, to an in-memory store.
const connectionString = process.env.TABLEKIT_CONNECTION_STRING;
const store = connectionString ? AzureStore.fromConnectionString(connectionString) : new MemoryStore();
const db = new TableContext({ store });
await db.ensureTables(Task);

const tasks = db.repository(Task);
await tasks.upsert(tasks.create({ list: "home", id: 1, title: "Water the plants", done: false }));
await tasks.upsert(tasks.create({ list: "home", id: 2, title: "Fix the bike", done: true }));

const open = await tasks.find({ list: "home" }).where("done", "eq", false).toArray();
console.log(\`\${open.length} open task(s) in "home" on \${store.name}:\`, open.map((task) => task.title));
`;

// The import lines as array items, so tools that scan this file's own imports do not read them as its.
const TEST = `${[
  `import { createTestContext, type TestContext } from "tablekit/testing";`,
  `import { afterEach, beforeEach, describe, expect, it } from "vitest";`,
  `import { Task } from "../src/models.js";`,
].join("\n")}

describe("Task", () => {
  let t: TestContext;
  // A fresh in-memory context per test (or, with TABLEKIT_TEST_CONNECTION_STRING set, that account
  // under a unique table prefix that close() deletes).
  beforeEach(async () => {
    t = await createTestContext({ entities: [Task] });
  });
  afterEach(() => t.close());

  it("keeps a list's tasks in id order", async () => {
    const tasks = t.db.repository(Task);
    await tasks.insert(tasks.create({ list: "work", id: 10, title: "Write the report", done: false }));
    await tasks.insert(tasks.create({ list: "work", id: 2, title: "Read the mail", done: true }));
    const ids = (await tasks.find({ list: "work" }).toArray()).map((task) => task.id);
    expect(ids).toEqual([2, 10]);
  });
});
`;

// tablekit/vitest compiles the entities' standard decorators (@Entity, @Column): vitest 4's own
// TypeScript transform leaves them as they are, and Node 20 cannot run them.
const VITEST_CONFIG = `import { standardDecorators } from "tablekit/vitest";
import { defineConfig } from "vitest/config";

// Standard decorators (the entities' @Entity and @Column) are compiled by tablekit's preset, as tsx
// compiles them for \`npm start\`: vitest 4's own TypeScript transform leaves them as they are.
export default defineConfig({ plugins: [standardDecorators()] });
`;

const COMPOSE = `# Local Table endpoints for this project:
#   docker compose up
#   TABLEKIT_CONNECTION_STRING="UseDevelopmentStorage=true" npm start        # Azurite on port 10002
#   TABLEKIT_TEST_CONNECTION_STRING="UseDevelopmentStorage=true" npm test    # the tests on Azurite
# tablekit serve (the reference store) listens on port 10012: its connection string is printed in
# \`docker compose logs tablekit\`.
services:
  azurite:
    image: mcr.microsoft.com/azure-storage/azurite
    command: azurite-table --tableHost 0.0.0.0 --tablePort 10002
    ports:
      - "10002:10002"
  tablekit:
    image: node:20
    working_dir: /app
    volumes:
      - .:/app
    # The server itself is the process (no npx in between), behind an init that passes it SIGTERM:
    # \`docker compose stop\` stops it at once, exit code 0.
    init: true
    command: ["node_modules/.bin/tablekit", "serve", "--host", "0.0.0.0", "--port", "10012"]
    ports:
      - "10012:10012"
`;

function readme(name: string): string {
  return `# ${name}

A [tablekit](https://www.npmjs.com/package/tablekit) project: typed entities on Azure Table Storage.

\`\`\`sh
npm install
npm start      # src/main.ts on an in-memory store
npm test       # test/models.test.ts, each test on its own in-memory context
\`\`\`

- \`src/models.ts\`: the entity classes (standard decorators: every column names its \`type\`).
- \`src/main.ts\`: writes and queries tasks. Set \`TABLEKIT_CONNECTION_STRING\` to use a real account.
- \`test/models.test.ts\`: tests with \`tablekit/testing\`. Set \`TABLEKIT_TEST_CONNECTION_STRING\` to run
  them on an account (each test under its own table prefix, deleted afterwards).
- \`docker-compose.yml\`: Azurite (port 10002) and \`tablekit serve\` (port 10012), for
  \`UseDevelopmentStorage=true\`.
`;
}
