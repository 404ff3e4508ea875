/**
 * The fault layers themselves: the HTTP proxy in front of Azurite and the port-level FaultyStore.
 * They must be transparent at rate 0, inject exactly what they count, and apply a `lost` request
 * while never applying a `reset` one.
 */
import { createHash } from "node:crypto";
import { Agent, createServer, request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { StoreError, TransactionError } from "../../src/index.js";
import { AzureStore } from "../../src/store/azure/azure-store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { classifyRequest, startFaultProxy } from "../support/fault-proxy.js";
import {
  ALL_FAULT_KINDS,
  type FaultKind,
  FaultPlan,
  FaultyStore,
  TRANSIENT_FAULTS,
} from "../support/faulty-store.js";
import { azuriteSelected } from "../support/stores.js";
import { uniqueTableName } from "../support/table-names.js";
import { type FaultyStores, faultyStores, readTable, rejectionOf, storeNames } from "./harness.js";

describe("FaultPlan", () => {
  it("is reproducible from its seed and follows rate and mix", () => {
    const decisions = (seed: number) => {
      const plan = new FaultPlan({ seed, rate: 0.2 });
      return Array.from({ length: 10_000 }, (_, i) => plan.decide("submitTransaction", `r${i}`)?.kind ?? "-");
    };
    const first = decisions(7);
    expect(decisions(7)).toEqual(first);
    expect(decisions(8)).not.toEqual(first);
    const faulted = first.filter((kind) => kind !== "-");
    // 2,000 expected; 5 standard deviations is ±200.
    expect(faulted.length).toBeGreaterThan(1_800);
    expect(faulted.length).toBeLessThan(2_200);
    expect(new Set(faulted)).toEqual(new Set(TRANSIENT_FAULTS));
  });

  it("counts requests per method and faults per kind, and rate 0 injects nothing", () => {
    const plan = new FaultPlan({ seed: 3, rate: 1, mix: ["busy"] });
    for (let i = 0; i < 5; i++) expect(plan.decide("upsert", `r${i}`)?.kind).toBe("busy");
    plan.setRate(0);
    for (let i = 0; i < 50; i++) expect(plan.decide("getEntity")).toBeUndefined();
    expect(plan.requests).toBe(55);
    expect(plan.requestsByMethod).toMatchObject({ upsert: 5, getEntity: 50, insert: 0 });
    expect(plan.faults.busy).toBe(5);
    expect(plan.totalFaults).toBe(5);
    expect(plan.faultsByMethod.upsert.busy).toBe(5);
    plan.resetCounts();
    expect(plan.requests).toBe(0);
    expect(plan.totalFaults).toBe(0);
  });

  it("decides per request, not per arrival order: the same requests in any order meet the same faults", () => {
    const identities = Array.from({ length: 2_000 }, (_, i) => `p${i % 7}\u0001r${i}`);
    const decisions = (order: readonly string[]) => {
      const plan = new FaultPlan({ seed: 11, rate: 0.3 });
      return new Map(order.map((identity) => [identity, plan.decide("insert", identity)?.kind ?? "-"]));
    };
    const forward = decisions(identities);
    const backward = decisions([...identities].reverse());
    expect([...backward].sort()).toEqual([...forward].sort());
  });

  it("faults one request identity at most maxFaultsPerRequest times, so retries cannot run out", () => {
    const plan = new FaultPlan({ seed: 1, rate: 1, mix: ["busy"], maxFaultsPerRequest: 2 });
    const attempts = Array.from({ length: 6 }, () => plan.decide("update", "p\u0001r")?.kind ?? "-");
    expect(attempts).toEqual(["busy", "busy", "-", "-", "-", "-"]);
    // Another identity has its own budget.
    expect(plan.decide("update", "p\u0001other")?.kind).toBe("busy");
    // The default budget is 3.
    const defaults = new FaultPlan({ rate: 1, mix: ["internal"] });
    expect(Array.from({ length: 5 }, () => defaults.decide("getEntity", "x")?.kind ?? "-")).toEqual([
      "internal",
      "internal",
      "internal",
      "-",
      "-",
    ]);
  });

  it("faults exactly the next N requests of a method, whatever the rate", () => {
    const plan = new FaultPlan({ rate: 0 });
    plan.faultNext({ method: "insert", kind: "lost", count: 2 });
    plan.faultNext({ method: ["update", "delete"], kind: "timeout" });
    expect(plan.decide("getEntity")).toBeUndefined();
    expect(plan.decide("insert")?.kind).toBe("lost");
    expect(plan.decide("delete")?.kind).toBe("timeout");
    expect(plan.decide("update")).toBeUndefined();
    expect(plan.decide("insert")?.kind).toBe("lost");
    expect(plan.decide("insert")).toBeUndefined();
    expect(plan.pendingRules).toBe(0);
  });

  it("rejects a rate outside [0, 1] and an empty mix", () => {
    const plan = new FaultPlan();
    expect(() => plan.setRate(1.5)).toThrow(RangeError);
    expect(() => plan.setRate(-0.1)).toThrow(RangeError);
    expect(() => plan.setMix([])).toThrow(RangeError);
  });
});

describe("FaultyStore", () => {
  const statusOf: Record<Exclude<FaultKind, "reset" | "lost">, [number, string]> = {
    busy: [503, "ServerBusy"],
    busyRetryAfter: [503, "ServerBusy"],
    internal: [500, "InternalError"],
    timeout: [408, "Timeout"],
    badRequest: [400, "InvalidInput"],
    forbidden: [403, "AuthorizationFailure"],
    tooLarge: [413, "RequestBodyTooLarge"],
  };

  it.each(Object.entries(statusOf))(
    "answers %s as the service would, without calling the store",
    async (kind, [status, code]) => {
      const inner = new MemoryStore();
      await inner.createTable("faults");
      const store = new FaultyStore(inner);
      store.plan.faultNext({ kind: kind as FaultKind, method: "insert" });
      const error = await rejectionOf(store.insert("faults", { partitionKey: "p", rowKey: "r" }));
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ statusCode: status, serviceCode: code });
      if (kind === "busyRetryAfter") expect((error as StoreError).retryAfterMs).toBeGreaterThan(0);
      expect(await inner.getEntity("faults", "p", "r")).toBeUndefined();
    },
  );

  it("answers a batch's final 4xx as a failed transaction and its transient faults as StoreError", async () => {
    const inner = new MemoryStore();
    await inner.createTable("faults");
    const store = new FaultyStore(inner);
    const batch = () =>
      store.submitTransaction("faults", "p", [
        { kind: "insert", entity: { partitionKey: "p", rowKey: "r" } },
      ]);
    store.plan.faultNext({ kind: "forbidden", method: "submitTransaction" });
    expect(await rejectionOf(batch())).toMatchObject({
      constructor: TransactionError,
      statusCode: 403,
      index: 0,
    });
    store.plan.faultNext({ kind: "internal", method: "submitTransaction" });
    expect(await rejectionOf(batch())).toMatchObject({ constructor: StoreError, statusCode: 500 });
    expect(await readTable(inner, "faults")).toHaveLength(0);
  });
});

