import { context, metrics, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  EntityAlreadyExistsError,
  MemoryStore,
  TableContext,
  type TableContextOptions,
} from "../../src/index.js";
import { FaultyStore } from "../support/faulty-store.js";
import { expectRejection } from "../support/rejection.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";

@Entity({
  table: "Traced",
  partitionKey: "{department}",
  rowKey: "{employeeId:6}",
  // A copy in another table: a composite write whose plan steps are requests of their own.
  indexes: { byEmail: { table: "TracedByEmail", partitionKey: "{email}", rowKey: "{employeeId:6}" } },
})
class Traced {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) email!: string;
}

@Entity({ table: "TracedPlain", partitionKey: "{department}", rowKey: "{employeeId:6}" })
class Plain {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
}

@Entity({ table: "TracedLarge", partitionKey: "{department}", rowKey: "{employeeId:6}" })
class WithLarge {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "Binary", large: true }) photo?: Uint8Array;
}

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();
const reader = new TestReader();
context.setGlobalContextManager(contextManager);
trace.setGlobalTracerProvider(provider);
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

afterAll(() => {
  trace.disable();
  context.disable();
  metrics.disable();
});

beforeEach(() => exporter.reset());

/** The spans whose parent is `span`. */
function childrenOf(span: ReadableSpan): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId);
}

function spanNamed(name: string): ReadableSpan {
  const found = exporter.getFinishedSpans().filter((span) => span.name === name);
  expect(found.map((span) => span.name)).toEqual([name]);
  return found[0] as ReadableSpan;
}

function contextOn(store: TableContextOptions["store"], options: Partial<TableContextOptions> = {}) {
  return new TableContext({ store, tablePrefix: uniquePrefix("otel"), ...options });
}

const kinds = storeKinds.filter((kind) => kind.name !== "serve");

