/**
 * Issue 30's property: the requests a write sends are its plan's requests. For every feature alone
 * and every pair (the combination suite's classes, test/compose/feature-entities.ts) and every write
 * form with a public explain, the write is explained for the state a read returned just before
 * (`{ current }`), then sent through a recording store; the requests sent are the plan's, step for
 * step, each `$batch` holding the plan's operation count (plan-compare.ts). MemoryStore runs every
 * combination; Azurite and `tablekit serve` a seeded sample (another draw for serve), all of them
 * with `TABLEKIT_COMPOSE_MATRIX=full`.
 *
 * Left out, as a plan cannot know them: the outcome of a write the service refuses for what is
 * stored (an insert of a stored entity), and an untracked upsert of a stored entity that keeps state
 * beside its row (tried as an insert first, then read and sent again): every insert and untracked
 * upsert here is of a new entity. Combinations whose plan does not yet show what is sent are listed
 * as refused by explain, each with the gap it shows (`gapOf`).
 */
import { describe, expect, it } from "vitest";
import { type Repository, TableContext, ValidationError, type WriteStep } from "../../src/index.js";
import { composeStoreKinds } from "../compose/compose-stores.js";
import {
  FEATURE_ENCRYPTION,
  FEATURES,
  type Feature,
  type FeatureEntity,
  featureEntity,
  keyOf,
  makeRow,
  type Row,
  slotOf,
} from "../compose/feature-entities.js";
import { RecordingStore } from "../support/recording-store.js";
import { seededRandom, shuffled, testSeed } from "../support/seeded-random.js";
import { uniquePrefix } from "../support/table-names.js";
import { expectSentAsExplained } from "./plan-compare.js";

const SEED = testSeed(0x3030);
const FULL = process.env.TABLEKIT_COMPOSE_MATRIX === "full";
/** Pairs sampled for Azurite and for `tablekit serve` in the default run (every form each). */
const AZURITE_SAMPLE = 4;
const SERVE_SAMPLE = 3;

const SINGLES: Feature[][] = FEATURES.map((f) => [f]);
/** Refused by schema (test/compose/pairs.test.ts asserts the refusals). */
const REFUSED_PAIRS = ["wide + expiresAt", "wide + changeFeed"];
const PAIRS: Feature[][] = FEATURES.flatMap((a, i) => FEATURES.slice(i + 1).map((b) => [a, b])).filter(
  (pair) => !REFUSED_PAIRS.includes(pair.join(" + ")),
);

function combinationsFor(store: string): Feature[][] {
  if (FULL || store === "memory") return [...SINGLES, ...PAIRS];
  if (store === "azurite") return shuffled(PAIRS, SEED).slice(0, AZURITE_SAMPLE);
  if (store === "serve") return shuffled(PAIRS, SEED + 1).slice(0, SERVE_SAMPLE);
  return [];
}

type Kind = (typeof composeStoreKinds)[number];
type Tx = Parameters<Parameters<TableContext["transaction"]>[0]>[0];
type EventualTx = Parameters<Parameters<TableContext["eventually"]>[0]>[0];

/** One context on fresh tables: entities A/a1 and A/a2 (one slot: a transaction's partition) and B/b1 stored. */
interface World {
  db: TableContext;
  store: RecordingStore;
  entity: FeatureEntity;
  repo: Repository<Row>;
  random: () => number;
  a1: number;
  a2: number;
  b1: number;
  used: Set<number>;
}

async function worldOf(kind: Kind, features: Feature[], form: string): Promise<World> {
  const entity = featureEntity(features);
  const store = new RecordingStore(kind.create());
  const db = new TableContext({ store, tablePrefix: uniquePrefix("pp"), encryption: FEATURE_ENCRYPTION });
  await db.ensureTables(entity.ctor);
  const repo = db.repository(entity.ctor);
  const a1 = 1;
  let a2 = 2;
  while (slotOf(entity, { group: "A", id: a2 }) !== slotOf(entity, { group: "A", id: a1 })) a2++;
  const b1 = a2 + 1;
  // The first writes create the tables a plan cannot know are missing (a change feed's directory).
  for (const row of [makeRow(entity, "A", a1, 1), makeRow(entity, "A", a2, 1), makeRow(entity, "B", b1, 1)])
    await repo.insert(row);
  const random = seededRandom(SEED ^ hashOf(`${entity.name}:${form}`));
  return { db, store, entity, repo, random, a1, a2, b1, used: new Set([a1, a2, b1]) };
}