describe.skipIf(!azuriteSelected)(
  "FaultyStore over AzureStore (needs Azurite: TABLEKIT_STORES leaves it out)",
  () => {
    it("wraps any store: a lost insert reaches Azurite, a reset one does not", async () => {
      const azure = AzureStore.fromConnectionString(azuriteConnectionString());
      const store = new FaultyStore(azure, { seed: 1 });
      const table = uniqueTableName("wrap");
      await store.createTable(table);
      store.plan.faultNext({ method: "insert", kind: "lost" });
      store.plan.faultNext({ method: "insert", kind: "reset" });
      for (const rowKey of ["lost", "reset"]) {
        expect(await rejectionOf(store.insert(table, { partitionKey: "p", rowKey }))).toMatchObject({
          serviceCode: "ECONNRESET",
        });
      }
      expect((await readTable(azure, table)).map((row) => row.rowKey)).toEqual(["lost"]);
      expect(store.plan.requestsByMethod).toMatchObject({ createTable: 1, insert: 2 });
    });
  },
);

describe.each(storeNames)("fault layer on %s", (name) => {
  let stores: FaultyStores | undefined;
  afterEach(async () => {
    await stores?.close();
    stores = undefined;
  });

  it("is transparent at rate 0", async () => {
    stores = await faultyStores(name, { rate: 0 });
    const table = uniqueTableName("clear");
    await stores.store.createTable(table);
    const entity = { partitionKey: "p", rowKey: "r", text: "héllo, wörld 😀", n: 5, big: 2n ** 40n };
    await stores.store.insert(table, entity);
    await stores.store.submitTransaction(table, "p", [
      {
        kind: "insert",
        entity: { partitionKey: "p", rowKey: "a", text: "line\r\n--boundary\r\nnot a part" },
      },
      { kind: "upsert", mode: "merge", entity: { partitionKey: "p", rowKey: "r", more: "ünïcödé" } },
    ]);
    const stored = await stores.direct.getEntity(table, "p", "r");
    expect(stored).toMatchObject({ text: "héllo, wörld 😀", n: 5, big: 2n ** 40n, more: "ünïcödé" });
    expect((await stores.store.getEntity(table, "p", "a"))?.text).toBe("line\r\n--boundary\r\nnot a part");
    expect(stores.plan.totalFaults).toBe(0);
    expect(stores.plan.requestsByMethod).toMatchObject({
      createTable: 1,
      insert: 1,
      submitTransaction: 1,
      getEntity: 1,
    });
  });

  it("applies a 'lost' request but not a 'reset' one; both look like a dropped connection", async () => {
    stores = await faultyStores(name);
    const table = uniqueTableName("lost");
    await stores.store.createTable(table);
    const heard: string[] = [];
    stores.plan.faultNext({
      method: "insert",
      kind: "lost",
      onFault: async ({ method, kind }) => {
        // The request is applied by now, and the client has not heard back yet.
        heard.push(`${method}/${kind}`);
        expect(await stores!.direct.getEntity(table, "p", "lost")).toBeDefined();
      },
    });
    const lost = await rejectionOf(stores.store.insert(table, { partitionKey: "p", rowKey: "lost" }));
    stores.plan.faultNext({ method: "insert", kind: "reset" });
    const reset = await rejectionOf(stores.store.insert(table, { partitionKey: "p", rowKey: "reset" }));
    for (const error of [lost, reset]) {
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ statusCode: undefined, serviceCode: "ECONNRESET" });
    }
    expect(heard).toEqual(["insert/lost"]);
    expect(await stores.direct.getEntity(table, "p", "lost")).toBeDefined();
    expect(await stores.direct.getEntity(table, "p", "reset")).toBeUndefined();
    expect(stores.plan.faults).toMatchObject({ lost: 1, reset: 1 });
  });

  it("injects every kind at random and counts each", async () => {
    stores = await faultyStores(name, { seed: 11, rate: 0 });
    const table = uniqueTableName("mix");
    await stores.store.createTable(table);
    stores.plan.setMix(ALL_FAULT_KINDS);
    stores.plan.setRate(0.5);
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const outcome = await stores.store
        .upsert(table, { partitionKey: "p", rowKey: `r${i}` }, "replace")
        .then(
          () => "ok",
          (error: StoreError) => `${error.statusCode ?? "-"}/${error.serviceCode}`,
        );
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    stores.plan.setRate(0);
    const faults = stores.plan.faults;
    for (const kind of ALL_FAULT_KINDS) expect(faults[kind], kind).toBeGreaterThan(0);
    expect(stores.plan.requestsByMethod.upsert).toBe(200);
    expect(outcomes.get("ok")).toBe(200 - stores.plan.totalFaults);
    expect(outcomes.get("-/ECONNRESET")).toBe(faults.reset + faults.lost);
    expect(outcomes.get("503/ServerBusy")).toBe(faults.busy + faults.busyRetryAfter);
    expect(outcomes.get("500/InternalError")).toBe(faults.internal);
    // Exactly the successful and the 'lost' upserts were applied.
    expect(await readTable(stores.direct, table)).toHaveLength(200 - stores.plan.totalFaults + faults.lost);
  });
});

