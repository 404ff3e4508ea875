import { SchemaError, ValidationError } from "../errors.js";
import { assertValidKey, isPlainKey } from "../util/key-rules.js";
import { ServiceLimits } from "../util/service-limits.js";
import { HashCodec } from "./hash-codec.js";
import { keyValueError, type PlaceholderSite } from "./key-codec.js";
import { betweenKeyRange, type KeyRange, prefixKeyRange } from "./key-range.js";
import {
  type FieldTypeLookup,
  parseTemplate,
  type TemplateOptions,
  type TemplatePart,
} from "./parse-template.js";

export type { KeyFieldType } from "./key-codec.js";
export type { KeyRange } from "./key-range.js";
export type { FieldTypeLookup, TemplateOptions } from "./parse-template.js";

/** The `{field:hash:N}` placeholder of a template. */
export interface HashedPlaceholder {
  readonly field: string;
  /** How many buckets (N). */
  readonly buckets: number;
}

/** Which key a template builds; it names the key in error messages and in the service's rules. */
export type KeyName = "PartitionKey" | "RowKey";

/**
 * A compiled key template (`empid_{employeeId:6}`): encodes field values into a PartitionKey or RowKey,
 * decodes keys back, and turns partial values into key ranges. String components sort by their text,
 * so compound keys with varying strings do not sort as tuples.
 * @example
 * const rowKey = KeyTemplate.parse("empid_{employeeId:6}", (f) => (f === "employeeId" ? "Int32" : undefined), "Employee.rowKey");
 * rowKey.encode({ employeeId: 223 }, "RowKey"); // "empid_000223"
 * rowKey.decode("empid_000223"); // { employeeId: 223 }
 */
export class KeyTemplate {
  /** The template as written. */
  readonly source: string;
  /** The placeholder fields, in template order. */
  readonly fields: readonly string[];
  /**
   * The fields whose placeholder keeps only part of the value (`{at:month}`): `decode` gives the start
   * of the period for them, so readers that have the stored column keep that instead.
   */
  readonly lossyFields: readonly string[];
  /** The constant text before the first placeholder (`empid_`), or the whole key when there is none. */
  readonly literalPrefix: string;
  /** The first placeholder's field when it is an ascending time (`{at}`, `{at:ticks}`, a period). */
  readonly leadingAscendingTime: string | undefined;
  /** The first placeholder's field when it is a descending time (`{at:desc}`, inverted ticks). */
  readonly leadingDescendingTime: string | undefined;
  /** The hash-bucket placeholder, if the template has one. */
  readonly hashed: HashedPlaceholder | undefined;
  readonly #what: string;
  readonly #parts: readonly TemplatePart[];
  readonly #fieldSet: ReadonlySet<string>;
  /** `encode` compiled for this template (see `compileEncode`). */
  readonly #encode: (values: Readonly<Record<string, unknown>>, which: KeyName) => string;

  private constructor(source: string, what: string, prefix: string, parts: readonly TemplatePart[]) {
    this.source = source;
    this.#what = what;
    this.literalPrefix = prefix;
    this.#parts = parts;
    this.fields = Object.freeze(parts.map((part) => part.field));
    this.lossyFields = Object.freeze(parts.filter((part) => part.codec.lossy === true).map((p) => p.field));
    this.#fieldSet = new Set(this.fields);
    this.leadingAscendingTime = parts[0]?.ascendingTime ? parts[0].field : undefined;
    this.leadingDescendingTime = parts[0]?.descendingTime ? parts[0].field : undefined;
    this.#encode = compileEncode(prefix, parts, (values, which) => this.#build(values, parts.length, which));
    const hashPart = parts.find((part) => part.codec instanceof HashCodec);
    this.hashed =
      hashPart && hashPart.codec instanceof HashCodec
        ? Object.freeze({ field: hashPart.field, buckets: hashPart.codec.buckets })
        : undefined;
  }

  /** Compiles a template; `what` labels messages (`Employee.rowKey`); any mistake is a `SchemaError`. */
  static parse(
    template: string,
    fieldType: FieldTypeLookup,
    what: string,
    options: TemplateOptions = {},
  ): KeyTemplate {
    const { prefix, parts } = parseTemplate(template, fieldType, what, options);
    return new KeyTemplate(template, what, prefix, parts);
  }

  /** Builds the key from every placeholder's value; a value that cannot be encoded is a `ValidationError`. */
  encode(values: Readonly<Record<string, unknown>>, which: KeyName): string {
    return this.#encode(values, which);
  }

