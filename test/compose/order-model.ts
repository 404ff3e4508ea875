/**
 * The held-out `Order` model of issue 18, declared as a user would write it (through the package
 * entry only): a same-partition index, a unique index in another table, a summary per customer, a
 * large invoice, an encrypted card holder and a Json column. `@Entity` is applied on first use, so
 * a refused declaration fails the test that uses it (with the refusal's message), not the file.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import {
  Column,
  Entity,
  type EntityOptions,
  localKeys,
  type Repository,
  TableContext,
  type TableStore,
  UniqueConstraintError,
} from "../../src/index.js";
import { readAll } from "../support/read-all.js";
import { rejectionOf } from "../support/rejection.js";
import { composeStoreKinds } from "./compose-stores.js";

/** One line of an order (the Json column). */
export interface OrderLine {
  sku: string;
  qty: number;
}

export class Order {
  @Column({ type: "String" }) customer!: string;
  @Column({ type: "Int32" }) orderId!: number;
  @Column({ type: "String" }) number!: string;
  @Column({ type: "String" }) status!: string;
  @Column({ type: "Int32" }) quantity!: number;
  @Column({ type: "Double" }) amount!: number;
  @Column({ type: "Binary", large: true }) invoice?: Uint8Array;
  @Column({ type: "String", encrypt: true }) cardHolder!: string;
  @Column({ type: "Json" }) lines!: OrderLine[];
}

/** The table names of the model (the context's `tablePrefix` comes in front). */
export const ORDER_TABLE = "Orders";
export const NUMBER_TABLE = "OrderNumbers";
export const SUMMARY_ROW_KEY = "summary";

export const ORDER_OPTIONS: EntityOptions<Order> = {
  table: ORDER_TABLE,
  partitionKey: "{customer}",
  rowKey: "o_{orderId:6}",
  indexes: {
    // Same partition: the copy rides in the entity's transaction. Not unique (many orders share a status).
    byStatus: { rowKey: "st_{status}_{orderId:6}", unique: false },
    // Another table: kept through an intent; a taken number is a UniqueConstraintError.
    byNumber: { table: NUMBER_TABLE, partitionKey: "{number}", rowKey: "number", unique: true },
  },
  summaries: {
    perCustomer: {
      rowKey: SUMMARY_ROW_KEY,
      count: "orders",
      sum: { quantity: "totalQuantity", amount: "totalAmount" },
    },
  },
};

let declared: { ok: true } | { ok: false; error: unknown } | undefined;

/** Declares the model (`@Entity` on `Order`) once; rethrows the declaration's refusal on every call. */
export function declareOrder(): typeof Order {
  if (declared === undefined) {
    try {
      Entity<Order>(ORDER_OPTIONS)(Order);
      declared = { ok: true };
    } catch (error) {
      declared = { ok: false, error };
    }
  }
  if (!declared.ok) throw declared.error;
  return Order;
}

/** The context option every Order context needs (the card holder is encrypted). */
export const ORDER_ENCRYPTION = {
  keys: localKeys({ k1: Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256) }, "k1"),
};

export const orderStoreKinds = composeStoreKinds;

/** The blob container of the orders table (the documented stored format: `tablekit-<table lowercased>`). */
export function invoiceContainer(prefix: string): string {
  return `tablekit-${`${prefix}${ORDER_TABLE}`.toLowerCase()}`;
}

/** Every blob name in the orders' container, through the store's blob side. */
export async function listInvoiceBlobs(store: TableStore, prefix: string): Promise<string[]> {
  const blobs = store.blobs;
  if (!blobs) throw new Error(`store ${store.name} has no blob side`);
  const names: string[] = [];
  let continuation: string | undefined;
  do {
    const page = await blobs.list(invoiceContainer(prefix), { continuation });
    names.push(...page.items.map((item) => item.name));
    continuation = page.continuation;
  } while (continuation);
  return names;
}

