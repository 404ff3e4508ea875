import { createCipheriv, createDecipheriv } from "node:crypto";
import { ValidationError } from "../../../errors.js";
import { DATA_KEY_BYTES } from "./envelope.js";
import { assertKeyId, type KeyResolver } from "./key-resolver.js";

/** RFC 3394's default initial value: the integrity check of AES key wrap. */
const KEY_WRAP_IV = Buffer.from("A6A6A6A6A6A6A6A6", "hex");

/**
 * A key resolver over local 32-byte AES-256 keys by id: data keys are wrapped with AES key wrap
 * (RFC 3394, `id-aes256-wrap`: 40 bytes, integrity-checked). Keep every id whose rows may still
 * exist; `currentKeyId` wraps new writes. A key of another length is a `ValidationError`; so is an
 * unknown id on unwrap (reads report it as an `EncryptionError`).
 * @example
 * const db = new TableContext({ store, encryption: { keys: localKeys({ k2: newKey, k1: oldKey }, "k2") } });
 */
export function localKeys(keys: Readonly<Record<string, Uint8Array>>, currentKeyId: string): KeyResolver {
  if (keys === null || typeof keys !== "object") {
    throw new ValidationError("encryption-key", "localKeys needs an object of keys by id", { field: "keys" });
  }
  const byId = new Map<string, Buffer>();
  for (const [keyId, key] of Object.entries(keys)) {
    assertKeyId(keyId, `localKeys: key id '${keyId}'`);
    if (!(key instanceof Uint8Array) || key.byteLength !== DATA_KEY_BYTES) {
      const size = key instanceof Uint8Array ? `${key.byteLength} bytes` : typeof key;
      throw new ValidationError(
        "encryption-key",
        `localKeys: key '${keyId}' must be a Uint8Array of ${DATA_KEY_BYTES} bytes (AES-256), got ${size}`,
        { field: keyId },
      );
    }
    // A copy: the caller may reuse or zero its buffer.
    byId.set(keyId, Buffer.from(key));
  }
  assertKeyId(currentKeyId, "localKeys: currentKeyId");
  if (!byId.has(currentKeyId)) {
    throw new ValidationError(
      "encryption-key",
      `localKeys: currentKeyId '${currentKeyId}' is not among the keys`,
      {
        field: "currentKeyId",
      },
    );
  }
  const keyOf = (keyId: string): Buffer => {
    const key = byId.get(keyId);
    if (key === undefined)
      throw new ValidationError("unknown-key-id", `no local key has the id '${keyId}'`, { field: keyId });
    return key;
  };
  return {
    currentKeyId,
    wrapKey(keyId, dataKey) {
      const cipher = createCipheriv("id-aes256-wrap", keyOf(keyId), KEY_WRAP_IV);
      return Buffer.concat([cipher.update(dataKey), cipher.final()]);
    },
    unwrapKey(keyId, wrapped) {
      const decipher = createDecipheriv("id-aes256-wrap", keyOf(keyId), KEY_WRAP_IV);
      return Buffer.concat([decipher.update(wrapped), decipher.final()]);
    },
  };
}