  /**
   * The field values a key holds, or `undefined` when the key does not match the template.
   * A period placeholder (`{at:month}`) decodes to the start instant of its period (see `lossyFields`).
   */
  decode(key: string): Record<string, unknown> | undefined {
    if (!key.startsWith(this.literalPrefix)) return undefined;
    let pos = this.literalPrefix.length;
    const result: Record<string, unknown> = {};
    for (const part of this.#parts) {
      const { codec, after } = part;
      let end: number;
      if (codec.width !== undefined) {
        end = pos + codec.width;
        if (end > key.length) return undefined;
      } else if (after === "") {
        // Parsing guarantees a variable-width part without a following literal is the last part.
        end = key.length;
      } else {
        // Encoding rejects values that would put the separator earlier, so its first occurrence ends the value.
        end = key.indexOf(after, pos);
        if (end < 0) return undefined;
      }
      const value = codec.decode(key, pos, end);
      if (value === undefined || !key.startsWith(after, end)) return undefined;
      // A hash bucket (null) has no inverse: its field comes from its own column.
      if (value !== null) result[part.field] = value;
      pos = end + after.length;
    }
    return pos === key.length ? result : undefined;
  }

  /**
   * Encodes the leading placeholders given in `values` plus the literal after the last of them;
   * `complete` says whether every placeholder was given.
   */
  encodePrefix(
    values: Readonly<Partial<Record<string, unknown>>>,
    which: KeyName,
  ): { prefix: string; complete: boolean } {
    for (const name of Object.keys(values)) {
      if (isPresent(values[name]) && !this.#fieldSet.has(name)) {
        throw new ValidationError(
          "key-field-unknown",
          `${this.#what}: '${name}' is not a field of the key template '${this.source}' (fields: ${this.fields.join(", ") || "none"})`,
          { field: name },
        );
      }
    }
    const parts = this.#parts;
    let count = 0;
    while (count < parts.length && isPresent(values[parts[count]!.field])) count++;
    for (let i = count + 1; i < parts.length; i++) {
      const given = parts[i]!.field;
      if (isPresent(values[given])) {
        const missing = parts[count]!.field;
        throw new ValidationError(
          "key-prefix-gap",
          `${this.#what}: field '${given}' is given but '${missing}', which comes before it in '${this.source}', is not; ` +
            "a key prefix takes fields in template order",
          { field: given },
        );
      }
    }
    const prefix = this.#build(values, count, which);
    return { prefix, complete: count === parts.length };
  }

  /**
   * The key prefix of each hash bucket, in bucket order, for values that give every placeholder before
   * the hashed one (and possibly some after it); `complete` as in `encodePrefix`.
   */
  bucketPrefixes(
    values: Readonly<Partial<Record<string, unknown>>>,
    which: KeyName,
  ): { prefixes: string[]; complete: boolean } {
    const hashed = this.hashed;
    if (hashed === undefined) throw new SchemaError(`${this.#what}: the template has no hash placeholder`);
    const prefixes: string[] = [];
    let complete = false;
    for (let bucket = 0; bucket < hashed.buckets; bucket++) {
      const result = this.encodePrefix({ ...values, [hashed.field]: new BucketNumber(bucket) }, which);
      prefixes.push(result.prefix);
      complete = result.complete;
    }
    return { prefixes, complete };
  }

  /**
   * The key range of every key that starts with the prefix of `values` (see `encodePrefix`).
   * A complete key ending in a string also covers longer strings, as with any prefix.
   */
  prefixRange(values: Readonly<Partial<Record<string, unknown>>>, which: KeyName = "RowKey"): KeyRange {
    return prefixKeyRange(this.encodePrefix(values, which).prefix);
  }

  /**
   * The key range from the keys of `from` to the keys of `to`, inclusive, for partial or complete values;
   * either order works, so descending formats need no swapping. A partial bound covers every key with its
   * prefix, and `{}` leaves that end open.
   */
  betweenRange(
    from: Readonly<Partial<Record<string, unknown>>>,
    to: Readonly<Partial<Record<string, unknown>>>,
    which: KeyName = "RowKey",
  ): KeyRange {
    return betweenKeyRange(this.encodePrefix(from, which).prefix, this.encodePrefix(to, which).prefix);
  }

