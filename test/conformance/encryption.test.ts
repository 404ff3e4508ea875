/**
 * Client-side encryption (`@Column({ encrypt: true })`, `TableContext({ encryption })`, `localKeys`,
 * `db.reencrypt`) on every store: values leave the process only as ciphertext, read back with their
 * types, fail with `EncryptionError` when moved to another row or column, survive key rotation, and
 * never appear in errors or events.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  EncryptionError,
  type EncryptionOptions,
  Entity,
  type KeyResolver,
  localKeys,
  SchemaError,
  type StoredEntity,
  StoreError,
  TableContext,
  type TableKitEvent,
  type TableStore,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { expectRejection, failureOf } from "../support/rejection.js";

const key1 = new Uint8Array(32).fill(1);
const key2 = new Uint8Array(32).fill(2);
const SECRET = "Tr0ub4dor&3-correct-horse";

@Entity({
  table: "Patients",
  partitionKey: "{ward}",
  rowKey: "p_{patientId:6}",
  indexes: { byCode: { table: "PatientsByCode", partitionKey: "{code}", rowKey: "{ward}_{patientId:6}" } },
})
class Patient {
  @Column({ type: "String" }) ward!: string;
  @Column({ type: "Int32" }) patientId!: number;
  @Column({ type: "String" }) code!: string;
  @Column({ type: "String", encrypt: true }) diagnosis!: string;
  @Column({ type: "String", encrypt: true }) notes?: string;
  @Column({ type: "Int32", encrypt: true }) score?: number;
  @Column({ type: "Int64", encrypt: true }) account?: bigint;
  @Column({ type: "Double", encrypt: true }) weight?: number;
  @Column({ type: "Boolean", encrypt: true }) insured?: boolean;
  @Column({ type: "DateTime", encrypt: true }) born?: Date;
  @Column({ type: "Guid", encrypt: true }) externalId?: string;
  @Column({ type: "Binary", encrypt: true }) scan?: Uint8Array;
  @Column({ type: "Json", encrypt: true }) allergies?: string[];
  @Column({ type: "Int32" }) age?: number;
}

@Entity({ table: "Vault", partitionKey: "{owner}", rowKey: "v_{slot:3}" })
class VaultItem {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "Int32" }) slot!: number;
  @Column({ type: "String", encrypt: true }) secret!: string;
}

@Entity({ table: "Notes{at:month}", partitionKey: "{author}", rowKey: "n_{id:3}" })
class Note {
  @Column({ type: "String" }) author!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String", encrypt: true }) text!: string;
}

/** Wide: 300 encrypted columns spread over several rows, each row's values bound to that row. */
class WideSecret {
  id!: string;
  [column: string]: unknown;
}
Column({ type: "String" })(WideSecret.prototype, "id");
for (let i = 0; i < 300; i++)
  Column({ type: "Int32", encrypt: true })(WideSecret.prototype, `m${i}` as string);
Entity({ table: "WideSecrets", partitionKey: "w", rowKey: "{id}", wide: true })(WideSecret);

function patient(patientId: number, diagnosis = SECRET): Patient {
  return Object.assign(new Patient(), { ward: "north", patientId, code: `c${patientId}`, diagnosis });
}

function fullPatient(patientId: number): Patient {
  return Object.assign(patient(patientId), {
    notes: "allergic to penicillin",
    score: -7,
    account: 9_007_199_254_740_993n,
    weight: 72.5,
    insured: true,
    born: new Date("1980-02-29T12:34:56.789Z"),
    externalId: "0f8fad5b-d9cb-469f-a165-70867728950e",
    scan: new Uint8Array([0, 1, 2, 254, 255]),
    allergies: ["penicillin", "latex"],
    age: 45,
  });
}

/** The key id of a stored envelope (byte 1 is its length, the id follows). */
function keyIdOf(value: unknown): string {
  const bytes = value as Uint8Array;
  return Buffer.from(bytes.subarray(2, 2 + (bytes[1] as number))).toString("utf8");
}