function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** A version other than 1, chosen by the seed. */
function version(w: World): number {
  return 2 + Math.floor(w.random() * 5);
}

/** An unused id in the slot (table and partition) of `like` in `group`. */
function fresh(w: World, group: string, like: number): number {
  const target = slotOf(w.entity, { group, id: like });
  for (let id = 100; ; id++) {
    if (!w.used.has(id) && slotOf(w.entity, { group, id }) === target) {
      w.used.add(id);
      return id;
    }
  }
}

/** The non-key values of `row` (the keys and the period field stay those of the entity they go onto). */
function valuesOf(w: World, row: Row): Partial<Row> {
  const values: Partial<Row> = { ...row };
  delete values.group;
  delete values.id;
  if (w.entity.has("periodTable")) delete values.at;
  return values;
}

const stored = (w: World, group: string, id: number) => w.repo.getOrThrow(keyOf(w.entity, { group, id }));

/** Explains one write for `current`, sends it, and compares. */
function single(
  w: World,
  operation: Parameters<Repository<Row>["explainWrite"]>[0],
  value: Partial<Row>,
  current: Row[],
  write: () => Promise<unknown>,
  what: string,
): Promise<WriteStep[]> {
  return expectSentAsExplained(
    w.store,
    async () => w.repo.explainWrite(operation, value, { current }),
    write,
    what,
  );
}

/** Each write form with a public explain: one or two writes, each compared with its plan. */
const FORMS = {
  async insert(w) {
    const row = makeRow(w.entity, "A", fresh(w, "A", w.a1), version(w));
    await single(w, "insert", row, [], () => w.repo.insert(row), "insert");
  },
  async "upsert (tracked)"(w) {
    const read = await stored(w, "A", w.a1);
    Object.assign(read, valuesOf(w, makeRow(w.entity, "A", w.a1, version(w))));
    await single(w, "upsert", read, [read], () => w.repo.upsert(read), "upsert of what was read");
  },
  async "upsert (untracked)"(w) {
    const created = makeRow(w.entity, "A", fresh(w, "A", w.a1), version(w));
    await single(w, "upsert", created, [], () => w.repo.upsert(created), "upsert of a new entity");
  },
  async update(w) {
    const read = await stored(w, "A", w.a1);
    Object.assign(read, valuesOf(w, makeRow(w.entity, "A", w.a1, version(w))));
    await single(w, "update", read, [read], () => w.repo.update(read), "update of what was read");
    // Not read by this context: the plan is exact for the state a read returned.
    const now = await stored(w, "A", w.a1);
    const next = makeRow(w.entity, "A", w.a1, version(w) + 5);
    await single(w, "update", next, [now], () => w.repo.update(next, { ifMatch: "*" }), "update untracked");
  },
  async patch(w) {
    const now = await stored(w, "A", w.a1);
    const changes: Record<string, unknown> = { qty: 17, tag: "t9", code: "cpatched", kind: "k9" };
    if (w.entity.has("encrypted")) changes.secret = "patched secret";
    if (w.entity.has("large")) changes.doc = Uint8Array.from([1, 2, 3, 4, 5]);
    if (w.entity.has("series")) changes.hourly = { 1: 5 };
    if (w.entity.has("wide")) changes.w250 = -1;
    if (w.entity.has("blindIndex")) changes.email = `patched${w.a1}@example.com`;
    const key = keyOf(w.entity, now);
    await single(
      w,
      "patch",
      { ...key, ...changes },
      [now],
      () => w.repo.patch(key, changes as never),
      "patch of indexed, summed and feature columns",
    );
  },
  async delete(w) {
    const now = await stored(w, "A", w.a2);
    const key = keyOf(w.entity, now);
    await single(w, "delete", key, [now], () => w.repo.delete(key), "delete by key");
    const read = await stored(w, "B", w.b1);
    await single(w, "delete", read, [read], () => w.repo.delete(read), "delete of what was read");
    // Nothing stored: the plan assumes absence.
    await single(w, "delete", key, [], () => w.repo.delete(key), "delete of an absent entity");
  },
  async transaction(w) {
    const inserted = makeRow(w.entity, "A", fresh(w, "A", w.a1), 1);
    const read = await stored(w, "A", w.a1);
    Object.assign(read, valuesOf(w, makeRow(w.entity, "A", w.a1, version(w))));
    const doomed = await stored(w, "A", w.a2);
    const build = (tx: Tx) => {
      tx.insert(inserted);
      tx.update(read);
      tx.delete(w.entity.ctor, keyOf(w.entity, doomed));
    };
    await expectSentAsExplained(
      w.store,
      () => w.db.explainTransaction(build, { current: [read, doomed] }),
      () => w.db.transaction(build),
      "transaction of an insert, an update and a delete",
    );
  },
  async bulk(w) {
    const items = shuffled(
      [
        makeRow(w.entity, "A", w.a1, version(w)),
        makeRow(w.entity, "B", w.b1, version(w)),
        makeRow(w.entity, "A", fresh(w, "A", w.a1), 1),
        makeRow(w.entity, "B", fresh(w, "B", w.b1), 3),
      ],
      Math.floor(w.random() * 2 ** 31),
    );
    const current = [await stored(w, "A", w.a1), await stored(w, "B", w.b1)];
    await expectSentAsExplained(
      w.store,
      () => w.repo.explainBulk("upsert", items, { current }),
      () => w.repo.bulkUpsert(items),
      "bulkUpsert",
    );
  },
  async eventually(w) {
    // The intents' table is created by the first eventual transaction (a plan cannot know it is missing).
    await w.db.eventually((tx) => tx.insert(makeRow(w.entity, "W", fresh(w, "W", 1), 1)));
    const from = await stored(w, "A", w.a2);
    const moved = Object.assign(makeRow(w.entity, "B", w.a2, 1), valuesOf(w, from));
    const build = (tx: EventualTx) => {
      tx.delete(w.entity.ctor, keyOf(w.entity, from));
      tx.insert(moved);
    };
    await expectSentAsExplained(
      w.store,
      () => w.db.explainEventually(build, { current: [from] }),
      () => w.db.eventually(build),
      "eventual move",
    );
  },
} satisfies Record<string, (w: World) => Promise<void>>;

