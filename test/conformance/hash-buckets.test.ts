/**
 * Hash buckets on every store: writes spread over the buckets' partitions (checked against an independent
 * FNV-1a), and a `find` without the hashed field reads every bucket and returns one stream equal to a
 * sorted reference computed here from the inputs: `toArray`, `first`, `take`, iteration, and pages with
 * one stored continuation across buckets. On the unsorted (Cosmos-flavoured) store, key-order reads stay
 * in key order and pages hold every result exactly once, as for any query there.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, TableContext, type TableStore, ValidationError } from "../../src/index.js";
import { uniquePrefix } from "../fixtures/context.js";
import { rejectionOf } from "../support/rejection.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { storeKinds } from "../support/stores.js";
import { unsortedStoreKinds } from "../support/unsorted-stores.js";

const BUCKETS = 8;

@Entity({ table: "HbReadings", partitionKey: "{site}_{device:hash:8}", rowKey: "{at:ticks}_{device}" })
class Reading {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "String" }) device!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Int32" }) value!: number;
}

const allStores: Array<{ name: string; sorted: boolean; create(): TableStore }> = [
  ...storeKinds.map((kind) => ({ name: kind.name, sorted: true, create: () => kind.create() })),
  ...unsortedStoreKinds.map((kind) => ({ name: kind.name, sorted: false, create: () => kind.create() })),
];

/** FNV-1a 32 written independently of tablekit (BigInt arithmetic), for the expected partitions. */
function referenceBucket(text: string): number {
  let hash = 0x811c9dc5n;
  for (const byte of Buffer.from(text, "utf8")) hash = ((hash ^ BigInt(byte)) * 0x01000193n) % 2n ** 32n;
  return Number(hash % BigInt(BUCKETS));
}

const SEED = testSeed(17);
const BASE = Date.UTC(2025, 0, 1);

/** 90 readings of 13 devices at distinct, shuffled times on "north"; 3 of one device on "south". */
function readings(): Reading[] {
  const random = seededRandom(SEED);
  const out: Reading[] = [];
  for (let i = 0; i < 90; i++) {
    // 37 is coprime with 101, so the minute offsets never repeat: every RowKey is distinct.
    out.push(reading("north", `dev${i % 13}`, BASE + ((i * 37) % 101) * 60_000, Math.floor(random() * 1000)));
  }
  for (let i = 0; i < 3; i++) out.push(reading("south", "solo", BASE + i * 1000, i));
  return out;
}

function reading(site: string, device: string, at: number, value: number): Reading {
  return Object.assign(new Reading(), { site, device, at: new Date(at), value });
}

/** The reference order: the RowKey is ticks then device, so distinct times sort by time. */
function sortedRef(rows: readonly Reading[], site: string): string[] {
  return rows
    .filter((r) => r.site === site)
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .map(label);
}

const label = (r: Reading): string => `${r.device}@${r.at.toISOString()}`;
const labels = (rows: readonly Reading[]): string[] => rows.map(label);

async function setup(store: TableStore) {
  const prefix = uniquePrefix();
  const db = new TableContext({ store, tablePrefix: prefix });
  await db.ensureTables(Reading);
  const rows = readings();
  const repository = db.repository(Reading);
  for (const row of rows) await repository.insert(row);
  return { repository, rows, table: `${prefix}HbReadings` };
}