/**
 * The order `orderId` of `customer` at `version`: every value follows from the three, so a mix of
 * two versions shows. Numbers are unique per (orderId, version); amounts are multiples of 0.25, so
 * their sums are exact in a Double. Some invoices are over 64 KiB (more than a row property holds),
 * every fifth version has none.
 */
export function makeOrder(customer: string, orderId: number, version: number): Order {
  const o = new Order();
  o.customer = customer;
  o.orderId = orderId;
  o.number = `N${orderId}-${version}`;
  o.status = ["new", "paid", "shipped", "closed"][version % 4] as string;
  o.quantity = ((orderId * 7 + version) % 50) + 1;
  o.amount = ((orderId * 13 + version * 5) % 400) / 4;
  o.cardHolder = `Holder ${orderId} v${version} Ærøskøbing`;
  o.lines = [
    { sku: `sku-${orderId}`, qty: version },
    { sku: `extra-${version}`, qty: orderId % 3 },
  ];
  if (version % 5 !== 0) {
    o.invoice = Uint8Array.from(
      { length: (version % 4) * 30_000 + 100 + (orderId % 97) },
      (_, i) => (orderId * 31 + version * 7 + i) % 256,
    );
  }
  return o;
}

/** What an order holds, comparable with `toEqual` (an invoice as its length and SHA-256). */
export function viewOf(o: Order | undefined) {
  if (o === undefined) return undefined;
  return {
    customer: o.customer,
    orderId: o.orderId,
    number: o.number,
    status: o.status,
    quantity: o.quantity,
    amount: o.amount,
    cardHolder: o.cardHolder,
    lines: o.lines,
    invoice:
      o.invoice === undefined
        ? undefined
        : `${o.invoice.length}:${createHash("sha256").update(o.invoice).digest("hex")}`,
  };
}

export const keyOf = (o: Pick<Order, "customer" | "orderId">): string => `${o.customer}/${o.orderId}`;

/** The orders a test expects, by key: the oracle every invariant is checked against. */
export type Expected = Map<string, Order>;

export function expectedOf(orders: readonly Order[]): Expected {
  return new Map(orders.map((o) => [keyOf(o), o]));
}

/** What the tests need to check one context's orders. */
export interface OrderWorld {
  db: TableContext;
  /** The store under the context, without the context's encryption: raw rows and blobs. */
  store: TableStore;
  prefix: string;
  /** Every customer the test writes (absent ones must read empty with zero summaries). */
  customers: readonly string[];
}

/**
 * Checks every invariant of the model against `expected`: each customer's orders read back whole
 * (invoices byte-exact, card holder and lines in clear); the summary equals a recount of those rows
 * and `verifySummaries` is empty; `verifyIndexes` is empty and both indexes return every order;
 * exactly one blob per invoice; no raw row (entity, copy or unique entry) holds a card holder in
 * clear; and a duplicate order number is refused with nothing written.
 */
