import { Column, Entity } from "../../src/index.js";

/**
 * The model of issue 18: a same-partition index, a unique index in another table, a summary per
 * customer, a large invoice, an encrypted card holder and a Json column, on one entity.
 */
@Entity({
  table: "Orders",
  partitionKey: "{customer}",
  rowKey: "order_{orderId}",
  indexes: {
    byStatus: { rowKey: "status_{status}_{orderId}" },
    byNumber: { table: "OrderNumbers", partitionKey: "n", rowKey: "{number}", unique: true },
  },
  summaries: { perCustomer: { rowKey: "summary", count: "orders", sum: { amount: "total" } } },
})
export class Order {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "String" }) orderId!: string;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "String" }) number!: string;
  @Column({ type: "Int32" }) amount!: number;
  @Column({ type: "Binary", large: true }) invoice?: Uint8Array;
  @Column({ type: "String", encrypt: true }) cardHolder!: string;
  @Column({ type: "Json" }) lines!: Array<{ sku: string; qty: number }>;
}

/** An order whose values all follow from its id and version (a mix of two versions shows). */
export function order(customer: string, id: number, version = 1): Order {
  return Object.assign(new Order(), {
    customer,
    orderId: `o${String(id).padStart(4, "0")}`,
    status: version % 2 === 0 ? "shipped" : "open",
    number: `N${id}`,
    amount: id * 10 + version,
    invoice: Uint8Array.from(
      { length: 100 + ((id * 37 + version) % 900) },
      (_, i) => (id + version + i) % 256,
    ),
    cardHolder: `Holder ${id}`,
    lines: [{ sku: `sku${id}`, qty: version }],
  });
}
