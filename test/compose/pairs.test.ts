/**
 * Issue 18's combination suite: every feature alone and every pair of features, each written
 * through every write form, with the invariants checked after each write (copies = rows,
 * summaries = recount, one blob per large value, the entity readable whole, nothing encrypted in
 * clear). Classes are declared by a factory (feature-entities.ts); values follow from (id, version)
 * and the seed picks the versions. The default run covers every combination on MemoryStore and a
 * seeded sample of pairs on Azurite and on `tablekit serve` (another draw of the seed, so the two
 * samples differ); `TABLEKIT_COMPOSE_MATRIX=full` (set by `npm run test:repeat`)
 * runs every combination on every selected store.
 *
 * Combinations that cannot be expressed: wide + expiresAt (refused by design: a wide entity keeps no
 * indexes, and expiry is found through one) and wide + changeFeed (a wide entity may fill its
 * transaction, leaving no room for its change rows); both asserted below. (Period table + hash bucket is a
 * bucketed PartitionKey in each period's table; wide + hash bucket needs the hashed field first in
 * the RowKey, which `e_{id:6}` with `{id:hash:4}` gives; the list index is in the entity's partition,
 * so with a table per period its rows live in the period's table beside the entities they list, and
 * with a hash bucket in the entity's bucket partition.) A large column that is itself encrypted is one
 * column with two features, not a pair of features: test/large/encrypted.test.ts covers it.
 */
import { describe, expect, it } from "vitest";
import {
  type EntityOptions,
  MemoryStore,
  type Repository,
  SchemaError,
  TableContext,
  TableKitError,
  ValidationError,
} from "../../src/index.js";
import { failureOf } from "../support/rejection.js";
import { seededRandom, shuffled, testSeed } from "../support/seeded-random.js";
import { uniquePrefix } from "../support/table-names.js";
import { composeStoreKinds } from "./compose-stores.js";
import { CrashAfterStore } from "./crash-after-store.js";
import {
  declareFeatureClass,
  expectFeatureInvariants,
  FEATURE_ENCRYPTION,
  FEATURES,
  type Feature,
  type FeatureEntity,
  type FeatureWorld,
  featureEntity,
  keyOf,
  makeRow,
  nameOf,
  optionsOf,
  type Row,
  slotOf,
} from "./feature-entities.js";

const SEED = testSeed(0xc0c0);
const FULL = process.env.TABLEKIT_COMPOSE_MATRIX === "full";
/** Pairs sampled for Azurite in the default run (about 3 s each there; the full matrix is in test:repeat). */
const AZURITE_SAMPLE = 6;
/** Pairs sampled for `tablekit serve` in the default run: its wire protocol under every write form. */
const SERVE_SAMPLE = 4;

const FORMS = [
  "insert",
  "upsert",
  "update",
  "patch",
  "delete",
  "mutate",
  "transaction",
  "bulk",
  "eventually",
] as const;
type Form = (typeof FORMS)[number];

const SINGLES: Feature[][] = FEATURES.map((f) => [f]);
/** Pairs refused by design, each asserted below. */
const REFUSED_PAIRS = ["wide + expiresAt", "wide + changeFeed"];
const PAIRS: Feature[][] = FEATURES.flatMap((a, i) => FEATURES.slice(i + 1).map((b) => [a, b])).filter(
  (pair) => !REFUSED_PAIRS.includes(pair.join(" + ")),
);

/** Which combinations run on which store. */
function combinationsFor(store: string): Feature[][] {
  if (FULL || store === "memory") return [...SINGLES, ...PAIRS];
  if (store === "azurite") return shuffled(PAIRS, SEED).slice(0, AZURITE_SAMPLE);
  if (store === "serve") return shuffled(PAIRS, SEED + 1).slice(0, SERVE_SAMPLE);
  return [];
}

const runs = composeStoreKinds
  .map((kind) => ({ kind, combinations: combinationsFor(kind.name) }))
  .filter((run) => run.combinations.length > 0);

/** One test's state: the world, the oracle (`group/id` → row), the deleted keys and the seeded choices. */
interface Scenario extends FeatureWorld {
  repo: Repository<Row>;
  expected: Map<string, Row>;
  gone: Map<string, Row>;
  random: () => number;
  /** Group A's main slot: a1 and a2 live there; `fresh` ids are picked in it. */
  a1: number;
  a2: number;
  b1: number;
  used: Set<number>;
}

const label = (row: Pick<Row, "group" | "id">) => `${row.group}/${row.id}`;

function put(s: Scenario, row: Row): void {
  s.expected.set(label(row), row);
  s.gone.delete(label(row));
}

