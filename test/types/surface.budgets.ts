import http from "node:http";
import https from "node:https";
import { expectTypeOf } from "vitest";
import {
  AzureStore,
  MemoryStore,
  type Page,
  type QueryBudgetError,
  type QueryKind,
  type QueryPageStats,
  TableContext,
  type TableKitEvent,
} from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

declare const maybeNumber: number | undefined;

// maxConcurrentRequests is an optional number on the context.
const db = new TableContext({ store: new MemoryStore(), maxConcurrentRequests: 8 });
new TableContext({ store: new MemoryStore(), maxConcurrentRequests: maybeNumber });
// @ts-expect-error a number, not a string
new TableContext({ store: new MemoryStore(), maxConcurrentRequests: "8" });

// AzureStore takes an http or https Agent.
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { agent: new http.Agent({ keepAlive: true }) });
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { agent: new https.Agent({ maxSockets: 4 }) });
// @ts-expect-error an agent, not its options
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { agent: { keepAlive: true } });

// page and toArray take a request budget; a page may say it ran out.
const sales = db.repository(Employee).find({ department: "Sales" });
expectTypeOf(sales.page({ size: 10, maxRequests: 3 })).resolves.toEqualTypeOf<Page<Employee>>();
expectTypeOf(sales.toArray({ maxRequests: 3 })).resolves.toEqualTypeOf<Employee[]>();
sales.toArray({ maxRequests: maybeNumber });
// @ts-expect-error maxRequests is a number
sales.page({ maxRequests: "3" });
expectTypeOf<Page<Employee>["budgetExhausted"]>().toEqualTypeOf<true | undefined>();

// The error carries what was read and where to resume.
expectTypeOf<QueryBudgetError["code"]>().toEqualTypeOf<"QUERY_BUDGET">();
expectTypeOf<QueryBudgetError["continuation"]>().toEqualTypeOf<string>();
expectTypeOf<QueryBudgetError["requests"]>().toEqualTypeOf<number>();

// query-page events narrow on their type.
declare const event: TableKitEvent;
if (event.type === "query-page") {
  expectTypeOf(event.kind).toEqualTypeOf<QueryKind>();
  expectTypeOf(event.rows).toEqualTypeOf<number>();
  expectTypeOf(event.requests).toEqualTypeOf<number>();
  expectTypeOf(event.emptyPages).toEqualTypeOf<number>();
  expectTypeOf(event).toMatchTypeOf<QueryPageStats>();
}
