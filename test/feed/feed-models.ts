import { Column, Entity } from "../../src/index.js";

/** A change-fed order, one partition per customer; declared afresh per test (each test has its own tables). */
export function declareOrder(retentionMs?: number) {
  @Entity({
    table: "FeedOrders",
    partitionKey: "{customer}",
    rowKey: "{orderId}",
    changeFeed: retentionMs === undefined ? true : { retentionMs },
  })
  class Order {
    @Column({ type: "String" }) customer!: string;
    @Column({ type: "String" }) orderId!: string;
    @Column({ type: "Int32" }) amount!: number;
    @Column({ type: "String" }) status?: string;
  }
  return Order;
}

export type OrderClass = ReturnType<typeof declareOrder>;
export type Order = InstanceType<OrderClass>;

export function order(
  Order: OrderClass,
  customer: string,
  orderId: string,
  amount: number,
  status?: string,
): Order {
  return Object.assign(new Order(), {
    customer,
    orderId,
    amount,
    ...(status === undefined ? {} : { status }),
  });
}
