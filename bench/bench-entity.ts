import "reflect-metadata";
import { Column, Entity } from "../src/index.js";

/** The benchmark's entity: 10 properties of mixed types (plus the two key fields' encodings). */
@Entity({ table: "BenchItems", partitionKey: "{tenant}", rowKey: "item_{id:8}" })
export class BenchItem {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Double" }) score!: number;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "Int64" }) big!: bigint;
  @Column({ type: "Boolean" }) active!: boolean;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Guid" }) ref!: string;
  @Column({ type: "String" }) note!: string;
}

export function benchItem(tenant: string, id: number): BenchItem {
  return Object.assign(new BenchItem(), {
    tenant,
    id,
    name: `item ${id}`,
    score: id * 1.5,
    count: id % 1000,
    big: BigInt(id) * 1_000_000_007n,
    active: id % 2 === 0,
    at: new Date(Date.UTC(2024, 0, 1) + id * 1000),
    ref: "0f8fad5b-d9cb-469f-a165-70867728950e",
    note: "lorem ipsum dolor sit amet",
  });
}

/** The same row as a plain SDK user would write it, by hand. */
export function handWrittenToWire(e: BenchItem): Record<string, unknown> {
  return {
    partitionKey: e.tenant,
    rowKey: `item_${String(e.id).padStart(8, "0")}`,
    tenant: e.tenant,
    id: e.id,
    name: e.name,
    score: { type: "Double", value: e.score },
    count: e.count,
    big: { type: "Int64", value: e.big.toString() },
    active: e.active,
    at: e.at,
    ref: { type: "Guid", value: e.ref },
    note: e.note,
    EntityType: "BenchItem@1",
  };
}

/** What a careful hand-written reader does with an SDK row. */
export function handWrittenFromWire(row: Record<string, unknown>): BenchItem {
  const e = Object.create(BenchItem.prototype) as BenchItem;
  e.tenant = row.tenant as string;
  e.id = row.id as number;
  e.name = row.name as string;
  e.score = row.score as number;
  e.count = row.count as number;
  e.big = typeof row.big === "bigint" ? row.big : BigInt(String((row.big as { value: string }).value));
  e.active = row.active as boolean;
  e.at = row.at as Date;
  e.ref = (row.ref as { value: string }).value;
  e.note = row.note as string;
  return e;
}

/** The same item with a same-partition copy per name (one EGT per write). */
@Entity({
  table: "BenchIndexed",
  partitionKey: "{tenant}",
  rowKey: "item_{id:8}",
  indexes: { byName: { rowKey: "name_{name}" } },
})
export class IndexedItem extends BenchItem {}

/** The same item with a copy per name in another table (intent log, eventually consistent). */
@Entity({
  table: "BenchRemote",
  partitionKey: "{tenant}",
  rowKey: "item_{id:8}",
  indexes: { byName: { table: "BenchRemoteByName", partitionKey: "{name}", rowKey: "{tenant}_{id:8}" } },
})
export class RemoteIndexedItem extends BenchItem {}

export function indexedItem(tenant: string, id: number): IndexedItem {
  return Object.assign(new IndexedItem(), benchItem(tenant, id));
}

export function remoteItem(tenant: string, id: number): RemoteIndexedItem {
  return Object.assign(new RemoteIndexedItem(), benchItem(tenant, id));
}

/** The same item with a same-partition summary (count and sums kept in each write's EGT). */
@Entity({
  table: "BenchSummarized",
  partitionKey: "{tenant}",
  rowKey: "item_{id:8}",
  summaries: { perTenant: { rowKey: "summary", count: "items", sum: { count: "counts", big: "bigs" } } },
})
export class SummarizedItem extends BenchItem {}

export function summarizedItem(tenant: string, id: number): SummarizedItem {
  return Object.assign(new SummarizedItem(), benchItem(tenant, id));
}

/** The same 10 columns with two of them (`name`, `note`) encrypted client-side. */
@Entity({ table: "BenchEncrypted", partitionKey: "{tenant}", rowKey: "item_{id:8}" })
export class EncryptedItem {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String", encrypt: true }) name!: string;
  @Column({ type: "Double" }) score!: number;
  @Column({ type: "Int32" }) count!: number;
  @Column({ type: "Int64" }) big!: bigint;
  @Column({ type: "Boolean" }) active!: boolean;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Guid" }) ref!: string;
  @Column({ type: "String", encrypt: true }) note!: string;
}

export function encryptedItem(tenant: string, id: number): EncryptedItem {
  return Object.assign(new EncryptedItem(), benchItem(tenant, id));
}

/** The large-value benchmark's entity: one Binary column kept in Blob Storage. */
@Entity({ table: "BenchLarge", partitionKey: "{tenant}", rowKey: "{id}" })
export class LargeItem {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Binary", large: true }) content!: Uint8Array;
}

/** The same item with a same-partition copy per name and a summary: a bulk write's batch carries both. */
@Entity({
  table: "BenchStaged",
  partitionKey: "{tenant}",
  rowKey: "item_{id:8}",
  indexes: { byName: { rowKey: "name_{name}" } },
  summaries: { perTenant: { rowKey: "summary", count: "items", sum: { count: "counts" } } },
})
export class StagedItem extends BenchItem {}

export function stagedItem(tenant: string, id: number): StagedItem {
  return Object.assign(new StagedItem(), benchItem(tenant, id));
}
