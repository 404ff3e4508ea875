import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { operationPath } from "../../src/server/operation-path.js";
import { testSeed } from "../support/seeded-random.js";

// The shortcut must give what URL parsing gives, or fail where it fails.
const SEED = testSeed(20261126);

function viaUrl(url: string): string {
  try {
    return new URL(url, "http://batch.invalid").pathname;
  } catch (error) {
    return `throws ${(error as Error).constructor.name}`;
  }
}

function viaShortcut(url: string): string {
  try {
    return operationPath(url);
  } catch (error) {
    return `throws ${(error as Error).constructor.name}`;
  }
}

const origin = fc.constantFrom(
  "http://127.0.0.1:10002",
  "https://acct.table.core.windows.net",
  "http://[::1]:10002",
  "http://h:99999",
  "http://bad host",
  "http://1.2.3.4.5",
  "http://u@h",
  "HTTP://H",
  "http://",
  "ws://h",
  "",
);
const pathPiece = fc.constantFrom(
  "/devstoreaccount1",
  "/t(PartitionKey='p',RowKey='r')",
  "/",
  "/.",
  "/..",
  "/%2e",
  "/%2E%2e",
  "/.x",
  "%20",
  "%zz",
  " ",
  "\\",
  "?a=1",
  "#f",
  "é",
  "`",
  "{",
  "\u0001",
  "''",
  "a.b",
);

describe(`operationPath (seed ${SEED})`, () => {
  test("equals new URL(url, base).pathname, or throws where it throws", () => {
    fc.assert(
      fc.property(origin, fc.array(pathPiece, { maxLength: 6 }), (o, pieces) => {
        const url = o + pieces.join("");
        expect(viaShortcut(url)).toBe(viaUrl(url));
        expect(viaShortcut(url)).toBe(viaUrl(url)); // again, with the origin now remembered
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });
});
