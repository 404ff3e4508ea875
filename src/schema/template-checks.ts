import { SchemaError } from "../errors.js";
import { type FieldTypeLookup, KeyTemplate, type TemplateOptions } from "../keys/key-template.js";
import { TABLE_NAME } from "../util/service-limits.js";
import type { ColumnModel } from "./entity-model.js";

/**
 * An encrypted value is stored as ciphertext: it cannot form a key (the key would hold the plaintext,
 * and could not be ordered or found) nor be compared by the service. With `blindAllowed` (index keys),
 * a blind-indexed column may: the key holds its blind value instead.
 */
export function assertNotEncrypted(
  columnsByField: ReadonlyMap<string, ColumnModel>,
  fields: readonly string[],
  what: string,
  blindAllowed = false,
): void {
  for (const field of fields) {
    const column = columnsByField.get(field);
    if (column?.encrypted && !(blindAllowed && column.blindIndex !== undefined)) {
      const hint = blindAllowed ? " (an index key may name one with @Column({ blindIndex: true }))" : "";
      throw new SchemaError(
        `${what} uses the encrypted column '${field}': keys are stored in clear and compared by the service; keep encrypted columns out of key templates${hint}`,
      );
    }
  }
}

/** Parses a key template option (`SchemaError` when it is not a string or does not parse). */
export function parseTemplate(
  template: unknown,
  fieldType: FieldTypeLookup,
  what: string,
  options: TemplateOptions = {},
): KeyTemplate {
  if (typeof template !== "string") throw new SchemaError(`${what}: a key template string is required`);
  return KeyTemplate.parse(template, fieldType, what, options);
}

/** Refuses a table name the service would refuse (3-63 letters or digits, starting with a letter; not `tables`). */
export function assertTableName(table: unknown, what: string): asserts table is string {
  if (typeof table !== "string" || !TABLE_NAME.test(table) || table.toLowerCase() === "tables") {
    throw new SchemaError(
      `${what} '${String(table)}' is not a valid table name (3-63 letters or digits, starting with a letter; 'tables' is reserved)`,
    );
  }
}
