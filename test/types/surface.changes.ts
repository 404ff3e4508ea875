import { expectTypeOf } from "vitest";
import {
  type Change,
  type ChangeFeed,
  type ChangeFeedConsumer,
  type ChangeFeedPage,
  Column,
  Entity,
  MemoryStore,
  TableContext,
} from "../../src/index.js";

@Entity({
  table: "Orders",
  partitionKey: "{customer}",
  rowKey: "{orderId}",
  changeFeed: { retentionMs: 86_400_000 },
})
class Order {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "String" }) orderId!: string;
  @Column({ type: "Int32" }) amount!: number;
}

// @ts-expect-error changeFeed is true, false or { retentionMs }
@Entity({ table: "Orders", partitionKey: "{customer}", rowKey: "{orderId}", changeFeed: "yes" })
class Wrong {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "String" }) orderId!: string;
}
void Wrong;

const db = new TableContext({ store: new MemoryStore(), now: () => 0 });
const feed = db.changes(Order);
expectTypeOf(feed).toEqualTypeOf<ChangeFeed<Order>>();
expectTypeOf(feed.read({ from: "f1.", limit: 10 })).toEqualTypeOf<Promise<ChangeFeedPage<Order>>>();
expectTypeOf<ChangeFeedPage<Order>["changes"]>().toEqualTypeOf<Change<Order>[]>();
expectTypeOf<ChangeFeedPage<Order>["next"]>().toEqualTypeOf<string>();
expectTypeOf<Change<Order>["kind"]>().toEqualTypeOf<"upsert" | "merge" | "delete">();
expectTypeOf<Change<Order>["entity"]>().toEqualTypeOf<Order | undefined>();
expectTypeOf<Change<Order>["changes"]>().toEqualTypeOf<Partial<Order> | undefined>();
expectTypeOf<Change<Order>["key"]>().toEqualTypeOf<{ partitionKey: string; rowKey: string }>();
expectTypeOf<Change<Order>["reason"]>().toEqualTypeOf<"ttl" | undefined>();

const consumer = feed.consume({
  group: "billing",
  handler: async (changes) => {
    expectTypeOf(changes).toEqualTypeOf<Change<Order>[]>();
  },
  batchSize: 100,
  pollIntervalMs: 500,
  signal: new AbortController().signal,
});
expectTypeOf(consumer).toEqualTypeOf<ChangeFeedConsumer>();
expectTypeOf(consumer.stop()).toEqualTypeOf<Promise<void>>();
expectTypeOf(consumer.done).toEqualTypeOf<Promise<void>>();
// @ts-expect-error a consumer needs its group
feed.consume({ handler: async () => undefined });
