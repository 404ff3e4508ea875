/**
 * Blind indexes (`@Column({ encrypt: true, blindIndex })`, `encryption.blindIndexKey`) on every store:
 * equality lookups on encrypted columns are exact (false matches of a truncated blind value dropped),
 * rows and index keys hold neither the plaintext nor its unkeyed hash, equal plaintexts in two columns
 * or tables store unrelated values, other operators are refused before any request, a unique index
 * over an encrypted email finds its user and refuses a second one, and lookups survive a data-key
 * rotation (blind values unchanged) and a blind-index key rotation (`previousBlindIndexKeys`).
 */
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  Column,
  type ColumnOptions,
  Entity,
  type EntityOptions,
  localKeys,
  maxSafeBlindIndexBits,
  SchemaError,
  type StoredEntity,
  TableContext,
  type TableContextOptions,
  type TableStore,
  UniqueConstraintError,
  ValidationError,
} from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { readAll } from "../support/read-all.js";
import { expectRejection } from "../support/rejection.js";
import { seededRandom } from "../support/seeded-random.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";

const dataKey1 = new Uint8Array(32).fill(1);
const dataKey2 = new Uint8Array(32).fill(2);
const blindKey = new Uint8Array(32).fill(7);
const blindKey2 = new Uint8Array(32).fill(8);

/** 300 users in one partition, the email's blind value cut to 8 bits: false matches are certain. */
@Entity({ table: "Members", partitionKey: "{club}", rowKey: "m_{id:4}" })
class Member {
  @Column({ type: "String" }) club!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", encrypt: true, blindIndex: { bits: 8, expectedRows: 300 } }) email!: string;
  /** The same plaintext as `email` for some rows: stored under an unrelated blind value. */
  @Column({ type: "String", encrypt: true, blindIndex: true }) backupEmail?: string;
  @Column({ type: "Int32", encrypt: true, blindIndex: { bits: 8 } }) pin?: number;
  @Column({ type: "Int64", encrypt: true, blindIndex: true }) account?: bigint;
  @Column({ type: "Guid", encrypt: true, blindIndex: true }) externalId?: string;
}

/** A unique index over an encrypted email, in a table of its own: its keys hold the full blind value. */
@Entity({
  table: "Accounts",
  partitionKey: "{tenant}",
  rowKey: "a_{id:4}",
  indexes: {
    byEmail: { table: "AccountsByEmail", partitionKey: "email", rowKey: "{email}", unique: true },
    byPhone: { rowKey: "phone_{phone}", unique: false },
  },
})
class Account {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String", encrypt: true, blindIndex: true }) email!: string;
  @Column({ type: "String", encrypt: true, blindIndex: true }) phone!: string;
}

/** For the Cosmos-flavoured store, which reserves `id`. */
@Entity({ table: "Guests", partitionKey: "{club}", rowKey: "g_{no:4}" })
class Guest {
  @Column({ type: "String" }) club!: string;
  @Column({ type: "Int32" }) no!: number;
  @Column({ type: "Int32", encrypt: true, blindIndex: { bits: 8 } }) pin!: number;
}

function emailOf(i: number): string {
  return `user${i}@example.com`;
}

function member(id: number): Member {
  return Object.assign(new Member(), {
    club: "chess",
    id,
    name: `Member ${id}`,
    email: emailOf(id),
    ...(id % 3 === 0 ? { backupEmail: emailOf(id) } : {}),
    pin: id % 50,
    account: BigInt(id) * 1_000_000_007n,
    externalId: `00000000-0000-4000-8000-${String(id).padStart(12, "0")}`,
  });
}

function account(tenant: string, id: number, email: string, phone = `+1555${id}`): Account {
  return Object.assign(new Account(), { tenant, id, email, phone });
}

/** Every hex and base64 spelling of the unkeyed SHA-256 of a text, and the text itself. */
function forbiddenSpellings(text: string): string[] {
  const digest = createHash("sha256").update(text, "utf8").digest();
  return [text, digest.toString("hex"), digest.toString("base64"), digest.toString("base64url")].concat(
    [4, 8, 16].map((n) => digest.toString("hex").slice(0, n)).filter((prefix) => prefix.length > 6),
  );
}

function rowText(row: StoredEntity): string {
  return JSON.stringify(row, (_key, value) =>
    typeof value === "bigint"
      ? String(value)
      : value instanceof Uint8Array
        ? Buffer.from(value).toString("latin1")
        : value,
  );
}

