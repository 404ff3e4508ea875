import { expectTypeOf } from "vitest";
import {
  AzureStore,
  type AzureStoreOptions,
  type BulkOptions,
  type ColumnOptions,
  type DeleteOptions,
  type EntityOptions,
  type GetOptions,
  type IndexOptions,
  MemoryStore,
  type MemoryStoreOptions,
  type MutateOptions,
  type PageOptions,
  type RepairOptions,
  type RetryOptions,
  type StoreQuery,
  TableContext,
  type TableContextOptions,
  type UpdateOptions,
  type UpsertOptions,
} from "../../src/index.js";
import { Employee } from "./surface-fixtures.js";

// Under exactOptionalPropertyTypes every optional option accepts an explicit undefined (read as absent),
// so values that may be missing can be passed straight through.
declare const maybeNumber: number | undefined;
declare const maybeString: string | undefined;
declare const maybeBoolean: boolean | undefined;

const retry: RetryOptions = { retries: maybeNumber, minDelayMs: undefined, maxDelayMs: undefined };
const context: TableContextOptions = {
  store: new MemoryStore({ file: maybeString, pageBreaks: undefined }),
  retry: undefined,
  onEvent: undefined,
  tablePrefix: maybeString,
};
const db = new TableContext(context);
new TableContext({ store: new MemoryStore(), retry });
const memory: MemoryStoreOptions = {
  file: undefined,
  pageBreaks: undefined,
  flavor: undefined,
  seed: undefined,
};
const azure: AzureStoreOptions = {
  allowInsecureConnection: maybeBoolean,
  requestTimeoutMs: undefined,
  httpClient: undefined,
  sdkRetries: undefined,
  metadata: undefined,
};
AzureStore.fromConnectionString("UseDevelopmentStorage=true", azure);
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { metadata: "minimal" });
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { metadata: "none" });
// @ts-expect-error only "none" and "minimal" (fullmetadata would only add bytes)
AzureStore.fromConnectionString("UseDevelopmentStorage=true", { metadata: "full" });
expectTypeOf(memory).toEqualTypeOf<MemoryStoreOptions>();

const employees = db.repository(Employee);
const e = employees.create({
  department: "Sales",
  employeeId: 1,
  firstName: "Jo",
  lastName: "Jones",
  age: 30,
  email: "jj@contoso.com",
});
const upsert: UpsertOptions = { mode: undefined };
const update: UpdateOptions = { mode: undefined, ifMatch: maybeString };
const remove: DeleteOptions = { ifMatch: undefined };
const mutate: MutateOptions<Employee> = { attempts: maybeNumber, create: undefined };
const get: GetOptions<Employee> = { select: undefined };
const bulk: BulkOptions = {
  concurrency: maybeNumber,
  onProgress: undefined,
  signal: undefined,
  stopOnError: maybeBoolean,
  maxBufferedUnits: undefined,
};
const page: PageOptions = { size: maybeNumber, continuation: maybeString };
const repair: RepairOptions = { scan: maybeBoolean, minIntentAgeMs: undefined };
employees.upsert(e, upsert);
employees.update(e, update);
employees.delete(e, remove);
employees.mutate(e, () => undefined, mutate);
employees.get(e, get);
employees.bulkUpsert([e], { ...bulk, mode: undefined });
employees.bulkInsert([e], bulk);
employees.scan().page(page);
db.repairIndexes(Employee, repair);
db.transaction((tx) => tx.upsert(e, upsert).update(e, update));

const column: ColumnOptions = { type: "String", name: maybeString, jsonClass: undefined };
const index: IndexOptions = {
  rowKey: "email_{email}",
  table: undefined,
  partitionKey: undefined,
  project: undefined,
  when: undefined,
  unique: maybeBoolean,
  list: undefined,
};
const entity: EntityOptions = {
  table: "Employees",
  partitionKey: "{department}",
  rowKey: "{employeeId}",
  indexes: { byEmail: index },
  type: maybeString,
  version: undefined,
  upcast: undefined,
};
const query: StoreQuery = {
  filter: maybeString,
  select: undefined,
  top: maybeNumber,
  continuation: undefined,
};
void [column, entity, query];