describe.each(allStores)(`hash buckets on $name, data seed ${SEED}`, ({ create, sorted }) => {
  it("spreads writes over the buckets' partitions and fans a find out over all of them", async () => {
    const store = create();
    const { repository, rows } = await setup(store);
    const partitions = new Set<string>();
    for (const row of rows) partitions.add(`${row.site}_${referenceBucket(row.device)}`);
    const stored = await repository.scan().toArray();
    const seen = new Set(stored.map((r) => repository.keyOf(r).partitionKey));
    expect(seen).toEqual(partitions);
    expect(seen.size).toBeGreaterThan(2);

    const north = repository.find({ site: "north" });
    expect(north.explain()).toMatchObject({ kind: "fan-out", partitions: BUCKETS });
    expect(labels(await north.toArray())).toEqual(sortedRef(rows, "north"));

    // Fixing the hashed field too is an ordinary single-partition query.
    const one = repository.find({ site: "north", device: "dev3" });
    expect(one.explain().kind).toBe("partition-scan");
    expect(labels(await one.toArray())).toEqual(
      sortedRef(rows, "north").filter((l) => l.startsWith("dev3@")),
    );
  });

  it("first, take and iteration give the key-order answer", async () => {
    const { repository, rows } = await setup(create());
    const expected = sortedRef(rows, "north");
    const north = repository.find({ site: "north" });
    const first = await north.first();
    expect(first && label(first)).toBe(expected[0]);
    expect(labels(await north.take(11).toArray())).toEqual(expected.slice(0, 11));
    const iterated: Reading[] = [];
    for await (const r of north.take(9)) iterated.push(r);
    expect(labels(iterated)).toEqual(expected.slice(0, 9));
    const all: Reading[] = [];
    for await (const r of north) all.push(r);
    if (sorted) expect(labels(all)).toEqual(expected);
    else expect(labels(all).sort()).toEqual([...expected].sort());
    const late = north.where("value", "ge", 500);
    const lateExpected = rows
      .filter((r) => r.site === "north" && r.value >= 500)
      .sort((a, b) => a.at.getTime() - b.at.getTime())
      .map(label);
    expect(labels(await late.toArray())).toEqual(lateExpected);
  });

  it("pages across buckets with one stored continuation, resumed on a new query", async () => {
    const { repository, rows } = await setup(create());
    const expected = sortedRef(rows, "north");
    const random = seededRandom(SEED + 1);
    for (let round = 0; round < 3; round++) {
      const size = 1 + Math.floor(random() * 15);
      const paged: string[] = [];
      let stored: string | undefined;
      do {
        // A fresh query each time, and the token through JSON, as if stored between requests.
        const page = await repository.find({ site: "north" }).page({ size, continuation: stored });
        expect(page.items.length, `size ${size}`).toBeLessThanOrEqual(size);
        paged.push(...labels(page.items));
        stored =
          page.continuation === undefined
            ? undefined
            : (JSON.parse(JSON.stringify(page.continuation)) as string);
      } while (stored !== undefined);
      if (sorted) expect(paged, `size ${size}`).toEqual(expected);
      else expect([...paged].sort(), `size ${size}`).toEqual([...expected].sort());
    }
  });

  it("pages through take(n) (sorted stores) and keeps the unsorted-store rule", async () => {
    const { repository, rows } = await setup(create());
    const expected = sortedRef(rows, "north");
    const top = repository.find({ site: "north" }).take(10);
    if (!sorted) {
      expect(labels((await top.page({ size: 10 })).items)).toEqual(expected.slice(0, 10));
      const refused = await rejectionOf(top.page({ size: 4 }));
      expect(refused).toBeInstanceOf(ValidationError);
      return;
    }
    const paged: string[] = [];
    let continuation: string | undefined;
    let pages = 0;
    do {
      const page = await top.page({ size: 4, continuation });
      paged.push(...labels(page.items));
      continuation = page.continuation;
      pages++;
    } while (continuation !== undefined);
    expect(paged).toEqual(expected.slice(0, 10));
    expect(pages).toBe(3);
  });

  it("reads empty buckets and empty sites, and refuses another query's continuation", async () => {
    const { repository, rows } = await setup(create());
    // "south" has one device, so all but one of its buckets are empty.
    expect(labels(await repository.find({ site: "south" }).toArray())).toEqual(sortedRef(rows, "south"));
    const southPages: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await repository.find({ site: "south" }).page({ size: 2, continuation });
      southPages.push(...labels(page.items));
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect([...southPages].sort()).toEqual([...sortedRef(rows, "south")].sort());

    const nowhere = repository.find({ site: "nowhere" });
    expect(await nowhere.toArray()).toEqual([]);
    expect(await nowhere.first()).toBeUndefined();
    expect(await nowhere.page({ size: 5 })).toEqual({ items: [] });

    const { continuation: token } = await repository.find({ site: "north" }).page({ size: 5 });
    expect(token).toBeDefined();
    const wrong = await rejectionOf(
      repository.find({ site: "south" }).page({ size: 5, continuation: token }),
    );
    expect(wrong).toBeInstanceOf(ValidationError);
    expect((wrong as ValidationError).message).toMatch(/different query/);
  });
});