describe("fault proxy", () => {
  it("classifies the SDK's requests by store method", () => {
    const cases: Array<[string, string, Record<string, string>, string]> = [
      ["POST", "/devstoreaccount1/Tables", {}, "createTable"],
      ["DELETE", "/devstoreaccount1/Tables('abc')", {}, "deleteTable"],
      ["GET", "/devstoreaccount1/abc(PartitionKey='p',RowKey='r')", {}, "getEntity"],
      ["GET", "/devstoreaccount1/abc()?$filter=x", {}, "queryPage"],
      ["POST", "/devstoreaccount1/abc", {}, "insert"],
      ["PUT", "/devstoreaccount1/abc(PartitionKey='p',RowKey='r')", {}, "upsert"],
      ["PATCH", "/devstoreaccount1/abc(PartitionKey='p',RowKey='r')", { "if-match": "*" }, "update"],
      ["DELETE", "/devstoreaccount1/abc(PartitionKey='p',RowKey='r')", { "if-match": "*" }, "delete"],
      ["POST", "/devstoreaccount1/$batch", {}, "submitTransaction"],
    ];
    for (const [method, url, headers, expected] of cases)
      expect(classifyRequest(method, url, headers)).toBe(expected);
  });

  it("forwards request and response bodies byte for byte, and closes cleanly with connections open", async () => {
    // An echo target: answers with the digest and the bytes it received.
    const echo = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const body = Buffer.concat(chunks);
        response.writeHead(200, { "x-digest": createHash("sha256").update(body).digest("hex") });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const address = echo.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const proxy = await startFaultProxy(
      `AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`,
    );
    expect(proxy.connectionString).toContain(
      `TableEndpoint=http://127.0.0.1:${proxy.port}/devstoreaccount1;`,
    );
    expect(proxy.connectionString).toContain("AccountKey=a2V5");
    const body = Buffer.concat([
      Buffer.from("--batch_1\r\nContent-Type: multipart/mixed\r\n\r\n"),
      Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256)),
      Buffer.from("\r\n--batch_1--\r\n"),
    ]);
    const agent = new Agent({ keepAlive: true });
    const answer = await new Promise<{ digest: string; body: Buffer }>((resolve, reject) => {
      const request = httpRequest(
        { host: "127.0.0.1", port: proxy.port, method: "POST", path: "/devstoreaccount1/$batch", agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ digest: String(response.headers["x-digest"]), body: Buffer.concat(chunks) }),
          );
        },
      );
      request.on("error", reject);
      request.end(body);
    });
    expect(answer.digest).toBe(createHash("sha256").update(body).digest("hex"));
    expect(answer.body.equals(body)).toBe(true);
    expect(proxy.plan.requestsByMethod.submitTransaction).toBe(1);
    expect(proxy.forwarded).toBe(1);
    // The kept-alive client connection is still open: close must not wait for it.
    await proxy.close();
    agent.destroy();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
    const store = AzureStore.fromConnectionString(proxy.connectionString, { requestTimeoutMs: 5_000 });
    expect(await rejectionOf(store.getEntity("abc", "p", "r"))).toMatchObject({
      serviceCode: "ECONNREFUSED",
    });
  });

  it.skipIf(!azuriteSelected)("is in front of the test Azurite (needs Azurite)", async () => {
    const proxy = await startFaultProxy(azuriteConnectionString());
    try {
      const store = AzureStore.fromConnectionString(proxy.connectionString);
      const table = uniqueTableName("front");
      await store.createTable(table);
      await store.upsert(table, { partitionKey: "p", rowKey: "r", v: 1 }, "replace");
      const direct = AzureStore.fromConnectionString(azuriteConnectionString());
      expect((await direct.getEntity(table, "p", "r"))?.v).toBe(1);
      expect(proxy.forwarded).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
