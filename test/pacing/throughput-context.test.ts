/**
 * The `throughput` option of a `TableContext`: bad limits fail at construction, queries are charged the
 * rows they return, and a request waiting for its pace holds no `maxConcurrentRequests` slot. On every
 * store, on a virtual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Column, Entity, TableContext, ValidationError } from "../../src/index.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";
import { CountingStore } from "../support/counting-store.js";
import { failureOf } from "../support/rejection.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";
import { InFlightStore, VirtualClock } from "../support/virtual-clock.js";

@Entity({ table: "Pings", partitionKey: "{device}", rowKey: "{seq:6}" })
class Ping {
  @Column({ type: "String" }) device!: string;
  @Column({ type: "Int32" }) seq!: number;
}

const ping = (device: string, seq: number) => Object.assign(new Ping(), { device, seq });

/** When (virtual ms) each request reached the store, with its method and partition. */
class ArrivalLog extends StoreWrapper {
  readonly arrivals: Array<{ at: number; method: string; partitionKey: string | undefined }> = [];
  readonly #clock: VirtualClock;

  constructor(inner: TableStore, clock: VirtualClock) {
    super(inner);
    this.#clock = clock;
  }

  protected override around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    this.arrivals.push({ at: this.#clock.now(), method: request.method, partitionKey: request.partitionKey });
    return send();
  }
}

describe("throughput: bad limits", () => {
  const bad: Array<[string, unknown]> = [
    ["zero", { perPartition: 0 }],
    ["negative", { perAccount: -1 }],
    ["NaN", { perPartition: Number.NaN }],
    ["Infinity (leave it out instead)", { perAccount: Number.POSITIVE_INFINITY }],
    ["a string", { perPartition: "500" }],
    ["not an object", 500],
    ["null", null],
  ];
  it.each(bad)("%s is a ValidationError at construction, before any request", async (_, throughput) => {
    const store = new CountingStore(new MemoryStore());
    const error = await failureOf(
      () => new TableContext({ store, throughput: throughput as { perPartition?: number } }),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(/throughput/);
    expect(store.requests).toBe(0);
  });

  it("absent limits mean no pacing at all", () => {
    expect(() => new TableContext({ store: new MemoryStore(), throughput: {} })).not.toThrow();
    expect(
      () => new TableContext({ store: new MemoryStore(), throughput: { perPartition: undefined } }),
    ).not.toThrow();
  });
});

describe.each(storeKinds)("throughput on $name", ({ create }) => {
  const store = create();
  const prefix = uniquePrefix("pace");

  beforeAll(async () => {
    const setup = new TableContext({ store, tablePrefix: prefix });
    await setup.ensureTables(Ping);
    const rows = Array.from({ length: 250 }, (_, seq) => ping("d1", seq));
    await setup.repository(Ping).bulkUpsert(rows);
  });

  afterAll(async () => {
    await new TableContext({ store, tablePrefix: prefix }).store.deleteTable(`${prefix}Pings`);
  });

  function pacedContext(throughput: { perPartition?: number; perAccount?: number }, extra = {}) {
    const clock = new VirtualClock();
    const inFlight = new InFlightStore(store);
    const log = new ArrivalLog(inFlight, clock);
    const db = new TableContext({
      store: log,
      tablePrefix: prefix,
      throughput,
      sleep: clock.sleep,
      now: clock.now,
      ...extra,
    });
    return { db, clock, inFlight, log };
  }

  it("a query is charged the rows each page returns, before its next page is asked for", async () => {
    const { db, clock, inFlight, log } = pacedContext({ perPartition: 100 });
    const rows = await clock.run(async () => {
      const all: Ping[] = [];
      let continuation: string | undefined;
      do {
        const page = await db
          .repository(Ping)
          .find({ device: "d1" })
          .page({ size: 100, ...(continuation ? { continuation } : {}) });
        all.push(...page.items);
        continuation = page.continuation;
      } while (continuation);
      return all;
    }, inFlight);
    expect(rows).toHaveLength(250);
    const pages = log.arrivals.filter((arrival) => arrival.method === "queryPage");
    expect(pages.length).toBeGreaterThanOrEqual(3);
    // 100 rows at no more than 100 entities/s: each next page at least a second after the one before.
    for (let i = 1; i < pages.length; i++)
      expect(pages[i]!.at - pages[i - 1]!.at).toBeGreaterThanOrEqual(1000);
  });

  it("a request waiting for its partition's pace holds no concurrency slot: another partition goes at once", async () => {
    const { db, clock, inFlight, log } = pacedContext({ perPartition: 10 }, { maxConcurrentRequests: 1 });
    const repo = db.repository(Ping);
    await clock.run(async () => {
      // Three writes to d2 at 5 entities/s (slow start) queue for seconds; one to d3 arrives after them.
      await Promise.all([
        repo.upsert(ping("d2", 1)),
        repo.upsert(ping("d2", 2)),
        repo.upsert(ping("d2", 3)),
        repo.upsert(ping("d3", 1)),
      ]);
    }, inFlight);
    const writes = log.arrivals.filter((arrival) => arrival.method === "upsert");
    expect(writes.find((write) => write.partitionKey === "d3")?.at).toBe(0);
    const d2 = writes.filter((write) => write.partitionKey === "d2").map((write) => write.at);
    // One entity at no more than 10/s: at least 100 ms apart.
    for (let i = 1; i < d2.length; i++) expect(d2[i]! - d2[i - 1]!).toBeGreaterThanOrEqual(100);
  });

  it("point reads count one entity each", async () => {
    const { db, clock, inFlight, log } = pacedContext({ perPartition: 4 });
    await clock.run(async () => {
      for (let seq = 0; seq < 3; seq++) await db.repository(Ping).get({ device: "d1", seq });
    }, inFlight);
    const reads = log.arrivals.filter((arrival) => arrival.method === "getEntity").map((read) => read.at);
    expect(reads).toHaveLength(3);
    for (let i = 1; i < reads.length; i++) expect(reads[i]! - reads[i - 1]!).toBeGreaterThanOrEqual(250);
  });
});
