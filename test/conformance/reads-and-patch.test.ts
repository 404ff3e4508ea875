/**
 * Round two's reads and writes on the typed repository: `getMany` (parallel point reads in key
 * order), `patch` (a merge of only the given columns) and `timestampOf` (the service's Timestamp).
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  ConcurrencyError,
  Entity,
  EntityNotFoundError,
  etagOf,
  TableContext,
  timestampOf,
  ValidationError,
} from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { freshContext, stores, uniquePrefix } from "../fixtures/context.js";
import { Employee, employee } from "../fixtures/models.js";
import { expectRejection } from "../support/rejection.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

@Entity({
  table: "PatchPeople",
  partitionKey: "{department}",
  rowKey: "empid_{employeeId:6}",
  indexes: {
    byEmail: { rowKey: "email_{email}" },
    byLastName: {
      table: "PatchPeopleByName",
      partitionKey: "{lastName}",
      rowKey: "{department}_{employeeId:6}",
    },
  },
})
class IndexedPerson {
  @Column({ type: "String" }) department!: string;
  @Column({ type: "Int32" }) employeeId!: number;
  @Column({ type: "String" }) lastName!: string;
  @Column({ type: "Int32" }) age!: number;
  @Column({ type: "String" }) email!: string;
}

const person = (employeeId: number, lastName: string, email: string): IndexedPerson =>
  Object.assign(new IndexedPerson(), { department: "Sales", employeeId, lastName, age: 30, email });

/** Holds every point read until the test lets them go, counting how many wait at once. */
class GateStore extends StoreWrapper {
  inFlight = 0;
  maxInFlight = 0;
  #waiting: Array<() => void> = [];
  #arrivals: Array<{ count: number; resolve: () => void }> = [];

  constructor(inner: TableStore) {
    super(inner);
  }

  /** Resolves once `count` reads are held at the same time. */
  held(count: number): Promise<void> {
    if (this.#waiting.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#arrivals.push({ count, resolve }));
  }

  /** Lets every held read go, and every later one pass straight through. */
  open(): void {
    this.#opened = true;
    for (const release of this.#waiting.splice(0)) release();
  }

  #opened = false;

  protected override async around<T>({ method }: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (method !== "getEntity") return send();
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (!this.#opened) {
        await new Promise<void>((resolve) => {
          this.#waiting.push(resolve);
          for (const arrival of this.#arrivals.filter((a) => a.count <= this.#waiting.length)) {
            this.#arrivals.splice(this.#arrivals.indexOf(arrival), 1);
            arrival.resolve();
          }
        });
      }
      return await send();
    } finally {
      this.inFlight--;
    }
  }
}

describe.each(stores)("getMany on %s", (_name, kind) => {
  it("answers in the order of the keys, undefined where absent, duplicates allowed, one point read per key", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    await employees.bulkInsert([employee("Sales", 1), employee("Sales", 2), employee("HR", 3)]);
    counter.reset();
    const keys = [
      { department: "HR", employeeId: 3 },
      { department: "Sales", employeeId: 9 },
      { department: "Sales", employeeId: 1 },
      { department: "HR", employeeId: 3 },
      { department: "Sales", employeeId: 2 },
    ];
    const found = await employees.getMany(keys);
    expect(found.map((e) => (e ? `${e.department}/${e.employeeId}` : undefined))).toEqual([
      "HR/3",
      undefined,
      "Sales/1",
      "HR/3",
      "Sales/2",
    ]);
    expect(counter.calls.getEntity).toBe(keys.length);
    expect(counter.calls.queryPage).toBe(0);
    // Read entities are tracked like any read: their ETags condition a later update.
    const first = found[0] as Employee;
    expect(etagOf(first)).toBeDefined();
    await employees.update(Object.assign(first, { age: 77 }));
    expect(await employees.getMany([])).toEqual([]);
  });

  it("keeps the given number of reads in flight (default 8)", async () => {
    for (const [concurrency, expected] of [
      [undefined, 8],
      [3, 3],
    ] as const) {
      const gate = new GateStore(kind.create());
      const db = new TableContext({ store: gate, tablePrefix: uniquePrefix() });
      await db.ensureTables(Employee);
      const employees = db.repository(Employee);
      const keys = Array.from({ length: 20 }, (_, i) => ({ department: "Sales", employeeId: i }));
      const reading = employees.getMany(keys, { concurrency });
      // Resolves only when that many reads wait together: sequential reads would never get there.
      await gate.held(expected);
      gate.open();
      expect(await reading).toEqual(keys.map(() => undefined));
      expect(gate.maxInFlight).toBe(expected);
    }
  });

  it("checks every key and the options before any request", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const good = { department: "Sales", employeeId: 1 };
    await expectRejection(employees.getMany([good, { department: "Sales" }]), ValidationError);
    await expectRejection(employees.getMany([good, { department: "a/b", employeeId: 1 }]), ValidationError);
    await expectRejection(employees.getMany([good], { concurrency: 0 }), ValidationError);
    await expectRejection(employees.getMany([good], { concurrency: 1.5 }), ValidationError);
    await expectRejection(employees.getMany("nope" as never), ValidationError);
    expect(counter.requests).toBe(0);
  });
});

