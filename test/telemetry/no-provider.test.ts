import { isProxy } from "node:util/types";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { Column, Entity, MemoryStore, TableContext } from "../../src/index.js";
import { uniquePrefix } from "../support/table-names.js";

@Entity({ table: "UntracedNotes", partitionKey: "{owner}", rowKey: "{id:4}" })
class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "Int32" }) id!: number;
}

// Its own file (its own process): no tracer provider is registered until the test registers one.
describe("OpenTelemetry installed, no provider registered", () => {
  it("hands out plain queries until a provider is registered, and plain objects with tracing: false", async () => {
    const plain = new TableContext({
      store: new MemoryStore(),
      tablePrefix: uniquePrefix("otel"),
      tracing: false,
    });
    expect(isProxy(plain)).toBe(false);
    expect(isProxy(plain.repository(Note))).toBe(false);

    const db = new TableContext({ store: new MemoryStore(), tablePrefix: uniquePrefix("otel") });
    // Traceable (a provider registered later counts), but a query made now is the plain query.
    expect(isProxy(db)).toBe(true);
    await db.ensureTables(Note);
    const notes = db.repository(Note);
    await notes.upsert(notes.create({ owner: "ann", id: 1 }));
    expect(isProxy(notes.find({ owner: "ann" }))).toBe(false);

    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    try {
      const query = notes.find({ owner: "ann" });
      expect(isProxy(query)).toBe(true);
      expect(await query.toArray()).toHaveLength(1);
      expect(exporter.getFinishedSpans().map((span) => span.name)).toContain("tablekit.find UntracedNotes");
    } finally {
      trace.disable();
    }
  });
});
