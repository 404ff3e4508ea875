/**
 * A key resolver backed by Azure Key Vault (or Managed HSM): each data key is wrapped by a Key Vault
 * key with RSA-OAEP-256, so the key-encryption key never leaves the vault. The key id stored with each
 * value is the Key Vault key identifier *with its version*, so rows written before a key rotation
 * still unwrap with the version that wrapped them.
 *
 * tablekit does not depend on the Key Vault SDK: `KeyWrapClient` is the part of
 * `@azure/keyvault-keys`' `CryptographyClient` the resolver calls, and a `CryptographyClient`
 * fits it as it is:
 *
 * ```ts
 * import { DefaultAzureCredential } from "@azure/identity";
 * import { CryptographyClient } from "@azure/keyvault-keys";
 * const credential = new DefaultAzureCredential();
 * const keys = keyVaultKeys(
 *   "https://my-vault.vault.azure.net/keys/tablekit/4f5d…", // the current key version's id
 *   (keyId) => new CryptographyClient(keyId, credential),
 * );
 * const db = new TableContext({ store, encryption: { keys } });
 * ```
 *
 * Every entity write wraps a fresh data key (one Key Vault call), and every row read unwraps one
 * (one call per row not in the context's cache of recent data keys): budget Key Vault's request
 * limits accordingly.
 */
import type { KeyResolver } from "../src/index.js";

/** The Key Vault algorithm the data keys are wrapped with (RSA keys; use "A256KW" for Managed HSM AES keys). */
export const WRAP_ALGORITHM = "RSA-OAEP-256";

/** What the resolver needs of `CryptographyClient` from `@azure/keyvault-keys`. */
export interface KeyWrapClient {
  wrapKey(algorithm: typeof WRAP_ALGORITHM, key: Uint8Array): Promise<{ result: Uint8Array }>;
  unwrapKey(algorithm: typeof WRAP_ALGORITHM, encryptedKey: Uint8Array): Promise<{ result: Uint8Array }>;
}

/**
 * A key resolver over Key Vault keys: `currentKeyId` (a versioned key identifier) wraps new writes,
 * and `clientFor(keyId)` gives the client of any key id found in stored rows (one client per id, kept).
 */
export function keyVaultKeys(currentKeyId: string, clientFor: (keyId: string) => KeyWrapClient): KeyResolver {
  const clients = new Map<string, KeyWrapClient>();
  const client = (keyId: string): KeyWrapClient => {
    let found = clients.get(keyId);
    if (found === undefined) {
      found = clientFor(keyId);
      clients.set(keyId, found);
    }
    return found;
  };
  return {
    currentKeyId,
    async wrapKey(keyId, dataKey) {
      return (await client(keyId).wrapKey(WRAP_ALGORITHM, dataKey)).result;
    },
    async unwrapKey(keyId, wrapped) {
      return (await client(keyId).unwrapKey(WRAP_ALGORITHM, wrapped)).result;
    },
  };
}
