/**
 * Entity classes declared programmatically with a chosen set of features (issue 18's combination
 * suite), the deterministic values of their entities, and the invariants every write must keep.
 * Everything goes through the package entry; stored formats are the documented ones (README:
 * blob containers `tablekit-<table lowercased>`, hash buckets `FNV-1a-32 mod N`, period tables).
 */
import { expect } from "vitest";
import {
  Column,
  type ColumnOptions,
  Entity,
  type EntityClass,
  type EntityOptions,
  type IndexOptions,
  localKeys,
  type SummaryOptions,
  type TableContext,
  type TableStore,
} from "../../src/index.js";
import { readAll } from "../support/read-all.js";

/** The features the suite combines. */
export const FEATURES = [
  "samePartitionIndex",
  "indexElsewhere",
  "uniqueIndex",
  "listIndex",
  "summaryHere",
  "summaryElsewhere",
  "large",
  "wide",
  "encrypted",
  "periodTable",
  "hashBucket",
  "series",
  "blindIndex",
  "expiresAt",

  "changeFeed",
] as const;
export type Feature = (typeof FEATURES)[number];

/** Two letters per feature: class and table names stay short and readable. */
const ABBREVIATION: Record<Feature, string> = {
  samePartitionIndex: "Sp",
  indexElsewhere: "Ie",
  uniqueIndex: "Ui",
  listIndex: "Li",
  summaryHere: "Sh",
  summaryElsewhere: "Se",
  large: "Lg",
  wide: "Wd",
  encrypted: "En",
  periodTable: "Pt",
  hashBucket: "Hb",
  series: "Sr",
  blindIndex: "Bi",
  expiresAt: "Ex",

  changeFeed: "Cf",
};

/** Hash buckets of the `hashBucket` feature. */
export const BUCKETS = 4;
/** Columns of a `wide` entity: more than one row holds (252 properties), so it spans two rows. */
export const WIDE_COLUMNS = 260;
/** Slots of the `series` column. */
export const SERIES = 4;

/** An entity of a feature class: fixed base columns plus the features' own. */
export interface Row {
  group: string;
  id: number;
  /** Summed by both summaries. */
  qty: number;
  /** Key of the same-partition index and of the index elsewhere. */
  tag: string;
  /** Key of the unique index. */
  code: string;
  /** Key of the list index. */
  kind: string;
  /** `large`: a Binary value kept in a blob. */
  doc?: Uint8Array;
  /** `encrypted`. */
  secret?: string;
  /** `periodTable`: picks the table (`<name>{at:month}`); fixed per id, like a key field. */
  at?: Date;
  /** `series`. */
  hourly?: Array<number | undefined>;
  /** `blindIndex`: encrypted, found by `where` and by a unique index elsewhere through its blind value. */
  email?: string;
  /** `expiresAt`: when the entity expires (far in the future: its expiry entry moves with each version). */
  until?: Date;
  /** `wide`: w0 … w259. */
  [wideColumn: `w${number}`]: number | undefined;
}

/** One declared combination: its class, features and table names (without the context's prefix). */
export interface FeatureEntity {
  features: readonly Feature[];
  name: string;
  ctor: EntityClass<Row>;
  has(feature: Feature): boolean;
}

/** A class name for a set of features (`CxSpLg`), also the base of its table names. */
export function nameOf(features: readonly Feature[]): string {
  return features.length === 0 ? "CxPlain" : `Cx${features.map((f) => ABBREVIATION[f]).join("")}`;
}

