import { type ChildProcess, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

// `tablekit serve --explorer / --no-explorer`: the page's address is printed when it is on.
const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../../src/cli/main.ts");

/** Starts the CLI and resolves with its stdout once the connection string (and what follows) is out. */
async function startedOutput(args: string[]): Promise<{ child: ChildProcess; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((done, fail) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("DefaultEndpointsProtocol=") && out.endsWith("\n")) done();
    });
    child.once("exit", () => fail(new Error(`the server exited:\n${out}`)));
  });
  return { child, out };
}

function stop(child: ChildProcess): Promise<number | string | null> {
  return new Promise((done) => {
    child.once("exit", (code, signal) => done(code ?? signal));
    child.kill("SIGTERM");
  });
}

describe("tablekit serve --explorer", () => {
  test("on by default on loopback (the page answers); --no-explorer turns it off", async () => {
    const on = await startedOutput([]);
    try {
      const url = /explorer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(on.out)?.[1];
      expect(url, on.out).toBeDefined();
      const page = await fetch(url as string);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<title>tablekit explorer");
    } finally {
      expect(await stop(on.child), on.out).toBe(0);
    }
    const off = await startedOutput(["--no-explorer"]);
    try {
      expect(off.out).not.toContain("explorer at");
      const port = /127\.0\.0\.1:(\d+)\//.exec(off.out)?.[1];
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).not.toBe(200);
    } finally {
      expect(await stop(off.child)).toBe(0);
    }
  });
});
