import type { EntityRecord } from "../store/served-store.js";
import { ticksToIso } from "../util/unix-ticks.js";
import { type RenderContext, renderRecord } from "./odata-entity.js";

// Property-name prefixes kept at most this many (a server sees few distinct names; a flood of names
// only costs a rebuild of the cache).
const MAX_CACHED_NAMES = 10_000;

/** The JSON pieces of one property name: `,"name":` and `,"name@odata.type":"Edm.` (type and `",` follow). */
interface NamePieces {
  readonly value: string;
  readonly annotation: string;
}

/**
 * Writes records as the service's JSON text, exactly as `JSON.stringify(renderRecord(...))` does but
 * without building an object per entity: the text is concatenated from cached pieces (per property
 * name, the last Timestamp and ETag, which a batch's entities share). `renderRecord` stays the
 * reference; whatever this writer does not handle by hand (rare `$select` names that JSON would reorder
 * or that could collide with annotations, full metadata) goes through it.
 */
export class EntityJsonWriter {
  readonly #names = new Map<string, NamePieces>();
  #ticks: bigint | undefined;
  #timestamp = "";
  #etag = "";
  #etagJson = "";

  /**
   * The JSON text of one record: `JSON.stringify(renderRecord(record, context, select, single))`, except
   * that a negative zero Double is written `-0` at every metadata level (see `renderedJson`).
   */
  write(
    record: EntityRecord,
    context: RenderContext,
    select: ReadonlySet<string> | undefined,
    single: boolean,
  ): string {
    const { level } = context;
    if (level === "fullmetadata" || (select !== undefined && !plainSelect(select))) {
      return renderedJson(renderRecord(record, context, select, single));
    }
    // Every member is written with a leading comma; the first one's is dropped at the end.
    let out = "";
    if (level !== "nometadata") {
      if (single)
        out += `,"odata.metadata":${JSON.stringify(`${context.base}/$metadata#${context.table}/@Element`)}`;
      out += `,"odata.etag":${this.#etagText(record.etag)}`;
    }
    // With $select Azure sends the keys and Timestamp only when named; Timestamp carries no annotation
    // below full metadata (which renderRecord writes).
    if (select === undefined || select.has("PartitionKey"))
      out += `,"PartitionKey":${JSON.stringify(record.partitionKey)}`;
    if (select === undefined || select.has("RowKey")) out += `,"RowKey":${JSON.stringify(record.rowKey)}`;
    if (select === undefined || select.has("Timestamp"))
      out += `,"Timestamp":"${this.#timestampText(record.timestamp)}"`;
    const annotate = level !== "nometadata";
    const properties = record.properties; // read once: a store may build a view on each read
    for (const [name, v] of properties) {
      if (select !== undefined && !select.has(name)) continue;
      const pieces = this.#pieces(name);
      switch (v.type) {
        case "String":
          out += pieces.value + JSON.stringify(v.value);
          break;
        case "Boolean":
          out += pieces.value + (v.value ? "true" : "false");
          break;
        case "Int32":
          out += pieces.value + String(v.value);
          break;
        case "Double": {
          const finite = Number.isFinite(v.value);
          if (annotate && (!finite || Number.isInteger(v.value))) out += `${pieces.annotation}Double"`;
          out +=
            pieces.value +
            (finite
              ? // String(-0) is "0": the sign of a negative zero would be lost.
                Object.is(v.value, -0)
                ? "-0"
                : String(v.value)
              : v.value > 0
                ? '"Infinity"'
                : v.value < 0
                  ? '"-Infinity"'
                  : '"NaN"');
          break;
        }
        case "Int64":
          if (annotate) out += `${pieces.annotation}Int64"`;
          out += `${pieces.value}"${v.value.toString()}"`;
          break;
        case "DateTime":
          if (annotate) out += `${pieces.annotation}DateTime"`;
          out += `${pieces.value}"${ticksToIso(v.value)}"`;
          break;
        case "Guid":
          if (annotate) out += `${pieces.annotation}Guid"`;
          out += pieces.value + JSON.stringify(v.value);
          break;
        case "Binary":
          if (annotate) out += `${pieces.annotation}Binary"`;
          out += `${pieces.value}"${Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString("base64")}"`;
          break;
      }
    }
    // As Azure answers: a selected property the entity lacks comes as null (the service stores no nulls).
    if (select !== undefined) {
      for (const name of select) {
        if (properties.get(name) === undefined && !SYSTEM_NAMES.has(name))
          out += `${this.#pieces(name).value}null`;
      }
    }
    return out.length === 0 ? "{}" : `{${out.slice(1)}}`;
  }

  #pieces(name: string): NamePieces {
    let pieces = this.#names.get(name);
    if (pieces === undefined) {
      if (this.#names.size >= MAX_CACHED_NAMES) this.#names.clear();
      pieces = {
        value: `,${JSON.stringify(name)}:`,
        annotation: `,${JSON.stringify(`${name}@odata.type`)}:"Edm.`,
      };
      this.#names.set(name, pieces);
    }
    return pieces;
  }

  #timestampText(ticks: bigint): string {
    if (ticks !== this.#ticks) {
      this.#timestamp = ticksToIso(ticks);
      this.#ticks = ticks;
    }
    return this.#timestamp;
  }

  #etagText(etag: string): string {
    if (etag !== this.#etag) {
      this.#etagJson = JSON.stringify(etag);
      this.#etag = etag;
    }
    return this.#etagJson;
  }
}

const SYSTEM_NAMES: ReadonlySet<string> = new Set(["PartitionKey", "RowKey", "Timestamp"]);

/**
 * `JSON.stringify` of `renderRecord`'s flat object (same members, same order: both follow the object's
 * own key order), except that a negative zero is written `-0`: `JSON.stringify` writes `0`, which reads
 * back as another Double, so full metadata would lose what the lighter levels keep. Azurite writes
 * `0.0` at every level (`EdmDouble.toJsonPropertyValueString`: `(-0).toFixed(1)`). MemoryStore stores
 * a written -0 as 0 (util/stored-double.ts), so a record reaches here with -0 only from another store.
 */
function renderedJson(rendered: Record<string, unknown>): string {
  let out = "";
  for (const name of Object.keys(rendered)) {
    const value = rendered[name];
    out += `,${JSON.stringify(name)}:${Object.is(value, -0) ? "-0" : JSON.stringify(value)}`;
  }
  return out.length === 0 ? "{}" : `{${out.slice(1)}}`;
}

// A selected name the writer can place as renderRecord's object would: not an array index (JSON.stringify
// puts those first), and no '@' or '.' (which could name an annotation or an odata.* member instead).
const PLAIN_SELECT_NAME = /^[^@.]*$/;
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

function plainSelect(select: ReadonlySet<string>): boolean {
  for (const name of select) if (!PLAIN_SELECT_NAME.test(name) || ARRAY_INDEX.test(name)) return false;
  return true;
}
