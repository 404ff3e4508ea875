import { describe, expect, it } from "vitest";
import * as tablekit from "../src/index.js";

describe("public API", () => {
  it("exports the names API.md fixes", () => {
    for (const name of [
      "Entity",
      "Column",
      "TableContext",
      "MemoryStore",
      "AzureStore",
      "Repository",
      "Query",
      "Transaction",
      "odata",
      "etagOf",
      "timestampOf",
      "TableKitError",
      "SchemaError",
      "ValidationError",
      "EntityNotFoundError",
      "EntityAlreadyExistsError",
      "ConcurrencyError",
      "TransactionError",
      "StoreError",
      "UniqueConstraintError",
      "EncryptionError",
      "maxSafeBlindIndexBits",
    ]) {
      expect(tablekit, name).toHaveProperty(name);
    }
  });

  it("gives every error class its stable code and the common base", () => {
    const cases: Array<[tablekit.TableKitError, string]> = [
      [new tablekit.SchemaError("x"), "SCHEMA"],
      [new tablekit.ValidationError("rule", "x"), "VALIDATION"],
      [new tablekit.EntityNotFoundError({ table: "T", partitionKey: "p", rowKey: "r" }), "ENTITY_NOT_FOUND"],
      [
        new tablekit.EntityAlreadyExistsError({ table: "T", partitionKey: "p", rowKey: "r" }),
        "ENTITY_ALREADY_EXISTS",
      ],
      [new tablekit.ConcurrencyError({ table: "T", partitionKey: "p", rowKey: "r" }), "CONCURRENCY"],
      [new tablekit.TransactionError({ index: 0, table: "T", partitionKey: "p" }), "TRANSACTION"],
      [new tablekit.StoreError("x", { statusCode: 500 }), "STORE"],
      [
        new tablekit.UniqueConstraintError({ index: "byEmail", table: "T", partitionKey: "p", rowKey: "r" }),
        "UNIQUE",
      ],
      [
        new tablekit.EncryptionError({
          column: "ssn",
          reason: "unknown key id",
          table: "T",
          partitionKey: "p",
          rowKey: "r",
        }),
        "ENCRYPTION",
      ],
      [new tablekit.QueryBudgetError({ items: [], continuation: "c", requests: 3 }), "QUERY_BUDGET"],
      [
        new tablekit.EventualStepError([
          {
            index: 1,
            op: "insert",
            table: "T",
            partitionKey: "p",
            rowKey: "r",
            error: new tablekit.EntityAlreadyExistsError({ table: "T", partitionKey: "p", rowKey: "r" }),
          },
        ]),
        "EVENTUAL_STEP",
      ],
      [new tablekit.PeriodDroppedError({ table: "Logs202401", cutoff: new Date(0) }), "PERIOD_DROPPED"],
    ];
    for (const [error, code] of cases) {
      expect(error).toBeInstanceOf(tablekit.TableKitError);
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe(code);
      expect(error.name).toBe(error.constructor.name);
    }
  });
});