/** The `@Entity` options of a combination (exported so refusal tests can alter one detail). */
export function optionsOf(features: readonly Feature[]): EntityOptions {
  const has = (f: Feature) => features.includes(f);
  const name = nameOf(features);
  const indexes: Record<string, IndexOptions> = {};
  if (has("samePartitionIndex")) indexes.byTag = { rowKey: "x_{tag}_{id:6}", unique: false };
  if (has("indexElsewhere"))
    indexes.byTagElsewhere = {
      table: `${name}Tag`,
      partitionKey: "{tag}",
      rowKey: "{group}_{id:6}",
      unique: false,
    };
  if (has("uniqueIndex"))
    indexes.byCode = { table: `${name}Code`, partitionKey: "{code}", rowKey: "code", unique: true };
  if (has("listIndex")) indexes.byKind = { list: true, rowKey: "k_{kind}" };
  if (has("blindIndex"))
    indexes.byEmail = { table: `${name}Em`, partitionKey: "{email}", rowKey: "email", unique: true };
  const summaries: Record<string, SummaryOptions> = {};
  if (has("summaryHere")) summaries.here = { rowKey: "summary", count: "n", sum: { qty: "total" } };
  if (has("summaryElsewhere"))
    summaries.remote = {
      partitionKey: "totals",
      rowKey: "all",
      table: `${name}Tot`,
      count: "n",
      sum: { qty: "total" },
    };
  return {
    table: has("periodTable") ? `${name}{at:month}` : name,
    type: name,
    partitionKey: has("hashBucket") ? `{group}_{id:hash:${BUCKETS}}` : "{group}",
    rowKey: "e_{id:6}",
    ...(has("wide") ? { wide: true } : {}),
    ...(has("expiresAt") ? { expiresAt: "until" } : {}),

    ...(has("changeFeed") ? { changeFeed: true } : {}),
    ...(Object.keys(indexes).length > 0 ? { indexes } : {}),
    ...(Object.keys(summaries).length > 0 ? { summaries } : {}),
  };
}

/** Declares a class with `features` (throws the definition's `SchemaError` when refused). */
export function declareFeatureClass(
  features: readonly Feature[],
  options: EntityOptions = optionsOf(features),
  extraColumns: Record<string, ColumnOptions> = {},
): EntityClass<Row> {
  const has = (f: Feature) => features.includes(f);
  const name = nameOf(features);
  const ctor = { [name]: class {} }[name] as new () => object;
  const column = (field: string, columnOptions: Parameters<typeof Column>[0]) =>
    (Column(columnOptions) as (prototype: object, field: string) => void)(ctor.prototype, field);
  column("group", { type: "String" });
  column("id", { type: "Int32" });
  column("qty", { type: "Int32" });
  column("tag", { type: "String" });
  column("code", { type: "String" });
  column("kind", { type: "String" });
  if (has("large")) column("doc", { type: "Binary", large: true });
  if (has("encrypted")) column("secret", { type: "String", encrypt: true });
  if (has("periodTable")) column("at", { type: "DateTime" });
  if (has("series")) column("hourly", { type: "Int32", series: SERIES });
  if (has("blindIndex")) column("email", { type: "String", encrypt: true, blindIndex: true });
  if (has("expiresAt")) column("until", { type: "DateTime" });
  if (has("wide")) for (let i = 0; i < WIDE_COLUMNS; i++) column(`w${i}`, { type: "Int32" });
  for (const [field, columnOptions] of Object.entries(extraColumns)) column(field, columnOptions);
  (Entity(options) as (target: object) => void)(ctor);
  return ctor as unknown as EntityClass<Row>;
}

const declared = new Map<string, { ok: true; entity: FeatureEntity } | { ok: false; error: unknown }>();

/** The class of a combination, declared once (its refusal rethrown on every call). */
export function featureEntity(features: readonly Feature[]): FeatureEntity {
  const name = nameOf(features);
  let outcome = declared.get(name);
  if (outcome === undefined) {
    try {
      const ctor = declareFeatureClass(features);
      outcome = { ok: true, entity: { features, name, ctor, has: (f) => features.includes(f) } };
    } catch (error) {
      outcome = { ok: false, error };
    }
    declared.set(name, outcome);
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.entity;
}

/** The encryption option of every context of the suite (harmless for classes without encrypted columns). */
export const FEATURE_ENCRYPTION = {
  keys: localKeys({ k1: Uint8Array.from({ length: 32 }, (_, i) => (i * 53 + 7) % 256) }, "k1"),
  blindIndexKey: Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + 11) % 256),
};

