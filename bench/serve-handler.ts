/**
 * The server's own CPU per entity, without sockets: requests the raw SDK client really sent (a batch of
 * 100 upserts, a 1,000-row page, a point read) are captured once, then replayed straight into the
 * request handler, and the process's CPU time is taken per round (the least of several rounds, so other
 * load on a shared machine inflates it less than a rate measured over sockets).
 */
import { Readable } from "node:stream";
import { TableClient, TableTransaction } from "@azure/data-tables";
import { DEV_STORE_ACCOUNT, DEV_STORE_KEY, startTableServer } from "../src/server/table-server.js";
import { TableService } from "../src/server/table-service.js";
import { MemoryStore } from "../src/store/memory/memory-store.js";

interface Captured {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

function row(i: number) {
  const rowKey = String(i).padStart(8, "0");
  return { partitionKey: "p", rowKey, name: `item ${i}`, count: i, price: i + 0.5, active: i % 2 === 0 };
}

/** Signed requests as the SDK sends them, captured from a real server. */
async function capture(): Promise<{ batch: Captured; page: Captured; read: Captured }> {
  const captured: Captured[] = [];
  const server = await startTableServer({ port: 0 });
  try {
    const client = TableClient.fromConnectionString(server.connectionString, "handler", {
      allowInsecureConnection: true,
    });
    client.pipeline.addPolicy(
      {
        name: "capture",
        async sendRequest(request, next) {
          const headers: Record<string, string> = {};
          for (const [name, value] of request.headers) headers[name.toLowerCase()] = value;
          const body = typeof request.body === "string" ? request.body : "";
          captured.push({
            method: request.method,
            url: new URL(request.url).pathname + new URL(request.url).search,
            headers,
            body,
          });
          return next(request);
        },
      },
      { afterPhase: "Sign" },
    );
    await client.createTable();
    const tx = new TableTransaction();
    for (let i = 0; i < 100; i++) tx.upsertEntity(row(i), "Replace");
    await client.submitTransaction(tx.actions);
    const batch = captured.at(-1) as Captured;
    await client.listEntities().byPage({ maxPageSize: 1000 }).next();
    const page = captured.at(-1) as Captured;
    await client.getEntity("p", "00000042");
    const read = captured.at(-1) as Captured;
    return { batch, page, read };
  } finally {
    await server.close();
  }
}

/** Server CPU µs per entity of each workload, handled in process (least of `rounds` rounds). */
export async function serveHandlerCosts(
  rounds = 7,
): Promise<{ upserts: number; paging: number; reads: number }> {
  const requests = await capture();
  const store = new MemoryStore();
  const served = store.served();
  if (served === undefined) throw new Error("no served store");
  const service = new TableService(served, {
    name: DEV_STORE_ACCOUNT,
    key: Buffer.from(DEV_STORE_KEY, "base64"),
  });
  service.base = `http://127.0.0.1:10002/${DEV_STORE_ACCOUNT}`;
  await store.createTable("handler");
  for (let at = 0; at < 2_000; at += 100) {
    const actions = Array.from({ length: 100 }, (_, k) => ({
      kind: "upsert" as const,
      mode: "replace" as const,
      entity: row(at + k),
    }));
    await store.submitTransaction("handler", "p", actions);
  }
  const send = (request: Captured) =>
    new Promise<number>((resolve) => {
      const req = Object.assign(new Readable({ read() {} }), {
        url: request.url,
        method: request.method,
        headers: request.headers,
        socket: { remoteAddress: "127.0.0.1" },
      });
      let status = 0;
      const res = {
        writeHead(code: number) {
          status = code;
          return res;
        },
        end() {
          resolve(status);
        },
      };
      service.handle(req as never, res as never);
      if (request.body !== "") req.push(Buffer.from(request.body));
      req.push(null);
    });
  const cost = async (request: Captured, calls: number, perCall: number): Promise<number> => {
    for (let i = 0; i < calls; i++) {
      const status = await send(request); // warm-up, and a check that the replay is answered
      if (status >= 300) throw new Error(`replayed ${request.method} ${request.url}: status ${status}`);
    }
    let least = Number.POSITIVE_INFINITY;
    for (let round = 0; round < rounds; round++) {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) await send(request);
      const cpu = process.cpuUsage(cpu0);
      least = Math.min(least, (cpu.user + cpu.system) / calls / perCall);
    }
    return least;
  };
  return {
    upserts: await cost(requests.batch, 200, 100),
    paging: await cost(requests.page, 40, 1000),
    reads: await cost(requests.read, 3000, 1),
  };
}
