/**
 * `tablekit/testing` (API.md, "Packages and first contact"): `createTestContext` on a fresh MemoryStore
 * or, given a connection string, on that account under a unique prefix that `close()` clears; and
 * `faultyStore`, whose faults are decided per request from the seed, never by arrival order.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  StoreError,
  type TableStore,
  ValidationError,
  type WireEntity,
} from "../../src/index.js";
import { createTestContext, faultyStore, type StoreFaultKind } from "../../src/testing/index.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { failureOf } from "../support/rejection.js";
import { testSeed } from "../support/seeded-random.js";
import { azuriteSelected } from "../support/stores.js";

@Entity({ table: "KitNotes", partitionKey: "{owner}", rowKey: "{id}" })
class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) text!: string;
}

const note = (owner: string, id: number): Note =>
  Object.assign(new Note(), { owner, id, text: `note ${id}` });
const FAST_RETRY = { retries: 8, minDelayMs: 1, maxDelayMs: 5 } as const;
const SEED = testSeed(20);
/** The error a request failed with, or `undefined` when it succeeded. */
const errorOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );
const wire = (rowKey: string): WireEntity => ({ partitionKey: "p", rowKey, text: "x" });

describe("createTestContext", () => {
  it("gives each call its own MemoryStore, with the entities' tables created", async () => {
    const first = await createTestContext({ entities: [Note] });
    const second = await createTestContext({ entities: [Note] });
    expect(first.store).toBeInstanceOf(MemoryStore);
    expect(first.store).not.toBe(second.store);
    expect(first.tablePrefix).toBe("");
    await first.db.repository(Note).insert(note("ann", 1));
    expect(await first.db.repository(Note).get({ owner: "ann", id: 1 })).toMatchObject({ text: "note 1" });
    expect(await second.db.repository(Note).find({ owner: "ann" }).toArray()).toEqual([]);
    await first.close();
    await second.close();
  });

  it("wraps the store when asked, and the context uses the wrapped one", async () => {
    const { db, store } = await createTestContext({
      entities: [Note],
      retry: FAST_RETRY,
      wrapStore: (inner) => faultyStore(inner, { seed: SEED, rate: 0 }),
    });
    expect(store).not.toBeInstanceOf(MemoryStore);
    await db.repository(Note).insert(note("bo", 2));
    expect((store as ReturnType<typeof faultyStore>).faultCounts.requests).toBeGreaterThan(0);
  });

  describe.skipIf(!azuriteSelected)("on an account (Azurite)", () => {
    it("uses a unique table prefix and close() deletes its tables", async () => {
      const connectionString = azuriteConnectionString();
      const a = await createTestContext({ connectionString, entities: [Note] });
      const b = await createTestContext({ connectionString, entities: [Note] });
      expect(a.tablePrefix).toMatch(/^t[0-9a-f]{12}$/);
      expect(a.tablePrefix).not.toBe(b.tablePrefix);
      await a.db.repository(Note).insert(note("cy", 3));
      expect(await b.db.repository(Note).find({ owner: "cy" }).toArray()).toEqual([]);
      expect(await a.store.listTables(a.tablePrefix)).toEqual([`${a.tablePrefix}KitNotes`]);
      await a.close();
      await a.close();
      expect(await b.store.listTables(a.tablePrefix)).toEqual([]);
      expect(await b.store.listTables(b.tablePrefix)).toEqual([`${b.tablePrefix}KitNotes`]);
      await b.close();
    });
  });
});

