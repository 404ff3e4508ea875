/**
 * A point read through `EncryptingStore` whose `$select` names an encrypted column but not the keys:
 * the store port returns no keys then (table-store.ts `StoreQuery.select`), yet the value is bound to
 * its row's keys, so it is opened with the keys the read asked for, and the answer still has only what
 * was selected.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, localKeys, MemoryStore } from "../../src/index.js";
import { EncryptedRowTypes } from "../../src/repository/pipeline/encryption/encrypted-row-types.js";
import { EncryptingStore } from "../../src/repository/pipeline/encryption/encrypting-store.js";
import { type EntityModel, getEntityModel } from "../../src/schema/entity-model.js";

@Entity({ table: "Vault", partitionKey: "{owner}", rowKey: "v_{slot:3}" })
class VaultItem {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "Int32" }) slot!: number;
  @Column({ type: "String", encrypt: true }) secret!: string;
}

describe("EncryptingStore point read selected without the keys", () => {
  it("opens the value with the keys asked for and returns only what was selected", async () => {
    const types = new EncryptedRowTypes("");
    types.claim(getEntityModel(VaultItem) as EntityModel);
    const inner = new MemoryStore();
    const store = new EncryptingStore(inner, types, localKeys({ k1: new Uint8Array(32).fill(7) }, "k1"));
    await store.createTable("Vault");
    await store.insert("Vault", { partitionKey: "ann", rowKey: "v_001", secret: "s3cret" });
    const raw = await inner.getEntity("Vault", "ann", "v_001");
    expect(raw?.secret).not.toBe("s3cret");
    const got = await store.getEntity("Vault", "ann", "v_001", ["secret"]);
    expect(got).toEqual({ etag: raw?.etag, secret: "s3cret" });
    expect(Object.keys(got as object).sort()).toEqual(["etag", "secret"]);
    const withRowKey = await store.getEntity("Vault", "ann", "v_001", ["secret", "RowKey"]);
    expect(Object.keys(withRowKey as object).sort()).toEqual(["etag", "rowKey", "secret"]);
    expect(withRowKey?.secret).toBe("s3cret");
  });
});
