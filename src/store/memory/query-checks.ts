import { ServiceLimits } from "../../util/service-limits.js";
import type { StoreContinuation } from "../table-store.js";
import { badRequest } from "./service-errors.js";

/** The port's names of the system properties: never user properties, so never selected as such. */
const SYSTEM_PROPERTIES: ReadonlySet<string> = new Set(["partitionKey", "rowKey", "timestamp", "etag"]);

/** `$select` as a set of property names; PartitionKey, RowKey and Timestamp are returned only when named (typed-entity.ts). */
export function selection(select: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (select === undefined || select.length === 0) return undefined;
  const names = new Set<string>();
  for (const name of select) {
    if (typeof name !== "string") throw badRequest("InvalidInput", "$select must list property names");
    if (!SYSTEM_PROPERTIES.has(name)) names.add(name);
  }
  return names;
}

/**
 * `$top`: an integer from 0 to the service's page size; absent, the page size. Azure answers `$top=0`
 * with 200 and no entities (Azurite #1428 reports it; Azurite itself ignores a zero `$top`).
 */
export function checkTop(top: number | undefined): number {
  if (top === undefined) return ServiceLimits.maxPageSize;
  if (!Number.isInteger(top) || top < 0 || top > ServiceLimits.maxPageSize) {
    throw badRequest(
      "InvalidInput",
      `$top must be an integer from 0 to ${ServiceLimits.maxPageSize}, got ${top}`,
    );
  }
  return top;
}

/** A continuation token as the port describes it, or 400 `InvalidInput`. */
export function checkContinuation(c: StoreContinuation | undefined): StoreContinuation | undefined {
  if (c === undefined) return undefined;
  if (
    typeof c !== "object" ||
    c === null ||
    typeof c.nextPartitionKey !== "string" ||
    (c.nextRowKey !== undefined && typeof c.nextRowKey !== "string")
  ) {
    throw badRequest("InvalidInput", "the continuation token is malformed");
  }
  return c;
}
