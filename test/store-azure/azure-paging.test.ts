import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fromSdkContinuationToken,
  toSdkContinuationToken,
} from "../../src/store/azure/continuation-token.js";
import type { StoreContinuation, TransactionAction } from "../../src/store/table-store.js";
import { createAzuriteStore } from "../support/azurite.js";
import { uniqueTableName } from "../support/table-names.js";

const store = createAzuriteStore();
const table = uniqueTableName("page");
const PARTITIONS = ["a", "b", "c", "d", "e"];
const PER_PARTITION = 500; // 2,500 entities: pages of 1000, 1000, 500, each crossing partitions.
const TOTAL = PARTITIONS.length * PER_PARTITION;

const expectedKeys = PARTITIONS.flatMap((pk) =>
  Array.from({ length: PER_PARTITION }, (_, i) => `${pk}/${String(i).padStart(4, "0")}`),
);

beforeAll(async () => {
  await store.createTable(table);
  for (const pk of PARTITIONS) {
    for (let start = 0; start < PER_PARTITION; start += 100) {
      const actions: TransactionAction[] = [];
      for (let i = start; i < Math.min(start + 100, PER_PARTITION); i++) {
        actions.push({ kind: "insert", entity: { partitionKey: pk, rowKey: String(i).padStart(4, "0"), i } });
      }
      await store.submitTransaction(table, pk, actions);
    }
  }
}, 120_000);
afterAll(() => store.deleteTable(table));

describe("AzureStore.queryPage paging (Azurite)", () => {
  it(`pages ${TOTAL} entities with top 1000, resuming from JSON-serialized continuations`, async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let continuation: StoreContinuation | undefined;
    do {
      const page = await store.queryPage(table, { top: 1000, ...(continuation ? { continuation } : {}) });
      sizes.push(page.items.length);
      seen.push(...page.items.map((e) => `${e.partitionKey}/${e.rowKey}`));
      // A continuation is plain data: it survives being stored and read back.
      continuation =
        page.continuation === undefined ? undefined : JSON.parse(JSON.stringify(page.continuation));
      if (continuation) {
        expect(Object.keys(continuation).every((k) => k === "nextPartitionKey" || k === "nextRowKey")).toBe(
          true,
        );
      }
    } while (continuation !== undefined);
    expect(sizes).toEqual([1000, 1000, TOTAL - 2000]);
    expect(seen).toEqual(expectedKeys);
  });

  it("pages a filtered, projected query and keeps the filter across pages", async () => {
    const seen: number[] = [];
    let continuation: StoreContinuation | undefined;
    let pages = 0;
    do {
      const page = await store.queryPage(table, {
        filter: "PartitionKey eq 'b' and i ge 100",
        select: ["RowKey", "i"],
        top: 300,
        ...(continuation ? { continuation } : {}),
      });
      pages += 1;
      for (const entity of page.items) {
        expect(Object.keys(entity).sort()).toEqual(["etag", "i", "rowKey"]);
        seen.push(entity.i as number);
      }
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect(pages).toBe(Math.ceil((PER_PARTITION - 100) / 300));
    expect(seen).toEqual(Array.from({ length: PER_PARTITION - 100 }, (_, i) => i + 100));
  });

  it("returns no continuation when everything fits", async () => {
    const page = await store.queryPage(table, { filter: "PartitionKey eq 'a' and RowKey lt '0010'" });
    expect(page.items).toHaveLength(10);
    expect(page.continuation).toBeUndefined();
  });
});

describe("continuation token conversion", () => {
  /** `@azure/data-tables`' decodeContinuationToken: base64, then one character per byte, then JSON. */
  function sdkDecode(token: string): unknown {
    let text = "";
    for (const byte of Buffer.from(token, "base64")) text += String.fromCharCode(byte);
    return JSON.parse(text);
  }

  /** `@azure/data-tables`' encodeContinuationToken. */
  function sdkEncode(nextPartitionKey: string, nextRowKey?: string): string {
    return Buffer.from(JSON.stringify({ nextPartitionKey, ...(nextRowKey && { nextRowKey }) })).toString(
      "base64",
    );
  }

  const samples: StoreContinuation[] = [
    { nextPartitionKey: "1!8!cDE-", nextRowKey: "1!12!cjAwMDE-" },
    { nextPartitionKey: "cA==" },
    { nextPartitionKey: "é日本😀\"\\'", nextRowKey: "\u0000\u007f\u0080ÿ" },
  ];

  it.each(samples)("round-trips %j exactly through the SDK's own decoder", (continuation) => {
    const token = toSdkContinuationToken(continuation);
    expect(sdkDecode(token)).toEqual(continuation);
    expect(fromSdkContinuationToken(token)).toEqual(continuation);
  });

  it.each(samples)("reads the SDK's tokens exactly: %j", (continuation) => {
    expect(
      fromSdkContinuationToken(sdkEncode(continuation.nextPartitionKey, continuation.nextRowKey)),
    ).toEqual(continuation);
  });

  it("maps an absent token to no continuation and drops an empty NextRowKey", () => {
    expect(fromSdkContinuationToken(undefined)).toBeUndefined();
    expect(fromSdkContinuationToken("")).toBeUndefined();
    expect(sdkDecode(toSdkContinuationToken({ nextPartitionKey: "p", nextRowKey: "" }))).toEqual({
      nextPartitionKey: "p",
    });
  });
});
