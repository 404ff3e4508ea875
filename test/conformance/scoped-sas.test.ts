/**
 * `repository.sasFor(partial, options)`: a SAS token for the entity's table limited to one partition
 * (and a RowKey prefix range), signed with the account key. Azurite signs and accepts such tokens but
 * does not enforce their PartitionKey/RowKey ranges (PATTERNS.md, observed in 3.35): the Azurite test
 * reads its own partition with the token and asserts the signed range fields (spk/epk/srk/erk) instead
 * of expecting a foreign partition to be refused.
 */
import { AzureSASCredential, TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { AzureStore, Column, Entity, MemoryStore, TableContext, ValidationError } from "../../src/index.js";
import { parseConnectionString } from "../../src/store/azure/connection-string.js";
import { uniquePrefix } from "../fixtures/context.js";
import { azuriteConnectionString } from "../support/azurite.js";
import { failureOf } from "../support/rejection.js";
import { azuriteSelected } from "../support/stores.js";

@Entity({ table: "Orders", partitionKey: "{customer}", rowKey: "o_{year:4}_{orderId:6}" })
class Order {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "Int32" }) year!: number;
  @Column({ type: "Int32" }) orderId!: number;
  @Column({ type: "Double" }) total!: number;
}

@Entity({ table: "Visits{at:month}", partitionKey: "{site}", rowKey: "{at}" })
class Visit {
  @Column({ type: "String" }) site!: string;
  @Column({ type: "DateTime" }) at!: Date;
}

const order = (customer: string, year: number, orderId: number): Order =>
  Object.assign(new Order(), { customer, year, orderId, total: 10 });
const inAnHour = (): Date => new Date(Date.now() + 3_600_000);

describe("sasFor: validation before signing", () => {
  const orders = new TableContext({ store: new MemoryStore() }).repository(Order);

  it("needs the partition, sensible permissions and an expiry after the start", async () => {
    const options = { permissions: "r", expiresOn: inAnHour() } as const;
    expect(await failureOf(() => orders.sasFor({ year: 2026 }, options))).toMatchObject({
      rule: "find-partition",
    });
    expect(
      // @ts-expect-error "rw" is not one of the scoped permission sets
      await failureOf(() => orders.sasFor({ customer: "c1" }, { permissions: "rw", expiresOn: inAnHour() })),
    ).toMatchObject({ rule: "sas-permissions" });
    const past = { permissions: "r", expiresOn: new Date(Date.now() - 1000) } as const;
    expect(await failureOf(() => orders.sasFor({ customer: "c1" }, past))).toMatchObject({
      rule: "sas-expiry",
    });
    const startsLater = {
      permissions: "r",
      startsOn: new Date(Date.now() + 7_200_000),
      expiresOn: inAnHour(),
    } as const;
    expect(await failureOf(() => orders.sasFor({ customer: "c1" }, startsLater))).toMatchObject({
      rule: "sas-expiry",
    });
    expect(
      await failureOf(() =>
        orders.sasFor({ customer: "c1" }, { permissions: "r", expiresOn: new Date(Number.NaN) }),
      ),
    ).toMatchObject({ rule: "sas-expiry" });
  });

  it("refuses a store without an account key", async () => {
    const options = { permissions: "r", expiresOn: inAnHour() } as const;
    expect(await failureOf(() => orders.sasFor({ customer: "c1" }, options))).toMatchObject({
      rule: "sas-store",
    });
    const sasStore = new AzureStore(
      "https://account.table.core.windows.net",
      new AzureSASCredential("sv=x&sig=y"),
    );
    const viaSas = new TableContext({ store: sasStore }).repository(Order);
    const error = await failureOf(() => viaSas.sasFor({ customer: "c1" }, options));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ rule: "sas-credential" });
  });
});

describe.skipIf(!azuriteSelected)(
  "sasFor on Azurite (signed ranges asserted: Azurite does not enforce them)",
  () => {
    it("signs one partition and the RowKey prefix, and the token reads its own partition", async () => {
      const store = AzureStore.fromConnectionString(azuriteConnectionString());
      const prefix = uniquePrefix("sas");
      const db = new TableContext({ store, tablePrefix: prefix });
      await db.ensureTables(Order);
      const orders = db.repository(Order);
      await orders.bulkInsert([order("c1", 2025, 1), order("c1", 2026, 2), order("c2", 2026, 3)]);

      const whole = new URLSearchParams(
        orders.sasFor({ customer: "c1" }, { permissions: "r", expiresOn: inAnHour() }),
      );
      expect(whole.get("spk")).toBe("c1");
      expect(whole.get("epk")).toBe("c1");
      // The entity's own RowKey space: its literal prefix up to the last key with that prefix.
      expect(whole.get("srk")).toBe("o_");
      expect(whole.get("erk")).toBe("o_\uffff");
      expect(whole.get("tn")?.toLowerCase()).toBe(`${prefix}Orders`.toLowerCase());
      expect(whole.get("sp")).toBe("r");

      const year = new URLSearchParams(
        orders.sasFor({ customer: "c1", year: 2026 }, { permissions: "raud", expiresOn: inAnHour() }),
      );
      expect([year.get("srk"), year.get("erk")]).toEqual(["o_2026_", "o_2026_\uffff"]);
      expect(year.get("sp")).toBe("raud");
      const one = new URLSearchParams(
        orders.sasFor(
          { customer: "c1", year: 2026, orderId: 2 },
          { permissions: "rau", expiresOn: inAnHour() },
        ),
      );
      expect([one.get("srk"), one.get("erk")]).toEqual(["o_2026_000002", "o_2026_000002"]);

      const { url } = parseConnectionString(azuriteConnectionString());
      const client = new TableClient(url, `${prefix}Orders`, new AzureSASCredential(whole.toString()), {
        allowInsecureConnection: true,
      });
      const rows: string[] = [];
      for await (const row of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'c1'" } })) {
        rows.push(String(row.rowKey));
      }
      expect(rows).toEqual(["o_2025_000001", "o_2026_000002"]);
    });

    it("names the period's table for an entity with a table per period", async () => {
      const store = AzureStore.fromConnectionString(azuriteConnectionString());
      const prefix = uniquePrefix("sas");
      const visits = new TableContext({ store, tablePrefix: prefix }).repository(Visit);
      const at = new Date("2026-11-05T10:00:00Z");
      const token = new URLSearchParams(
        visits.sasFor({ site: "web", at }, { permissions: "r", expiresOn: inAnHour() }),
      );
      expect(token.get("tn")?.toLowerCase()).toBe(`${prefix}Visits202611`.toLowerCase());
      expect(
        await failureOf(() => visits.sasFor({ site: "web" }, { permissions: "r", expiresOn: inAnHour() })),
      ).toBeInstanceOf(ValidationError);
    });
  },
);