  /** Encodes the first `count` placeholders with their literals, then checks the service's key rules. */
  #build(values: Readonly<Record<string, unknown>>, count: number, which: KeyName): string {
    let key = this.literalPrefix;
    let longest: TemplatePart | undefined;
    let longestLength = -1;
    for (let i = 0; i < count; i++) {
      const part = this.#parts[i]!;
      const value = values[part.field];
      if (!isPresent(value)) {
        throw keyValueError(
          this.#site(part),
          "key-field-missing",
          `is required to build the ${which}, got ${String(value)}`,
        );
      }
      const start = key.length;
      key = this.#append(key, part, value, which);
      if (part.codec.width === undefined && key.length - start > longestLength) {
        longest = part;
        longestLength = key.length - start;
      }
    }
    this.#checkKey(which, key, longest);
    return key;
  }

  /** Appends one placeholder's encoding and its following literal to `key`. */
  #append(key: string, part: TemplatePart, value: unknown, which: KeyName): string {
    const text =
      value instanceof BucketNumber && part.codec instanceof HashCodec
        ? part.codec.encodeBucket(value.bucket)
        : part.codec.encode(value);
    if (part.codec.width !== undefined) return key + text + part.after;
    this.#checkText(which, text, part);
    const joined = key + text + part.after;
    // Decoding splits at the first occurrence of the separator, so it must not occur inside the value
    // nor start inside it ("xa" + "aa" would decode as "x").
    if (part.after !== "" && joined.indexOf(part.after, key.length) !== key.length + text.length) {
      const how = text.includes(part.after) ? "contains" : "ends with the start of";
      throw keyValueError(
        this.#site(part),
        "key-separator",
        `${how} the separator '${part.after}' that follows it, so the key would be ambiguous`,
      );
    }
    return joined;
  }

  /** Runs the service's key rules on one string value, so the error names its field. */
  #checkText(which: KeyName, text: string, part: TemplatePart): void {
    try {
      assertValidKey(which, text, part.field);
    } catch (error) {
      throw this.#rethrow(error, `field '${part.field}' (${part.token}): `, "");
    }
  }

  /** Runs the service's key rules on a whole key or prefix, naming the longest string part if any. */
  #checkKey(which: KeyName, key: string, longest: TemplatePart | undefined): void {
    // Characters are already checked: literals at parse time, string values as they are appended,
    // and numbers and dates encode to digits and ISO punctuation. Only the total size is left.
    if (key.length * 2 <= ServiceLimits.maxKeyBytes) return;
    try {
      assertValidKey(which, key, longest?.field ?? this.#what);
    } catch (error) {
      throw this.#rethrow(error, "", longest ? `; its longest part is field '${longest.field}'` : "");
    }
  }

  #rethrow(error: unknown, before: string, after: string): unknown {
    if (!(error instanceof ValidationError)) return error;
    return new ValidationError(error.rule, `${this.#what}: ${before}${error.message}${after}`, {
      field: error.field,
      cause: error,
    });
  }

  #site(part: TemplatePart): PlaceholderSite {
    return { what: this.#what, field: part.field, token: part.token };
  }
}

/**
 * `encode` as straight-line code for one template (it runs twice per entity written): one fixed
 * property read and one codec call per placeholder, so every call site sees one codec class. It
 * only takes the common road: whenever a check would fail (a missing value, a key character or
 * separator to look at closely, a key over the size limit) it hands over to `build`, the general
 * encoder, which gives the same key or the same error as always.
 */
function compileEncode(
  prefix: string,
  parts: readonly TemplatePart[],
  build: (values: Readonly<Record<string, unknown>>, which: KeyName) => string,
): (values: Readonly<Record<string, unknown>>, which: KeyName) => string {
  const lines = [`let key = ${JSON.stringify(prefix)}, v, t;`];
  parts.forEach((part, i) => {
    lines.push(`v = values[${JSON.stringify(part.field)}];`);
    // A bucket number stands in for a hashed value only while `bucketPrefixes` builds prefixes.
    const bucket = part.codec instanceof HashCodec ? " || v instanceof BucketNumber" : "";
    lines.push(`if (v === undefined || v === null${bucket}) return build(values, which);`);
    lines.push(`t = codecs[${i}].encode(v);`);
    const after = JSON.stringify(part.after);
    if (part.codec.width !== undefined) {
      lines.push(`key = key + t + ${after};`);
    } else {
      lines.push("if (!isPlainKey(t)) return build(values, which);");
      lines.push(part.after === "" ? "key = key + t;" : `key = separated(key, t, ${after}, values, which);`);
    }
  });
  lines.push(`return key.length * 2 <= ${ServiceLimits.maxKeyBytes} ? key : build(values, which);`);
  return new Function(
    "codecs",
    "build",
    "isPlainKey",
    "BucketNumber",
    "separated",
    `return function encode(values, which) {\n${lines.join("\n")}\n};`,
  )(
    parts.map((part) => part.codec),
    build,
    isPlainKey,
    BucketNumber,
    (key: string, text: string, after: string, values: Readonly<Record<string, unknown>>, which: KeyName) => {
      const joined = key + text + after;
      // As `#append`: the separator must not occur inside the value nor start inside it.
      return joined.indexOf(after, key.length) === key.length + text.length ? joined : build(values, which);
    },
  ) as (values: Readonly<Record<string, unknown>>, which: KeyName) => string;
}

/** A bucket number standing in for a hashed field's value while `bucketPrefixes` builds each prefix. */
class BucketNumber {
  constructor(readonly bucket: number) {}
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}