/** Another context (other keys) on the same tables. */
function reopen(store: TableStore, prefix: string, options: Pick<TableContextOptions, "encryption">) {
  return { db: new TableContext({ store, tablePrefix: prefix, ...options }) };
}

async function rawRows(store: TableStore, table: string): Promise<StoredEntity[]> {
  return readAll(store, table);
}

describe.each(stores)("blind indexes on %s", (_name, kind) => {
  const setup = async (blindIndexKey: Uint8Array = blindKey, keys = localKeys({ k1: dataKey1 }, "k1")) =>
    freshContext(kind, [Member, Account], {
      encryption: { keys, blindIndexKey },
    });

  it("finds each of 300 users exactly with 8-bit blind values, where false matches are certain", async () => {
    const { db, prefix } = await setup();
    const members = db.repository(Member);
    await members.bulkInsert(Array.from({ length: 300 }, (_, i) => member(i)));

    // 8 bits for 300 rows: some blind values are shared, so the service returns false matches.
    const raw = await rawRows(db.store, `${prefix}Members`);
    const byBlind = new Map<string, number>();
    for (const row of raw)
      byBlind.set(String(row._tkB_email), (byBlind.get(String(row._tkB_email)) ?? 0) + 1);
    expect(Math.max(...byBlind.values())).toBeGreaterThan(1);
    expect([...byBlind.keys()].every((value) => /^[0-9a-f]{2}$/.test(value))).toBe(true);

    for (let i = 0; i < 300; i++) {
      const found = await members.find({ club: "chess" }).where("email", "eq", emailOf(i)).toArray();
      expect(found.map((m) => m.id)).toEqual([i]);
    }
    const random = seededRandom(32);
    for (let n = 0; n < 20; n++) {
      const i = Math.floor(random() * 300);
      const byObject = await members
        .find({ club: "chess" })
        .where({ email: emailOf(i) })
        .first();
      expect(byObject?.id).toBe(i);
      expect(byObject?.email).toBe(emailOf(i));
    }
    expect(
      await members.find({ club: "chess" }).where("email", "eq", "nobody@example.com").toArray(),
    ).toEqual([]);
    // Int32, Int64 and Guid columns too; a Guid in any case.
    const pins = await members.find({ club: "chess" }).where("pin", "eq", 7).toArray();
    expect(pins.map((m) => m.id)).toEqual([7, 57, 107, 157, 207, 257]);
    expect(
      (
        await members
          .find({ club: "chess" })
          .where({ account: 42n * 1_000_000_007n })
          .toArray()
      ).map((m) => m.id),
    ).toEqual([42]);
    const guid = `00000000-0000-4000-8000-${String(123).padStart(12, "0")}`.toUpperCase();
    expect(
      (await members.find({ club: "chess" }).where("externalId", "eq", guid).toArray()).map((m) => m.id),
    ).toEqual([123]);
  });

  it("counts matches, not candidates, in take, page sizes and first, and keeps projections", async () => {
    const { db } = await setup();
    const members = db.repository(Member);
    await members.bulkInsert(Array.from({ length: 300 }, (_, i) => member(i)));
    const query = members.find({ club: "chess" }).where("pin", "eq", 7);
    expect((await query.take(2).toArray()).map((m) => m.id)).toEqual([7, 57]);
    const first = await query.page({ size: 4 });
    expect(first.items.map((m) => m.id)).toEqual([7, 57, 107, 157]);
    const second = await query.page({ size: 4, continuation: first.continuation as string });
    expect(second.items.map((m) => m.id)).toEqual([207, 257]);
    expect((await query.first())?.id).toBe(7);
    // A projection without the matched column: still exact, and the column is left out again.
    const names = await members
      .find({ club: "chess" })
      .where("email", "eq", emailOf(5))
      .select("name")
      .toArray();
    expect(names).toHaveLength(1);
    expect(names[0]?.name).toBe("Member 5");
    expect((names[0] as unknown as Member).email).toBeUndefined();
  });

  it("stores neither the plaintext nor its unkeyed SHA-256, and equal plaintexts in two columns differ", async () => {
    const { db, prefix } = await setup();
    await db.repository(Member).insert(member(3));
    await db.repository(Account).insert(account("t1", 3, emailOf(3)));
    const [row] = await rawRows(db.store, `${prefix}Members`);
    const text = rowText(row as StoredEntity);
    for (const spelling of forbiddenSpellings(emailOf(3))) expect(text).not.toContain(spelling);
    expect(row?.email).toBeInstanceOf(Uint8Array);
    // Same plaintext in email and backupEmail (Members) and in Accounts.email: three unrelated values.
    const accountRow = (await rawRows(db.store, `${prefix}Accounts`)).find((r) => r.rowKey === "a_0003");
    const values = [row?._tkB_email, row?._tkB_backupEmail, accountRow?._tkB_email].map(String);
    expect(values[0]).toMatch(/^[0-9a-f]{2}$/);
    expect(values[1]).toMatch(/^[0-9a-f]{4}$/);
    expect(values[1]?.slice(0, 2)).not.toBe(values[0]);
    expect(values[2]).not.toBe(values[1]);
  });

  it("refuses other operators and a missing blind-index key before any request", async () => {
    const { db, counter } = await setup();
    const members = db.repository(Member);
    for (const op of ["gt", "ne", "lt", "ge", "le"] as const) {
      const error = await expectRejection(
        Promise.resolve().then(() => members.find({ club: "chess" }).where("email", op, "a").toArray()),
        ValidationError,
      );
      expect(error.message).toContain("equality only");
      expect(error.message).not.toContain("user");
    }
    expect(counter.requests).toBe(0);
    const { db: keyless } = reopen(db.store, "x", {
      encryption: { keys: localKeys({ k1: dataKey1 }, "k1") },
    });
    const refused = await expectRejection(
      Promise.resolve().then(() => keyless.repository(Member)),
      ValidationError,
    );
    expect(refused.message).toContain("blindIndexKey");
  });

  it("a unique index over an encrypted email finds the user, refuses a second one, and keeps no plaintext in keys", async () => {
    const { db, prefix } = await setup();
    const accounts = db.repository(Account);
    await accounts.insert(account("t1", 1, "ann@example.com"));
    await accounts.insert(account("t1", 2, "bob@example.com"));
    const found = await accounts.index("byEmail").get({ email: "ann@example.com" });
    expect(found?.id).toBe(1);
    expect(found?.email).toBe("ann@example.com");
    expect(await accounts.index("byEmail").get({ email: "eve@example.com" })).toBeUndefined();
    await expectRejection(accounts.insert(account("t2", 9, "ann@example.com")), UniqueConstraintError);
    expect(await accounts.get({ tenant: "t2", id: 9 })).toBeUndefined();
    // A same-partition index over an encrypted phone.
    expect((await accounts.index("byPhone").get({ tenant: "t1", phone: "+15552" }))?.id).toBe(2);

    const copies = await rawRows(db.store, `${prefix}AccountsByEmail`);
    expect(copies).toHaveLength(2);
    const sameTable = await rawRows(db.store, `${prefix}Accounts`);
    for (const row of [...copies, ...sameTable]) {
      for (const plain of ["ann@example.com", "bob@example.com", "+15551", "+15552"]) {
        for (const spelling of forbiddenSpellings(plain)) {
          expect(row.partitionKey).not.toContain(spelling);
          expect(row.rowKey).not.toContain(spelling);
          expect(rowText(row)).not.toContain(spelling);
        }
      }
    }
    // The key holds the untruncated HMAC: 64 hex digits.
    expect(copies.map((row) => row.rowKey).every((key) => /^[0-9a-f]{64}$/.test(key))).toBe(true);
  });

  it("lookups work after a data-key rotation, and the blind values stay as they were", async () => {
    const { db, prefix } = await setup();
    await db.repository(Account).insert(account("t1", 1, "ann@example.com"));
    await db.repository(Member).insert(member(4));
    const before = await rawRows(db.store, `${prefix}Members`);
    const rotated = reopen(db.store, prefix, {
      encryption: { keys: localKeys({ k2: dataKey2, k1: dataKey1 }, "k2"), blindIndexKey: blindKey },
    });
    const result = await rotated.db.reencrypt(Member, { scan: true });
    expect(result.reencrypted).toBe(1);
    expect(result.blindRewritten).toBeUndefined();
    await rotated.db.reencrypt(Account, { scan: true });
    const after = await rawRows(db.store, `${prefix}Members`);
    expect(after[0]?.etag).not.toBe(before[0]?.etag);
    for (const property of ["_tkB_email", "_tkB_pin", "_tkB_account", "_tkB_externalId"])
      expect(after[0]?.[property], property).toBe(before[0]?.[property]);
    // Old data key gone: everything still reads and is found.
    const fresh = reopen(db.store, prefix, {
      encryption: { keys: localKeys({ k2: dataKey2 }, "k2"), blindIndexKey: blindKey },
    });
    const members = fresh.db.repository(Member);
    expect(
      (
        await members
          .find({ club: "chess" })
          .where({ email: emailOf(4) })
          .toArray()
      ).map((m) => m.id),
    ).toEqual([4]);
    expect((await fresh.db.repository(Account).index("byEmail").get({ email: "ann@example.com" }))?.id).toBe(
      1,
    );
  });

  it("rotates the blind-index key: found under both keys until db.reencrypt rewrites every entity", async () => {
    const { db, prefix } = await setup();
    await db.repository(Account).insert(account("t1", 1, "ann@example.com"));
    await db.repository(Member).bulkInsert([member(1), member(2)]);
    const rotating = reopen(db.store, prefix, {
      encryption: {
        keys: localKeys({ k1: dataKey1 }, "k1"),
        blindIndexKey: blindKey2,
        previousBlindIndexKeys: [blindKey],
      },
    });
    const accounts = rotating.db.repository(Account);
    const members = rotating.db.repository(Member);
    // Not yet rewritten: found under the previous key.
    expect((await accounts.index("byEmail").get({ email: "ann@example.com" }))?.id).toBe(1);
    expect(
      (
        await members
          .find({ club: "chess" })
          .where({ email: emailOf(2) })
          .toArray()
      ).map((m) => m.id),
    ).toEqual([2]);
    // A row written now is under the new key, and found too.
    await members.insert(member(3));
    expect(
      (
        await members
          .find({ club: "chess" })
          .where({ email: emailOf(3) })
          .toArray()
      ).map((m) => m.id),
    ).toEqual([3]);

    expect((await rotating.db.reencrypt(Member, { scan: true })).blindRewritten).toBe(3);
    expect((await rotating.db.reencrypt(Account, { scan: true })).blindRewritten).toBe(1);
    // The old key retired: every row and index key is under the new one.
    const done = reopen(db.store, prefix, {
      encryption: { keys: localKeys({ k1: dataKey1 }, "k1"), blindIndexKey: blindKey2 },
    });
    for (const id of [1, 2, 3]) {
      const found = await done.db
        .repository(Member)
        .find({ club: "chess" })
        .where({ email: emailOf(id) })
        .toArray();
      expect(found.map((m) => m.id)).toEqual([id]);
    }
    expect((await done.db.repository(Account).index("byEmail").get({ email: "ann@example.com" }))?.id).toBe(
      1,
    );
    const copies = await rawRows(db.store, `${prefix}AccountsByEmail`);
    expect(copies).toHaveLength(1);
  });
});