/** The month (`2026-01` or `2026-02`) of id's entity: a table-per-period entity lives in two tables. */
export function atOf(id: number): Date {
  return new Date(Date.UTC(2026, id % 2, 1 + (id % 27), 12, id % 60));
}

/** The stored bucket of a hashed field (README, "Hash buckets": FNV-1a-32 of its UTF-8 text, mod N). */
export function bucketOf(id: number): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(String(id))) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % BUCKETS;
}

/** The entity `id` of `group` at `version`: every value follows from the three, so a mix shows. */
export function makeRow(entity: FeatureEntity, group: string, id: number, version: number): Row {
  const row = new (entity.ctor as unknown as new () => Row)();
  row.group = group;
  row.id = id;
  row.qty = (id * 3 + version * 5) % 23;
  row.tag = `t${(id + version) % 3}`;
  row.code = `c${id}v${version}`;
  row.kind = `k${(id + version) % 2}`;
  if (entity.has("large"))
    row.doc = Uint8Array.from(
      { length: 200 + ((id * 31 + version) % 300) },
      (_, i) => (id + version * 7 + i) % 256,
    );
  if (entity.has("encrypted")) row.secret = `secret of ${id} v${version}`;
  if (entity.has("periodTable")) row.at = atOf(id);
  if (entity.has("series")) row.hourly = [version, undefined, id, version * 2];
  if (entity.has("blindIndex")) row.email = `m${id}v${version}@example.com`;
  if (entity.has("expiresAt")) row.until = new Date(Date.UTC(2100, 0, 1 + id, version));
  if (entity.has("wide")) for (let i = 0; i < WIDE_COLUMNS; i++) row[`w${i}`] = id * 1000 + version + i;
  return row;
}

/** An entity's key as the repository takes it (the period field names the table). */
export function keyOf(entity: FeatureEntity, row: Pick<Row, "group" | "id">): Partial<Row> {
  return { group: row.group, id: row.id, ...(entity.has("periodTable") ? { at: atOf(row.id) } : {}) };
}

/** The physical partition an entity lives in: its table (period) and PartitionKey (bucket). */
export function slotOf(entity: FeatureEntity, row: Pick<Row, "group" | "id">): string {
  const month = entity.has("periodTable") ? `@${atOf(row.id).getUTCMonth()}` : "";
  const bucket = entity.has("hashBucket") ? `_${bucketOf(row.id)}` : "";
  return `${row.group}${bucket}${month}`;
}

/** What an entity holds, comparable with `toEqual`. */
export function viewOf(entity: FeatureEntity, row: Row | undefined): Record<string, unknown> | undefined {
  if (row === undefined) return undefined;
  const view: Record<string, unknown> = {
    group: row.group,
    id: row.id,
    qty: row.qty,
    tag: row.tag,
    code: row.code,
    kind: row.kind,
  };
  if (entity.has("large"))
    view.doc = row.doc === undefined ? undefined : Buffer.from(row.doc).toString("base64");
  if (entity.has("encrypted")) view.secret = row.secret;
  if (entity.has("periodTable")) view.at = row.at?.toISOString();
  if (entity.has("series")) view.hourly = row.hourly;
  if (entity.has("blindIndex")) view.email = row.email;
  if (entity.has("expiresAt")) view.until = row.until?.toISOString();
  if (entity.has("wide")) view.wide = Array.from({ length: WIDE_COLUMNS }, (_, i) => row[`w${i}`]);
  return view;
}

