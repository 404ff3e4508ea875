import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TableClient, TableServiceClient } from "@azure/data-tables";
import { afterAll, describe, expect, test } from "vitest";

// `tablekit serve` as a process: help, the printed connection string, signals, --file persistence.
const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli/main.ts");
const dir = mkdtempSync(join(tmpdir(), "tablekit-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((done) => child.once("exit", (code, signal) => done({ code, signal })));
}

/** Resolves with the connection string once the server printed it on a line of its own. */
function connectionStringOf(child: ChildProcess): Promise<string> {
  return new Promise((done, fail) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = out.split("\n").find((l) => l.startsWith("DefaultEndpointsProtocol="));
      if (line !== undefined) done(line.trim());
    });
    child.once("exit", () =>
      fail(new Error(`the server exited before printing its connection string:\n${out}`)),
    );
  });
}

async function tableOf(connectionString: string): Promise<TableClient> {
  const service = TableServiceClient.fromConnectionString(connectionString, {
    allowInsecureConnection: true,
  });
  await service.createTable("persisted").catch(() => undefined);
  return TableClient.fromConnectionString(connectionString, "persisted", { allowInsecureConnection: true });
}

describe("tablekit serve (CLI)", () => {
  test("--help describes the options and exits 0", async () => {
    const child = run(["serve", "--help"]);
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    expect((await exitOf(child)).code).toBe(0);
    for (const option of [
      "--host",
      "--port",
      "--file",
      "--account",
      "--key",
      "--table-delete-delay-ms",
      "--skip-api-version-check",
    ])
      expect(out).toContain(option);
  });

  test("--skip-api-version-check accepts a version newer than serve knows (refused without it)", async () => {
    const versionOf = async (connectionString: string) => {
      const service = TableServiceClient.fromConnectionString(connectionString, {
        allowInsecureConnection: true,
      });
      service.pipeline.addPolicy({
        name: "future-version",
        sendRequest: (request, next) => {
          request.headers.set("x-ms-version", "2099-01-01");
          return next(request);
        },
      });
      return service.createTable("future").then(
        () => 201,
        (error: { statusCode?: number }) => error.statusCode,
      );
    };
    const children = [
      run(["serve", "--port", "0"]),
      run(["serve", "--port", "0", "--skip-api-version-check"]),
    ];
    const [strict, lenient] = await Promise.all(children.map((child) => connectionStringOf(child)));
    expect(await versionOf(strict as string)).toBe(400);
    expect(await versionOf(lenient as string)).toBe(201);
    const exits = children.map((child) => exitOf(child));
    for (const child of children) child.kill("SIGTERM");
    expect((await Promise.all(exits)).map((e) => e.code)).toEqual([0, 0]);
  });

  test("SIGTERM exits 0; --file keeps every answered write, also across SIGKILL", async () => {
    const file = join(dir, "data.jsonl");
    const first = run(["serve", "--port", "0", "--file", file]);
    const cs1 = await connectionStringOf(first);
    expect(cs1).toMatch(
      /^DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=[^;]+;TableEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;$/,
    );
    await (await tableOf(cs1)).createEntity({ partitionKey: "p", rowKey: "1", v: "kept" });
    const exited = exitOf(first);
    first.kill("SIGTERM");
    expect((await exited).code).toBe(0);

    const second = run(["serve", "--port", "0", "--file", file]);
    const table2 = await tableOf(await connectionStringOf(second));
    expect((await table2.getEntity<{ v: string }>("p", "1")).v).toBe("kept");
    await table2.createEntity({ partitionKey: "p", rowKey: "2", v: "answered" });
    const killed = exitOf(second);
    second.kill("SIGKILL");
    expect((await killed).signal).toBe("SIGKILL");

    const third = run(["serve", "--port", "0", "--file", file]);
    const table3 = await tableOf(await connectionStringOf(third));
    expect((await table3.getEntity<{ v: string }>("p", "2")).v).toBe("answered");
    const stopped = exitOf(third);
    third.kill("SIGINT");
    expect((await stopped).code).toBe(0);
  });

  test("--file keeps answered service properties and table ACLs across SIGKILL; a deleted table's ACL stays gone", async () => {
    const file = join(dir, "admin.jsonl");
    const cors = [
      {
        allowedOrigins: "http://app.example",
        allowedMethods: "GET",
        allowedHeaders: "",
        exposedHeaders: "",
        maxAgeInSeconds: 9,
      },
    ];
    const policies = [{ id: "readers", accessPolicy: { permission: "r" } }];
    const serviceOf = (cs: string) =>
      TableServiceClient.fromConnectionString(cs, { allowInsecureConnection: true });
    const first = run(["serve", "--port", "0", "--file", file]);
    const cs1 = await connectionStringOf(first);
    await serviceOf(cs1).setProperties({ cors });
    const kept = await tableOf(cs1);
    await kept.setAccessPolicy(policies);
    await serviceOf(cs1).createTable("dropped");
    const dropped = TableClient.fromConnectionString(cs1, "dropped", { allowInsecureConnection: true });
    await dropped.setAccessPolicy(policies);
    await serviceOf(cs1).deleteTable("dropped");
    const killed = exitOf(first);
    first.kill("SIGKILL");
    expect((await killed).signal).toBe("SIGKILL");

    // With --table-delete-delay-ms a deleted name is held (in memory: not across the restart).
    const second = run(["serve", "--port", "0", "--file", file, "--table-delete-delay-ms", "60000"]);
    const cs2 = await connectionStringOf(second);
    expect((await serviceOf(cs2).getProperties()).cors).toEqual(cors);
    expect((await (await tableOf(cs2)).getAccessPolicy()).map((p) => p.id)).toEqual(["readers"]);
    await serviceOf(cs2).createTable("dropped");
    const again = TableClient.fromConnectionString(cs2, "dropped", { allowInsecureConnection: true });
    expect(await again.getAccessPolicy()).toEqual([]);
    await serviceOf(cs2).deleteTable("dropped");
    const held = await serviceOf(cs2)
      .createTable("dropped")
      .then(
        () => undefined,
        (e: { statusCode?: number }) => e.statusCode,
      );
    expect(held).toBe(409);
    const stopped = exitOf(second);
    second.kill("SIGKILL");
    await stopped;
  });
});
