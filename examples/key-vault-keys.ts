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
import { constants, generateKeyPairSync, privateDecrypt, publicEncrypt } from "node:crypto";
import { pathToFileURL } from "node:url";
import type { KeyResolver } from "tablekit";

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

// Run alone (`npx tsx examples/key-vault-keys.ts`), it encrypts a column with the resolver over a local
// stand-in for one Key Vault RSA key (node:crypto's RSA-OAEP with SHA-256, what RSA-OAEP-256 is), writes
// a row, and shows what is stored and what reads back.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { Column, Entity, MemoryStore, TableContext } = await import("tablekit");
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const oaep = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" };
  let calls = 0;
  const standIn: KeyWrapClient = {
    async wrapKey(_algorithm, key) {
      calls++;
      return { result: publicEncrypt({ key: publicKey, ...oaep }, key) };
    },
    async unwrapKey(_algorithm, encryptedKey) {
      calls++;
      return { result: privateDecrypt({ key: privateKey, ...oaep }, encryptedKey) };
    },
  };

  @Entity({ table: "VaultDemo", partitionKey: "{owner}", rowKey: "{name}" })
  class Secret {
    @Column({ type: "String" }) owner!: string;
    @Column({ type: "String" }) name!: string;
    @Column({ type: "String", encrypt: true }) value!: string;
  }

  const store = new MemoryStore();
  const keyId = "https://my-vault.vault.azure.net/keys/tablekit/v1";
  const db = new TableContext({ store, encryption: { keys: keyVaultKeys(keyId, () => standIn) } });
  await db.ensureTables(Secret);
  const secrets = db.repository(Secret);
  await secrets.insert(secrets.create({ owner: "ann", name: "pin", value: "1234" }));
  const stored = (await store.getEntity("VaultDemo", "ann", "pin"))?.value;
  const sealed = stored instanceof Uint8Array ? Buffer.from(stored).toString("base64") : String(stored);
  console.log(`stored value: ${sealed.slice(0, 40)}… (sealed; its data key wrapped by ${keyId})`);
  // Another context (another process, say) has no cached data key: its read unwraps through the vault.
  const reader = new TableContext({ store, encryption: { keys: keyVaultKeys(keyId, () => standIn) } });
  const read = await reader.repository(Secret).get({ owner: "ann", name: "pin" });
  console.log(
    `read back   : ${read?.value} (Key Vault calls: ${calls}, one wrap to write, one unwrap to read)`,
  );
}