/** The physical tables of a combination's entities (with prefix), one per period that holds any. */
export function entityTablesOf(entity: FeatureEntity, prefix: string, rows: Iterable<Row>): string[] {
  if (!entity.has("periodTable")) return [`${prefix}${entity.name}`];
  const months = new Set([...rows].map((row) => atOf(row.id).toISOString().slice(0, 7).replace("-", "")));
  return [...months].sort().map((month) => `${prefix}${entity.name}${month}`);
}

/** What the checks need about one context. */
export interface FeatureWorld {
  db: TableContext;
  /** The store under the context (no encryption): raw rows and blobs. */
  store: TableStore;
  prefix: string;
  entity: FeatureEntity;
}

/**
 * Every invariant of issue 18's combination suite against the oracle `expected` (by `group/id`)
 * and the keys `gone` (written once, now deleted): each entity readable whole with `get` (absent
 * ones `undefined`); copies = rows (`verifyIndexes` empty) and the unique index finds each entity;
 * summaries = recount (`verifySummaries` empty, and the values equal a recount of the oracle);
 * exactly one blob per large value; no encrypted value in clear in any raw row.
 */
export async function expectFeatureInvariants(
  world: FeatureWorld,
  expected: ReadonlyMap<string, Row>,
  gone: ReadonlyMap<string, Row>,
  where: string,
): Promise<void> {
  const { db, entity } = world;
  const repo = db.repository(entity.ctor);
  for (const row of expected.values()) {
    expect(
      viewOf(entity, await repo.get(keyOf(entity, row))),
      `${where}: get ${row.group}/${row.id}`,
    ).toEqual(viewOf(entity, row));
  }
  for (const row of gone.values()) {
    expect(await repo.get(keyOf(entity, row)), `${where}: deleted ${row.group}/${row.id}`).toBeUndefined();
  }
  if (
    entity.has("samePartitionIndex") ||
    entity.has("indexElsewhere") ||
    entity.has("uniqueIndex") ||
    entity.has("listIndex") ||
    entity.has("expiresAt")
  ) {
    expect(await db.verifyIndexes(entity.ctor), `${where}: verifyIndexes`).toEqual({
      missing: [],
      stale: [],
      orphans: [],
    });
  }
  if (entity.has("uniqueIndex")) {
    for (const row of expected.values()) {
      const found = await repo
        .index("byCode")
        .get({ code: row.code, ...(entity.has("periodTable") ? { at: row.at } : {}) });
      expect(found && `${found.group}/${found.id}`, `${where}: byCode ${row.code}`).toBe(
        `${row.group}/${row.id}`,
      );
    }
  }
  if (entity.has("samePartitionIndex")) await expectLookups(world, expected, "byTag", "tag", where);
  if (entity.has("listIndex")) await expectLookups(world, expected, "byKind", "kind", where);
  if (entity.has("summaryHere") || entity.has("summaryElsewhere")) {
    expect(await db.verifySummaries(entity.ctor), `${where}: verifySummaries`).toEqual([]);
    await expectSummaries(world, expected, where);
  }
  if (entity.has("large")) await expectOneBlobPerValue(world, expected, where);
  if (entity.has("encrypted") || entity.has("blindIndex")) await expectSealed(world, expected, where);
  if (entity.has("blindIndex")) await expectBlindLookups(world, expected, where);
  if (entity.has("changeFeed")) await expectChanges(world, expected, gone, where);
}

/**
 * The change feed holds every entity's writes with versions 1..n, the last one what the entity is
 * now: the whole entity (when its copy rides: not with large values) or a delete for the gone ones.
 */