describe.each(kinds)("OpenTelemetry on $name", (kind) => {
  it("makes an upsert, a get and a find call spans with a CLIENT span per request", async () => {
    const db = contextOn(kind.create());
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    const table = employees.table;
    const prefix = table.slice(0, -"Traced".length);
    exporter.reset();

    await employees.upsert(employees.create({ department: "Sales", employeeId: 7, email: "ann@x.test" }));
    expect(await employees.get({ department: "Sales", employeeId: 7 })).toMatchObject({
      email: "ann@x.test",
    });
    const found = await employees.find({ department: "Sales" }).toArray();
    expect(found.map((row) => row.employeeId)).toEqual([7]);

    for (const operation of ["upsert", "get", "find"]) {
      // Call spans name the declared table; requests carry the physical one (with the context's prefix).
      const call = spanNamed(`tablekit.${operation} Traced`);
      expect(call.kind).toBe(SpanKind.INTERNAL);
      expect(call.parentSpanContext).toBeUndefined();
      const requests = childrenOf(call);
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) {
        expect(request.kind).toBe(SpanKind.CLIENT);
        expect(request.attributes["db.system.name"]).toBe("azure.tables");
        expect(request.attributes["tablekit.retry_count"]).toBe(0);
        expect(request.status.code).not.toBe(SpanStatusCode.ERROR);
        if (kind.name === "azurite") expect(request.attributes["server.address"]).toBe("127.0.0.1");
      }
      expect(requests.some((request) => request.attributes["db.collection.name"] === table)).toBe(true);
    }
    // The index copy is a request of its own, under the upsert's span.
    const upsertRequests = childrenOf(spanNamed("tablekit.upsert Traced"));
    expect(upsertRequests.map((r) => r.attributes["db.collection.name"])).toContain(`${prefix}TracedByEmail`);
    expect(
      childrenOf(spanNamed("tablekit.get Traced")).map((r) => r.attributes["db.operation.name"]),
    ).toEqual(["getEntity"]);
    expect(
      childrenOf(spanNamed("tablekit.find Traced")).map((r) => r.attributes["db.operation.name"]),
    ).toEqual(["listEntities"]);
  });

  it("sets the error status of a failed call and of its request", async () => {
    const db = contextOn(kind.create());
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    await employees.insert(employees.create({ department: "Sales", employeeId: 8, email: "bo@x.test" }));
    exporter.reset();

    await expectRejection(
      employees.insert(employees.create({ department: "Sales", employeeId: 8, email: "bo@x.test" })),
      EntityAlreadyExistsError,
    );
    const call = spanNamed("tablekit.insert Traced");
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes["error.type"]).toBe("ENTITY_ALREADY_EXISTS");
    expect(childrenOf(call).some((request) => request.status.code === SpanStatusCode.ERROR)).toBe(true);
  });

  it("makes a transaction one call span over its batch request", async () => {
    const db = contextOn(kind.create());
    await db.ensureTables(Plain);
    const plain = db.repository(Plain);
    exporter.reset();
    await db.transaction((tx) => {
      tx.insert(plain.create({ department: "Ops", employeeId: 1 }));
      tx.insert(plain.create({ department: "Ops", employeeId: 2 }));
    });
    const requests = childrenOf(spanNamed("tablekit.transaction"));
    expect(requests.map((r) => [r.kind, r.attributes["db.operation.name"]])).toContainEqual([
      SpanKind.CLIENT,
      "submitTransaction",
    ]);
  });

  it("produces no span with tracing: false", async () => {
    const db = contextOn(kind.create(), { tracing: false });
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    await employees.upsert(employees.create({ department: "Sales", employeeId: 9, email: "cy@x.test" }));
    await employees.get({ department: "Sales", employeeId: 9 });
    await employees.find({ department: "Sales" }).toArray();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe("OpenTelemetry details (memory)", () => {
  it("reports a retry as an event of the call and numbers the attempts of its requests", async () => {
    const store = new FaultyStore(new MemoryStore());
    const db = contextOn(store, { retry: { retries: 3, minDelayMs: 0, maxDelayMs: 0 } });
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    exporter.reset();
    store.plan.faultNext({ method: "getEntity", kind: "busy" });

    await employees.get({ department: "Sales", employeeId: 1 });
    const call = spanNamed("tablekit.get Traced");
    expect(call.events.map((event) => [event.name, event.attributes?.["tablekit.retry.attempt"]])).toEqual([
      ["tablekit.retry", 2],
    ]);
    const requests = childrenOf(call);
    expect(requests.map((r) => [r.attributes["tablekit.retry_count"], r.status.code])).toEqual([
      [0, SpanStatusCode.ERROR],
      [1, SpanStatusCode.UNSET],
    ]);
    expect(requests[0]?.attributes["error.type"]).toBe("503");
  });

  it("covers a query's iteration with one span, and records the request duration histogram", async () => {
    const db = contextOn(new MemoryStore());
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    await employees.upsert(employees.create({ department: "Ops", employeeId: 1, email: "a@x.test" }));
    exporter.reset();

    const ids: number[] = [];
    for await (const row of employees.find({ department: "Ops" }).take(5)) ids.push(row.employeeId);
    expect(ids).toEqual([1]);
    const call = spanNamed("tablekit.find Traced");
    expect(childrenOf(call).map((r) => r.attributes["db.operation.name"])).toEqual(["listEntities"]);

    const { resourceMetrics } = await reader.collect();
    const histogram = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === "db.client.operation.duration");
    expect(histogram?.descriptor.unit).toBe("s");
    const points = (histogram?.dataPoints ?? []) as Array<{ attributes: Record<string, unknown> }>;
    expect(points.some((point) => point.attributes["db.operation.name"] === "listEntities")).toBe(true);
  });

  it("runs each store request inside its CLIENT span's context (where the Azure SDK's own spans attach)", async () => {
    const seen: Array<string | undefined> = [];
    class ObservedStore extends MemoryStore {
      override getEntity(...args: Parameters<MemoryStore["getEntity"]>) {
        seen.push(trace.getActiveSpan()?.spanContext().spanId);
        return super.getEntity(...args);
      }
    }
    const db = contextOn(new ObservedStore());
    await db.ensureTables(Traced);
    const employees = db.repository(Traced);
    exporter.reset();
    await employees.get({ department: "Sales", employeeId: 3 });
    const [request] = childrenOf(spanNamed("tablekit.get Traced"));
    expect(request?.kind).toBe(SpanKind.CLIENT);
    expect(seen).toEqual([request?.spanContext().spanId]);
  });

  it("makes each blob request of a large value a CLIENT span of its own system", async () => {
    const db = contextOn(new MemoryStore());
    await db.ensureTables(WithLarge);
    const photos = db.repository(WithLarge);
    exporter.reset();
    await photos.upsert(photos.create({ department: "Ops", employeeId: 1, photo: new Uint8Array(80_000) }));
    const blobs = childrenOf(spanNamed("tablekit.upsert TracedLarge")).filter(
      (r) => r.attributes["db.system.name"] === "azure.blobs",
    );
    expect(blobs.map((r) => [r.kind, r.attributes["db.operation.name"]])).toEqual([
      [SpanKind.CLIENT, "uploadBlob"],
    ]);
    expect(blobs[0]?.attributes["server.address"]).toBeUndefined();
  });

  it("names context calls after the call and the entity's table", async () => {
    const db = contextOn(new MemoryStore());
    await db.ensureTables(Traced);
    expect(db.repository(Traced)).toBe(db.repository(Traced));
    expect(db).toBeInstanceOf(TableContext);
    const calls = exporter.getFinishedSpans().filter((span) => span.name.startsWith("tablekit."));
    expect(calls.map((span) => span.name)).toEqual(["tablekit.ensureTables Traced"]);
    // Its requests: the entity's table, the index's, and the intent log of copies in another partition.
    expect(childrenOf(calls[0] as ReadableSpan).map((r) => r.attributes["db.operation.name"])).toEqual([
      "createTable",
      "createTable",
      "createTable",
    ]);
  });
});