describe("faultyStore", () => {
  /** Sends the same requests (each retried until it passes) and lists every fault met, in request order. */
  async function faultsMet(seed: number, rate: number, kinds?: StoreFaultKind[]): Promise<string[]> {
    const inner = new MemoryStore();
    await inner.createTable("Faults");
    const store = faultyStore(inner, { seed, rate, ...(kinds ? { kinds } : {}) });
    const met: string[] = [];
    for (let i = 0; i < 40; i++) {
      for (let attempt = 1; ; attempt++) {
        const error = await errorOf(store.upsert("Faults", wire(`r${i}`), "replace"));
        if (error === undefined) break;
        const e = error as StoreError;
        met.push(`r${i}#${attempt}:${e.statusCode ?? e.serviceCode}`);
      }
    }
    return met;
  }

  it(`decides the same faults for the same seed (seed ${SEED})`, async () => {
    const first = await faultsMet(SEED, 0.3);
    expect(first.length).toBeGreaterThan(0);
    expect(await faultsMet(SEED, 0.3)).toEqual(first);
    expect(await faultsMet(SEED + 1, 0.3)).not.toEqual(first);
  });

  it("decides per request, not by arrival order", async () => {
    const inner = new MemoryStore();
    await inner.createTable("Faults");
    const forward = faultyStore(inner, { seed: SEED, rate: 0.5 });
    const backward = faultyStore(inner, { seed: SEED, rate: 0.5 });
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    const outcome = async (store: TableStore, key: string) =>
      (await errorOf(store.getEntity("Faults", "p", key))) === undefined ? "ok" : "fault";
    const inOrder = new Map<string, string>();
    for (const key of keys) inOrder.set(key, await outcome(forward, key));
    const reversed = new Map<string, string>();
    await Promise.all(
      [...keys].reverse().map(async (key) => reversed.set(key, await outcome(backward, key))),
    );
    expect(Object.fromEntries(reversed)).toEqual(Object.fromEntries(inOrder));
  });

  it("faults each request at most maxFaultsPerRequest times, with the kinds asked for", async () => {
    const store = faultyStore(new MemoryStore(), {
      seed: 1,
      rate: 1,
      kinds: ["503"],
      maxFaultsPerRequest: 2,
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await failureOf(() => store.createTable("Capped"));
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).statusCode).toBe(503);
    }
    await store.createTable("Capped");
    expect(store.faultCounts).toEqual({ requests: 3, faults: { "503": 2, "500": 0, reset: 0, lost: 0 } });
  });

  it("applies a request whose answer it loses, and drops a reset one", async () => {
    const inner = new MemoryStore();
    await inner.createTable("Lost");
    const lost = faultyStore(inner, { seed: 1, rate: 1, kinds: ["lost"], maxFaultsPerRequest: 1 });
    const error = (await failureOf(() => lost.insert("Lost", wire("a")))) as StoreError;
    expect(error.serviceCode).toBe("ECONNRESET");
    expect(await inner.getEntity("Lost", "p", "a")).toBeDefined();
    const reset = faultyStore(inner, { seed: 1, rate: 1, kinds: ["reset"], maxFaultsPerRequest: 1 });
    expect(((await failureOf(() => reset.insert("Lost", wire("b")))) as StoreError).serviceCode).toBe(
      "ECONNRESET",
    );
    expect(await inner.getEntity("Lost", "p", "b")).toBeUndefined();
  });

  it(`lets a context with retries write everything through faults of every kind (seed ${SEED})`, async () => {
    const { db, store } = await createTestContext({
      entities: [Note],
      retry: FAST_RETRY,
      wrapStore: (inner) => faultyStore(inner, { seed: SEED, rate: 0.3 }),
    });
    const repo = db.repository(Note);
    for (let id = 0; id < 30; id++) await repo.upsert(note("dee", id));
    await db.transaction((tx) => {
      for (let id = 30; id < 40; id++) tx.insert(note("dee", id));
    });
    const ids = (await repo.find({ owner: "dee" }).toArray()).map((n) => n.id);
    expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const { faults } = (store as ReturnType<typeof faultyStore>).faultCounts;
    expect(Object.values(faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it("refuses bad options with a ValidationError", () => {
    const inner = new MemoryStore();
    expect(() => faultyStore(inner, { seed: 1, rate: 1.5 })).toThrow(ValidationError);
    expect(() => faultyStore(inner, { seed: 0.5, rate: 0.1 })).toThrow(ValidationError);
    expect(() => faultyStore(inner, { seed: 1, rate: 0.1, kinds: [] })).toThrow(ValidationError);
    expect(() => faultyStore(inner, { seed: 1, rate: 0.1, kinds: ["404" as StoreFaultKind] })).toThrow(
      ValidationError,
    );
  });
});
