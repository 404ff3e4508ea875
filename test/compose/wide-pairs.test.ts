/**
 * Wide entities with indexes and summaries (issue 18), beyond the pairs suite: the rows that ride in
 * a wide entity's transaction (its same-partition copies and summary rows) count towards the
 * service's 100 operations and 4 MiB, refused before any request; and a composite upsert of a wide
 * entity (copies here and elsewhere, a unique value, summaries here and elsewhere) crashed before
 * each of its requests, then repaired by a fresh context, reads back as one whole version with no drift.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  TableContext,
  TransactionError,
  ValidationError,
} from "../../src/index.js";
import { expectRejection } from "../support/rejection.js";
import { uniquePrefix } from "../support/table-names.js";
import { CrashAfterStore } from "./crash-after-store.js";
import {
  expectFeatureInvariants,
  FEATURE_ENCRYPTION,
  type Feature,
  featureEntity,
  keyOf,
  makeRow,
  type Row,
  viewOf,
} from "./feature-entities.js";

type Loose = Record<string, unknown>;

/** A wide class of `columns` Int32 columns (plus `p`, `r` and `note`), with or without a same-partition index and summary. */
function wideClass(name: string, columns: number, riding: boolean): new () => Loose {
  const ctor = { [name]: class {} }[name] as new () => Loose;
  const column = (field: string, type: "String" | "Int32") =>
    (Column({ type }) as (prototype: object, field: string) => void)(ctor.prototype, field);
  column("p", "String");
  column("r", "String");
  column("note", "String");
  for (let i = 0; i < columns; i++) column(`x${i}`, "Int32");
  (
    Entity({
      table: name,
      partitionKey: "{p}",
      rowKey: "e_{r}",
      wide: true,
      ...(riding
        ? {
            indexes: { byNote: { rowKey: "n_{note}_{r}" } },
            summaries: { here: { rowKey: "summary", count: "n", sum: { x0: "total" } } },
          }
        : {}),
    } as never) as (target: object) => void
  )(ctor);
  return ctor;
}

async function context(classes: Array<new () => Loose>) {
  const store = new CrashAfterStore(new MemoryStore());
  const db = new TableContext({ store, tablePrefix: uniquePrefix("wl") });
  for (const ctor of classes) await db.ensureTables(ctor as never);
  store.disarm();
  return { store, db };
}

describe("a wide entity's transaction with the rows riding in it", () => {
  // 24,740 columns make 99 rows (250 columns each, keys and bookkeeping included): alone they fit one
  // entity group transaction; with one same-partition copy and one summary row they are 101 operations.
  const COLUMNS = 24_740;

  it("over 100 operations with its copy and summary row: ValidationError before any request", async () => {
    const Riding = wideClass("WlRiding", COLUMNS, true);
    const Alone = wideClass("WlAlone", COLUMNS, false);
    const { store, db } = await context([Riding, Alone]);
    const fill = (entity: Loose) => {
      Object.assign(entity, { p: "a", r: "1", note: "n" });
      for (let i = 0; i < COLUMNS; i++) entity[`x${i}`] = i;
      return entity;
    };
    const error = await expectRejection(
      db.repository(Riding).insert(fill(new Riding()) as never),
      ValidationError,
    );
    expect(error.message).toMatch(/at most 100/);
    expect(error.message).toMatch(/summary row/);
    expect(store.log, "requests sent").toEqual([]);
    // The same entity without the rows riding along fits: the limit counted them, nothing else.
    await db.repository(Alone).insert(fill(new Alone()) as never);
    expect(store.log.filter((request) => request.startsWith("submitTransaction"))).toHaveLength(1);
  });

  it("over 4 MiB with its copy and summary row: ValidationError before any request", async () => {
    const Texts = wideClassWithText("WlTexts", 50);
    const { store, db } = await context([Texts]);
    const texts = db.repository(Texts);
    // 50 strings of 32,000 characters in UTF-8 JSON (3 bytes each): ~4.8 MB of payload in a few rows.
    const huge = Object.assign(new Texts(), { p: "a", r: "1", note: "n" });
    for (let i = 0; i < 50; i++) huge[`t${i}`] = "€".repeat(32_000);
    const error = await expectRejection(texts.upsert(huge as never), ValidationError);
    expect(error.message).toContain("4 MiB");
    // A bulk write of an array checks every entity before its first request.
    const small = Object.assign(new Texts(), { p: "a", r: "2", note: "n", t0: "€" });
    await expectRejection(texts.bulkUpsert([small, huge] as never[]), ValidationError);
    expect(store.log, "requests sent").toEqual([]);
    // A smaller one is written with its copy and summary row.
    await texts.upsert(Object.assign(new Texts(), { p: "a", r: "2", note: "n", t0: "€" }) as never);
    expect(await texts.summary("here" as never, { p: "a" } as never)).toEqual({ n: 1 });
    expect(await db.verifyIndexes(Texts as never)).toEqual({ missing: [], stale: [], orphans: [] });
  });
});

/** A wide class with `texts` String columns, a same-partition index and a summary. */
function wideClassWithText(name: string, texts: number): new () => Loose {
  const ctor = { [name]: class {} }[name] as new () => Loose;
  const column = (field: string, type: "String" | "Int32") =>
    (Column({ type }) as (prototype: object, field: string) => void)(ctor.prototype, field);
  column("p", "String");
  column("r", "String");
  column("note", "String");
  for (let i = 0; i < texts; i++) column(`t${i}`, "String");
  (
    Entity({
      table: name,
      partitionKey: "{p}",
      rowKey: "e_{r}",
      wide: true,
      indexes: { byNote: { rowKey: "n_{note}_{r}" } },
      summaries: { here: { rowKey: "summary", count: "n" } },
    } as never) as (target: object) => void
  )(ctor);
  return ctor;
}

