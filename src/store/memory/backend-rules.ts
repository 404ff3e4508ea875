import { keyBytes, reservedPropertyName, type StoreLimits } from "../../util/store-limits.js";
import type { TransactionAction } from "../table-store.js";
import { badRequest } from "./service-errors.js";

/** Wire names that are the port's metadata, not properties the backend stores under that name. */
const METADATA = new Set(["partitionKey", "rowKey", "etag", "timestamp"]);

/**
 * The limits a flavour adds to the Table service's own rules (which the store checks anyway): key
 * sizes as that backend counts them and reserved property names, e.g. the Cosmos DB Table API's
 * 255-byte RowKey and its reserved ID, rid, etag and ResourceId (see util/store-limits.ts).
 */
export function checkBackendRules(limits: StoreLimits, action: TransactionAction): void {
  const [partitionKey, rowKey] =
    action.kind === "delete"
      ? [action.partitionKey, action.rowKey]
      : [action.entity.partitionKey, action.entity.rowKey];
  checkKeySize(limits, "PartitionKey", partitionKey, limits.maxPartitionKeyBytes);
  checkKeySize(limits, "RowKey", rowKey, limits.maxRowKeyBytes);
  if (action.kind === "delete" || limits.reservedPropertyNames.length === 0) return;
  for (const name of Object.keys(action.entity)) {
    if (METADATA.has(name) || name.startsWith("odata.")) continue;
    const reserved = reservedPropertyName(limits, name);
    if (reserved !== undefined) {
      throw badRequest(
        "PropertyNameInvalid",
        `property name '${name}' is reserved by this backend ('${reserved}'; reserved: ${limits.reservedPropertyNames.join(", ")})`,
      );
    }
  }
}

function checkKeySize(limits: StoreLimits, which: string, key: unknown, max: number): void {
  if (typeof key !== "string") return;
  const bytes = keyBytes(limits, key);
  if (bytes > max) {
    throw badRequest("OutOfRangeInput", `${which} is ${bytes} bytes; this backend allows at most ${max}`);
  }
}
