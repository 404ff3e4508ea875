import { limitViolation } from "../../util/limit-violation.js";
import type { StoreLimits } from "../../util/store-limits.js";
import type { TransactionAction } from "../table-store.js";
import { badRequest } from "./service-errors.js";

const SERVICE_CODES = {
  "key-size": "OutOfRangeInput",
  "reserved-property": "PropertyNameInvalid",
  "too-many-properties": "TooManyProperties",
  "entity-size": "EntityTooLarge",
} as const;

/**
 * The limits a flavour adds to the Table service's own rules (which the store checks anyway),
 * answered as a 400 like the service: e.g. the Cosmos DB Table API's 255-byte RowKey and its
 * reserved property names (see util/store-limits.ts).
 */
export function checkBackendRules(limits: StoreLimits, action: TransactionAction): void {
  const violation = limitViolation(limits, action);
  if (violation) throw badRequest(SERVICE_CODES[violation.rule], violation.message);
}