function remove(s: Scenario, row: Pick<Row, "group" | "id">): void {
  const old = s.expected.get(label(row));
  s.expected.delete(label(row));
  if (old) s.gone.set(label(row), old);
}

/** A version other than 1 (the seeded one), chosen by the seed. */
function version(s: Scenario): number {
  return 2 + Math.floor(s.random() * 5);
}

/** An unused id in the same slot (table and partition) as `like` in `group`. */
function fresh(s: Scenario, group: string, like: number): number {
  const target = slotOf(s.entity, { group, id: like });
  for (let id = 100; ; id++) {
    if (!s.used.has(id) && slotOf(s.entity, { group, id }) === target) {
      s.used.add(id);
      return id;
    }
  }
}

async function scenario(
  kind: (typeof composeStoreKinds)[number],
  features: Feature[],
  form: Form,
): Promise<Scenario> {
  const entity: FeatureEntity = featureEntity(features);
  const store = new CrashAfterStore(kind.create());
  const prefix = uniquePrefix("cp");
  const db = new TableContext({ store, tablePrefix: prefix, encryption: FEATURE_ENCRYPTION });
  await db.ensureTables(entity.ctor);
  const repo = db.repository(entity.ctor);
  // a1 and a2 share a slot (a transaction's partition); b1 lives in another group.
  const a1 = 1;
  let a2 = 2;
  while (slotOf(entity, { group: "A", id: a2 }) !== slotOf(entity, { group: "A", id: a1 })) a2++;
  const b1 = a2 + 1;
  const s: Scenario = {
    db,
    store: store.inner,
    prefix,
    entity,
    repo,
    expected: new Map(),
    gone: new Map(),
    random: seededRandom(SEED ^ hashOf(`${nameOf(features)}:${form}`)),
    a1,
    a2,
    b1,
    used: new Set([a1, a2, b1]),
  };
  for (const row of [makeRow(entity, "A", a1, 1), makeRow(entity, "A", a2, 1), makeRow(entity, "B", b1, 1)]) {
    await repo.insert(row);
    put(s, row);
  }
  return s;
}

function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

const check = (s: Scenario, where: string) => expectFeatureInvariants(s, s.expected, s.gone, where);

