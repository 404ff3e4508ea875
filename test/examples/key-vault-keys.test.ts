/**
 * The Key Vault resolver example, against a stand-in `CryptographyClient` that does what Key Vault
 * does for RSA-OAEP-256 locally (node:crypto's RSA-OAEP with SHA-256): no live vault is needed.
 */
import { constants, generateKeyPairSync, privateDecrypt, publicEncrypt } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type KeyWrapClient, keyVaultKeys } from "../../examples/key-vault-keys.js";
import { Column, EncryptionError, Entity, MemoryStore, TableContext } from "../../src/index.js";
import { expectRejection } from "../support/rejection.js";

@Entity({ table: "Vaulted", partitionKey: "{owner}", rowKey: "{name}" })
class Vaulted {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", encrypt: true }) secret!: string;
}

/** A stand-in for one Key Vault RSA key version. */
function rsaKeyVersion(calls: string[]): KeyWrapClient {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const oaep = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" };
  return {
    async wrapKey(_algorithm, key) {
      calls.push("wrap");
      return { result: publicEncrypt({ key: publicKey, ...oaep }, key) };
    },
    async unwrapKey(_algorithm, encryptedKey) {
      calls.push("unwrap");
      return { result: privateDecrypt({ key: privateKey, ...oaep }, encryptedKey) };
    },
  };
}

describe("examples/key-vault-keys.ts", () => {
  it("wraps each write's data key in the vault and reads rows of older key versions", async () => {
    const calls: string[] = [];
    const versions = new Map([
      ["https://vault.example/keys/tablekit/v1", rsaKeyVersion(calls)],
      ["https://vault.example/keys/tablekit/v2", rsaKeyVersion(calls)],
    ]);
    const clientFor = (keyId: string): KeyWrapClient => {
      const client = versions.get(keyId);
      if (client === undefined) throw new RangeError(`no key version ${keyId}`);
      return client;
    };
    const store = new MemoryStore();
    const v1 = new TableContext({
      store,
      encryption: { keys: keyVaultKeys("https://vault.example/keys/tablekit/v1", clientFor) },
    });
    await v1.ensureTables(Vaulted);
    await v1
      .repository(Vaulted)
      .insert(Object.assign(new Vaulted(), { owner: "ann", name: "pin", secret: "1234" }));
    expect(calls).toEqual(["wrap"]);

    const v2 = new TableContext({
      store,
      encryption: { keys: keyVaultKeys("https://vault.example/keys/tablekit/v2", clientFor) },
    });
    expect((await v2.repository(Vaulted).get({ owner: "ann", name: "pin" }))?.secret).toBe("1234");
    expect(calls).toEqual(["wrap", "unwrap"]);
    // The RSA-2048 wrapped key (256 bytes) is stored with the value.
    const raw = await store.getEntity("Vaulted", "ann", "pin");
    expect((raw?.secret as Uint8Array | undefined)?.byteLength).toBeGreaterThan(256);

    const unknown = new TableContext({
      store,
      encryption: { keys: keyVaultKeys("https://vault.example/keys/tablekit/v3", clientFor) },
    });
    await expectRejection(
      unknown
        .repository(Vaulted)
        .insert(Object.assign(new Vaulted(), { owner: "bob", name: "pin", secret: "x" })),
      EncryptionError,
    );
  });
});
