/**
 * A transaction of plain entities is checked against the service rules once: planning adds no row and
 * changes none, so `planTransaction` skips a second walk of a list `assertValidTransaction` passed
 * (`passedAsIs`). The skip holds only for that very list, unchanged, with the same limits and table.
 */
import { describe, expect, it } from "vitest";
import {
  assertValidTransaction,
  passedAsIs,
  plannedOperation,
} from "../../src/repository/facade/transaction.js";
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