export async function expectInvariants(
  world: OrderWorld,
  expected: Expected,
  where: string,
  options: { focus?: readonly string[] } = {},
): Promise<void> {
  const { db, store, prefix } = world;
  const OrderClass = declareOrder();
  const orders = db.repository(OrderClass);
  // `focus`: read only these customers' orders one by one (the table-wide checks still cover all).
  const expectedCustomers = options.focus ?? [...expected.values()].map((o) => o.customer);
  const checked = new Set([...world.customers, ...expectedCustomers]);
  for (const customer of checked) {
    const rows = await orders.find({ customer }).toArray();
    const wanted = [...expected.values()]
      .filter((o) => o.customer === customer)
      .sort((a, b) => a.orderId - b.orderId);
    expect(rows.map(viewOf), `${where}: orders of ${customer}`).toEqual(wanted.map(viewOf));
    const recount = {
      orders: rows.length,
      totalQuantity: rows.reduce((sum, o) => sum + o.quantity, 0),
      totalAmount: rows.reduce((sum, o) => sum + o.amount, 0),
    };
    expect(await orders.summary("perCustomer", { customer }), `${where}: summary of ${customer}`).toEqual(
      recount,
    );
  }
  expect(await db.verifySummaries(OrderClass), `${where}: verifySummaries`).toEqual([]);
  expect(await db.verifyIndexes(OrderClass), `${where}: verifyIndexes`).toEqual({
    missing: [],
    stale: [],
    orphans: [],
  });
  // Both indexes return every order: byStatus read per (customer, status), one range each; byNumber per number.
  const byStatus = new Map<string, string[]>();
  for (const o of expected.values()) {
    if (!checked.has(o.customer)) continue;
    const group = `${o.customer}\u0000${o.status}`;
    byStatus.set(group, [...(byStatus.get(group) ?? []), keyOf(o)]);
    const byNumber = await orders.index("byNumber").get({ number: o.number });
    expect(byNumber && keyOf(byNumber), `${where}: byNumber of ${keyOf(o)}`).toBe(keyOf(o));
  }
  for (const [group, keys] of byStatus) {
    const [customer, status] = group.split("\u0000") as [string, string];
    const found = await orders.index("byStatus").find({ customer, status }).toArray();
    expect(found.map(keyOf).sort(), `${where}: byStatus of ${customer} ${status}`).toEqual(keys.sort());
  }
  const invoices = [...expected.values()].filter((o) => o.invoice !== undefined).length;
  expect(await listInvoiceBlobs(store, prefix), `${where}: one blob per invoice`).toHaveLength(invoices);
  await expectCardHoldersSealed(world, expected, where);
  await expectDuplicateNumberRefused(world, expected, where);
}

/** No raw row of the model's tables holds a card holder in clear; entity rows hold it as bytes. */
async function expectCardHoldersSealed(world: OrderWorld, expected: Expected, where: string): Promise<void> {
  const { store, prefix } = world;
  const holders = [...expected.values()].map((o) => o.cardHolder);
  for (const table of [`${prefix}${ORDER_TABLE}`, `${prefix}${NUMBER_TABLE}`]) {
    for (const row of await readAll(store, table)) {
      const texts = Object.values(row).filter((value): value is string => typeof value === "string");
      for (const holder of holders) {
        expect(
          texts,
          `${where}: ${table} ${row.partitionKey}/${row.rowKey} holds a card holder in clear`,
        ).not.toContain(holder);
      }
      if (row.rowKey.startsWith("o_")) {
        expect(row.cardHolder, `${where}: sealed card holder of ${row.rowKey}`).toBeInstanceOf(Uint8Array);
      }
    }
  }
  const sample = expected.values().next().value;
  if (sample) {
    // A context without keys reads the stored ciphertext (README, "Client-side encryption").
    const keyless = new TableContext({ store, tablePrefix: prefix });
    const raw = await keyless
      .dynamic(ORDER_TABLE)
      .get(sample.customer, `o_${String(sample.orderId).padStart(6, "0")}`);
    expect(raw, `${where}: raw row of ${keyOf(sample)}`).toBeDefined();
    expect(raw?.cardHolder, `${where}: raw card holder of ${keyOf(sample)}`).toBeInstanceOf(Uint8Array);
  }
}

/** Inserting a new order under a number that is taken is refused, and writes nothing. */
async function expectDuplicateNumberRefused(
  world: OrderWorld,
  expected: Expected,
  where: string,
): Promise<void> {
  const taken = expected.values().next().value;
  if (!taken) return;
  const orders = world.db.repository(declareOrder());
  const intruder = makeOrder(taken.customer, 999_999, 1);
  intruder.number = taken.number;
  const error = await rejectionOf(orders.insert(intruder));
  expect(error, `${where}: duplicate number ${taken.number}`).toBeInstanceOf(UniqueConstraintError);
  expect(
    await orders.get({ customer: taken.customer, orderId: 999_999 }),
    `${where}: refused insert`,
  ).toBeUndefined();
  const owner = await orders.index("byNumber").get({ number: taken.number });
  expect(owner && keyOf(owner), `${where}: the number's owner`).toBe(keyOf(taken));
}

/** The typed repository of the model. */
export type OrderRepository = Repository<Order>;
