import { SchemaError, ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { TableKitEvent } from "../core/table-kit-event.js";
import { type BlindIndex, missingBlindIndexKey } from "../pipeline/encryption/blind-index.js";
import type { EncryptedRowTypes } from "../pipeline/encryption/encrypted-row-types.js";

/** Several classes may share a table only with distinct `type` values, or rows of one would read as the other. */
export function claimType(types: Map<string, EntityModel>, model: EntityModel): void {
  const key = `${model.table.toLowerCase()}\u0000${model.type}`;
  const owner = types.get(key);
  if (owner === undefined) {
    types.set(key, model);
    return;
  }
  if (owner.ctor === model.ctor) return;
  throw new SchemaError(
    `${model.name} and ${owner.name} both store type '${model.type}' in table '${model.table}'; ` +
      "classes sharing a table need distinct @Entity({ type }) values so each row can be resolved to its class",
  );
}

/** Entities with encrypted columns need the context's keys: refused before any request otherwise. */
export function claimEncryption(
  encrypts: boolean,
  types: EncryptedRowTypes,
  model: EntityModel,
  blindIndex?: BlindIndex,
): void {
  const encrypted = model.columns.filter((column) => column.encrypted);
  if (encrypted.length > 0 && !encrypts) {
    throw new ValidationError(
      "encryption-keys",
      `${model.name} has encrypted columns (${encrypted.map((c) => c.field).join(", ")}): give the TableContext { encryption: { keys } }, e.g. localKeys({ k1: key }, "k1")`,
      { field: "encryption" },
    );
  }
  if (blindIndex === undefined && model.columns.some((column) => column.blindIndex !== undefined))
    throw missingBlindIndexKey(model);
  types.claim(model);
}

/** A model's schema warnings, emitted the first time a context uses its class (`warned`: the classes already reported). */
export function warnOnce(
  warned: Set<unknown>,
  model: EntityModel,
  emit: (event: TableKitEvent) => void,
): void {
  if (warned.has(model.ctor)) return;
  warned.add(model.ctor);
  for (const warning of model.warnings)
    emit({ type: "schema-warning", entity: model.name, rule: warning.rule, message: warning.message });
}