type Form = keyof typeof FORMS;
const FORM_NAMES = Object.keys(FORMS) as Form[];

const INDEXES: Feature[] = [
  "samePartitionIndex",
  "indexElsewhere",
  "uniqueIndex",
  "listIndex",
  "blindIndex",
  "expiresAt",
];
const hasAny = (entity: FeatureEntity, features: readonly Feature[]) => features.some((f) => entity.has(f));

/**
 * Where a plan does not yet show what is sent (each a gap in src, named here and reported on issue
 * 30), the combination × form is left out (listed as skipped with its reason).
 */
function gapOf(entity: FeatureEntity, form: Form): string | undefined {
  const several = form === "transaction" || form === "bulk";
  if (entity.has("wide")) {
    const plain = !hasAny(entity, [...INDEXES, "summaryHere", "summaryElsewhere"]);
    if (plain && several)
      return "db.explainTransaction does not explain a wide entity without indexes or summaries (docs/features-compose.md)";
  }
  return undefined;
}

for (const kind of composeStoreKinds) {
  const combinations = combinationsFor(kind.name);
  if (combinations.length === 0) continue;
  describe.each(combinations.map((features) => [features.join(" + "), features] as const))(
    `%s sends its plans on ${kind.name} (seed ${SEED})`,
    (_name, features) => {
      const entity = featureEntity(features);
      for (const form of FORM_NAMES) {
        const gap = gapOf(entity, form);
        if (gap !== undefined) {
          // Not compared: explain refuses this form, before any request, saying why.
          it(`${form}: refused by explain (${gap})`, async () => {
            const w = await worldOf(kind, features, form);
            w.store.sent.length = 0;
            const row = makeRow(entity, "A", 1, 1);
            const explained =
              form === "transaction"
                ? w.db.explainTransaction((tx: Tx) => tx.upsert(row))
                : w.repo.explainBulk("upsert", [row]);
            await expect(explained).rejects.toThrow(ValidationError);
            expect(w.store.sent).toEqual([]);
          });
          continue;
        }
        it(`${form}: the requests sent are the plan's`, async () => {
          const w = await worldOf(kind, features, form);
          await FORMS[form](w);
          // Something was compared: an empty plan and an empty wire would agree whatever the code did.
          expect(w.store.sent.length).toBeGreaterThan(0);
        });
      }
    },
  );
}
