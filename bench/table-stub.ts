/**
 * The benchmark's ceiling: a process that answers Table service requests with canned answers and no
 * work (batches: 100 × 204; queries: the same 1,000-row page until `total` rows; point reads: one
 * entity). Run as `node --import tsx bench/table-stub.ts TOTAL`; prints its connection string.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** A server that answers like the Table service but does no work: canned answers only. */
async function startStub(total: number): Promise<string> {
  const entity = (i: number) => ({
    "odata.etag": `W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"`,
    PartitionKey: "p",
    RowKey: String(i).padStart(8, "0"),
    Timestamp: "2025-01-01T00:00:00.0000000Z",
    name: `item ${i}`,
    count: i,
    "price@odata.type": "Edm.Double",
    price: i + 0.5,
    active: i % 2 === 0,
  });
  const page = JSON.stringify({ value: Array.from({ length: 1000 }, (_, i) => entity(i)) });
  const one = JSON.stringify(entity(1));
  const part = `--changesetresponse_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 204 No Content\r\nETag: W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"\r\n\r\n`;
  const batch = `--batchresponse_b\r\nContent-Type: multipart/mixed; boundary=changesetresponse_c\r\n\r\n${part.repeat(100)}--changesetresponse_c--\r\n--batchresponse_b--\r\n`;
  const json = { "Content-Type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const url = req.url ?? "";
      if (url.includes("$batch")) {
        res.writeHead(202, { "Content-Type": "multipart/mixed; boundary=batchresponse_b" }).end(batch);
      } else if (req.method === "POST") {
        res.writeHead(204).end();
      } else if (url.includes("RowKey=")) {
        res.writeHead(200, { ...json, ETag: `W/"datetime'2025-01-01T00%3A00%3A00.0000000Z'"` }).end(one);
      } else {
        const at = Number(/NextPartitionKey=p(\d+)/.exec(url)?.[1] ?? "0");
        const next =
          at + 1000 < total
            ? { "x-ms-continuation-NextPartitionKey": `p${at + 1000}`, "x-ms-continuation-NextRowKey": "r" }
            : {};
        res.writeHead(200, { ...json, ...next }).end(page);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${KEY};TableEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`;
}

const connectionString = await startStub(Number(process.argv[2] ?? "100000"));
process.stdout.write(`${connectionString}\n`);
process.once("SIGTERM", () => process.exit(0));
