import { SchemaError } from "../errors.js";
import { isPeriodUnit, PeriodCodec, type PeriodUnit } from "./date-codec.js";
import { keyValueError } from "./key-codec.js";
import type { FieldTypeLookup } from "./parse-template.js";

/** Table names: 3-63 letters and digits, starting with a letter (the service's rule). */
const MAX_TABLE_NAME = 63;
const LEADING = /^[A-Za-z][A-Za-z0-9]*$/;
const TRAILING = /^[A-Za-z0-9]*$/;
const SHAPE = /^([^{}]*)\{([^{}:]*):([^{}]*)\}([^{}]*)$/;

/**
 * A table name with one period placeholder (`Logs{at:month}` → `Logs202611`): each entity lives in the
 * table of its period, so a whole period is deleted with one request (the guide's high-volume delete
 * pattern). Only a DateTime field with a period unit is allowed, and every result is a valid table name.
 */
export class TableTemplate {
  /** The template as written. */
  readonly source: string;
  /** The DateTime field that picks the table. */
  readonly field: string;
  readonly unit: PeriodUnit;
  /** The text before the period (at least one letter, so every name starts with a letter). */
  readonly literalPrefix: string;
  readonly #suffix: string;
  readonly #codec: PeriodCodec;

  private constructor(
    source: string,
    field: string,
    unit: PeriodUnit,
    prefix: string,
    suffix: string,
    what: string,
  ) {
    this.source = source;
    this.field = field;
    this.unit = unit;
    this.literalPrefix = prefix;
    this.#suffix = suffix;
    this.#codec = new PeriodCodec({ what, field, token: `{${field}:${unit}}` }, unit);
  }

  /** True when a table option is a template rather than a fixed name. */
  static isTemplate(table: unknown): boolean {
    return typeof table === "string" && (table.includes("{") || table.includes("}"));
  }

  /** Compiles a table template; `what` labels messages (`Log: table`); any mistake is a `SchemaError`. */
  static parse(source: string, fieldType: FieldTypeLookup, what: string): TableTemplate {
    const fail = (reason: string): SchemaError => new SchemaError(`${what} '${source}': ${reason}`);
    const match = SHAPE.exec(source);
    if (!match) {
      throw fail("a table template holds exactly one period placeholder, e.g. 'Logs{at:month}'");
    }
    const [, prefix = "", field = "", unit = "", suffix = ""] = match;
    if (!isPeriodUnit(unit)) {
      throw fail(`'{${field}:${unit}}' is not a period; table names take only {field:year|month|day|hour}`);
    }
    const type = fieldType(field);
    if (type === undefined) throw fail(`unknown field '${field}'`);
    if (type !== "DateTime") throw fail(`field '${field}' must be a DateTime column to name a period`);
    if (!LEADING.test(prefix) || !TRAILING.test(suffix)) {
      throw fail(
        "the text around the placeholder must be letters and digits, starting with a letter, so every name is a valid table name",
      );
    }
    const codec = new PeriodCodec({ what, field, token: "" }, unit);
    const length = prefix.length + codec.width + suffix.length;
    if (length > MAX_TABLE_NAME) {
      throw fail(`its names are ${length} characters, over the service's ${MAX_TABLE_NAME}`);
    }
    return new TableTemplate(source, field, unit, prefix, suffix, what);
  }

  /** The table name of the period holding `values[field]`; `ValidationError` when it is missing or no Date. */
  nameOf(values: Readonly<Record<string, unknown>>): string {
    const value = values[this.field];
    if (value === undefined || value === null) {
      throw keyValueError(
        this.#codec.site,
        "table-field-missing",
        `is required to pick the table of '${this.source}', got ${String(value)}`,
      );
    }
    return this.literalPrefix + this.#codec.encode(value) + this.#suffix;
  }

  /** The start of the period a table name of this template holds, or `undefined` for any other name. */
  periodOf(name: string): Date | undefined {
    const start = this.literalPrefix.length;
    const end = start + this.#codec.width;
    if (name.length !== end + this.#suffix.length || !name.startsWith(this.literalPrefix)) return undefined;
    if (!name.endsWith(this.#suffix)) return undefined;
    return this.#codec.decode(name, start, end);
  }

  /** The start of the period after the one starting at `start` (UTC). */
  nextPeriod(start: Date): Date {
    const next = new Date(start.getTime());
    if (this.unit === "year") next.setUTCFullYear(next.getUTCFullYear() + 1);
    else if (this.unit === "month") next.setUTCMonth(next.getUTCMonth() + 1);
    else if (this.unit === "day") next.setUTCDate(next.getUTCDate() + 1);
    else next.setUTCHours(next.getUTCHours() + 1);
    return next;
  }
}