async function rawRow(store: TableStore, table: string, partitionKey: string, rowKey: string) {
  return (await store.getEntity(table, partitionKey, rowKey)) as StoredEntity;
}

describe.each(stores)("client-side encryption on %s", (_name, kind) => {
  const setup = async (keys: KeyResolver = localKeys({ k1: key1 }, "k1"), events?: TableKitEvent[]) => {
    const ctx = await freshContext(kind, [Patient], {
      encryption: { keys },
      ...(events ? { onEvent: (e: TableKitEvent) => events.push(e) } : {}),
    });
    return { ...ctx, patients: ctx.db.repository(Patient), table: `${ctx.prefix}Patients` };
  };

  it("stores every encrypted column type as ciphertext and reads each back with its type", async () => {
    const { patients, db, table } = await setup();
    const written = fullPatient(1);
    await patients.insert(written);
    const read = await patients.get({ ward: "north", patientId: 1 });
    expect({ ...read }).toEqual({ ...written });

    const raw = await rawRow(db.store, table, "north", "p_000001");
    for (const property of [
      "diagnosis",
      "notes",
      "score",
      "account",
      "weight",
      "insured",
      "born",
      "externalId",
      "scan",
      "allergies",
    ]) {
      expect(raw[property], property).toBeInstanceOf(Uint8Array);
    }
    expect(raw.age).toBe(45);
    expect(Buffer.from(raw.diagnosis as Uint8Array).includes(Buffer.from(SECRET))).toBe(false);
    expect(JSON.stringify(raw, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(
      "penicillin",
    );
  });

  it("reads encrypted columns in queries and projections, and refuses them in where and filter", async () => {
    const { patients } = await setup();
    await patients.bulkInsert([patient(1, "flu"), patient(2, "cold"), patient(3, "flu")]);
    const all = await patients.find({ ward: "north" }).toArray();
    expect(all.map((p) => p.diagnosis)).toEqual(["flu", "cold", "flu"]);
    const selected = await patients.find({ ward: "north" }).select("diagnosis").toArray();
    expect(selected.map((p) => p.diagnosis)).toEqual(["flu", "cold", "flu"]);
    const point = await patients.get({ ward: "north", patientId: 2 }, { select: ["diagnosis"] });
    expect(point?.diagnosis).toBe("cold");

    expect(await failureOf(() => patients.find({ ward: "north" }).where({ diagnosis: "flu" }))).toMatchObject(
      {
        rule: "encrypted-filter",
        field: "diagnosis",
      },
    );
    expect(await failureOf(() => patients.find({ ward: "north" }).where("score", "gt", 1))).toBeInstanceOf(
      ValidationError,
    );
    expect(
      await failureOf(() => patients.find({ ward: "north" }).filter("diagnosis eq 'flu'")),
    ).toMatchObject({
      rule: "encrypted-filter",
    });
    // The name inside a string literal is a value, not the column.
    expect(await patients.find({ ward: "north" }).filter("code eq 'diagnosis'").toArray()).toEqual([]);
  });

  it("gives every entity write its own data key", async () => {
    const { patients, db, table } = await setup();
    await patients.bulkInsert([patient(1), patient(2)]);
    await patients.upsert(patient(2));
    const one = await rawRow(db.store, table, "north", "p_000001");
    const two = await rawRow(db.store, table, "north", "p_000002");
    const header = (v: unknown) => Buffer.from((v as Uint8Array).subarray(0, 2 + 2 + 3 + 40)).toString("hex");
    expect(header(one.diagnosis)).not.toBe(header(two.diagnosis));
    expect(Buffer.from(one.diagnosis as Uint8Array).equals(Buffer.from(two.diagnosis as Uint8Array))).toBe(
      false,
    );
  });

  it("fails with EncryptionError, naming column and keys but not the value, when a value is moved", async () => {
    const { patients, db, table } = await setup();
    await patients.insert(Object.assign(patient(1), { notes: "other secret" }));
    await patients.insert(patient(2, "harmless"));
    const one = await rawRow(db.store, table, "north", "p_000001");

    // Row 1's diagnosis copied into row 2: same column, other row.
    await db.store.update(
      table,
      { partitionKey: "north", rowKey: "p_000002", diagnosis: one.diagnosis },
      "merge",
      "*",
    );
    const moved = await expectRejection(patients.get({ ward: "north", patientId: 2 }), EncryptionError, {
      column: "diagnosis",
      table,
      partitionKey: "north",
      rowKey: "p_000002",
    });
    expect(moved.message).not.toContain(SECRET);
    expect(moved.message).not.toContain("harmless");

    // Row 1's notes copied into its own diagnosis: same row, other column.
    await db.store.update(
      table,
      { partitionKey: "north", rowKey: "p_000001", diagnosis: one.notes },
      "merge",
      "*",
    );
    await expectRejection(patients.get({ ward: "north", patientId: 1 }), EncryptionError, {
      column: "diagnosis",
    });

    // A flipped ciphertext bit, and a plaintext value where ciphertext belongs.
    const tampered = new Uint8Array(one.notes as Uint8Array);
    tampered[tampered.length - 20] = (tampered[tampered.length - 20] as number) ^ 1;
    await db.store.update(
      table,
      { partitionKey: "north", rowKey: "p_000001", diagnosis: one.diagnosis, notes: tampered },
      "merge",
      "*",
    );
    await expectRejection(patients.get({ ward: "north", patientId: 1 }), EncryptionError, {
      column: "notes",
    });
    await db.store.update(table, { partitionKey: "north", rowKey: "p_000001", notes: "plain" }, "merge", "*");
    await expectRejection(patients.get({ ward: "north", patientId: 1 }), EncryptionError, {
      column: "notes",
    });
  });

  it("keeps a merge of some encrypted columns readable beside the others (patch)", async () => {
    const { patients } = await setup();
    await patients.insert(Object.assign(patient(1), { notes: "first notes", score: 3 }));
    await patients.patch({ ward: "north", patientId: 1 }, { notes: "second notes" });
    const read = await patients.get({ ward: "north", patientId: 1 });
    expect(read).toMatchObject({ diagnosis: SECRET, notes: "second notes", score: 3 });
  });

  it("encrypts index copies under their own keys and reads them through the index", async () => {
    const { patients, db, prefix } = await setup();
    await patients.insert(patient(1));
    const copy = await rawRow(db.store, `${prefix}PatientsByCode`, "c1", "north_000001");
    expect(copy.diagnosis).toBeInstanceOf(Uint8Array);
    const found = await patients.index("byCode").get({ code: "c1", ward: "north", patientId: 1 });
    expect(found?.diagnosis).toBe(SECRET);
    expect(await db.verifyIndexes(Patient)).toMatchObject({ missing: [], stale: [], orphans: [] });
  });

  it("encrypts entities written in a transaction", async () => {
    const { db, prefix } = await setup();
    await db.ensureTables(VaultItem);
    const item = (slot: number) =>
      Object.assign(new VaultItem(), { owner: "ann", slot, secret: `${SECRET}${slot}` });
    await db.transaction((tx) => {
      tx.insert(item(1));
      tx.insert(item(2));
    });
    const raw = await rawRow(db.store, `${prefix}Vault`, "ann", "v_001");
    expect(raw.secret).toBeInstanceOf(Uint8Array);
    const read = await db.repository(VaultItem).find({ owner: "ann" }).toArray();
    expect(read.map((v) => v.secret)).toEqual([`${SECRET}1`, `${SECRET}2`]);
  });

  it("records eventual transactions with encrypted columns sealed, and repair applies them", async () => {
    const { counter, prefix } = await setup();
    let failNext = true;
    const failing: TableStore = new Proxy(counter, {
      get(target, property, receiver) {
        if (property !== "insert") return Reflect.get(target, property, receiver);
        return async (...args: Parameters<TableStore["insert"]>) => {
          if (failNext && args[0] === `${prefix}Vault`) {
            failNext = false;
            throw new StoreError("injected fault after the intent was recorded", { statusCode: 500 });
          }
          return target.insert(...args);
        };
      },
    });
    const db = new TableContext({
      store: failing,
      tablePrefix: prefix,
      retry: false,
      encryption: { keys: localKeys({ k1: key1 }, "k1") },
    });
    await db.ensureTables(VaultItem);
    const item = Object.assign(new VaultItem(), { owner: "eve", slot: 1, secret: SECRET });
    await expectRejection(
      db.eventually((tx) => tx.insert(item)),
      StoreError,
    );
    const log = await counter.queryPage(`${prefix}TablekitIntents`, {});
    expect(log.items.length).toBeGreaterThan(0);
    expect(JSON.stringify(log.items)).not.toContain(SECRET);
    await db.repair();
    expect((await rawRow(counter, `${prefix}Vault`, "eve", "v_001")).secret).toBeInstanceOf(Uint8Array);
    expect((await db.repository(VaultItem).get({ owner: "eve", slot: 1 }))?.secret).toBe(SECRET);
  });

  it("encrypts wide entities row by row", async () => {
    const { db } = await setup();
    await db.ensureTables(WideSecret);
    const wide = Object.assign(new WideSecret(), { id: "a" });
    for (let i = 0; i < 300; i++) wide[`m${i}`] = i * 7;
    await db.repository(WideSecret).insert(wide);
    const rows = (await db.store.queryPage(`${db.repository(WideSecret).table}`, {})).items;
    expect(rows.length).toBeGreaterThan(1);
    const columns = rows.flatMap((row) => Object.keys(row).filter((name) => /^m[0-9]+$/.test(name)));
    expect(columns).toHaveLength(300);
    for (const row of rows)
      for (const name of Object.keys(row))
        if (/^m[0-9]+$/.test(name)) expect(row[name], name).toBeInstanceOf(Uint8Array);
    expect({ ...(await db.repository(WideSecret).get({ id: "a" })) }).toEqual({ ...wide });
  });

  it("reads rows of old keys after rotation and rewrites them under the current key with reencrypt", async () => {
    const { db, counter, prefix, table } = await setup(localKeys({ k1: key1 }, "k1"));
    await db.repository(Patient).bulkInsert([1, 2, 3].map(fullPatient));

    const rotated = new TableContext({
      store: counter,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k2: key2, k1: key1 }, "k2") },
    });
    const patients = rotated.repository(Patient);
    expect((await patients.get({ ward: "north", patientId: 2 }))?.diagnosis).toBe(SECRET);
    await patients.insert(patient(4));
    expect(keyIdOf((await rawRow(counter, table, "north", "p_000004")).diagnosis)).toBe("k2");

    await expect(rotated.reencrypt(Patient, { scan: true })).resolves.toEqual({
      // 4 entities and their 4 index copies; the k2 entity and its copy need nothing.
      scanned: 8,
      reencrypted: 6,
      skipped: 0,
      blobsResealed: 0,
    });
    for (const id of [1, 2, 3]) {
      const raw = await rawRow(counter, table, "north", `p_00000${id}`);
      expect(keyIdOf(raw.diagnosis)).toBe("k2");
      expect(keyIdOf(raw.scan)).toBe("k2");
    }
    await expect(rotated.reencrypt(Patient, { scan: true })).resolves.toEqual({
      scanned: 8,
      reencrypted: 0,
      skipped: 0,
      blobsResealed: 0,
    });

    // k1 is retired: a context holding only k2 reads everything; one holding only k1 reads nothing new.
    const retired = new TableContext({
      store: counter,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k2: key2 }, "k2") },
    });
    const again = await retired.repository(Patient).find({ ward: "north" }).toArray();
    expect(again.map((p) => ({ ...p }))).toEqual(
      [1, 2, 3].map((id) => ({ ...fullPatient(id) })).concat({ ...patient(4) }),
    );
    const stale = new TableContext({
      store: counter,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k1: key1 }, "k1") },
    });
    const unknown = await expectRejection(
      stale.repository(Patient).get({ ward: "north", patientId: 1 }),
      EncryptionError,
    );
    expect(unknown.message).toContain("'k2'");
  });

  it("encrypts rows of a table per period, bound to the period's table, and rotates them all", async () => {
    const { counter, prefix } = await setup();
    const v1 = new TableContext({
      store: counter,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k1: key1 }, "k1") },
    });
    const note = (month: number) =>
      Object.assign(new Note(), {
        author: "ann",
        id: 1,
        at: new Date(Date.UTC(2026, month, 3)),
        text: `${SECRET} ${month}`,
      });
    await v1.repository(Note).insert(note(9));
    await v1.repository(Note).insert(note(10));
    const october = await rawRow(counter, `${prefix}Notes202610`, "ann", "n_001");
    expect(october.text).toBeInstanceOf(Uint8Array);

    const v2 = new TableContext({
      store: counter,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k1: key1, k2: key2 }, "k2") },
    });
    expect(await v2.reencrypt(Note, { scan: true })).toEqual({
      scanned: 2,
      reencrypted: 2,
      skipped: 0,
      blobsResealed: 0,
    });
    const november = await rawRow(counter, `${prefix}Notes202611`, "ann", "n_001");
    expect(keyIdOf(november.text)).toBe("k2");
    // October's value copied into November's table at the same keys fails: the table is bound too.
    const rotated = await rawRow(counter, `${prefix}Notes202610`, "ann", "n_001");
    await counter.upsert(
      `${prefix}Notes202611`,
      { partitionKey: "ann", rowKey: "n_001", text: rotated.text },
      "merge",
    );
    await expectRejection(
      v2.repository(Note).get({ author: "ann", id: 1, at: note(10).at }),
      EncryptionError,
      {
        column: "text",
      },
    );
  });

  it("lets a concurrent write win over reencrypt", async () => {
    const { db, counter, prefix } = await setup(localKeys({ k1: key1 }, "k1"));
    await db.repository(Patient).insert(patient(1));
    let raced = false;
    const racing: TableStore = new Proxy(counter, {
      get(target, property, receiver) {
        if (property !== "update") return Reflect.get(target, property, receiver);
        return async (...args: Parameters<TableStore["update"]>) => {
          if (!raced && args[1].rowKey === "p_000001") {
            raced = true;
            // Another writer changes the row between reencrypt's read and its rewrite.
            await db.repository(Patient).upsert(patient(1, "changed meanwhile"));
          }
          return target.update(...args);
        };
      },
    });
    const rotated = new TableContext({
      store: racing,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k2: key2, k1: key1 }, "k2") },
    });
    const result = await rotated.reencrypt(Patient, { scan: true });
    expect(raced).toBe(true);
    expect(result.skipped).toBe(1);
    expect((await rotated.repository(Patient).get({ ward: "north", patientId: 1 }))?.diagnosis).toBe(
      "changed meanwhile",
    );
  });

  it("refuses encrypted entities without keys before any request, and reencrypt without scan", async () => {
    const { counter, prefix } = await setup();
    const keyless = new TableContext({ store: counter, tablePrefix: prefix });
    counter.reset();
    expect(await failureOf(() => keyless.repository(Patient))).toMatchObject({ rule: "encryption-keys" });
    await expectRejection(
      keyless.transaction((tx) => tx.insert(patient(9))),
      ValidationError,
      {
        rule: "encryption-keys",
      },
    );
    await expectRejection(
      keyless
        .dynamic("Patients")
        .upsert({ partitionKey: "north", rowKey: "p_000009", EntityType: "Patient@1", diagnosis: "x" }),
      ValidationError,
      { rule: "encryption-keys" },
    );
    expect(counter.requests).toBe(0);
    const { db } = await setup();
    // @ts-expect-error reencrypt scans the tables only when asked to
    await expectRejection(db.reencrypt(Patient, {}), ValidationError, { rule: "reencrypt-scan" });
  });

  it("keeps values out of errors and events", async () => {
    const events: TableKitEvent[] = [];
    const { patients, counter } = await setup(localKeys({ k1: key1 }, "k1"), events);
    await patients.insert(patient(1));
    counter.reset();
    // 30,000 characters are within the String limit, but 90,000 bytes of UTF-8 exceed a Binary property.
    const tooLong = "€".repeat(30_000);
    const big = await expectRejection(patients.insert(patient(2, tooLong)), ValidationError, {
      rule: "encrypted-size",
      field: "diagnosis",
    });
    expect(counter.requests).toBe(0);
    const wrongType = await failureOf(() => patients.insert(Object.assign(patient(3), { score: 1.2345 })));
    expect(wrongType).toBeInstanceOf(ValidationError);
    expect(wrongType.message).not.toContain("1.2345");
    const notInt = await failureOf(() =>
      patients.insert(Object.assign(patient(3), { score: 4_000_000_000 })),
    );
    expect(notInt.message).not.toContain("4000000000");
    const text = JSON.stringify([events, big.message, wrongType.message], (_k, v) =>
      v instanceof Error ? v.message : v,
    );
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("€€");
  });
});

