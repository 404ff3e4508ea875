import { describe, expect, it } from "vitest";
import { Column, Entity, etagOf, ValidationError } from "../../src/index.js";
import { getEntityModel } from "../../src/schema/entity-model.js";
import type { StoredEntity } from "../../src/store/table-store.js";

@Entity({ table: "Mixed", partitionKey: "{tenant}", rowKey: "item_{id:6}" })
class Mixed {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String", name: "Title" }) title?: string;
  @Column({ type: "Int64" }) big?: bigint;
  @Column({ type: "Double" }) ratio?: number;
  @Column({ type: "Boolean" }) active?: boolean;
  @Column({ type: "DateTime" }) at?: Date;
  @Column({ type: "Guid" }) ref?: string;
  @Column({ type: "Binary" }) bytes?: Uint8Array;
  @Column({ type: "Json" }) meta?: unknown;
}

const mapper = getEntityModel(Mixed).mapper;

function mixed(values: Partial<Mixed>): Mixed {
  return Object.assign(new Mixed(), { tenant: "acme", id: 7 }, values);
}

function rejects(values: Partial<Mixed>, field: string, rule: string): void {
  let caught: unknown;
  try {
    mapper.toWire(mixed(values));
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ValidationError);
  expect((caught as ValidationError).field).toBe(field);
  expect((caught as ValidationError).rule).toBe(rule);
  expect((caught as Error).message).toContain(field);
}

