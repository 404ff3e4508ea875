/**
 * Azure answers a `$select`-ed property that an entity lacks with `null` (Azurite and tablekit serve
 * leave it out; see AZURITE-NOTES.md). The service stores no nulls, so AzureStore reads such a null
 * as "absent" on both payload formats: otherwise a selected bookkeeping property (a summary row's
 * marker, an index copy's marker) would seem present on every row.
 */
import { describe, expect, it } from "vitest";
import { nometadataRowReader } from "../../src/store/azure/nometadata-rows.js";
import { fromSdkQueryEntity } from "../../src/store/azure/sdk-entity.js";

describe("a selected property the entity lacks arrives as null from Azure", () => {
  it("minimal metadata: the null property is left out, the others kept", () => {
    const row = fromSdkQueryEntity({
      partitionKey: "p",
      rowKey: "r",
      timestamp: "2026-11-26T07:00:00.1234567Z",
      name: "kept",
      _tkSummary: null,
      missing: null,
    });
    expect(row).toEqual({
      partitionKey: "p",
      rowKey: "r",
      timestamp: new Date("2026-11-26T07:00:00.123Z"),
      name: "kept",
    });
    expect("_tkSummary" in row).toBe(false);
  });

  it("nometadata: a null in a model column or outside the model is left out", () => {
    const read = nometadataRowReader({ count: "Int64", name: "String" });
    const row = read({
      PartitionKey: "p",
      RowKey: "r",
      Timestamp: "2026-11-26T07:00:00.1234567Z",
      count: null,
      name: "kept",
      _tkSummary: null,
    });
    expect(row).toBeDefined();
    expect(row?.name).toBe("kept");
    expect(row && "count" in row).toBe(false);
    expect(row && "_tkSummary" in row).toBe(false);
  });
});
