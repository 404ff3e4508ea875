import { describe, expect, it } from "vitest";
import { ShardedStore, StoreError, TableContext } from "../../src/index.js";
import { Column, Entity } from "../../src/schema/decorators.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

@Entity({ table: "ShardFaults", partitionKey: "p{group:3}", rowKey: "{id:3}" })
class Reading {
  @Column({ type: "Int32" }) group!: number;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "Int32" }) value!: number;
}

function reading(group: number, value: number): Reading {
  return Object.assign(new Reading(), { group, id: 1, value });
}

/** A shard that counts its requests and, while `down`, fails each with 503 ServerBusy (an account over its targets). */
class CountingShard extends StoreWrapper {
  requests = 0;
  down = false;
  protected override async around<T>(_request: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.requests++;
    if (this.down) throw new StoreError("ServerBusy", { statusCode: 503, serviceCode: "ServerBusy" });
    return send();
  }
}

const GROUPS = 30;
const RETRIES = 3;

describe("a failing shard's retries and request slots", () => {
  it("are its own: with one context slot, the other shards' writes each take one request and succeed", async () => {
    const raw = { a: new MemoryStore(), b: new MemoryStore(), c: new MemoryStore() };
    const seeder = new TableContext({ store: new ShardedStore({ shards: raw }) });
    await seeder.ensureTables(Reading);
    const homes = new Map<number, string>();
    const sharded = seeder.store as ShardedStore;
    for (let g = 0; g < GROUPS; g++) {
      await seeder.repository(Reading).insert(reading(g, 0));
      homes.set(g, await sharded.shardOf("ShardFaults", `p${String(g).padStart(3, "0")}`));
    }

    // Another process: shard b (not the directory) fails every request; retries and slots are the context's.
    const shards = { a: new CountingShard(raw.a), b: new CountingShard(raw.b), c: new CountingShard(raw.c) };
    const store = new ShardedStore({ shards: shards as Record<string, TableStore> });
    await store.shardMap();
    shards.b.down = true;
    for (const shard of Object.values(shards)) shard.requests = 0;
    const db = new TableContext({
      store,
      maxConcurrentRequests: 1,
      retry: { retries: RETRIES, minDelayMs: 1, maxDelayMs: 2 },
    });
    const outcomes = await Promise.allSettled(
      [...homes.keys()].map((g) => db.repository(Reading).upsert(reading(g, 1))),
    );

    const count = (name: string) => [...homes.values()].filter((home) => home === name).length;
    expect(count("b")).toBeGreaterThan(0);
    for (const [g, home] of homes) {
      const outcome = outcomes[g] as PromiseSettledResult<unknown>;
      expect(outcome.status, `group ${g} on ${home}`).toBe(home === "b" ? "rejected" : "fulfilled");
      if (outcome.status === "rejected") expect((outcome.reason as StoreError).statusCode).toBe(503);
    }
    // Each write elsewhere was one request (its partition's fenced transaction): no retry, no wait
    // on shard b's failures; shard b's writes used their own attempts, all of them.
    expect(shards.a.requests).toBe(count("a"));
    expect(shards.c.requests).toBe(count("c"));
    expect(shards.b.requests).toBe(count("b") * (1 + RETRIES));
    for (const [g, home] of homes) {
      const value = (await seeder.repository(Reading).get({ group: g, id: 1 }))?.value;
      expect(value, `group ${g}`).toBe(home === "b" ? 0 : 1);
    }
  });
});