describe("a composite upsert of a wide entity, crashed before each request, then repaired", () => {
  const FEATURES: Feature[] = [
    "samePartitionIndex",
    "indexElsewhere",
    "uniqueIndex",
    "summaryHere",
    "summaryElsewhere",
    "wide",
  ];

  it("reads back as one whole version, copies = rows, summaries = recount", async () => {
    const entity = featureEntity(FEATURES);
    const inner = new MemoryStore();
    const store = new CrashAfterStore(inner);
    const prefix = uniquePrefix("wc");
    const open = () =>
      new TableContext({ store, tablePrefix: prefix, encryption: FEATURE_ENCRYPTION, retry: false });
    await open().ensureTables(entity.ctor);
    const expected = new Map<string, Row>();
    const world = (db: TableContext) => ({ db, store: inner, prefix, entity });

    // How many requests the upsert makes when nothing fails (the same shape for every id: cold context).
    const probe = open().repository(entity.ctor);
    await probe.insert(makeRow(entity, "A", 1, 1));
    store.disarm();
    await probe.upsert(makeRow(entity, "A", 1, 2));
    const total = store.requests;
    const shape = [...store.log];
    expect(total, `requests of the upsert: ${shape.join(", ")}`).toBeGreaterThan(3);
    expected.set("A/1", makeRow(entity, "A", 1, 2));

    for (let k = 1; k <= total; k++) {
      const id = 1 + k;
      const rows = open().repository(entity.ctor);
      store.disarm();
      await rows.insert(makeRow(entity, "A", id, 1));
      store.arm(k - 1);
      // The crash may reject the upsert or hit only its clean-up: either way, repair settles it.
      await rows.upsert(makeRow(entity, "A", id, 2)).catch(() => undefined);
      const where = `crash before request ${k} of ${total} (${store.log[k - 1]}; shape ${shape.join(", ")})`;
      store.disarm();
      const repairer = new TableContext({
        store: inner,
        tablePrefix: prefix,
        encryption: FEATURE_ENCRYPTION,
      });
      await repairer.repair({ minIntentAgeMs: 0, entities: [entity.ctor] });
      const got = await repairer.repository(entity.ctor).get(keyOf(entity, { group: "A", id }));
      const versions = [1, 2].map((v) => viewOf(entity, makeRow(entity, "A", id, v)));
      expect(versions, `${where}: one whole version`).toContainEqual(viewOf(entity, got));
      expected.set(`A/${id}`, makeRow(entity, "A", id, got?.code === `c${id}v2` ? 2 : 1));
      await expectFeatureInvariants(world(repairer), expected, new Map(), where);
    }
  });
});

describe("reads through the indexes of a wide entity", () => {
  it("a list index returns whole entities; a copy holds the keys and the index's key fields", async () => {
    const entity = featureEntity(["samePartitionIndex", "listIndex", "wide"]);
    const db = new TableContext({ store: new MemoryStore(), tablePrefix: uniquePrefix("wr") });
    await db.ensureTables(entity.ctor);
    const repo = db.repository(entity.ctor);
    const rows = [makeRow(entity, "A", 1, 1), makeRow(entity, "A", 2, 2), makeRow(entity, "A", 3, 1)];
    for (const row of rows) await repo.insert(row);
    const listed = await repo.index("byKind").find({ group: "A", kind: "k0" }).toArray();
    expect(listed.map((row) => viewOf(entity, row))).toEqual(
      rows.filter((row) => row.kind === "k0").map((row) => viewOf(entity, row)),
    );
    const byTag = await repo.index("byTag").find({ group: "A", tag: rows[0]?.tag }).toArray();
    expect(byTag.map((row) => [row.id, row.tag, row.w0, row.w259])).toEqual(
      rows.filter((row) => row.tag === rows[0]?.tag).map((row) => [row.id, row.tag, undefined, undefined]),
    );
  });
});

describe("db.transaction with a wide indexed entity", () => {
  it("an update of an absent one fails the whole transaction as for any entity (404), nothing written", async () => {
    const entity = featureEntity(["samePartitionIndex", "summaryHere", "wide"]);
    const db = new TableContext({ store: new MemoryStore(), tablePrefix: uniquePrefix("wt") });
    await db.ensureTables(entity.ctor);
    const repo = db.repository(entity.ctor);
    const error = await db
      .transaction((tx) => {
        tx.insert(makeRow(entity, "A", 1, 1));
        tx.update(makeRow(entity, "A", 2, 1), { ifMatch: "*" });
      })
      .then(
        () => undefined,
        (e: unknown) => e as Error & { statusCode?: number },
      );
    expect(error, String(error)).toBeInstanceOf(TransactionError);
    expect(error?.statusCode).toBe(404);
    expect(await repo.get(keyOf(entity, { group: "A", id: 1 }))).toBeUndefined();
    expect(await db.verifyIndexes(entity.ctor)).toEqual({ missing: [], stale: [], orphans: [] });
    expect(await db.verifySummaries(entity.ctor)).toEqual([]);
  });
});
