import { Column, Entity } from "../../src/schema/decorators.js";

/** An item kept in many partitions, with an index in another table (so its copies cross shards). */
@Entity({
  table: "ShItems",
  partitionKey: "g{group:3}",
  rowKey: "{id:4}",
  indexes: { byValue: { table: "ShItemsByValue", partitionKey: "v{value:5}", rowKey: "{group:3}_{id:4}" } },
})
export class ShItem {
  @Column({ type: "Int32" }) group!: number;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "Int32" }) value!: number;
}

export function item(group: number, id: number, value: number): ShItem {
  return Object.assign(new ShItem(), { group, id, value });
}

/** A document whose text is a large value (kept in a blob beside its row). */
@Entity({ table: "ShDocs", partitionKey: "{folder}", rowKey: "{name}" })
export class ShDoc {
  @Column({ type: "String" }) folder!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", large: true }) text?: string;
}