describe("encryption options and schema", () => {
  it("validates local keys", async () => {
    expect(await failureOf(() => localKeys({ k1: new Uint8Array(16) }, "k1"))).toMatchObject({
      rule: "encryption-key",
      field: "k1",
    });
    expect(await failureOf(() => localKeys({ k1: key1 }, "k2"))).toMatchObject({ rule: "encryption-key" });
    expect(await failureOf(() => localKeys({ "": key1 }, ""))).toMatchObject({ rule: "encryption-key-id" });
    expect(await failureOf(() => localKeys({ ["k".repeat(256)]: key1 }, "k".repeat(256)))).toBeInstanceOf(
      ValidationError,
    );
    // The message names the id and the size, never key bytes.
    const error = await failureOf(() => localKeys({ k1: new Uint8Array(31).fill(7) }, "k1"));
    expect(error.message).toContain("31 bytes");
  });

  it("validates the context's encryption option", async () => {
    const store = stores[0]?.[1].create() as TableStore;
    for (const encryption of [
      {},
      { keys: {} },
      { keys: { currentKeyId: "", wrapKey() {}, unwrapKey() {} } },
    ]) {
      expect(
        await failureOf(
          () => new TableContext({ store, encryption: encryption as unknown as EncryptionOptions }),
        ),
      ).toBeInstanceOf(ValidationError);
    }
  });

  it("refuses encrypted columns in keys, period tables and index keys at definition", async () => {
    const define = (options: object, column: object = { type: "String", encrypt: true }) =>
      failureOf(() => {
        @Entity({ table: "Secrets", partitionKey: "{a}", rowKey: "r_{b}", ...options })
        class Secret {
          @Column(column as { type: "String" }) a!: string;
          @Column({ type: "String" }) b!: string;
          @Column({ type: "DateTime", encrypt: true }) at!: Date;
          @Column({ type: "Int32", encrypt: true }) n!: number;
        }
        return Secret;
      });
    expect(await define({})).toBeInstanceOf(SchemaError);
    expect(await define({ rowKey: "r_{b}_{a}" })).toBeInstanceOf(SchemaError);
    expect(await define({ table: "Secrets{at:month}" }, { type: "String" })).toBeInstanceOf(SchemaError);
    expect(await define({ indexes: { byAt: { rowKey: "at_{at}" } } }, { type: "String" })).toBeInstanceOf(
      SchemaError,
    );
    expect(
      await define({ summaries: { perA: { rowKey: "sum", sum: { n: "total" } } } }, { type: "String" }),
    ).toMatchObject({ message: expect.stringContaining("encrypted") });
    expect(await define({}, { type: "String", encrypt: "yes" })).toMatchObject({
      message: expect.stringContaining("encrypt"),
    });
  });
});