async function expectChanges(
  world: FeatureWorld,
  expected: ReadonlyMap<string, Row>,
  gone: ReadonlyMap<string, Row>,
  where: string,
): Promise<void> {
  const { db, entity } = world;
  const byKey = new Map<string, Array<{ kind: string; version: number; entity: Row | undefined }>>();
  let from: string | undefined;
  for (;;) {
    const page = await db.changes(entity.ctor).read({ ...(from === undefined ? {} : { from }), limit: 7 });
    if (page.changes.length === 0) break;
    for (const change of page.changes) {
      const label = `${change.key.partitionKey.split("_")[0]}/${Number(change.key.rowKey.slice(2))}`;
      const list = byKey.get(label) ?? [];
      list.push({ kind: change.kind, version: change.version, entity: change.entity });
      byKey.set(label, list);
    }
    from = page.next;
  }
  for (const [label, list] of byKey) {
    expect(
      list.map((c) => c.version),
      `${where}: versions of ${label}`,
    ).toEqual(list.map((_, i) => i + 1));
  }
  for (const [label, row] of expected) {
    const last = byKey.get(label)?.at(-1);
    expect(last?.kind, `${where}: last change of ${label}`).not.toBe("delete");
    if (last?.kind === "upsert" && last.entity !== undefined)
      expect(viewOf(entity, last.entity), `${where}: last change of ${label}`).toEqual(viewOf(entity, row));
  }
  for (const label of gone.keys()) {
    expect(byKey.get(label)?.at(-1)?.kind, `${where}: last change of deleted ${label}`).toBe("delete");
  }
}

/**
 * Each entity is found by its encrypted email: through the unique index elsewhere (its key holds the
 * blind value) and, unless wide (the service filters rows), by `where` in its partition (or every
 * bucket's; the period's table), exactly.
 */
async function expectBlindLookups(world: FeatureWorld, expected: ReadonlyMap<string, Row>, where: string) {
  const { db, entity } = world;
  const repo = db.repository(entity.ctor);
  for (const row of expected.values()) {
    const found = await repo.index("byEmail").get({ email: row.email });
    expect(found && `${found.group}/${found.id}`, `${where}: byEmail ${row.email}`).toBe(
      `${row.group}/${row.id}`,
    );
    if (entity.has("wide")) continue;
    const partial = { group: row.group, ...(entity.has("periodTable") ? { at: row.at } : {}) };
    const matches = await repo
      .find(partial)
      .where({ email: row.email as string })
      .toArray();
    expect(
      matches.map((m) => `${m.group}/${m.id}`),
      `${where}: where email = ${row.email}`,
    ).toEqual([`${row.group}/${row.id}`]);
  }
}

/**
 * Lookups through an index in the entity's partition (`byTag` copies, `byKind` list) find exactly the
 * oracle's entities of each value, in key order: for a hash bucket, `find` without the hashed field
 * reads every bucket, merged in RowKey order (ids ascending); for a table per period, in `at`'s period.
 */
async function expectLookups(
  world: FeatureWorld,
  expected: ReadonlyMap<string, Row>,
  index: "byTag" | "byKind",
  field: "tag" | "kind",
  where: string,
): Promise<void> {
  const { db, entity } = world;
  const repo = db.repository(entity.ctor);
  const groups = new Map<string, { partial: Partial<Row>; ids: number[] }>();
  const values = field === "tag" ? ["t0", "t1", "t2"] : ["k0", "k1"];
  for (const row of [...expected.values(), ...[0, 1].map((id) => ({ group: "A", id }) as Row)]) {
    for (const value of values) {
      const period = entity.has("periodTable") ? atOf(row.id) : undefined;
      const label = `${row.group}/${value}${period ? `@${period.getUTCMonth()}` : ""}`;
      if (!groups.has(label))
        groups.set(label, {
          partial: { group: row.group, [field]: value, ...(period ? { at: period } : {}) },
          ids: [],
        });
    }
  }
  for (const row of expected.values()) {
    const period = entity.has("periodTable") ? `@${atOf(row.id).getUTCMonth()}` : "";
    groups.get(`${row.group}/${row[field]}${period}`)?.ids.push(row.id);
  }
  for (const [label, { partial, ids }] of groups) {
    const found = await repo.index(index).find(partial).toArray();
    expect(
      found.map((row) => row.id),
      `${where}: index ${index} finds ${label}`,
    ).toEqual(ids.sort((a, b) => a - b));
  }
}

