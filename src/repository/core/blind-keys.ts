import type { ColumnModel, EntityModel, IndexModel } from "../../schema/entity-model.js";
import { type BlindIndex, missingBlindIndexKey } from "../pipeline/encryption/blind-index.js";

/**
 * The values an index's keys are built from: for its blind-indexed fields, the untruncated blind value
 * (64 hex digits) in place of the plaintext, under key `generation` (0: the current blind-index key);
 * other fields as given. An absent value stays absent (the key template refuses it, or a lenient
 * read skips the copy). Without a blind-index key such an index is refused: a key never holds plaintext.
 */
export function indexKeyValues(
  model: EntityModel,
  index: IndexModel,
  values: Record<string, unknown>,
  blind: BlindIndex | undefined,
  generation = 0,
): Record<string, unknown> {
  const fields = index.blindFields;
  if (fields === undefined) return values;
  if (blind === undefined) throw missingBlindIndexKey(model);
  const out = { ...values };
  for (const field of fields) {
    const value = values[field];
    if (value === undefined || value === null) continue;
    out[field] = blind.keyText(model, model.columnsByField.get(field) as ColumnModel, value, generation);
  }
  return out;
}
