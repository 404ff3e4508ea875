import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

// The `tablekit` program itself: version, help, option errors.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = resolve(ROOT, "src/cli/main.ts");

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ["--import", "tsx", CLI, ...args], { encoding: "utf8" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("tablekit (CLI program)", () => {
  test("--version prints the package's version", () => {
    const { version } = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const result = run(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  test("alone, it prints the commands and exits 0", () => {
    const result = run([]);
    expect(result.code).toBe(0);
    for (const command of ["serve", "export", "import", "copy", "verify"])
      expect(result.stdout).toContain(command);
  });

  test("an unknown option or command prints the usage and exits 2", () => {
    const option = run(["serve", "--prot", "1"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("unknown option '--prot'");
    expect(option.stderr).toContain("Usage: tablekit serve");
    const command = run(["serv"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("serv");
    const bad = run(["serve", "--port", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--port takes a whole number");
    const tls = run(["serve", "--tls-cert", "a.pem"]);
    expect(tls.code).toBe(2);
    expect(tls.stderr).toContain("--tls-cert and --tls-key go together");
  });

  test("a failed command names itself once in its error line", () => {
    const dir = mkdtempSync(join(tmpdir(), "tablekit-program-"));
    try {
      writeFileSync(join(dir, "taken.txt"), "");
      const result = run(["init", dir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `tablekit init: ${dir} is not empty; choose a new folder, or pass --force to write into it\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("serve says how to connect (SDK and tablekit) and says when it stopped", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    await new Promise<void>((done) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (out.includes("tablekit export")) done();
      });
    });
    expect(out).toMatch(/^DefaultEndpointsProtocol=http;.*$/m);
    expect(out).toContain("{ allowInsecureConnection: true }");
    expect(out).toContain("AzureStore.fromConnectionString(cs)");
    // A local install has no `tablekit` on the PATH: the hint runs it through npx.
    expect(out).toMatch(/^ {2}TABLEKIT_CONNECTION_STRING=".*" npx tablekit export --table MyTable$/m);
    const exited = new Promise<string>((done) =>
      child.once("exit", (code, signal) => done(`${code} ${signal}`)),
    );
    child.kill("SIGINT");
    expect(await exited).toBe("0 null");
    expect(out).toContain("tablekit serve: stopped");
  });
});
