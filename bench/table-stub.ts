/**
 * The benchmark's ceiling: a process that answers Table service requests with canned answers and no
 * work (batches: 100 × 204; single writes: 204 with an ETag; queries: the same 1,000-row page until `total` rows; point reads: one
 * entity). The answers have the shape and size of `tablekit serve`'s (the service's own headers,
 * `odata.metadata`, `Timestamp@odata.type`, one `DataServiceVersion` per batch part), so the client
 * parses as much from the stub as from the server it is compared with.
 * Run as `node --import tsx bench/table-stub.ts TOTAL`; prints its connection string.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const ETAG = `W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"`;
const UUID = "00000000-0000-4000-8000-000000000000";

/** A server that answers like the Table service but does no work: canned answers only. */
async function startStub(total: number): Promise<string> {
  let base = "";
  const entity = (i: number, single: boolean) => ({
    ...(single ? { "odata.metadata": `${base}/$metadata#t/@Element` } : {}),
    "odata.etag": ETAG,
    PartitionKey: "p",
    RowKey: String(i).padStart(8, "0"),
    "Timestamp@odata.type": "Edm.DateTime",
    Timestamp: "2025-01-01T00:00:00.0000000Z",
    name: `item ${i}`,
    count: i,
    price: i + 0.5,
    active: i % 2 === 0,
  });
  let page = "";
  let one = "";
  const part = `--changesetresponse_${UUID}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\nETag: ${ETAG}\r\n\r\n`;
  const batch = `--batchresponse_${UUID}\r\nContent-Type: multipart/mixed; boundary=changesetresponse_${UUID}\r\n\r\n${part.repeat(100)}--changesetresponse_${UUID}--\r\n--batchresponse_${UUID}--\r\n`;
  const json = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";
  // The headers every answer of the service carries (fixed values: the stub does no work).
  const common = {
    "x-ms-request-id": UUID,
    "x-ms-version": "2019-02-02",
    Date: new Date().toUTCString(),
    DataServiceVersion: "3.0;",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const url = req.url ?? "";
      const path = url.split("?")[0] ?? "";
      if (path.endsWith("$batch")) {
        res
          .writeHead(202, {
            ...common,
            "Content-Type": `multipart/mixed; boundary=batchresponse_${UUID}`,
            "Content-Length": Buffer.byteLength(batch),
          })
          .end(batch);
      } else if (req.method === "POST") {
        res.writeHead(204, common).end();
      } else if (req.method !== "GET") {
        // A single write (upsert, update, delete): 204 with the entity's new ETag.
        res.writeHead(204, { ...common, ETag: ETAG }).end();
      } else if (path.includes("RowKey=")) {
        // A point read names its keys in the path (a query's continuation has NextRowKey= in its query).
        res
          .writeHead(200, {
            ...common,
            "Content-Type": json,
            ETag: ETAG,
            "Content-Length": Buffer.byteLength(one),
          })
          .end(one);
      } else {
        const at = Number(/NextPartitionKey=p(\d+)/.exec(url)?.[1] ?? "0");
        const next =
          at + 1000 < total
            ? {
                "x-ms-continuation-NextPartitionKey": `p${at + 1000}`,
                "x-ms-continuation-NextRowKey": String(at + 1000).padStart(8, "0"),
              }
            : {};
        res
          .writeHead(200, {
            ...common,
            "Content-Type": json,
            ...next,
            "Content-Length": Buffer.byteLength(page),
          })
          .end(page);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}/devstoreaccount1`;
  page = JSON.stringify({
    "odata.metadata": `${base}/$metadata#t`,
    value: Array.from({ length: 1000 }, (_, i) => entity(i, false)),
  });
  one = JSON.stringify(entity(1, true));
  return `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${KEY};TableEndpoint=${base};`;
}

const connectionString = await startStub(Number(process.argv[2] ?? "100000"));
process.stdout.write(`${connectionString}\n`);
process.once("SIGTERM", () => process.exit(0));
