import { createHmac } from "node:crypto";
import { ValidationError } from "../../../errors.js";
import { blindCanonicalText } from "../../../schema/blind-index-plan.js";
import type { ColumnModel, EntityModel } from "../../../schema/entity-model.js";

/** Bytes of `encryption.blindIndexKey` (and of each previous key). */
export const BLIND_INDEX_KEY_BYTES = 32;

/** Domain separation of the per-column keys: a new format gets a new label (part of the stored format). */
const KEY_LABEL = "tablekit-blind-v1";

/**
 * Blind values of blind-indexed columns (`@Column({ encrypt: true, blindIndex })`), from the context's
 * `encryption.blindIndexKey`, never from the data keys (so `db.reencrypt` leaves them as they are).
 *
 * Stored format (version 1):
 * - per-column key = HMAC-SHA-256(blindIndexKey, "tablekit-blind-v1|" + declared table + "|" + stored
 *   column name): the declared table template (`Users`, `Logs{at:month}`), without the context's prefix,
 *   so the same plaintext in two columns or two tables gives unrelated values;
 * - blind value = HMAC-SHA-256(per-column key, type tag + ":" + canonical text), the tag being the
 *   column type (`String`, `Guid`, `Int32`, `Int64`: Int32 5 and Int64 5 differ), the text a string as
 *   given (UTF-8, no normalisation), a Guid in lower case, an integer in decimal;
 * - in the row (`_tkB_<column>`, a String): its first `bits` bits as lower-case hex, the bits right-aligned
 *   in ceil(bits / 4) digits; in an index key: all 256 bits as 64 lower-case hex digits.
 *
 * `previous` keys (`encryption.previousBlindIndexKeys`) are still looked up, after the current one,
 * until `db.rewriteBlindIndexes` has rewritten every row under the current key.
 */
export class BlindIndex {
  /** The current key first, then the previous ones. */
  readonly #keys: readonly Buffer[];
  /** Per-column keys by generation, by table and property. */
  readonly #columnKeys = new Map<string, Buffer[]>();

  constructor(current: Uint8Array, previous: readonly Uint8Array[] = []) {
    this.#keys = [current, ...previous].map((key) => Buffer.from(key));
  }

  /** How many keys lookups try: 1, plus the previous keys of a rotation under way. */
  get generations(): number {
    return this.#keys.length;
  }

  /** The row's blind value of `value` (truncated to the column's bits, hex), under key `generation`. */
  stored(model: EntityModel, column: ColumnModel, value: unknown, generation = 0): string {
    const bits = column.blindIndex?.bits ?? 0;
    const digest = this.#digest(model, column, value, generation);
    const top = digest.readBigUInt64BE(0) >> BigInt(64 - bits);
    return top.toString(16).padStart(Math.ceil(bits / 4), "0");
  }

  /** The untruncated blind value (64 hex digits) an index key holds for `value`, under key `generation`. */
  keyText(model: EntityModel, column: ColumnModel, value: unknown, generation = 0): string {
    return this.#digest(model, column, value, generation).toString("hex");
  }

  /** The row's blind values of `value` under every key, current first, without repeats (for a filter). */
  storedValues(model: EntityModel, column: ColumnModel, value: unknown): string[] {
    const values: string[] = [];
    for (let generation = 0; generation < this.#keys.length; generation++) {
      const one = this.stored(model, column, value, generation);
      if (!values.includes(one)) values.push(one);
    }
    return values;
  }

  #digest(model: EntityModel, column: ColumnModel, value: unknown, generation: number): Buffer {
    const input = `${column.type}:${canonicalText(model, column, value)}`;
    return createHmac("sha256", this.#columnKey(model.table, column.property, generation))
      .update(input, "utf8")
      .digest();
  }

  #columnKey(table: string, property: string, generation: number): Buffer {
    const id = `${table}\u0000${property}`;
    let keys = this.#columnKeys.get(id);
    if (keys === undefined) {
      keys = this.#keys.map((key) =>
        createHmac("sha256", key).update(`${KEY_LABEL}|${table}|${property}`, "utf8").digest(),
      );
      this.#columnKeys.set(id, keys);
    }
    return keys[generation] as Buffer;
  }
}

/**
 * The canonical text of a value of a blind-indexed column (`blindCanonicalText`); a value of another
 * type is a `ValidationError` that names the field, never the value.
 */
export function canonicalText(model: EntityModel, column: ColumnModel, value: unknown): string {
  const text = blindCanonicalText(column.type, value);
  if (text !== undefined) return text;
  throw new ValidationError(
    "blind-index-value",
    `${model.name}.${column.field}: expected a ${column.type} value for its blind index (value not shown: the column is encrypted)`,
    { field: column.field },
  );
}

/** The `encryption` options of blind indexes, checked before anything is sent. */
export function blindIndexOf(options: {
  blindIndexKey?: unknown;
  previousBlindIndexKeys?: unknown;
}): BlindIndex | undefined {
  const { blindIndexKey, previousBlindIndexKeys } = options;
  if (blindIndexKey === undefined) {
    if (previousBlindIndexKeys !== undefined) {
      throw new ValidationError(
        "encryption",
        "encryption.previousBlindIndexKeys needs encryption.blindIndexKey (the current key)",
        { field: "encryption" },
      );
    }
    return undefined;
  }
  assertKeyBytes(blindIndexKey, "encryption.blindIndexKey");
  if (previousBlindIndexKeys !== undefined && !Array.isArray(previousBlindIndexKeys)) {
    throw new ValidationError("encryption", "encryption.previousBlindIndexKeys must be an array of keys", {
      field: "encryption",
    });
  }
  const previous = (previousBlindIndexKeys ?? []) as unknown[];
  previous.forEach((key, at) => {
    assertKeyBytes(key, `encryption.previousBlindIndexKeys[${at}]`);
  });
  return new BlindIndex(blindIndexKey, previous as Uint8Array[]);
}

function assertKeyBytes(key: unknown, what: string): asserts key is Uint8Array {
  if (!(key instanceof Uint8Array) || key.byteLength !== BLIND_INDEX_KEY_BYTES) {
    throw new ValidationError(
      "encryption",
      `${what} must be a Uint8Array of ${BLIND_INDEX_KEY_BYTES} random bytes (a key of its own, not a data key)`,
      { field: "encryption" },
    );
  }
}

/** Refusal of a blind-indexed entity in a context without `encryption.blindIndexKey`. */
export function missingBlindIndexKey(model: EntityModel): ValidationError {
  const columns = model.columns.filter((column) => column.blindIndex !== undefined).map((c) => c.field);
  return new ValidationError(
    "blind-index-key",
    `${model.name} has blind-indexed columns (${columns.join(", ")}): give the TableContext { encryption: { keys, blindIndexKey } }, blindIndexKey being 32 random bytes kept apart from the data keys`,
    { field: "encryption" },
  );
}