describe.each(stores)("patch on %s", (_name, kind) => {
  it("merges only the given columns in one request, creating the entity when absent", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const key = { department: "Sales", employeeId: 1 };
    await employees.insert(employee("Sales", 1, { age: 30 }));
    counter.reset();
    await employees.patch(key, { age: 31, email: "new@contoso.com" });
    expect(counter.requests).toBe(1);
    const stored = await employees.getOrThrow(key);
    expect(stored).toMatchObject({ ...employee("Sales", 1), age: 31, email: "new@contoso.com" });

    counter.reset();
    await employees.patch({ department: "HR", employeeId: 2 }, { firstName: "Ann", lastName: undefined });
    expect(counter.requests).toBe(1);
    const created = await employees.getOrThrow({ department: "HR", employeeId: 2 });
    expect({ ...created }).toEqual({ department: "HR", employeeId: 2, firstName: "Ann" });
  });

  it("with ifMatch merges that version only", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const key = { department: "Sales", employeeId: 1 };
    const written = await employees.insert(employee("Sales", 1, { age: 30 }));
    const version = etagOf(written) as string;
    counter.reset();
    await employees.patch(key, { age: 40 }, { ifMatch: version });
    expect(counter.requests).toBe(1);
    expect((await employees.getOrThrow(key)).age).toBe(40);

    await expectRejection(employees.patch(key, { age: 50 }, { ifMatch: version }), ConcurrencyError);
    expect((await employees.getOrThrow(key)).age).toBe(40);
    await expectRejection(
      employees.patch({ department: "Sales", employeeId: 2 }, { age: 1 }, { ifMatch: "*" }),
      EntityNotFoundError,
    );
    expect(await employees.get({ department: "Sales", employeeId: 2 })).toBeUndefined();
  });

  it("refuses key fields, unknown columns, null, empty changes and bad values before any request", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const key = { department: "Sales", employeeId: 1 };
    const bad: unknown[] = [
      { employeeId: 2 },
      { department: "HR" },
      { salary: 1 },
      { age: null },
      {},
      { age: undefined },
      { age: "old" },
      { age: 2 ** 40 },
      { email: "x".repeat(40_000) },
      null,
    ];
    for (const changes of bad) {
      await expectRejection(employees.patch(key, changes as never), ValidationError);
    }
    await expectRejection(employees.patch({ department: "Sales" }, { age: 1 }), ValidationError);
    expect(counter.requests).toBe(0);
  });

  it("keeps index copies consistent with the changed columns", async () => {
    const { db } = await freshContext(kind, [IndexedPerson]);
    const people = db.repository(IndexedPerson);
    await people.insert(person(1, "Jones", "jones@contoso.com"));
    await people.patch({ department: "Sales", employeeId: 1 }, { email: "j2@contoso.com", age: 44 });
    const byEmail = people.index("byEmail");
    expect(await byEmail.get({ department: "Sales", email: "jones@contoso.com" })).toBeUndefined();
    expect(await byEmail.get({ department: "Sales", email: "j2@contoso.com" })).toMatchObject({
      employeeId: 1,
      age: 44,
      lastName: "Jones",
    });
    expect(
      await people.index("byLastName").get({ lastName: "Jones", department: "Sales", employeeId: 1 }),
    ).toMatchObject({
      email: "j2@contoso.com",
      age: 44,
    });
    const current = await people.getOrThrow({ department: "Sales", employeeId: 1 });
    await expectRejection(
      people.patch({ department: "Sales", employeeId: 1 }, { age: 1 }, { ifMatch: 'W/"stale"' }),
      ConcurrencyError,
    );
    await people.patch(
      { department: "Sales", employeeId: 1 },
      { lastName: "Smith" },
      { ifMatch: etagOf(current) },
    );
    expect(
      await people.index("byLastName").get({ lastName: "Jones", department: "Sales", employeeId: 1 }),
    ).toBeUndefined();
    expect(
      await people.index("byLastName").get({ lastName: "Smith", department: "Sales", employeeId: 1 }),
    ).toMatchObject({
      email: "j2@contoso.com",
    });
  });
});

