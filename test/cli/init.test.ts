/**
 * `tablekit init [dir]` (API.md, "Packages and first contact"): the files it writes and what it refuses.
 * That the project installs, starts and passes its tests from the packed tarball is checked end to end
 * by scripts/check-newcomer.sh (CI).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInit } from "../../src/cli/init.js";
import { ValidationError } from "../../src/index.js";
import { failureOf } from "../support/rejection.js";

const freshDir = (name: string) => join(mkdtempSync(join(tmpdir(), "tablekit-init-")), name);

describe("runInit", () => {
  it("writes a module project with start and test scripts, named after its folder", () => {
    const dir = freshDir("My App");
    const { files } = runInit(dir, { tablekitSpec: "file:/tmp/tablekit.tgz" });
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "tsconfig.json",
        "src/models.ts",
        "src/main.ts",
        "test/models.test.ts",
        "vitest.config.ts",
        "docker-compose.yml",
        "README.md",
      ]),
    );
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({
      name: "my-app",
      type: "module",
      scripts: { start: "tsx src/main.ts", test: "vitest run" },
      dependencies: { tablekit: "file:/tmp/tablekit.tgz" },
    });
    const tsconfig = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8"));
    // Node 20 cannot run decorators: a target below esnext compiles them; no legacy decorators.
    expect(tsconfig.compilerOptions.target).toBe("es2022");
    expect(tsconfig.compilerOptions.experimentalDecorators).toBeUndefined();
    expect(readFileSync(join(dir, "test", "models.test.ts"), "utf8")).toContain('from "tablekit/testing"');
    const compose = readFileSync(join(dir, "docker-compose.yml"), "utf8");
    expect(compose).toMatch(/azurite[\s\S]*tablekit", "serve"/);
    // SIGTERM reaches the server: an init as PID 1 and no npx between it and the server.
    expect(compose).toMatch(/tablekit:[\s\S]*init: true/);
    expect(compose).toContain('command: ["node_modules/.bin/tablekit", "serve"');
    // Standard decorators under vitest 4: the preset, and nothing more to install for it.
    expect(readFileSync(join(dir, "vitest.config.ts"), "utf8")).toContain('from "tablekit/vitest"');
    expect(Object.keys(pkg.devDependencies)).not.toContain("esbuild");
  });

  it("names tablekit by TABLEKIT_INIT_SPEC, else by its own version", () => {
    const version = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")).version;
    const saved = process.env.TABLEKIT_INIT_SPEC;
    try {
      delete process.env.TABLEKIT_INIT_SPEC;
      const plain = freshDir("plain");
      runInit(plain);
      expect(JSON.parse(readFileSync(join(plain, "package.json"), "utf8")).dependencies.tablekit).toBe(
        `^${version}`,
      );
      process.env.TABLEKIT_INIT_SPEC = "file:../tablekit.tgz";
      const fromEnv = freshDir("env");
      runInit(fromEnv);
      expect(JSON.parse(readFileSync(join(fromEnv, "package.json"), "utf8")).dependencies.tablekit).toBe(
        "file:../tablekit.tgz",
      );
    } finally {
      if (saved === undefined) delete process.env.TABLEKIT_INIT_SPEC;
      else process.env.TABLEKIT_INIT_SPEC = saved;
    }
  });

  it("refuses a folder that is not empty unless forced", async () => {
    const dir = freshDir("busy");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "notes.txt"), "mine");
    const error = await failureOf(() => runInit(dir));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toContain("not empty");
    runInit(dir, { force: true });
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).type).toBe("module");
  });
});
