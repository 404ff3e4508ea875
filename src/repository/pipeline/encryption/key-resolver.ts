import { ValidationError } from "../../../errors.js";
import { MAX_KEY_ID_BYTES } from "./envelope.js";

/**
 * Wraps and unwraps the data keys of client-side encryption under key-encryption keys named by id:
 * local keys (`localKeys`), or a key service such as Azure Key Vault (`CryptographyClient.wrapKey`
 * and `unwrapKey`). Both methods may be async. `currentKeyId` is read at every write, so a resolver
 * may switch keys at run time; rows written under an older id still decrypt while `unwrapKey` knows it.
 */
export interface KeyResolver {
  /** The key new writes wrap their data keys with (1-255 bytes of UTF-8). */
  readonly currentKeyId: string;
  /** Wraps a fresh 32-byte data key under the key `keyId`. */
  wrapKey(keyId: string, dataKey: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** Unwraps what `wrapKey(keyId, …)` returned back to the 32-byte data key; throws for an unknown id. */
  unwrapKey(keyId: string, wrapped: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/** The `encryption` option of a `TableContext`: the key resolver of `@Column({ encrypt: true })` columns. */
export interface EncryptionOptions {
  /** Wraps each write's data key and unwraps it on reads; see `localKeys`. */
  keys: KeyResolver;
  /**
   * 32 random bytes keying the blind indexes of `@Column({ blindIndex })` columns (HMAC-SHA-256; kept
   * apart from the data keys, which never key a blind value). Required by entities with blind indexes.
   */
  blindIndexKey?: Uint8Array | undefined;
  /**
   * Earlier blind-index keys while rotating `blindIndexKey`: lookups try them too, after the current
   * key, until `db.rewriteBlindIndexes` has rewritten every row; then drop them.
   */
  previousBlindIndexKeys?: readonly Uint8Array[] | undefined;
}

/** Checks a key id: a non-empty string of at most 255 UTF-8 bytes (one byte of the stored header). */
export function assertKeyId(keyId: unknown, what: string): asserts keyId is string {
  if (typeof keyId !== "string" || keyId === "" || Buffer.byteLength(keyId, "utf8") > MAX_KEY_ID_BYTES) {
    throw new ValidationError(
      "encryption-key-id",
      `${what} must be a non-empty string of at most ${MAX_KEY_ID_BYTES} UTF-8 bytes`,
      { field: "currentKeyId" },
    );
  }
}

/** Checks the `encryption` option of a context before anything is sent. */
export function assertEncryptionOptions(options: unknown): asserts options is EncryptionOptions {
  const keys = (options as { keys?: unknown } | null | undefined)?.keys as Partial<KeyResolver> | undefined;
  if (
    keys === null ||
    typeof keys !== "object" ||
    typeof keys.wrapKey !== "function" ||
    typeof keys.unwrapKey !== "function"
  ) {
    throw new ValidationError(
      "encryption",
      "encryption needs { keys }: a key resolver { currentKeyId, wrapKey(keyId, dataKey), unwrapKey(keyId, wrapped) }, e.g. localKeys({ k1: key }, 'k1')",
      { field: "encryption" },
    );
  }
  assertKeyId(keys.currentKeyId, "encryption.keys.currentKeyId");
}