describe.each(unsortedStoreKinds.map((kind) => [kind.name, kind] as const))(
  "blind indexes on an unsorted store, %s",
  (_name, kind) => {
    it("counts matches in take and first, in key order, though results come unsorted", async () => {
      const db = new TableContext({
        store: kind.create(),
        encryption: { keys: localKeys({ k1: dataKey1 }, "k1"), blindIndexKey: blindKey },
      });
      await db.ensureTables(Guest);
      const guests = db.repository(Guest);
      await guests.bulkInsert(
        Array.from({ length: 300 }, (_, no) =>
          Object.assign(new Guest(), { club: "chess", no, pin: no % 50 }),
        ),
      );
      const query = guests.find({ club: "chess" }).where("pin", "eq", 7);
      expect((await query.take(3).toArray()).map((g) => g.no)).toEqual([7, 57, 107]);
      expect((await query.first())?.no).toBe(7);
      expect((await query.toArray()).map((g) => g.no)).toEqual([7, 57, 107, 157, 207, 257]);
    });
  },
);

describe("blind value format", () => {
  it("is HMAC-SHA-256 under a per-table, per-column key, over a type tag and the canonical text", async () => {
    const { BlindIndex } = await import("../../src/repository/pipeline/encryption/blind-index.js");
    const { getEntityModel } = await import("../../src/schema/entity-model.js");
    const model = getEntityModel(Member);
    const blind = new BlindIndex(blindKey);
    const column = (field: string) => model.columnsByField.get(field) as never;
    // Recomputed from the documented format, independently of the implementation.
    const columnKey = createHmac("sha256", blindKey).update("tablekit-blind-v1|Members|email").digest();
    const full = createHmac("sha256", columnKey).update("String:Ann@Example.com").digest("hex");
    expect(blind.keyText(model, column("email"), "Ann@Example.com")).toBe(full);
    expect(blind.stored(model, column("email"), "Ann@Example.com")).toBe(full.slice(0, 2));
    // 16 bits by default (backupEmail): four hex digits.
    expect(blind.stored(model, column("backupEmail"), "x")).toHaveLength(4);
    // Int32 5 and Int64 5 differ in their type tag; a Guid is taken in lower case.
    const pinKey = createHmac("sha256", blindKey).update("tablekit-blind-v1|Members|pin").digest();
    expect(blind.keyText(model, column("pin"), 5)).toBe(
      createHmac("sha256", pinKey).update("Int32:5").digest("hex"),
    );
    expect(blind.keyText(model, column("pin"), 5)).not.toBe(
      createHmac("sha256", pinKey).update("Int64:5").digest("hex"),
    );
    const guid = "0F8FAD5B-D9CB-469F-A165-70867728950E";
    expect(blind.keyText(model, column("externalId"), guid)).toBe(
      blind.keyText(model, column("externalId"), guid.toLowerCase()),
    );
    // No normalisation of strings.
    expect(blind.keyText(model, column("email"), "a")).not.toBe(blind.keyText(model, column("email"), "A"));
  });
});

