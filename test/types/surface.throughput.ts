import { expectTypeOf } from "vitest";
import {
  MemoryStore,
  type PaceReport,
  TableContext,
  type TableKitEvent,
  type ThroughputOptions,
} from "../../src/index.js";

declare const maybeNumber: number | undefined;

// throughput takes optional numbers, each absent or undefined for "no limit".
new TableContext({ store: new MemoryStore(), throughput: { perPartition: 2000, perAccount: 20_000 } });
new TableContext({ store: new MemoryStore(), throughput: { perPartition: maybeNumber } });
new TableContext({ store: new MemoryStore(), throughput: undefined });
const options: ThroughputOptions = { perAccount: maybeNumber };
new TableContext({ store: new MemoryStore(), throughput: options });
// @ts-expect-error a number of entities per second, not a string
new TableContext({ store: new MemoryStore(), throughput: { perPartition: "500" } });
// @ts-expect-error no such limit (the service's targets are per partition and per account)
new TableContext({ store: new MemoryStore(), throughput: { perTable: 500 } });
// @ts-expect-error an object of limits, not a number
new TableContext({ store: new MemoryStore(), throughput: 500 });

// throughput events narrow on their type and say which pace changed, and why.
declare const event: TableKitEvent;
if (event.type === "throughput") {
  expectTypeOf(event.scope).toEqualTypeOf<"partition" | "account">();
  expectTypeOf(event.reason).toEqualTypeOf<"ramp-up" | "recovered" | "throttled">();
  expectTypeOf(event.rate).toEqualTypeOf<number>();
  expectTypeOf(event.previousRate).toEqualTypeOf<number>();
  expectTypeOf(event.limit).toEqualTypeOf<number>();
  expectTypeOf(event.partitionKey).toEqualTypeOf<string | undefined>();
  expectTypeOf(event).toMatchTypeOf<PaceReport>();
}
