/**
 * A transaction of plain entities is checked against the service rules once: planning adds no row and
 * changes none, so `planTransaction` skips a second walk of a list `assertValidTransaction` passed
 * (`passedAsIs`). The skip holds only for that very list, unchanged, with the same limits and table.
 * The store stack's limit check (`LimitCheckedStore`) likewise skips only the very array of rows the
 * planner marked as checked with its own limits; any other array is walked.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { MemoryStore, type TransactionAction } from "../../src/index.js";
import {
  assertValidTransaction,
  passedAsIs,
  plannedOperation,
} from "../../src/repository/facade/transaction.js";
import { LimitCheckedStore, markRowsChecked } from "../../src/repository/pipeline/limit-checked-store.js";
import { modelOfInstance } from "../../src/schema/entity-model.js";
import { AZURE_TABLE_LIMITS, COSMOS_TABLE_LIMITS } from "../../src/util/store-limits.js";
import { employee } from "../fixtures/models.js";

function operations(count: number) {
  return Array.from({ length: count }, (_, id) => {
    const entity = employee("acme", id);
    const model = modelOfInstance(entity);
    return plannedOperation(
      model,
      { kind: "upsert", entity: model.mapper.toWire(entity), mode: "replace" },
      entity,
      "upsert",
    );
  });
}

describe("passedAsIs", () => {
  it("is true only for the checked list itself, unchanged, with its limits and table", () => {
    const list = operations(3);
    expect(passedAsIs(list, list, AZURE_TABLE_LIMITS, "Employees")).toBe(false);
    assertValidTransaction(list, AZURE_TABLE_LIMITS, () => "Employees");
    expect(passedAsIs(list, list, AZURE_TABLE_LIMITS, "Employees")).toBe(true);
    expect(passedAsIs([...list], list, AZURE_TABLE_LIMITS, "Employees")).toBe(true);
    expect(passedAsIs(list, list, COSMOS_TABLE_LIMITS, "Employees")).toBe(false);
    expect(passedAsIs(list, list, AZURE_TABLE_LIMITS, "OtherEmployees")).toBe(false);
    expect(passedAsIs([...list].reverse(), list, AZURE_TABLE_LIMITS, "Employees")).toBe(false);
    const more = operations(4);
    expect(
      passedAsIs([...list, more[3] as (typeof more)[number]], list, AZURE_TABLE_LIMITS, "Employees"),
    ).toBe(false);
  });

  it("is false once an operation was added to the checked list after the check", () => {
    const list = operations(2);
    assertValidTransaction(list, AZURE_TABLE_LIMITS, () => "Employees");
    list.push(...operations(3).slice(2));
    expect(passedAsIs(list, list, AZURE_TABLE_LIMITS, "Employees")).toBe(false);
  });
});

describe("LimitCheckedStore and rows marked as checked", () => {
  // A PartitionKey over the service's 1 KiB key limit (2 bytes per UTF-16 unit): refused as sent unless marked.
  const tooLongKey = "k".repeat(1024);
  const rows = (): TransactionAction[] => [
    { kind: "upsert", entity: { partitionKey: tooLongKey, rowKey: "a" }, mode: "replace" },
  ];

  it("walks every array it was not told about, and one marked with other limits", async () => {
    const store = new LimitCheckedStore(new MemoryStore(), AZURE_TABLE_LIMITS);
    await expect(store.submitTransaction("T", tooLongKey, rows())).rejects.toBeInstanceOf(ValidationError);
    const marked = rows();
    markRowsChecked(marked, COSMOS_TABLE_LIMITS);
    await expect(store.submitTransaction("T", tooLongKey, marked)).rejects.toBeInstanceOf(ValidationError);
    const copied = rows();
    markRowsChecked(copied, AZURE_TABLE_LIMITS);
    await expect(store.submitTransaction("T", tooLongKey, [...copied])).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it("passes the very array marked with its limits on without walking it", async () => {
    const sent: Array<readonly TransactionAction[]> = [];
    const inner = new MemoryStore();
    inner.submitTransaction = async (_table, _partitionKey, actions) => {
      sent.push(actions);
      return actions.map(() => ({ etag: "x" }));
    };
    const store = new LimitCheckedStore(inner, AZURE_TABLE_LIMITS);
    const marked = rows();
    markRowsChecked(marked, AZURE_TABLE_LIMITS);
    await store.submitTransaction("T", tooLongKey, marked);
    expect(sent).toEqual([marked]);
  });
});