describe("entity mapper", () => {
  it("writes keys, typed values and the discriminator in the SDK's wire conventions", () => {
    const at = new Date("2024-02-29T12:34:56.789Z");
    const wire = mapper.toWire(
      mixed({
        title: "hello",
        big: 9007199254740993n,
        ratio: 5,
        active: true,
        at,
        ref: "0f8fad5b-d9cb-469f-a165-70867728950e",
        bytes: new Uint8Array([1, 2, 255]),
        meta: { a: [1, 2] },
      }),
    );
    expect(wire).toEqual({
      partitionKey: "acme",
      rowKey: "item_000007",
      tenant: "acme",
      id: 7,
      Title: "hello",
      big: { type: "Int64", value: "9007199254740993" },
      ratio: { type: "Double", value: 5 },
      active: true,
      at,
      ref: { type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" },
      bytes: new Uint8Array([1, 2, 255]),
      meta: '{"a":[1,2]}',
      EntityType: "Mixed@1",
    });
  });

  it("writes NaN and infinities as annotated doubles (the service stores them)", () => {
    for (const ratio of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(mapper.toWire(mixed({ ratio })).ratio).toEqual({ type: "Double", value: ratio });
    }
  });

  it("omits undefined and null values (the service has no nulls)", () => {
    const wire = mapper.toWire(mixed({ title: undefined, ratio: null as unknown as number }));
    expect("Title" in wire).toBe(false);
    expect("ratio" in wire).toBe(false);
  });

  it("reads rows written by the plain SDK or .NET, typed loosely, into the declared types", () => {
    const stored: StoredEntity = {
      partitionKey: "acme",
      rowKey: "item_000042",
      etag: "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"",
      timestamp: new Date(),
      Title: "from .NET",
      big: 12, // an Int64 column someone wrote as Int32
      ratio: 2, // a whole Double arrives as a plain number
      active: true,
      at: new Date("2020-01-01T00:00:00.000Z"),
      ref: { type: "Guid", value: "0f8fad5b-d9cb-469f-a165-70867728950e" },
      bytes: new Uint8Array([9]),
      meta: '{"x":true}',
    };
    const entity = mapper.fromWire(stored);
    expect(entity).toBeInstanceOf(Mixed);
    // Key fields were not stored as properties: they are decoded from the keys.
    expect(entity.tenant).toBe("acme");
    expect(entity.id).toBe(42);
    expect(entity.title).toBe("from .NET");
    expect(entity.big).toBe(12n);
    expect(entity.ratio).toBe(2);
    expect(entity.at?.toISOString()).toBe("2020-01-01T00:00:00.000Z");
    expect(entity.ref).toBe("0f8fad5b-d9cb-469f-a165-70867728950e");
    expect(entity.meta).toEqual({ x: true });
    expect(etagOf(entity)).toBe(stored.etag);
  });

  it("round-trips every type through wire form", () => {
    const original = mixed({
      title: "t",
      big: -(2n ** 63n),
      ratio: 0.1,
      active: false,
      at: new Date(Date.UTC(1601, 0, 1)),
      ref: "0f8fad5b-d9cb-469f-a165-70867728950e",
      bytes: new Uint8Array(0),
      meta: ["x", null],
    });
    const wire = mapper.toWire(original);
    // What the SDK hands back for the same row.
    const read: StoredEntity = {
      ...wire,
      etag: "e",
      big: BigInt((wire.big as { value: string }).value),
      ratio: 0.1,
    };
    const back = mapper.fromWire(read);
    expect({ ...back }).toEqual({ ...original });
  });

  it("rejects values the service would reject, naming field and rule", () => {
    rejects({ id: -1 }, "id", "key-negative");
    rejects({ id: 1_000_000 }, "id", "key-too-wide");
    rejects({ tenant: "a/b" }, "tenant", "key-characters");
    rejects({ title: "x".repeat(32_769) }, "title", "string-size");
    rejects({ title: 5 as unknown as string }, "title", "type");
    rejects({ big: 2n ** 63n }, "big", "range");
    rejects({ ratio: "1" as unknown as number }, "ratio", "type");
    rejects({ at: new Date(Date.UTC(1600, 11, 31)) }, "at", "range");
    rejects({ at: new Date("nope") }, "at", "type");
    rejects({ ref: "not-a-guid" }, "ref", "type");
    rejects({ bytes: new Uint8Array(64 * 1024 + 1) }, "bytes", "binary-size");
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    rejects({ meta: circular }, "meta", "unsupported-value");
    rejects({ active: "yes" as unknown as boolean }, "active", "type");
  });

  it("rejects an entity over 1 MiB by the service's size formula", () => {
    @Entity({ table: "Wide", partitionKey: "p", rowKey: "r" })
    class Wide {
      @Column({ type: "Binary" }) a?: Uint8Array;
      @Column({ type: "Binary" }) b?: Uint8Array;
      @Column({ type: "Binary" }) c?: Uint8Array;
      @Column({ type: "Binary" }) d?: Uint8Array;
      @Column({ type: "Binary" }) e?: Uint8Array;
      @Column({ type: "Binary" }) f?: Uint8Array;
      @Column({ type: "Binary" }) g?: Uint8Array;
      @Column({ type: "Binary" }) h?: Uint8Array;
      @Column({ type: "Binary" }) i?: Uint8Array;
      @Column({ type: "Binary" }) j?: Uint8Array;
      @Column({ type: "Binary" }) k?: Uint8Array;
      @Column({ type: "Binary" }) l?: Uint8Array;
      @Column({ type: "Binary" }) m?: Uint8Array;
      @Column({ type: "Binary" }) n?: Uint8Array;
      @Column({ type: "Binary" }) o?: Uint8Array;
      @Column({ type: "Binary" }) q?: Uint8Array;
      @Column({ type: "Binary" }) s?: Uint8Array;
    }
    const wideMapper = getEntityModel(Wide).mapper;
    const full = new Uint8Array(64 * 1024);
    const wide = new Wide();
    for (const field of "abcdefghijklmno") (wide as unknown as Record<string, Uint8Array>)[field] = full;
    // 15 × 64 KiB stays under 1 MiB...
    expect(() => wideMapper.toWire(wide)).not.toThrow();
    // ...17 × 64 KiB does not.
    wide.q = full;
    wide.s = full;
    expect(() => wideMapper.toWire(wide)).toThrow(expect.objectContaining({ rule: "entity-size" }));
  });
});

describe("Json columns with a class", () => {
  class Address {
    street!: string;
    city!: string;
    label(): string {
      return `${this.street}, ${this.city}`;
    }
  }

  @Entity({ table: "People", partitionKey: "p", rowKey: "{id}" })
  class Person {
    @Column({ type: "String" }) id!: string;
    @Column({ type: "Json", jsonClass: Address }) home?: Address;
    @Column({ type: "Json", jsonClass: Address }) past?: Address[];
  }

  it("rebuilds instances of the class (and arrays of them) when read", () => {
    const personMapper = getEntityModel(Person).mapper;
    const home = Object.assign(new Address(), { street: "1 Main St", city: "Springfield" });
    const wire = personMapper.toWire(Object.assign(new Person(), { id: "a", home, past: [home] }));
    expect(wire.home).toBe('{"street":"1 Main St","city":"Springfield"}');
    const read = personMapper.fromWire({ ...wire, etag: "e" });
    expect(read.home).toBeInstanceOf(Address);
    expect(read.home?.label()).toBe("1 Main St, Springfield");
    expect(read.past?.[0]).toBeInstanceOf(Address);
  });
});