describe("blind index definitions", () => {
  const define =
    (options: ColumnOptions, extra: Record<string, unknown> = {}) =>
    () => {
      class Probe {
        key!: string;
        value?: unknown;
      }
      Column({ type: "String" })(Probe.prototype, "key");
      Column(options)(Probe.prototype, "value");
      Entity({ table: "Probes", partitionKey: "p", rowKey: "{key}", ...extra } as EntityOptions)(Probe);
    };

  it("follows CipherSweet's planner for the safe maximum: R / 2^bits stays at least 2", () => {
    // Independently: the smallest L with R / 2^L <= 2.
    expect(maxSafeBlindIndexBits(300)).toBe(8);
    expect(maxSafeBlindIndexBits(1_000_000)).toBe(19);
    expect(maxSafeBlindIndexBits(5)).toBe(2);
    expect(maxSafeBlindIndexBits(2 ** 20)).toBe(19);
    expect(maxSafeBlindIndexBits(2 ** 20 + 1)).toBe(20);
  });

  it("refuses bits above that maximum, and every misuse, with a SchemaError that says why", () => {
    const cases: Array<[ColumnOptions, RegExp]> = [
      [
        { type: "String", encrypt: true, blindIndex: { bits: 9, expectedRows: 300 } },
        /safe maximum of 8 bits for 300 rows/,
      ],
      [{ type: "String", blindIndex: true }, /encrypt: true/],
      [{ type: "Double", encrypt: true, blindIndex: true }, /"String", "Guid", "Int32" or "Int64"/],
      [{ type: "String", encrypt: true, blindIndex: { bits: 7 } }, /from 8 to 64/],
      [{ type: "String", encrypt: true, blindIndex: { bits: 65 } }, /from 8 to 64/],
      [{ type: "String", encrypt: true, blindIndex: { expectedRows: 0 } }, /positive integer/],
    ];
    for (const [options, why] of cases) {
      const error = (() => {
        try {
          define(options)();
        } catch (thrown) {
          return thrown as Error;
        }
        throw new Error(`accepted ${JSON.stringify(options)}`);
      })();
      expect(error, JSON.stringify(options)).toBeInstanceOf(SchemaError);
      expect(error.message).toMatch(why);
    }
    expect(
      define({ type: "String", encrypt: true, blindIndex: { bits: 8, expectedRows: 300 } }),
    ).not.toThrow();
    // An encrypted column without a blind index stays out of index keys.
    const unindexed = define(
      { type: "String", encrypt: true },
      {
        indexes: { byValue: { table: "ProbesByValue", partitionKey: "{value}", rowKey: "v" } },
      },
    );
    expect(unindexed).toThrow(/blindIndex: true/);
  });

  it("counts the blind value as a property of the row", () => {
    const wide = (columns: number) => () => {
      class Many {
        key!: string;
      }
      Column({ type: "String" })(Many.prototype, "key");
      for (let i = 0; i < columns; i++) Column({ type: "Int32" })(Many.prototype, `c${i}`);
      Column({ type: "String", encrypt: true, blindIndex: true })(Many.prototype, "email");
      Entity({ table: "Many", partitionKey: "p", rowKey: "{key}" })(Many);
    };
    // key + email + its blind value + EntityType: 249 more columns fill the 252.
    expect(wide(248)).not.toThrow();
    expect(wide(249)).toThrow(/a blind index one more/);
  });
});
