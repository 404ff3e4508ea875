/**
 * What tools that read the table as stored (export, import, the explorer) see of a change-fed table:
 * the feed's rows, at the end of each partition; the filter docs/change-feed.md gives hides exactly
 * them, on every store (the services compare RowKeys as strings, the reference store too).
 */
import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { readAll } from "../support/read-all.js";
import { storeKinds } from "../support/stores.js";
import { uniquePrefix } from "../support/table-names.js";
import { declareOrder, order } from "./feed-models.js";

/** The filter docs/change-feed.md gives for the entities alone (kept in step with the guide by this test). */
const ENTITIES_ONLY = "RowKey lt '~tkfeed~' or RowKey gt '~tkfeed~~'";

describe.each(storeKinds.map((k) => [k.name, k] as const))(
  "the feed's rows as stored on %s",
  (_name, kind) => {
    it("are there for a raw reader, and the documented filter leaves the entities alone", async () => {
      const store = kind.create();
      const prefix = uniquePrefix("fr");
      const db = new TableContext({ store, tablePrefix: prefix });
      const Order = declareOrder();
      await db.ensureTables(Order);
      const orders = db.repository(Order);
      await orders.insert(order(Order, "alice", "o1", 1));
      await orders.insert(order(Order, "alice", "o2", 2));
      await orders.upsert(order(Order, "alice", "o2", 3));
      await orders.delete({ customer: "alice", orderId: "o1" });
      // Entity RowKeys around the feed's in sort order: digits and letters before `~`, and after it.
      await orders.insert(order(Order, "alice", "zz", 4));
      await orders.insert(order(Order, "bob", "~x", 5));

      const table = `${prefix}FeedOrders`;
      const raw = async (filter?: string) =>
        (await readAll(store, table, filter === undefined ? {} : { filter })).map(
          (row) => `${row.partitionKey}/${row.rowKey}`,
        );
      const everything = await raw();
      expect(everything.filter((key) => key.includes("~tkfeed~"))).toEqual([
        "alice/~tkfeed~head",
        "alice/~tkfeed~j~000000000001",
        "alice/~tkfeed~j~000000000002",
        "alice/~tkfeed~j~000000000003",
        "alice/~tkfeed~j~000000000004",
        "alice/~tkfeed~j~000000000005",
        "alice/~tkfeed~t~o1",
        "bob/~tkfeed~head",
        "bob/~tkfeed~j~000000000001",
      ]);
      expect(await raw(ENTITIES_ONLY)).toEqual(["alice/o2", "alice/zz", "bob/~x"]);
    });
  },
);