describe.each(stores)("timestampOf on %s", (_name, kind) => {
  it("is the service's Timestamp of an entity read or written, undefined otherwise", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const fresh = employee("Sales", 1);
    expect(timestampOf(fresh)).toBeUndefined();
    await employees.insert(fresh);
    const written = timestampOf(fresh);
    expect(written).toBeInstanceOf(Date);

    const read = await employees.getOrThrow({ department: "Sales", employeeId: 1 });
    // The raw row's Timestamp property, read past the repository, is the independent answer.
    const raw = await counter.getEntity(employees.table, "Sales", "empid_000001");
    expect(raw?.timestamp).toBeInstanceOf(Date);
    expect(timestampOf(read)?.getTime()).toBe(raw?.timestamp?.getTime());
    expect(written?.getTime()).toBe(raw?.timestamp?.getTime());

    await employees.update(Object.assign(read, { age: 99 }));
    const after = await counter.getEntity(employees.table, "Sales", "empid_000001");
    expect(timestampOf(read)?.getTime()).toBe(after?.timestamp?.getTime());
    expect((timestampOf(read) as Date).getTime()).toBeGreaterThanOrEqual((written as Date).getTime());

    await employees.delete(read);
    expect(timestampOf(read)).toBeUndefined();
  });
});

@Entity({ table: "PatchLogs{at:month}", partitionKey: "{source}", rowKey: "{at:ticks}_{id}" })
class PeriodLog {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) text?: string;
}

describe.each(stores)("patch and getMany with a table per period on %s", (_name, kind) => {
  it("routes by the key's period, creating the period's table on the first patch", async () => {
    const { db } = await freshContext(kind, []);
    const logs = db.repository(PeriodLog);
    const november = { source: "s", at: new Date(Date.UTC(2026, 10, 25)), id: "1" };
    const december = { source: "s", at: new Date(Date.UTC(2026, 11, 1)), id: "2" };
    await logs.patch(november, { text: "first" });
    await logs.patch(december, { text: "second" });
    await logs.patch(november, { text: "changed" });
    const found = await logs.getMany([december, november, { ...november, id: "9" }]);
    expect(found.map((log) => log?.text)).toEqual(["second", "changed", undefined]);
    await expectRejection(
      logs.patch({ ...december, id: "9" }, { text: "x" }, { ifMatch: "*" }),
      EntityNotFoundError,
    );
  });
});
