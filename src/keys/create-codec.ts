import { IsoDateCodec, isPeriodUnit, PeriodCodec, type PeriodUnit, TicksCodec } from "./date-codec.js";
import { HashCodec, MAX_HASH_BUCKETS, MIN_HASH_BUCKETS } from "./hash-codec.js";
import { INT32_DIGITS, INT64_DIGITS, Int32Codec, Int64Codec } from "./integer-codec.js";
import type { KeyCodec, KeyFieldType, PlaceholderSite } from "./key-codec.js";
import { GuidCodec, StringCodec } from "./string-codec.js";

/** A codec, or why the format cannot be used (the caller turns it into a `SchemaError`). */
export type CodecResult = { codec: KeyCodec; problem?: undefined } | { codec?: undefined; problem: string };

type FormatSpec =
  | { kind: "none" }
  | { kind: "ticks" }
  | { kind: "desc" }
  | { kind: "width"; width: number; desc: boolean }
  | { kind: "period"; unit: PeriodUnit }
  | { kind: "hash"; buckets: number }
  | { kind: "unknown" };

const HASH_FORMAT = /^hash:([0-9]+)$/;

const WIDTH_FORMAT = /^([0-9]+)(:desc)?$/;

const HINTS: Record<KeyFieldType, string> = {
  String: "strings take no format",
  Guid: "strings take no format",
  Int32: "integers take a width and/or desc ({n:6}, {n:6:desc}, {n:desc})",
  Int64: "integers take a width and/or desc ({n:6}, {n:6:desc}, {n:desc})",
  DateTime: "dates take no format (ISO 8601), ticks, desc or a period (year, month, day, hour)",
};

/** Chooses the codec for a placeholder from its field type and format (the text after the first `:`). */
export function createCodec(
  type: KeyFieldType,
  format: string | undefined,
  site: PlaceholderSite,
  options: { readonly allowHash?: boolean } = {},
): CodecResult {
  const spec = parseFormat(format);
  if (spec.kind === "hash") return hashCodec(type, spec.buckets, site, options.allowHash === true);
  if (spec.kind === "unknown") {
    return {
      problem:
        `unknown format ':${format}'; formats are a width ({n:6}), a width and desc ({n:6:desc}), ` +
        "desc ({n:desc}, {at:desc}), ticks ({at:ticks}), a period ({at:year}, {at:month}, {at:day}, {at:hour}) and hash buckets ({id:hash:16})",
    };
  }
  const misfit = { problem: `format ':${format}' does not fit a ${type} field; ${HINTS[type]}` };
  switch (type) {
    case "String":
      return spec.kind === "none" ? { codec: new StringCodec(site) } : misfit;
    case "Guid":
      return spec.kind === "none" ? { codec: new GuidCodec(site) } : misfit;
    case "DateTime":
      if (spec.kind === "none") return { codec: new IsoDateCodec(site) };
      if (spec.kind === "ticks") return { codec: new TicksCodec(site, false) };
      if (spec.kind === "desc") return { codec: new TicksCodec(site, true) };
      if (spec.kind === "period") return { codec: new PeriodCodec(site, spec.unit) };
      return misfit;
    case "Int32":
    case "Int64": {
      if (spec.kind === "ticks" || spec.kind === "period") return misfit;
      const maxWidth = type === "Int32" ? INT32_DIGITS : INT64_DIGITS;
      const width = spec.kind === "width" ? spec.width : maxWidth;
      if (width < 1 || width > maxWidth) {
        return { problem: `width ${width} is out of range: ${type} widths are 1..${maxWidth}` };
      }
      const desc = spec.kind === "desc" || (spec.kind === "width" && spec.desc);
      return {
        codec: type === "Int32" ? new Int32Codec(site, width, desc) : new Int64Codec(site, width, desc),
      };
    }
  }
}

/**
 * `{field:hash:N}`: only in an entity's PartitionKey template, where it spreads one hot key range over N
 * partitions; in a RowKey it would only scramble the order the service sorts by.
 */
function hashCodec(
  type: KeyFieldType,
  buckets: number,
  site: PlaceholderSite,
  allowed: boolean,
): CodecResult {
  if (!allowed) {
    return { problem: "hash buckets ({field:hash:N}) are allowed only in an entity's PartitionKey template" };
  }
  if (buckets < MIN_HASH_BUCKETS || buckets > MAX_HASH_BUCKETS) {
    return {
      problem: `hash bucket count ${buckets} is out of range: ${MIN_HASH_BUCKETS}..${MAX_HASH_BUCKETS}`,
    };
  }
  return { codec: new HashCodec(site, buckets, hashText(type, site)) };
}

/**
 * The text a hash bucket hashes (stored format, never changes): a String as it is, a Guid in lower case,
 * a DateTime as `toISOString()`, an Int32/Int64 as decimal digits without leading zeros. Values are checked
 * by the field's plain key codec, so a value that cannot be a key cannot be hashed either.
 */
function hashText(type: KeyFieldType, site: PlaceholderSite): (value: unknown) => string {
  switch (type) {
    case "String":
      return (value) => new StringCodec(site).encode(value);
    case "Guid":
      return (value) => new GuidCodec(site).encode(value);
    case "DateTime":
      return (value) => new IsoDateCodec(site).encode(value);
    case "Int32":
    case "Int64": {
      const plain =
        type === "Int32"
          ? new Int32Codec(site, INT32_DIGITS, false)
          : new Int64Codec(site, INT64_DIGITS, false);
      return (value) => plain.encode(value).replace(/^0+(?=[0-9])/, "");
    }
  }
}

function parseFormat(format: string | undefined): FormatSpec {
  if (format === undefined) return { kind: "none" };
  const hash = HASH_FORMAT.exec(format);
  if (hash) return { kind: "hash", buckets: Number(hash[1]) };
  if (format === "ticks") return { kind: "ticks" };
  if (format === "desc") return { kind: "desc" };
  if (isPeriodUnit(format)) return { kind: "period", unit: format };
  const match = WIDTH_FORMAT.exec(format);
  if (!match) return { kind: "unknown" };
  return { kind: "width", width: Number(match[1]), desc: match[2] !== undefined };
}
