import { describe, expect, it } from "vitest";
import { Column, Entity, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { Employee } from "../fixtures/models.js";

/** A class with a field default, a getter and a method: only columns are accepted by create(). */
@Entity({ table: "Tasks", partitionKey: "{owner}", rowKey: "{id}" })
class Task {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) status?: string = "open";
  @Column({ type: "Int32" }) priority?: number;

  get label(): string {
    return `${this.owner}/${this.id}`;
  }
}

/** A class whose constructor needs an argument: create() must not call it with none. */
@Entity({ table: "Tickets", partitionKey: "{queue}", rowKey: "{id}" })
class Ticket {
  @Column({ type: "String" }) queue!: string;
  @Column({ type: "String" }) id!: string;

  constructor(queue: string) {
    if (typeof queue !== "string") throw new Error("Ticket needs a queue");
    this.queue = queue;
  }
}

const jones = {
  department: "Sales",
  employeeId: 223,
  firstName: "Jo",
  lastName: "Jones",
  age: 30,
  email: "jonesj@contoso.com",
};

function rejection(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe.each(stores)("repository.create on %s", (_name, kind) => {
  it("builds an instance of the class without writing anything; insert then stores it", async () => {
    const { db, counter } = await freshContext(kind, [Employee]);
    const employees = db.repository(Employee);
    const e = employees.create(jones);
    expect(e).toBeInstanceOf(Employee);
    expect({ ...e }).toEqual(jones);
    expect(counter.requests).toBe(0);
    await employees.insert(e);
    expect(await employees.get({ department: "Sales", employeeId: 223 })).toMatchObject(jones);
  });

  it("runs field initializers, and reads undefined values as absent", async () => {
    const { db } = await freshContext(kind, [Task]);
    const tasks = db.repository(Task);
    expect(tasks.create({ owner: "ann", id: "1" }).status).toBe("open");
    expect(tasks.create({ owner: "ann", id: "1", status: undefined }).status).toBe("open");
    const done = tasks.create({ owner: "ann", id: "2", status: "done", priority: 2 });
    expect(done).toMatchObject({ status: "done", priority: 2 });
    expect(done.label).toBe("ann/2");
  });

  it("rejects properties that are not columns (misspelt fields, getters) with a ValidationError naming them", async () => {
    const { db, counter } = await freshContext(kind, [Employee, Task]);
    const typo = rejection(() => db.repository(Employee).create({ ...jones, lastNmae: "x" } as never));
    expect(typo).toBeInstanceOf(ValidationError);
    expect(typo).toMatchObject({ rule: "unknown-field", field: "lastNmae" });
    expect((typo as ValidationError).message).toMatch(/'lastNmae'.*columns: department, employeeId/);
    const getter = rejection(() => db.repository(Task).create({ owner: "a", id: "1", label: "x" }));
    expect(getter).toMatchObject({ rule: "unknown-field", field: "label" });
    for (const values of [null, "x", [jones]]) {
      const error = rejection(() => db.repository(Employee).create(values as never));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ rule: "create" });
    }
    expect(counter.requests).toBe(0);
  });

  it("does not call a constructor that declares parameters", async () => {
    const { db } = await freshContext(kind, [Ticket]);
    const tickets = db.repository(Ticket);
    const ticket = tickets.create({ queue: "support", id: "7" });
    expect(ticket).toBeInstanceOf(Ticket);
    expect({ ...ticket }).toEqual({ queue: "support", id: "7" });
    await tickets.insert(ticket);
    expect(await tickets.get({ queue: "support", id: "7" })).toMatchObject({ queue: "support", id: "7" });
  });
});
