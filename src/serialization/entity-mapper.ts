import { ValidationError } from "../errors.js";
import type { KeyTemplate } from "../keys/key-template.js";
import type { ColumnModel, EntityClass } from "../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../store/table-store.js";
import { ServiceLimits } from "../util/service-limits.js";
import { rememberEtag } from "./entity-etag.js";
import { createValueReader, createValueWriter, wireValueSize } from "./value-codecs.js";

/** Converts between class instances and wire entities for one entity class. */
export interface EntityMapper<T extends object> {
  /** Instance → wire entity (keys encoded, every value checked against the service's rules). */
  toWire(entity: T): WireEntity;
  /** Wire entity → instance; key fields missing from the properties are decoded from the keys. */
  fromWire(stored: StoredEntity): T;
  /** The stored property names of the given fields (for `$select`). */
  propertiesOf(fields: readonly string[]): string[];
}

interface MapperSource {
  readonly ctor: EntityClass<object>;
  readonly name: string;
  readonly type: string;
  readonly version: number;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  readonly columns: readonly ColumnModel[];
  readonly columnsByField: ReadonlyMap<string, ColumnModel>;
}

/** Property holding the discriminator; kept in sync with build-entity-model.ts. */
const ENTITY_TYPE = "EntityType";

/**
 * Compiles the mapper for one class. Mapping runs once per row on every scan, so instead of
 * walking the column list per row, it generates straight-line code with a fixed property access
 * per column (monomorphic, like hand-written mapping).
 */
export function compileEntityMapper<T extends object>(source: MapperSource): EntityMapper<T> {
  const { columns } = source;
  const writers = columns.map((c) => createValueWriter(c.type, c.field));
  const readers = columns.map((c) => createValueReader(c.type, c.field));
  const sizers = columns.map((c) => (wire: never) => wireValueSize(c.type, wire));
  const discriminator = `${source.type}@${source.version}`;
  const keyFields = [...new Set([...source.partitionKey.fields, ...source.rowKey.fields])];

  const toWireBody = [
    `const out = { partitionKey: pk.encode(e, "PartitionKey"), rowKey: rk.encode(e, "RowKey") };`,
    `let size = 4 + (out.partitionKey.length + out.rowKey.length) * 2 + ${8 + ENTITY_TYPE.length * 2 + 4 + discriminator.length * 2};`,
    "let v, w;",
    ...columns.map((c, i) => {
      const field = JSON.stringify(c.field);
      const property = JSON.stringify(c.property);
      return `v = e[${field}]; if (v !== undefined && v !== null) { w = writers[${i}](v); out[${property}] = w; size += ${8 + c.property.length * 2} + sizers[${i}](w); }`;
    }),
    `out[${JSON.stringify(ENTITY_TYPE)}] = ${JSON.stringify(discriminator)};`,
    "if (size > maxEntityBytes) tooLarge(size);",
    "return out;",
  ].join("\n");

  const fromWireBody = [
    "const o = Object.create(proto);",
    "let v;",
    ...columns.map((c, i) => {
      const field = JSON.stringify(c.field);
      const property = JSON.stringify(c.property);
      return `v = s[${property}]; if (v !== undefined && v !== null) o[${field}] = readers[${i}](v);`;
    }),
    // Key fields absent from the properties (projections, rows written by other clients) come from the keys.
    keyFields.length > 0
      ? `if (${keyFields.map((f) => `o[${JSON.stringify(f)}] === undefined`).join(" || ")}) fillKeys(o, s);`
      : "",
    "remember(o, s.etag);",
    "return o;",
  ].join("\n");

  const tooLarge = (size: number): never => {
    throw new ValidationError(
      "entity-size",
      `${source.name}: entity is ${size} bytes; the service allows at most ${ServiceLimits.maxEntityBytes} bytes (1 MiB)`,
    );
  };
  const fillKeys = (o: Record<string, unknown>, s: StoredEntity): void => {
    fill(o, source.partitionKey.decode(s.partitionKey));
    fill(o, source.rowKey.decode(s.rowKey));
  };

  const toWire = new Function(
    "pk",
    "rk",
    "writers",
    "sizers",
    "maxEntityBytes",
    "tooLarge",
    `return function toWire(e) {\n${toWireBody}\n};`,
  )(source.partitionKey, source.rowKey, writers, sizers, ServiceLimits.maxEntityBytes, tooLarge) as (e: T) => WireEntity;

  const fromWire = new Function(
    "proto",
    "readers",
    "fillKeys",
    "remember",
    `return function fromWire(s) {\n${fromWireBody}\n};`,
  )(source.ctor.prototype, readers, fillKeys, rememberEtag) as (s: StoredEntity) => T;

  return {
    toWire,
    fromWire,
    propertiesOf(fields) {
      return fields.map((field) => {
        const column = source.columnsByField.get(field);
        if (!column) throw new ValidationError("unknown-field", `${source.name} has no column '${field}'`, { field });
        return column.property;
      });
    },
  };
}

function fill(target: Record<string, unknown>, values: Record<string, unknown> | undefined): void {
  if (!values) return;
  for (const key in values) {
    if (target[key] === undefined) target[key] = values[key];
  }
}
