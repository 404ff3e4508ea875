import { IsoDateCodec, isPeriodUnit, PeriodCodec, type PeriodUnit, TicksCodec } from "./date-codec.js";
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
  | { kind: "unknown" };

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
): CodecResult {
  const spec = parseFormat(format);
  if (spec.kind === "unknown") {
    return {
      problem:
        `unknown format ':${format}'; formats are a width ({n:6}), a width and desc ({n:6:desc}), ` +
        "desc ({n:desc}, {at:desc}), ticks ({at:ticks}) and a period ({at:year}, {at:month}, {at:day}, {at:hour})",
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

function parseFormat(format: string | undefined): FormatSpec {
  if (format === undefined) return { kind: "none" };
  if (format === "ticks") return { kind: "ticks" };
  if (format === "desc") return { kind: "desc" };
  if (isPeriodUnit(format)) return { kind: "period", unit: format };
  const match = WIDTH_FORMAT.exec(format);
  if (!match) return { kind: "unknown" };
  return { kind: "width", width: Number(match[1]), desc: match[2] !== undefined };
}