/** Each write form, with the invariants checked after every write. */
const WRITES: Record<Form, (s: Scenario) => Promise<void>> = {
  async insert(s) {
    const a = makeRow(s.entity, "A", fresh(s, "A", s.a1), 1);
    await s.repo.insert(a);
    put(s, a);
    await check(s, "insert into A");
    const b = makeRow(s.entity, "B", fresh(s, "B", s.b1), version(s));
    await s.repo.insert(b);
    put(s, b);
    await check(s, "insert into B");
  },
  async upsert(s) {
    const created = makeRow(s.entity, "A", fresh(s, "A", s.a1), 1);
    await s.repo.upsert(created);
    put(s, created);
    await check(s, "upsert of a new entity");
    const replaced = makeRow(s.entity, "A", s.a1, version(s));
    await s.repo.upsert(replaced);
    put(s, replaced);
    await check(s, "upsert replacing an entity");
  },
  async update(s) {
    const read = await s.repo.getOrThrow(keyOf(s.entity, { group: "A", id: s.a1 }));
    const next = makeRow(s.entity, "A", s.a1, version(s));
    await s.repo.update(Object.assign(read, changesOfRow(s, next)));
    put(s, next);
    await check(s, "update of what was read");
  },
  async patch(s) {
    const base = s.expected.get(`A/${s.a1}`) as Row;
    const changes: Record<string, unknown> = { qty: 17, tag: "t9", code: "cpatched", kind: "k9" };
    const after = makeRow(s.entity, "A", s.a1, 1);
    Object.assign(after, base, { qty: 17, tag: "t9", code: "cpatched", kind: "k9" });
    if (s.entity.has("encrypted")) changes.secret = after.secret = "patched secret";
    if (s.entity.has("large")) changes.doc = after.doc = Uint8Array.from([1, 2, 3, 4, 5]);
    if (s.entity.has("series")) {
      changes.hourly = { 1: 5 };
      after.hourly = [...(base.hourly ?? [])];
      after.hourly[1] = 5;
    }
    if (s.entity.has("wide")) changes.w250 = after.w250 = -1;
    if (s.entity.has("blindIndex")) changes.email = after.email = `patched${s.a1}@example.com`;
    await s.repo.patch(keyOf(s.entity, base), changes as never);
    put(s, after);
    await check(s, "patch of indexed, summed and feature columns");
  },
  async delete(s) {
    const key = keyOf(s.entity, { group: "A", id: s.a2 });
    expect(await s.repo.delete(key)).toBe(true);
    remove(s, { group: "A", id: s.a2 });
    await check(s, "delete");
    expect(await s.repo.delete(key)).toBe(false);
    await check(s, "delete of an absent entity");
  },
  async mutate(s) {
    const next = makeRow(s.entity, "A", s.a1, version(s));
    await s.repo.mutate(keyOf(s.entity, next), (e) => {
      Object.assign(e, changesOfRow(s, next));
    });
    put(s, next);
    await check(s, "mutate of an existing entity");
    const id = fresh(s, "B", s.b1);
    const created = makeRow(s.entity, "B", id, 1);
    await s.repo.mutate(keyOf(s.entity, created), () => undefined, {
      create: () => makeRow(s.entity, "B", id, 1),
    });
    put(s, created);
    await check(s, "mutate creating an entity");
  },
  async transaction(s) {
    const inserted = makeRow(s.entity, "A", fresh(s, "A", s.a1), 1);
    const read = await s.repo.getOrThrow(keyOf(s.entity, { group: "A", id: s.a1 }));
    const next = makeRow(s.entity, "A", s.a1, version(s));
    Object.assign(read, changesOfRow(s, next));
    await s.db.transaction((tx) => {
      tx.insert(inserted);
      tx.update(read);
      tx.delete(s.entity.ctor, keyOf(s.entity, { group: "A", id: s.a2 }));
    });
    put(s, inserted);
    put(s, next);
    remove(s, { group: "A", id: s.a2 });
    await check(s, "transaction of an insert, an update and a delete");
  },
  async bulk(s) {
    const items = shuffled(
      [
        makeRow(s.entity, "A", s.a1, version(s)),
        makeRow(s.entity, "B", s.b1, version(s)),
        makeRow(s.entity, "A", fresh(s, "A", s.a1), 1),
        makeRow(s.entity, "A", fresh(s, "A", s.a1), 2),
        makeRow(s.entity, "B", fresh(s, "B", s.b1), 3),
      ],
      Math.floor(s.random() * 2 ** 31),
    );
    const upserted = await s.repo.bulkUpsert(items);
    expect(upserted.failed).toEqual([]);
    expect(upserted.written).toBe(items.length);
    for (const row of items) put(s, row);
    await check(s, "bulkUpsert");
    const doomed = [{ group: "A", id: s.a2 }, items[2] as Row];
    const deleted = await s.repo.bulkDelete(doomed.map((row) => keyOf(s.entity, row)));
    expect(deleted.failed).toEqual([]);
    expect(deleted.written).toBe(2);
    for (const row of doomed) remove(s, row);
    await check(s, "bulkDelete");
  },
  async eventually(s) {
    // Move a2 from group A to group B (same id, so the same period and unique code).
    const moved = Object.assign(
      makeRow(s.entity, "B", s.a2, 1),
      changesOfRow(s, s.expected.get(`A/${s.a2}`) as Row),
    );
    const replaced = makeRow(s.entity, "B", s.b1, version(s));
    const result = await s.db.eventually((tx) => {
      tx.delete(s.entity.ctor, keyOf(s.entity, { group: "A", id: s.a2 }));
      tx.insert(moved);
      tx.upsert(replaced);
    });
    expect(result.outcomes).toEqual(["applied", "applied", "applied"]);
    remove(s, { group: "A", id: s.a2 });
    put(s, moved);
    put(s, replaced);
    await check(s, "eventual move and upsert");
  },
};

/** The non-key values of `row` (keys and the period field stay those of the entity they go onto). */
function changesOfRow(s: Scenario, row: Row): Partial<Row> {
  const values: Partial<Row> = { ...row };
  delete values.group;
  delete values.id;
  if (s.entity.has("periodTable")) delete values.at;
  return values;
}

for (const { kind, combinations } of runs) {
  describe.each(combinations.map((features) => [features.join(" + "), features] as const))(
    `%s on ${kind.name} (seed ${SEED})`,
    (_name, features) => {
      const run = async (form: (typeof FORMS)[number]) => {
        const s = await scenario(kind, features, form);
        await check(s, "after the seeded inserts");
        await WRITES[form](s);
      };
      it.each(FORMS)("%s keeps every invariant", run);
    },
  );
}

function failureOfSync(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("the definition was accepted");
}

/**
 * Refused by design (API.md, "Features compose"): an encrypted or large column in a key template,
 * an index key, a summary sum or a `where`; a series in a `where`. Each refusal is a typed error,
 * before any request, whose message says why.
 */
