import { ValidationError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { EntityClass } from "../util/entity-class.js";
import type { StateScope } from "../util/scoped-state.js";
import { ServiceLimits } from "../util/service-limits.js";
import { ENTITY_TYPE_PROPERTY } from "../wire/system-properties.js";
import type { StoredEntity, WireEntity, WireValue } from "../wire/wire-entity.js";
import { rememberFreshEtag } from "./entity-etag.js";
import type { MappedColumn } from "./mapped-column.js";
import { createValueReader, createValueWriter, isLowerGuid, wireValueSize } from "./value-codecs.js";

/** Converts between class instances and wire entities for one entity class. */
export interface EntityMapper<T extends object> {
  /** Instance → wire entity (keys encoded, every value checked against the service's rules). */
  toWire(entity: T): WireEntity;
  /**
   * Wire entity → instance; key fields missing from the properties are decoded from the keys. The
   * row's ETag is recorded for the instance once, in `scope` (the reading context's store and prefix).
   */
  fromWire(stored: StoredEntity, scope?: StateScope): T;
  /** The stored property names of the given fields (for `$select`; every slot of a series). */
  propertiesOf(fields: readonly string[]): string[];
}

interface MapperSource {
  readonly ctor: EntityClass<object>;
  readonly name: string;
  readonly type: string;
  readonly version: number;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  readonly columns: readonly MappedColumn[];
  readonly columnsByField: ReadonlyMap<string, MappedColumn>;
  /** A wide entity is checked per row when split (wide-rows.ts), not against one row's 1 MiB. */
  readonly wide?: boolean;
  /**
   * Bytes of the 1 MiB that tablekit's bookkeeping may add to the largest row written for an entity
   * (an index copy's keys and `_tk…` properties, `_tkIndexKeys` on the entity row): the entity's own
   * row must leave them free, so every row sent fits. 0 without indexes.
   */
  readonly bookkeepingBytes?: number;
}

/**
 * Compiles the mapper for one class. Mapping runs once per row on every scan, so instead of
 * walking the column list per row, it generates straight-line code with a fixed property access
 * per column (monomorphic, like hand-written mapping).
 */
export function compileEntityMapper<T extends object>(source: MapperSource): EntityMapper<T> {
  // Large columns live in blobs: the repository writes and reads them around the row (repository/large).
  const columns = source.columns.filter((c) => !c.large);
  return {
    toWire: compileToWire<T>(source, columns),
    fromWire: compileFromWire<T>(source, columns),
    propertiesOf(fields) {
      // A series is selected whole: every slot.
      return fields.flatMap((field) => {
        const column = source.columnsByField.get(field);
        if (!column)
          throw new ValidationError("unknown-field", `${source.name} has no column '${field}'`, { field });
        return column.properties;
      });
    },
  };
}

/** The generated `toWire`: keys encoded, each column written and checked inline, the row's size summed. */
function compileToWire<T>(source: MapperSource, columns: readonly MappedColumn[]): (e: T) => WireEntity {
  const writers = columns.map((c) => createValueWriter(c.type, c.field, c.jsonClass, c.encrypted === true));
  // Series columns go through their own (slower) code: one property per slot.
  const seriesOut = columns.map((c) => (c.series === undefined ? undefined : seriesWriter(source.name, c)));
  const discriminator = `${source.type}@${source.version}`;
  const reserve = source.bookkeepingBytes ?? 0;
  return new Function(
    "pk",
    "rk",
    "writers",
    "seriesOut",
    "sizeOf",
    "maxEntityBytes",
    "tooLarge",
    "notAnEntity",
    "isLowerGuid",
    "minInt64",
    "maxInt64",
    "minDateTimeMs",
    "maxDateTimeMs",
    `return function toWire(e) {\n${toWireBody(columns, discriminator)}\n};`,
  )(
    source.partitionKey,
    source.rowKey,
    writers,
    seriesOut,
    wireValueSize,
    source.wide ? Number.POSITIVE_INFINITY : ServiceLimits.maxEntityBytes - reserve,
    tooLargeError(source.name, reserve),
    notAnEntityError(source.name),
    isLowerGuid,
    ServiceLimits.minInt64,
    ServiceLimits.maxInt64,
    ServiceLimits.minDateTimeMs,
    ServiceLimits.maxDateTimeMs,
  ) as (e: T) => WireEntity;
}

/**
 * The body of `toWire`. One object literal with every property when all are present (one
 * allocation, like hand-written code); absent values (not sent) and series (one property per slot)
 * build the row step by step.
 */
function toWireBody(columns: readonly MappedColumn[], discriminator: string): string {
  const literal =
    columns.every((c) => c.series === undefined) && !columns.some((c) => c.property === "__proto__");
  const property = (c: MappedColumn) => JSON.stringify(c.property);
  return [
    "if (e === null || typeof e !== 'object') notAnEntity(e);",
    `const partitionKey = pk.encode(e, "PartitionKey"), rowKey = rk.encode(e, "RowKey");`,
    `let size = 4 + (partitionKey.length + rowKey.length) * 2 + ${8 + ENTITY_TYPE_PROPERTY.length * 2 + 4 + discriminator.length * 2};`,
    "let v, w;",
    ...(literal
      ? [
          ...columns.map((_, i) => `let c${i};`),
          ...columns.map(
            (c, i) =>
              `v = e[${JSON.stringify(c.field)}]; if (v !== undefined && v !== null) { ${writeStatement(c, i, `c${i}`)} }`,
          ),
          "if (size > maxEntityBytes) tooLarge(size);",
          columns.length === 0
            ? ""
            : `if (${columns.map((_, i) => `c${i} !== undefined`).join(" && ")}) return { partitionKey, rowKey, ${columns.map((c, i) => `${property(c)}: c${i}`).join(", ")}, ${JSON.stringify(ENTITY_TYPE_PROPERTY)}: ${JSON.stringify(discriminator)} };`,
          "const out = { partitionKey, rowKey };",
          ...columns.map((c, i) => `if (c${i} !== undefined) out[${property(c)}] = c${i};`),
        ]
      : [
          "const out = { partitionKey, rowKey };",
          ...columns.map(
            (c, i) =>
              `v = e[${JSON.stringify(c.field)}]; if (v !== undefined && v !== null) { ${c.series === undefined ? writeStatement(c, i, `out[${property(c)}]`) : `size += seriesOut[${i}](v, out);`} }`,
          ),
          "if (size > maxEntityBytes) tooLarge(size);",
        ]),
    `out[${JSON.stringify(ENTITY_TYPE_PROPERTY)}] = ${JSON.stringify(discriminator)};`,
    "return out;",
  ].join("\n");
}

/** The error of a row over the service's 1 MiB, with the part kept for index bookkeeping (`reserve`) named. */
function tooLargeError(entity: string, reserve: number): (size: number) => never {
  return (size) => {
    const kept =
      reserve === 0
        ? ""
        : ` of which ${reserve} are kept for tablekit's index bookkeeping (each copy's keys, EntityType, _tkIndex, _tkSourcePK, _tkSourceRK; _tkIndexKeys on the entity row), so the entity itself may take ${ServiceLimits.maxEntityBytes - reserve}`;
    throw new ValidationError(
      "entity-size",
      `${entity}: entity is ${size} bytes by the service's size formula; the service allows at most ${ServiceLimits.maxEntityBytes} bytes (1 MiB) per row${kept}`,
    );
  };
}

function notAnEntityError(entity: string): (value: unknown) => never {
  return (value) => {
    throw new ValidationError(
      "entity",
      `${entity}: expected an entity object, got ${value === null ? "null" : typeof value}`,
    );
  };
}

/** The generated `fromWire`: each column read (typed inline), key fields restored from the keys, the ETag recorded. */
function compileFromWire<T>(
  source: MapperSource,
  columns: readonly MappedColumn[],
): (s: StoredEntity, scope?: StateScope) => T {
  const readers = columns.map((c) => createValueReader(c.type, c.field, c.jsonClass));
  const seriesIn = columns.map((c, i) => (c.series === undefined ? undefined : seriesReader(c, readers[i]!)));
  const keyFields = [...new Set([...source.partitionKey.fields, ...source.rowKey.fields])];
  return new Function(
    "proto",
    "readers",
    "seriesIn",
    "fillKeys",
    "remember",
    `return function fromWire(s, scope) {\n${fromWireBody(columns, keyFields)}\n};`,
  )(source.ctor.prototype, readers, seriesIn, keyFiller(source), rememberFreshEtag) as (
    s: StoredEntity,
    scope?: StateScope,
  ) => T;
}

function fromWireBody(columns: readonly MappedColumn[], keyFields: readonly string[]): string {
  return [
    "const o = Object.create(proto);",
    "let v;",
    ...columns.map((c, i) =>
      c.series === undefined
        ? `v = s[${JSON.stringify(c.property)}]; if (v !== undefined && v !== null) o[${JSON.stringify(c.field)}] = ${readExpression(c, i)};`
        : `o[${JSON.stringify(c.field)}] = seriesIn[${i}](s);`,
    ),
    // Key fields absent from the properties (projections, rows written by other clients) come from the keys.
    keyFields.length > 0
      ? `if (${keyFields.map((f) => `o[${JSON.stringify(f)}] === undefined`).join(" || ")}) fillKeys(o, s);`
      : "",
    "remember(o, s.etag, scope);",
    "return o;",
  ].join("\n");
}

/** Sets the key fields an instance lacks from the row's keys, decoded by the templates. */
function keyFiller(source: MapperSource): (o: Record<string, unknown>, s: StoredEntity) => void {
  // A period placeholder keeps only the period, not the instant: never restore a field from it.
  const pkLossy = source.partitionKey.lossyFields;
  const rkLossy = source.rowKey.lossyFields;
  return (o, s) => {
    fill(o, source.partitionKey.decode(s.partitionKey), pkLossy);
    fill(o, source.rowKey.decode(s.rowKey), rkLossy);
  };
}

/**
 * Writes a series' array into `out`, one property per slot, and returns the bytes it adds. Absent
 * slots (`undefined`, `null`, holes) are not sent: a replace drops them, a merge keeps what is stored.
 */
function seriesWriter(entity: string, column: MappedColumn): (value: unknown, out: WireEntity) => number {
  const { field, properties, type } = column;
  const slotWriters = properties.map((_, slot) =>
    createValueWriter(type, `${field}[${slot}]`, column.jsonClass),
  );
  return (value, out) => {
    if (!Array.isArray(value)) {
      throw new ValidationError(
        "type",
        `${entity}.${field}: a series takes an array of ${properties.length} values, got ${typeof value}`,
        { field },
      );
    }
    if (value.length > properties.length) {
      throw new ValidationError(
        "series-length",
        `${entity}.${field}: ${value.length} values exceed the series' ${properties.length} slots`,
        { field },
      );
    }
    let size = 0;
    for (let slot = 0; slot < value.length; slot++) {
      const item: unknown = value[slot];
      if (item === undefined || item === null) continue;
      const property = properties[slot] as string;
      const wire = (slotWriters[slot] as (v: unknown) => WireValue)(item);
      out[property] = wire;
      size += 8 + property.length * 2 + wireValueSize(type, wire);
    }
    return size;
  };
}

/** Rebuilds a series' array from its slot properties: always its full length, `undefined` where absent. */
function seriesReader(column: MappedColumn, read: (v: unknown) => unknown): (s: StoredEntity) => unknown[] {
  const { properties } = column;
  return (s) => {
    const values = new Array<unknown>(properties.length).fill(undefined);
    for (let slot = 0; slot < properties.length; slot++) {
      const v = s[properties[slot] as string];
      if (v !== undefined && v !== null) values[slot] = read(v);
    }
    return values;
  };
}

/**
 * The generated statement writing one column's wire value to `target` (a property of `out`, or a
 * local). Common types are checked inline (the fast path); anything unusual goes through the
 * column's writer, which also produces the precise error.
 */
function writeStatement(column: MappedColumn, i: number, target: string): string {
  const overhead = 8 + column.property.length * 2;
  const slow = `w = writers[${i}](v); ${target} = w; size += ${overhead} + sizeOf(${JSON.stringify(column.type)}, w);`;
  // Encrypted values are checked by their writer (the size once encrypted); the store seals them.
  if (column.encrypted) return slow;
  switch (column.type) {
    case "String":
      return `if (typeof v !== "string" || v.length > ${ServiceLimits.maxStringLength}) writers[${i}](v); ${target} = v; size += ${overhead + 4} + v.length * 2;`;
    case "Int32":
      return `if ((v | 0) !== v) writers[${i}](v); ${target} = v; size += ${overhead + 4};`;
    case "Boolean":
      return `if (typeof v !== "boolean") writers[${i}](v); ${target} = v; size += ${overhead + 1};`;
    case "Double":
      // v - v is 0 only for finite numbers: NaN and infinities take the slow path and its error.
      return `if (typeof v !== "number" || v - v !== 0) writers[${i}](v); ${target} = { type: "Double", value: v }; size += ${overhead + 8};`;
    case "Int64":
      return `if (typeof v === "bigint" && v >= minInt64 && v <= maxInt64) { ${target} = { type: "Int64", value: v.toString() }; size += ${overhead + 8}; } else { ${slow} }`;
    case "DateTime":
      // NaN (an Invalid Date) fails both comparisons: the slow path gives its error.
      return `if (v instanceof Date && (w = v.getTime()) >= minDateTimeMs && w <= maxDateTimeMs) { ${target} = v; size += ${overhead + 8}; } else { ${slow} }`;
    case "Guid":
      // Already in the one spelling tablekit writes (lower case): no regex, no copy; else the writer's.
      return `if (typeof v === "string" && isLowerGuid(v)) { ${target} = { type: "Guid", value: v }; size += ${overhead + 16}; } else { ${slow} }`;
    default:
      return slow;
  }
}

/** The generated expression reading one column: the SDK's usual shape inline, anything else via the reader. */
function readExpression(column: MappedColumn, i: number): string {
  switch (column.type) {
    case "String":
      return `typeof v === "string" ? v : readers[${i}](v)`;
    case "Int32":
    case "Double":
      return `typeof v === "number" ? v : readers[${i}](v)`;
    case "Boolean":
      return `typeof v === "boolean" ? v : readers[${i}](v)`;
    case "Int64":
      return `typeof v === "bigint" ? v : readers[${i}](v)`;
    case "DateTime":
      return `v instanceof Date ? v : readers[${i}](v)`;
    default:
      return `readers[${i}](v)`;
  }
}

function fill(
  target: Record<string, unknown>,
  values: Record<string, unknown> | undefined,
  skip: readonly string[],
): void {
  if (!values) return;
  for (const key in values) {
    if (target[key] === undefined && !skip.includes(key)) target[key] = values[key];
  }
}
