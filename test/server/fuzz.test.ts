import { TableClient, TableServiceClient } from "@azure/data-tables";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTableServer, type TableServer } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { testSeed } from "../support/seeded-random.js";
import { signedFetch } from "./signed-fetch.js";

// Random and mutated input against the server: never a 5xx, never a crash, never a partial write.
const SEED = testSeed(20261126);
let server: TableServer;
let table: TableClient;

beforeAll(async () => {
  server = await startTableServer({ port: 0, store: new MemoryStore() });
  const service = TableServiceClient.fromConnectionString(server.connectionString, {
    allowInsecureConnection: true,
  });
  await service.createTable("fuzz");
  table = TableClient.fromConnectionString(server.connectionString, "fuzz", {
    allowInsecureConnection: true,
  });
  await table.createEntity({ partitionKey: "p", rowKey: "r", n: 1, s: "x" });
});
afterAll(async () => {
  await server.close();
});

async function countPartition(pk: string): Promise<number> {
  let n = 0;
  for await (const _ of table.listEntities({
    queryOptions: { filter: `PartitionKey eq '${pk.replaceAll("'", "''")}'` },
  }))
    n++;
  return n;
}

function validBatch(pk: string): string {
  const op = (rk: string) =>
    `--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n` +
    `POST ${server.url}/fuzz HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n` +
    `${JSON.stringify({ PartitionKey: pk, RowKey: rk, v: 1 })}\r\n`;
  return `--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n${op("a")}${op("b")}${op("c")}--changeset_c--\r\n--batch_b--\r\n`;
}

describe(`fuzz (seed ${SEED})`, () => {
  test("filters: any text is answered 200 or 400, never 5xx", async () => {
    const pieces = fc.constantFrom(
      "n",
      "s",
      "PartitionKey",
      "RowKey",
      "Timestamp",
      " eq ",
      " ne ",
      " gt ",
      " lt ",
      " and ",
      " or ",
      "not ",
      "(",
      ")",
      "'",
      "''",
      "1",
      "1L",
      "2.5",
      "true",
      "datetime'2024-01-01T00:00:00Z'",
      "guid'",
      "X'00'",
      " ",
    );
    const filter = fc.oneof(
      fc.array(pieces, { maxLength: 12 }).map((p) => p.join("")),
      fc.string({ maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(filter, async (text) => {
        const response = await signedFetch(`${server.url}/fuzz()?$filter=${encodeURIComponent(text)}`);
        await response.text();
        expect([200, 400]).toContain(response.status);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  test("batches: a mutated batch is all or nothing and never 5xx", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 3 }), fc.string({ maxLength: 4 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (mutations) => {
          const pk = `b${run++}z`; // the z ends it: no mutation of one run's key can name another's
          let body = validBatch(pk);
          for (const [at, length, kind, text] of mutations) {
            const i = at % (body.length + 1);
            if (kind === 0) body = body.slice(0, i) + body.slice(i + (length % 8));
            else if (kind === 1) body = body.slice(0, i) + text + body.slice(i);
            else if (kind === 2) body = body.slice(0, i);
            else body = body.slice(0, i) + text + body.slice(i + text.length);
          }
          const response = await signedFetch(`${server.url}/$batch`, {
            method: "POST",
            headers: { "Content-Type": "multipart/mixed; boundary=batch_b" },
            body,
          });
          const text = await response.text();
          expect(response.status).toBeLessThan(500);
          // All or nothing: exactly the operations the answer reports as done exist (a mutation may
          // turn a part into MIME preamble, leaving a smaller but valid batch), or none at all.
          const done = (text.match(/^HTTP\/1\.1 20\d /gm) ?? []).length;
          expect(await countPartition(pk)).toBe(done);
          if (done > 0) expect(text).not.toMatch(/^HTTP\/1\.1 [45]\d\d /m);
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
    // The unmutated batch itself is applied whole.
    const response = await signedFetch(`${server.url}/$batch`, {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=batch_b" },
      body: validBatch("whole"),
    });
    expect(response.status).toBe(202);
    expect(await countPartition("whole")).toBe(3);
  });

  test("entity bodies: random JSON is answered 2xx or 4xx, never 5xx", async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const body = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc
        .dictionary(
          fc.oneof(
            fc.constantFrom("PartitionKey", "RowKey", "x@odata.type", "x", "odata.etag"),
            fc.string({ maxLength: 6 }),
          ),
          value,
        )
        .map((o) => JSON.stringify(o)),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom("POST", "PUT", "MERGE"), async (text, method) => {
        const url =
          method === "POST" ? `${server.url}/fuzz` : `${server.url}/fuzz(PartitionKey='q',RowKey='r')`;
        const response = await signedFetch(url, { method, body: text });
        await response.text();
        expect(response.status).toBeLessThan(500);
      }),
      { seed: SEED, numRuns: 150 },
    );
  });
});
