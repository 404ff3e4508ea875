import { describe, expect, it } from "vitest";
import { Column, Entity, ValidationError } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { AllTypes, Employee, employee } from "../fixtures/models.js";

@Entity({ table: "Notes", partitionKey: "{owner}", rowKey: "{id}" })
class Note {
  @Column({ type: "String" }) owner!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) body?: string;
}

function expectValidation(error: unknown, rule: string): void {
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).rule).toBe(rule);
}

describe.each(stores)("bad input is rejected before any request on %s", (_name, kind) => {
  it("rejects every rule violation with a ValidationError and sends nothing", async () => {
    const { db, counter } = await freshContext(kind, [Employee, AllTypes, Note]);
    const employees = db.repository(Employee);
    const notes = db.repository(Note);
    const all = db.repository(AllTypes);
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["key-characters", () => notes.insert(Object.assign(new Note(), { owner: "a/b", id: "1" }))],
      ["key-characters", () => notes.insert(Object.assign(new Note(), { owner: "a", id: "x#y" }))],
      ["key-characters", () => notes.insert(Object.assign(new Note(), { owner: "a", id: "tab\there" }))],
      ["key-characters", () => notes.get({ owner: "a?", id: "1" })],
      ["key-size", () => notes.insert(Object.assign(new Note(), { owner: "o".repeat(513), id: "1" }))],
      ["key-field-missing", () => notes.insert(Object.assign(new Note(), { owner: "a" }))],
      ["key-negative", () => employees.insert(employee("Sales", -5))],
      ["key-too-wide", () => employees.insert(employee("Sales", 1_000_000))],
      [
        "string-size",
        () => notes.insert(Object.assign(new Note(), { owner: "a", id: "1", body: "b".repeat(32_769) })),
      ],
      ["range", () => all.insert(Object.assign(new AllTypes(), { group: "g", id: "1", int32: 2 ** 31 }))],
      ["range", () => all.insert(Object.assign(new AllTypes(), { group: "g", id: "1", int64: 2n ** 63n }))],
      [
        "range",
        () =>
          all.insert(
            Object.assign(new AllTypes(), { group: "g", id: "1", at: new Date(Date.UTC(1600, 0, 1)) }),
          ),
      ],
      ["type", () => all.insert(Object.assign(new AllTypes(), { group: "g", id: "1", guid: "nope" }))],
      [
        "binary-size",
        () =>
          all.insert(Object.assign(new AllTypes(), { group: "g", id: "1", bytes: new Uint8Array(65_537) })),
      ],
      ["type", () => all.upsert(Object.assign(new AllTypes(), { group: "g", id: "1", int32: 1.5 }))],
      ["find-partition", async () => employees.find({ employeeId: 1 } as never)],
      ["find-key-fields", async () => employees.find({ department: "Sales", lastName: "x" })],
      [
        "unknown-field",
        async () => employees.find({ department: "Sales" }).where("nope" as never, "eq", 1 as never),
      ],
      ["operator", async () => employees.find({ department: "Sales" }).where("age", "like" as never, 1)],
      ["type", async () => employees.find({ department: "Sales" }).where("age", "eq", "30" as never)],
      [
        "filter-comparisons",
        () => {
          let query = employees.find({ department: "Sales" });
          for (let i = 0; i < 14; i++) query = query.where("age", "ne", i);
          return query.toArray();
        },
      ],
      ["transaction-empty", () => db.transaction(() => {})],
      [
        "transaction-partition",
        () =>
          db.transaction((tx) => {
            tx.insert(employee("A", 1));
            tx.insert(employee("B", 2));
          }),
      ],
      [
        "transaction-table",
        () =>
          db.transaction((tx) => {
            tx.insert(employee("A", 1));
            tx.insert(Object.assign(new Note(), { owner: "A", id: "1" }));
          }),
      ],
      [
        "transaction-duplicate",
        () =>
          db.transaction((tx) => {
            tx.insert(employee("A", 1));
            tx.upsert(employee("A", 1));
          }),
      ],
      [
        "transaction-operations",
        () =>
          db.transaction((tx) => {
            for (let i = 0; i < 101; i++) tx.insert(employee("A", i));
          }),
      ],
      [
        "transaction-payload",
        () =>
          db.transaction((tx) => {
            for (let i = 0; i < 100; i++)
              tx.insert(Object.assign(new Note(), { owner: "A", id: `n${i}`, body: "é".repeat(30_000) }));
          }),
      ],
    ];
    for (const [rule, attempt] of cases) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expectValidation(error, rule);
    }
    expect(counter.requests).toBe(0);
  });
});
