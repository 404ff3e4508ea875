import { beforeEach, describe, expect, it } from "vitest";
import { Column, Entity, etagOf, SchemaError, TableContext } from "../../src/index.js";
import { freshContext, stores } from "../fixtures/context.js";
import { PersonV1, PersonV2, PersonV2Plain, PersonV3, upcastCalls } from "./models.js";

type Kind = Parameters<typeof freshContext>[0];

/** An upcaster with a bug: it returns nothing. */
@Entity({
  table: "People",
  partitionKey: "{team}",
  rowKey: "p_{id}",
  type: "Person",
  version: 2,
  upcast: () => undefined as never,
})
class BrokenPerson {
  @Column({ type: "String" }) team!: string;
  @Column({ type: "String" }) id!: string;
}

const v1 = (id: string, name: string, age: number) =>
  Object.assign(new PersonV1(), { team: "core", id, name, age });

/** The current deployment (PersonV2) and, on the same tables, contexts standing for older or newer code. */
async function setup(kind: Kind) {
  const context = await freshContext(kind, [PersonV2]);
  const other = () => new TableContext({ store: context.db.store, tablePrefix: context.prefix });
  const oldPeople = other().repository(PersonV1);
  await oldPeople.insert(v1("a", "Ada Lovelace", 36));
  await oldPeople.insert(v1("g", "Grace Brewster Hopper", 85));
  const people = context.db.repository(PersonV2);
  await people.insert(
    Object.assign(new PersonV2(), {
      team: "core",
      id: "k",
      firstName: "Katherine",
      lastName: "Johnson",
      age: 101,
    }),
  );
  upcastCalls.length = 0;
  return { ...context, people, oldPeople, other };
}

describe.each(stores)("versions and upcasters on %s", (_name, kind) => {
  beforeEach(() => {
    upcastCalls.length = 0;
  });

  it("a v1 row read by the v2 class goes through upcast, then the normal mapping", async () => {
    const { people } = await setup(kind);
    const ada = await people.getOrThrow({ team: "core", id: "a" });
    expect(ada).toBeInstanceOf(PersonV2);
    expect({ ...ada }).toEqual({
      team: "core",
      id: "a",
      firstName: "Ada",
      lastName: "Lovelace",
      age: 36,
      tags: ["migrated"],
    });
    expect(etagOf(ada)).toEqual(expect.any(String));
    // The upcaster saw the stored property bag (key fields are columns too), without the
    // PartitionKey/RowKey, ETag, Timestamp or EntityType.
    expect(upcastCalls).toEqual([
      { fromVersion: 1, properties: { team: "core", id: "a", name: "Ada Lovelace", age: 36 } },
    ]);
  });

  it("find, scan and db.query upcast old rows and leave current ones alone", async () => {
    const { db, people } = await setup(kind);
    const expected = [
      ["Ada", "Lovelace", ["migrated"]],
      ["Grace", "Brewster Hopper", ["migrated"]],
      ["Katherine", "Johnson", undefined],
    ];
    const shape = (rows: PersonV2[]) => rows.map((p) => [p.firstName, p.lastName, p.tags]);
    expect(shape(await people.find({ team: "core" }).toArray())).toEqual(expected);
    expect(upcastCalls.map((call) => call.fromVersion)).toEqual([1, 1]);
    expect(shape(await people.scan().toArray())).toEqual(expected);
    expect(shape(await db.query(PersonV2).find({ team: "core" }).toArray())).toEqual(expected);
    expect(upcastCalls).toHaveLength(6);
  });

  it("with select, the upcaster gets only the selected properties", async () => {
    const { people } = await setup(kind);
    const ada = await people.get({ team: "core", id: "a" }, { select: ["age"] });
    expect(upcastCalls.map((call) => call.properties)).toEqual([{ age: 36 }]);
    expect(ada).toMatchObject({ team: "core", id: "a", age: 36, firstName: "", lastName: "" });
  });

  it("writing an upcast entity back stores the current version", async () => {
    const { db, people } = await setup(kind);
    const ada = await people.getOrThrow({ team: "core", id: "a" });
    ada.age = 37;
    await people.update(ada);
    const raw = await db.store.getEntity(people.table, "core", "p_a");
    expect(raw).toMatchObject({ EntityType: "Person@2", firstName: "Ada", lastName: "Lovelace", age: 37 });
    expect(raw).not.toHaveProperty("name");
    upcastCalls.length = 0;
    expect((await people.getOrThrow({ team: "core", id: "a" })).age).toBe(37);
    expect(upcastCalls).toEqual([]);
  });

  it("a row of a newer version is returned as it is, without upcasting", async () => {
    const { people, other } = await setup(kind);
    await other()
      .repository(PersonV3)
      .insert(
        Object.assign(new PersonV3(), {
          team: "core",
          id: "n",
          firstName: "Mary",
          lastName: "Jackson",
          age: 40,
          nickname: "MJ",
        }),
      );
    const mary = await people.getOrThrow({ team: "core", id: "n" });
    expect({ ...mary }).toEqual({ team: "core", id: "n", firstName: "Mary", lastName: "Jackson", age: 40 });
    expect(upcastCalls).toEqual([]);
  });

  it("without an upcaster, older rows map as they are", async () => {
    const { other } = await setup(kind);
    const plain = other().repository(PersonV2Plain);
    const ada = await plain.getOrThrow({ team: "core", id: "a" });
    expect({ ...ada }).toEqual({ team: "core", id: "a", name: "Ada Lovelace", age: 36 });
  });

  it("an upcaster that returns no object is a SchemaError naming the class", async () => {
    const { other } = await setup(kind);
    const broken = other().repository(BrokenPerson);
    await expect(broken.get({ team: "core", id: "a" })).rejects.toThrow(SchemaError);
    await expect(broken.get({ team: "core", id: "a" })).rejects.toThrow(
      /BrokenPerson: upcast\(properties, 1\)/,
    );
  });
});
