/**
 * Wide entities under lost answers and transient faults: each write is one entity group transaction
 * over all the entity's rows, so a lost answer is settled by reading every row back (its own write id
 * makes "ours" exact), and whatever the faults, the stored rows are always one whole write.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ConcurrencyError, etagOf, TableContext } from "../../src/index.js";
import { assembleWide, parsePart } from "../../src/serialization/wide-rows.js";
import type { StoredEntity } from "../../src/store/table-store.js";
import { declareWide, type WideRow } from "../fixtures/models.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import {
  type FaultyStores,
  faultyContext,
  faultyStores,
  readTable,
  rejectionOf,
  storeNames,
} from "./harness.js";

const COLUMNS = 300;

const Wide = declareWide("WideLost", COLUMNS);
type Wide = WideRow;

function wide(id: string, value: number, columns = COLUMNS): Wide {
  const w = new Wide();
  w.group = "g";
  w.id = id;
  for (let i = 0; i < columns; i++) w[`v${i}`] = value;
  return w;
}

/** The stored rows grouped by entity: each must be exactly one whole write. */
function entitiesOf(rows: readonly StoredEntity[]): Map<string, StoredEntity> {
  const byEntity = new Map<string, StoredEntity[]>();
  for (const row of rows) {
    const part = parsePart(row);
    expect(part, `row ${row.rowKey} is a part`).toBeDefined();
    const base = part?.base as string;
    byEntity.set(base, [...(byEntity.get(base) ?? []), row]);
  }
  const out = new Map<string, StoredEntity>();
  for (const [base, parts] of byEntity) {
    const entity = assembleWide(parts);
    expect(entity, `entity ${base} is one whole write`).toBeDefined();
    out.set(base, entity as StoredEntity);
  }
  return out;
}

describe.each(storeNames)("wide entities with lost answers on %s", (name) => {
  let stores: FaultyStores;
  afterEach(() => stores?.close());

  async function setUp() {
    stores = await faultyStores(name);
    const context = await faultyContext(stores, [Wide]);
    const other = new TableContext({ store: stores.direct, tablePrefix: context.prefix });
    return { ...context, other, wides: context.db.repository(Wide) };
  }

  it("insert, update (shrinking), upsert (growing) and delete applied but lost each resolve once", async () => {
    const { wides, counter } = await setUp();
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    const w = wide("a", 1);
    await wides.insert(w);
    expect(counter.calls.submitTransaction).toBe(2);
    let stored = entitiesOf(await readTable(stores.direct, wides.table));
    expect(etagOf(w)).toBe(stored.get("a")?.etag);

    for (let i = 10; i < COLUMNS; i++) w[`v${i}`] = undefined;
    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    await wides.update(w);
    const rows = await readTable(stores.direct, wides.table);
    expect(rows.map((r) => r.rowKey)).toEqual(["a 00"]);
    stored = entitiesOf(rows);
    expect(etagOf(w)).toBe(stored.get("a")?.etag);

    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    await wides.upsert(wide("a", 2));
    expect((await readTable(stores.direct, wides.table)).map((r) => r.rowKey)).toEqual(["a 00", "a 01"]);

    stores.plan.faultNext({ method: "submitTransaction", kind: "lost" });
    expect(await wides.delete({ group: "g", id: "a" })).toBe(true);
    expect(await readTable(stores.direct, wides.table)).toEqual([]);
  });

  it("a lost update whose rows another writer changed before the retry is a ConcurrencyError", async () => {
    const { wides, other } = await setUp();
    await wides.insert(wide("a", 1));
    const mine = await wides.getOrThrow({ group: "g", id: "a" });
    mine.v0 = 5;
    stores.plan.faultNext({
      method: "submitTransaction",
      kind: "lost",
      onFault: async () => {
        await other.repository(Wide).upsert(wide("a", 9));
      },
    });
    const error = await rejectionOf(wides.update(mine));
    expect(error).toBeInstanceOf(ConcurrencyError);
    const stored = entitiesOf(await readTable(stores.direct, wides.table));
    expect(stored.get("a")?.v0).toBe(9);
  });

  it(`random transient faults never leave a partial entity (seed ${testSeed(1)})`, async () => {
    const { wides } = await setUp();
    stores.plan.setRate(0.3);
    const random = seededRandom(testSeed(1));
    const expected = new Map<string, number | undefined>();
    for (let step = 0; step < 24; step++) {
      const id = `e${Math.floor(random() * 3)}`;
      const value = step;
      const roll = random();
      if (roll < 0.6) {
        // Upserts alternate between one and two rows (10 or 300 columns).
        await wides.upsert(wide(id, value, roll < 0.3 ? 10 : COLUMNS));
        expected.set(id, value);
      } else {
        await wides.delete({ group: "g", id });
        expected.set(id, undefined);
      }
    }
    stores.plan.setRate(0);
    const stored = entitiesOf(await readTable(stores.direct, wides.table));
    for (const [id, value] of expected) expect(stored.get(id)?.v0, id).toBe(value);
  });
});
