import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type BatchOperation, parseBatchBody } from "../../src/server/batch-body.js";
import { testSeed } from "../support/seeded-random.js";
import { parseBatchBody as referenceParse } from "./reference-batch-body.js";

// The offset-scanning parser must answer every body as the line-splitting reference does: the same
// operations, or the same error.
const SEED = testSeed(20261126);

function outcome(parse: (body: string, boundary: string) => unknown, body: string): unknown {
  try {
    const operations = parse(body, "batch_b") as BatchOperation[];
    return {
      operations: operations.map((o) => ({
        method: o.method,
        url: o.url,
        headers: [...o.headers],
        body: o.body,
      })),
    };
  } catch (error) {
    return { error: error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error) };
  }
}

const piece = fc.constantFrom(
  "--batch_b",
  "--batch_b--",
  "--changeset_c",
  "--changeset_c--",
  "--changeset_c \t",
  "Content-Type: multipart/mixed; boundary=changeset_c",
  "Content-Type: application/http",
  "Content-Transfer-Encoding: binary",
  "POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1",
  "PUT http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1",
  "DELETE t(PartitionKey='p',RowKey='r') HTTP/1.1 ",
  "If-Match: *",
  ' if-MATCH :W/"x"',
  "IF-MATCH:b",
  "If-Matc: c",
  "\u0130f-Match: d",
  "If-Match\u00a0: e",
  "Accept: application/json;odata=nometadata",
  '{"PartitionKey":"p","RowKey":"r","v":1}',
  ":",
  "X:",
  " ",
  "",
  "\t",
  "\r",
);
const newline = fc.constantFrom("\r\n", "\n", "\r\n", "\r\n\r\n", "\n\n", "\r\r\n");

function validBatch(eol: string, operations: number): string {
  const op = (i: number) =>
    `--changeset_c${eol}Content-Type: application/http${eol}Content-Transfer-Encoding: binary${eol}${eol}` +
    `PUT http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='${i}') HTTP/1.1${eol}` +
    `Content-Type: application/json${eol}Accept: application/json;odata=minimalmetadata${eol}${eol}` +
    `{"PartitionKey":"p","RowKey":"${i}","v":${i}}${eol}`;
  let ops = "";
  for (let i = 0; i < operations; i++) ops += op(i);
  return `--batch_b${eol}Content-Type: multipart/mixed; boundary=changeset_c${eol}${eol}${ops}--changeset_c--${eol}--batch_b--${eol}`;
}

/** `header(name)` (If-Match is read from the text, not the map) gives what the header map holds. */
function expectHeaderLookupsAgree(body: string): void {
  let operations: BatchOperation[];
  try {
    operations = parseBatchBody(body, "batch_b");
  } catch {
    return;
  }
  for (const operation of operations) {
    for (const name of ["if-match", "accept", "content-type", "x"]) {
      expect(operation.header(name)).toBe(operation.headers.get(name));
    }
  }
}

describe(`parseBatchBody (seed ${SEED})`, () => {
  test("answers like the reference parser on bodies made of batch pieces", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, newline), { maxLength: 40 }), (lines) => {
        const body = lines.map(([text, eol]) => text + eol).join("");
        expect(outcome(parseBatchBody, body)).toEqual(outcome(referenceParse, body));
        expectHeaderLookupsAgree(body);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  test("answers like the reference parser on valid batches with lines cut, doubled or changed", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("\r\n", "\n"),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom("cut", "double", "lf", "crlf", "space", "drop")), {
          maxLength: 4,
        }),
        (eol, operations, edits) => {
          let body = validBatch(eol, operations);
          for (const [at, edit] of edits) {
            const i = at % (body.length + 1);
            if (edit === "cut") body = body.slice(0, i);
            else if (edit === "double")
              body = body.slice(0, i) + body.slice(Math.max(i - 5, 0), i) + body.slice(i);
            else if (edit === "lf") body = `${body.slice(0, i)}\n${body.slice(i)}`;
            else if (edit === "crlf") body = `${body.slice(0, i)}\r\n${body.slice(i)}`;
            else if (edit === "space") body = `${body.slice(0, i)} ${body.slice(i)}`;
            else body = body.slice(0, i) + body.slice(i + 1);
          }
          expect(outcome(parseBatchBody, body)).toEqual(outcome(referenceParse, body));
          expectHeaderLookupsAgree(body);
        },
      ),
      { seed: SEED, numRuns: 3000 },
    );
  });

  test("parses 100 operations with CRLF and with LF line ends alike", () => {
    for (const eol of ["\r\n", "\n"]) {
      const operations = parseBatchBody(validBatch(eol, 100), "batch_b");
      expect(operations).toHaveLength(100);
      const { method, url, headers, body } = operations[42] as BatchOperation;
      expect({ method, url, headers, body }).toEqual({
        method: "PUT",
        url: "http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='42')",
        headers: new Map([
          ["content-type", "application/json"],
          ["accept", "application/json;odata=minimalmetadata"],
        ]),
        body: '{"PartitionKey":"p","RowKey":"42","v":42}',
      });
    }
  });
});