describe("combinations refused by design", () => {
  it("a wide entity cannot have a change feed: its rows may fill the transaction (SchemaError says why)", () => {
    const error = failureOfSync(() => declareFeatureClass(["wide", "changeFeed"]));
    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message).toMatch(
      /wide entity cannot have changeFeed.*100 operations of one entity group transaction/,
    );
  });

  // Extra columns beside the factory's: an encrypted number (summable but for its encryption) and a large String (keyable but for its size).
  const EXTRA = {
    encrypted: { paid: { type: "Int32", encrypt: true } },
    large: { note: { type: "String", large: true } },
  } as const;
  const refusal = (feature: keyof typeof EXTRA, alter: (options: EntityOptions) => EntityOptions): Error => {
    try {
      declareFeatureClass([], alter(optionsOf([])), EXTRA[feature]);
    } catch (error) {
      return error as Error;
    }
    throw new Error("the definition was accepted");
  };

  it.each([
    ["encrypted", "a key template", (o: EntityOptions) => ({ ...o, rowKey: "e_{id:6}_{paid}" }), /encrypted/],
    [
      "encrypted",
      "an index key",
      (o: EntityOptions) => ({
        ...o,
        indexes: { byPaid: { table: "CxPaid", partitionKey: "{paid}", rowKey: "p" } },
      }),
      /encrypted/,
    ],
    [
      "encrypted",
      "a summary sum",
      (o: EntityOptions) => ({ ...o, summaries: { s: { rowKey: "summary", sum: { paid: "total" } } } }),
      /encrypted/,
    ],
    ["large", "a key template", (o: EntityOptions) => ({ ...o, rowKey: "e_{id:6}_{note}" }), /large/],
    [
      "large",
      "an index key",
      (o: EntityOptions) => ({
        ...o,
        indexes: { byNote: { table: "CxNote", partitionKey: "{note}", rowKey: "n" } },
      }),
      /large/,
    ],
    [
      // A large column is Binary, Json or String: never summable; the type says why.
      "large",
      "a summary sum",
      (o: EntityOptions) => ({ ...o, summaries: { s: { rowKey: "summary", sum: { note: "total" } } } }),
      /large|only Int32, Int64 and Double columns can be summed/,
    ],
  ] as const)("a column that is %s cannot be in %s: SchemaError says why", (feature, _where, alter, why) => {
    const error = refusal(feature, alter);
    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message).toMatch(why);
  });

  it("wide + expiresAt: a wide entity keeps no indexes and expiry is found through one (SchemaError says why)", () => {
    const error = failureOfSync(() => declareFeatureClass(["wide", "expiresAt"]));
    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message).toMatch(/wide entity keeps no indexes/);
  });

  it("a unique index keyed in a hash bucket must name the hashed field: keys are unique per partition (SchemaError says why)", () => {
    const hashed = optionsOf(["hashBucket"]);
    const withIndex = (rowKey: string, unique: boolean) => () =>
      declareFeatureClass(["hashBucket"], { ...hashed, indexes: { byCode: { rowKey, unique } } });
    const error = failureOfSync(withIndex("u_{code}", true));
    expect(error).toBeInstanceOf(SchemaError);
    expect(error.message).toMatch(/unique per bucket only .*unique within a partition/);
    // The hashed field in the RowKey makes the key pick its bucket, so it is unique; or not unique at all.
    expect(withIndex("u_{code}_{id}", true)).not.toThrow();
    expect(withIndex("u_{code}", false)).not.toThrow();
  });

  it.each([
    ["encrypted", "secret", "x", /encrypt/, "eq"],
    // A blind index answers equality only.
    ["blindIndex", "email", "x", /equality only/, "gt"],
    ["large", "doc", new Uint8Array([1]), /large/, "eq"],
    ["series", "hourly", 1, /series/, "eq"],
  ] as const)(
    "a %s column in a where is refused before any request, saying why",
    async (feature, field, value, why, op) => {
      const entity = featureEntity([feature]);
      const store = new CrashAfterStore(new MemoryStore());
      const db = new TableContext({ store, tablePrefix: uniquePrefix("cw"), encryption: FEATURE_ENCRYPTION });
      await db.ensureTables(entity.ctor);
      store.disarm();
      const error = await failureOf(() =>
        db
          .repository(entity.ctor)
          .find({ group: "A" })
          .where(field as never, op as never, value as never)
          .toArray(),
      );
      expect(error).toBeInstanceOf(TableKitError);
      expect(error instanceof SchemaError || error instanceof ValidationError, String(error)).toBe(true);
      expect(error.message).toMatch(why);
      expect(store.log, "requests sent").toEqual([]);
    },
  );
});
