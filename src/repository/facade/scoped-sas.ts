import { ValidationError } from "../../errors.js";
import { findState } from "../../query/find-state.js";
import type { EntityModel } from "../../schema/entity-model.js";
import { isTableSasIssuer, type TableStore } from "../../store/table-store.js";

/** What a scoped SAS lets its holder do: read (query), then add, update, delete. */
export type SasPermissions = "r" | "ra" | "rau" | "raud";

/** Options of `repository.sasFor`. */
export interface SasOptions {
  permissions: SasPermissions;
  /** When the token stops working; must be after `startsOn` (or now). */
  expiresOn: Date;
  /** When the token starts working (default: at once). */
  startsOn?: Date | undefined;
}

const PERMISSIONS: ReadonlySet<string> = new Set<SasPermissions>(["r", "ra", "rau", "raud"]);

/**
 * Signs a SAS for the entity's table limited to the partition `partial` fixes and, when it fixes leading
 * RowKey fields, to the RowKeys with that prefix (otherwise to the entity's RowKey space: its literal
 * prefix, as `find` reads). The service checks SAS ranges as inclusive: the end of a prefix range is the
 * prefix followed by U+FFFF, above every key with the prefix that a key template produces.
 */
export function scopedSas(
  model: EntityModel,
  store: TableStore,
  table: string,
  partial: Record<string, unknown>,
  options: SasOptions,
): string {
  const what = `${model.name}.sasFor`;
  if (options === null || typeof options !== "object" || !PERMISSIONS.has(options.permissions)) {
    throw new ValidationError("sas-permissions", `${what}: permissions must be "r", "ra", "rau" or "raud"`, {
      field: "permissions",
    });
  }
  const { expiresOn, startsOn } = options;
  if (!isValidDate(expiresOn) || (startsOn !== undefined && !isValidDate(startsOn))) {
    throw new ValidationError(
      "sas-expiry",
      `${what}: expiresOn (and startsOn, if given) must be valid Dates`,
      {
        field: "expiresOn",
      },
    );
  }
  const from = startsOn ?? new Date();
  if (expiresOn.getTime() <= from.getTime()) {
    throw new ValidationError(
      "sas-expiry",
      `${what}: expiresOn ${expiresOn.toISOString()} is not after ${startsOn === undefined ? "now" : "startsOn"} (${from.toISOString()})`,
      { field: "expiresOn" },
    );
  }
  const state = findState(model.name, model.partitionKey, model.rowKey, partial);
  if (state.partitionKeys !== undefined) {
    throw new ValidationError(
      "sas-partition",
      `${what}: a SAS reaches one partition; give the hashed field '${model.partitionKey.hashed?.field}' too`,
      { field: model.partitionKey.hashed?.field },
    );
  }
  if (!isTableSasIssuer(store)) {
    throw new ValidationError(
      "sas-store",
      `${what}: the store '${store.name}' cannot sign a SAS; it needs an AzureStore connected with an account key`,
    );
  }
  const bounds = state.rowKey;
  const rowKeys =
    bounds.eq !== undefined
      ? { start: bounds.eq, end: bounds.eq }
      : bounds.ge
        ? { start: bounds.ge, end: `${bounds.ge}\uffff` }
        : undefined;
  return store.tableSas(table, {
    permissions: options.permissions,
    expiresOn,
    ...(startsOn === undefined ? {} : { startsOn }),
    partitionKey: state.partitionKey,
    ...(rowKeys === undefined ? {} : { rowKeys }),
  });
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}
