import { expectTypeOf } from "vitest";
import {
  type ChangeFeedGapError,
  type ConcurrencyError,
  type EncryptionError,
  type EntityAlreadyExistsError,
  type EntityNotFoundError,
  type EventualStepError,
  type PeriodDroppedError,
  type QueryBudgetError,
  type SchemaError,
  type StoreError,
  TableKitError,
  type TableKitErrorCode,
  type TransactionError,
  type UniqueConstraintError,
  type ValidationError,
} from "../../src/index.js";

// Each class's code has its literal type.
expectTypeOf<SchemaError["code"]>().toEqualTypeOf<"SCHEMA">();
expectTypeOf<ValidationError["code"]>().toEqualTypeOf<"VALIDATION">();
expectTypeOf<EntityNotFoundError["code"]>().toEqualTypeOf<"ENTITY_NOT_FOUND">();
expectTypeOf<EntityAlreadyExistsError["code"]>().toEqualTypeOf<"ENTITY_ALREADY_EXISTS">();
expectTypeOf<ConcurrencyError["code"]>().toEqualTypeOf<"CONCURRENCY">();
expectTypeOf<TransactionError["code"]>().toEqualTypeOf<"TRANSACTION">();
expectTypeOf<StoreError["code"]>().toEqualTypeOf<"STORE">();
expectTypeOf<UniqueConstraintError["code"]>().toEqualTypeOf<"UNIQUE">();
expectTypeOf<EncryptionError["code"]>().toEqualTypeOf<"ENCRYPTION">();
expectTypeOf<QueryBudgetError["code"]>().toEqualTypeOf<"QUERY_BUDGET">();
expectTypeOf<EventualStepError["code"]>().toEqualTypeOf<"EVENTUAL_STEP">();
expectTypeOf<PeriodDroppedError["code"]>().toEqualTypeOf<"PERIOD_DROPPED">();
expectTypeOf<ChangeFeedGapError["code"]>().toEqualTypeOf<"CHANGE_FEED_GAP">();

// TableKitErrorCode is their union, and the base class's code.
expectTypeOf<TableKitErrorCode>().toEqualTypeOf<
  | "SCHEMA"
  | "VALIDATION"
  | "ENTITY_NOT_FOUND"
  | "ENTITY_ALREADY_EXISTS"
  | "CONCURRENCY"
  | "TRANSACTION"
  | "STORE"
  | "UNIQUE"
  | "ENCRYPTION"
  | "QUERY_BUDGET"
  | "EVENTUAL_STEP"
  | "PERIOD_DROPPED"
  | "CHANGE_FEED_GAP"
>();
expectTypeOf<TableKitError["code"]>().toEqualTypeOf<TableKitErrorCode>();

// Branching on code is checked: a misspelt code is a compile error.
function describe(error: unknown): string {
  if (!(error instanceof TableKitError)) return "other";
  switch (error.code) {
    case "CONCURRENCY":
      return "retry";
    // @ts-expect-error no such code
    case "CONCURENCY":
      return "typo";
    default:
      return error.code;
  }
}
void describe;
