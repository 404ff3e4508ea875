import { describe, expect, it } from "vitest";
import { estimateActionBytes } from "../../src/repository/core/payload-size.js";
import { batchOperationBytes, batchTableUrl, NOMINAL_ACCOUNT_URL } from "../../src/store/batch-body-size.js";
import { AZURE_TABLE_LIMITS } from "../../src/util/store-limits.js";

describe("estimateActionBytes", () => {
  const action = { kind: "delete", partitionKey: "日", rowKey: "é'", ifMatch: "*" } as const;

  it("is the operation's exact share of the $batch body on the store's account URL and table", () => {
    const limits = { ...AZURE_TABLE_LIMITS, accountUrl: "http://127.0.0.1:10002/devstoreaccount1" };
    expect(estimateActionBytes(action, limits, "Orders")).toBe(
      batchOperationBytes("http://127.0.0.1:10002/devstoreaccount1/Orders", action),
    );
  });

  it("assumes the nominal account URL and the longest table name when they are not known", () => {
    expect(estimateActionBytes(action)).toBe(
      batchOperationBytes(batchTableUrl(NOMINAL_ACCOUNT_URL, "t".repeat(63)), action),
    );
    // 日 is 9 bytes percent-encoded, é 6, a doubled quote 2.
    expect(
      estimateActionBytes(action) - estimateActionBytes({ ...action, partitionKey: "", rowKey: "" }),
    ).toBe(17);
  });
});
