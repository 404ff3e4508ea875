import type { PropertyMap } from "../served-store.js";
import type { EdmType } from "../table-store.js";
import type { EdmValue } from "./edm-value.js";

/**
 * A stored value without its type (the type lives in the row's shape): String and Guid as `string`,
 * Int32, Double and Boolean as themselves, Int64 as a `number` when it is a safe integer (else
 * `bigint`), DateTime as whole milliseconds (`number`) when it has no sub-millisecond ticks (else
 * `bigint` ticks), Binary as a private `Uint8Array`. Unboxed this way a row costs a few hundred bytes.
 */
export type StoredValue = string | number | boolean | bigint | Uint8Array;

const TYPES: readonly EdmType[] = [
  "String",
  "Int32",
  "Int64",
  "Double",
  "Boolean",
  "DateTime",
  "Guid",
  "Binary",
];
const TYPE_CODES = new Map<EdmType, number>(TYPES.map((t, i) => [t, i]));

// Shapes are interned in a transition tree shared by every store, so the rows of a table that share
// property names and types share one shape. Tables whose rows all differ would grow the tree without
// bound, so past this many shapes new ones are made per row instead of interned.
const MAX_INTERNED_SHAPES = 20_000;
let internedShapes = 0;

/**
 * The property names and EDM types of a row, in write order, shared between rows (most rows of a
 * table have the same properties): each row then keeps only an array of its values.
 */
export class PropertyShape {
  /** The shape of a row without user properties, the root of the transition tree. */
  static readonly EMPTY = new PropertyShape([], []);

  readonly names: readonly string[];
  readonly types: readonly EdmType[];
  #index: Map<string, number> | undefined;
  // Transitions: property name → EDM type code → the shape with that property appended.
  #next: Map<string, (PropertyShape | undefined)[]> | undefined;

  private constructor(names: readonly string[], types: readonly EdmType[]) {
    this.names = names;
    this.types = types;
  }

  /** Number of properties. */
  get size(): number {
    return this.names.length;
  }

  /** The position of a property, or -1. */
  indexOf(name: string): number {
    if (this.names.length <= 8) return this.names.indexOf(name);
    if (this.#index === undefined) this.#index = new Map(this.names.map((n, i) => [n, i]));
    return this.#index.get(name) ?? -1;
  }

  /** Whether some row has had a property of this name right after this shape's (it is then a valid name). */
  hasNext(name: string): boolean {
    return this.#next?.has(name) === true;
  }

  /** This shape with one more property (the caller ensures the name is new), interned. */
  with(name: string, type: EdmType): PropertyShape {
    const code = TYPE_CODES.get(type) as number;
    let byType = this.#next?.get(name);
    const known = byType?.[code];
    if (known !== undefined) return known;
    const shape = new PropertyShape([...this.names, name], [...this.types, type]);
    if (internedShapes >= MAX_INTERNED_SHAPES) return shape;
    internedShapes++;
    if (byType === undefined) {
      byType = [];
      this.#next ??= new Map();
      this.#next.set(name, byType);
    }
    byType[code] = shape;
    return shape;
  }
}

/** Packs a typed value for storage (see `StoredValue`). */
export function packValue(v: EdmValue): StoredValue {
  switch (v.type) {
    case "Int64":
      return v.value >= -MAX_SAFE && v.value <= MAX_SAFE ? Number(v.value) : v.value;
    case "DateTime": {
      const ms = v.value / TICKS_PER_MS;
      return ms * TICKS_PER_MS === v.value && ms >= -MAX_SAFE && ms <= MAX_SAFE ? Number(ms) : v.value;
    }
    default:
      return v.value;
  }
}

/** The typed value of a stored one. */
export function unpackValue(type: EdmType, value: StoredValue): EdmValue {
  switch (type) {
    case "Int64":
      return { type, value: typeof value === "number" ? BigInt(value) : (value as bigint) };
    case "DateTime":
      return { type, value: typeof value === "number" ? BigInt(value) * TICKS_PER_MS : (value as bigint) };
    default:
      return { type, value } as EdmValue;
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const TICKS_PER_MS = 10_000n;

/** A row's user properties: its shape and its values in the shape's order. */
export interface PackedProperties {
  readonly shape: PropertyShape;
  readonly values: readonly StoredValue[];
}

export type { PropertyMap } from "../served-store.js";

/** A `PropertyMap` over packed properties: typed values are made on each read. */
export class PackedPropertyMap implements PropertyMap {
  readonly #shape: PropertyShape;
  readonly #values: readonly StoredValue[];

  constructor(packed: PackedProperties) {
    this.#shape = packed.shape;
    this.#values = packed.values;
  }

  get size(): number {
    return this.#shape.size;
  }

  get(name: string): EdmValue | undefined {
    const i = this.#shape.indexOf(name);
    return i < 0 ? undefined : unpackValue(this.#shape.types[i] as EdmType, this.#values[i] as StoredValue);
  }

  [Symbol.iterator](): Iterator<[string, EdmValue]> {
    // A plain iterator rather than a generator: the table server reads every property of every row.
    const { names, types } = this.#shape;
    const values = this.#values;
    let i = 0;
    return {
      next: (): IteratorResult<[string, EdmValue]> => {
        if (i >= names.length) return { done: true, value: undefined };
        const at = i++;
        return {
          done: false,
          value: [names[at] as string, unpackValue(types[at] as EdmType, values[at] as StoredValue)],
        };
      },
    };
  }
}

/**
 * Merges properties as a Merge operation does: the existing names keep their positions and take the
 * written values where both have a name; new names follow in written order.
 */
export function mergePacked(existing: PackedProperties, written: PackedProperties): PackedProperties {
  let shape = PropertyShape.EMPTY;
  const values: StoredValue[] = [];
  const { names, types } = existing.shape;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const w = written.shape.indexOf(name);
    if (w < 0) {
      shape = shape.with(name, types[i] as EdmType);
      values.push(existing.values[i] as StoredValue);
    } else {
      shape = shape.with(name, written.shape.types[w] as EdmType);
      values.push(written.values[w] as StoredValue);
    }
  }
  const added = written.shape;
  for (let i = 0; i < added.names.length; i++) {
    const name = added.names[i] as string;
    if (existing.shape.indexOf(name) >= 0) continue;
    shape = shape.with(name, added.types[i] as EdmType);
    values.push(written.values[i] as StoredValue);
  }
  return { shape, values };
}