async function expectSummaries(world: FeatureWorld, expected: ReadonlyMap<string, Row>, where: string) {
  const { db, entity } = world;
  const repo = db.repository(entity.ctor);
  const total = { n: 0, total: 0 };
  const slots = new Map<string, { partial: Partial<Row>; n: number; total: number }>();
  for (const row of expected.values()) {
    total.n += 1;
    total.total += row.qty;
    const slot = slotOf(entity, row);
    const partial = {
      group: row.group,
      ...(entity.has("hashBucket") ? { id: row.id } : {}),
      ...(entity.has("periodTable") ? { at: row.at } : {}),
    };
    const sums = slots.get(slot) ?? { partial, n: 0, total: 0 };
    sums.n += 1;
    sums.total += row.qty;
    slots.set(slot, sums);
  }
  if (entity.has("summaryHere")) {
    for (const [slot, { partial, n, total: sum }] of slots) {
      expect(await repo.summary("here", partial), `${where}: summary here of ${slot}`).toEqual({
        n,
        total: sum,
      });
    }
  }
  if (entity.has("summaryElsewhere")) {
    expect(await repo.summary("remote", {}), `${where}: summary elsewhere`).toEqual(total);
  }
}

/** The documented container of a table's large values. */
export function containerOf(table: string): string {
  return `tablekit-${table.toLowerCase()}`;
}

async function expectOneBlobPerValue(world: FeatureWorld, expected: ReadonlyMap<string, Row>, where: string) {
  const blobs = world.store.blobs;
  if (!blobs) throw new Error(`store ${world.store.name} has no blob side`);
  const rows = [...expected.values()];
  // Every period that ever held an entity: a deleted one's table may be empty now.
  const tables = entityTablesOf(
    world.entity,
    world.prefix,
    [0, 1].map((id) => ({ id }) as Row),
  );
  for (const table of tables) {
    const names: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await blobs.list(containerOf(table), { continuation });
      names.push(...page.items.map((item) => item.name));
      continuation = page.continuation;
    } while (continuation);
    const values = rows.filter(
      (row) => row.doc !== undefined && entityTablesOf(world.entity, world.prefix, [row])[0] === table,
    ).length;
    expect(names, `${where}: one blob per large value in ${table}`).toHaveLength(values);
  }
}

async function expectSealed(world: FeatureWorld, expected: ReadonlyMap<string, Row>, where: string) {
  const secrets = new Set(
    [...expected.values()].flatMap((row) => [row.secret, row.email]).filter((v) => v !== undefined),
  );
  const { entity, prefix, store } = world;
  const tables = [
    ...entityTablesOf(
      entity,
      prefix,
      [0, 1].map((id) => ({ id }) as Row),
    ),
    ...(entity.has("indexElsewhere") ? [`${prefix}${entity.name}Tag`] : []),
    ...(entity.has("uniqueIndex") ? [`${prefix}${entity.name}Code`] : []),
    ...(entity.has("blindIndex") ? [`${prefix}${entity.name}Em`] : []),
  ];
  const existing = new Set(await store.listTables(prefix));
  for (const table of tables.filter((t) => existing.has(t))) {
    for (const row of await readAll(store, table)) {
      for (const key of [row.partitionKey, row.rowKey]) {
        if ([...secrets].some((secret) => key.includes(secret as string)))
          throw new Error(
            `${where}: ${table} ${row.partitionKey}/${row.rowKey}: a key holds an encrypted value`,
          );
      }
      for (const [property, value] of Object.entries(row)) {
        if (typeof value === "string" && [...secrets].some((secret) => value.includes(secret as string))) {
          throw new Error(
            `${where}: ${table} ${row.partitionKey}/${row.rowKey}.${property} holds an encrypted value in clear`,
          );
        }
      }
    }
  }
}
