import { ServiceLimits } from "../../util/service-limits.js";
import { parseIsoTicks } from "../../util/unix-ticks.js";
import type { EdmValue } from "./edm-value.js";
import { badRequest } from "./service-errors.js";

/** One token of an OData filter; `pos` is its 0-based offset in the text, for error messages. */
export type Token =
  | { readonly kind: "(" | ")" | "end"; readonly pos: number }
  | { readonly kind: "word"; readonly text: string; readonly pos: number }
  | { readonly kind: "literal"; readonly value: EdmValue; readonly text: string; readonly pos: number };

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?([LlDdFfMm])?/y;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** Splits filter text into tokens; literals are typed here (`'text'`, `5`, `5L`, `1.5`, `datetime'…'`, …). */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    const c = text[pos]!;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      pos++;
    } else if (c === "(" || c === ")") {
      tokens.push({ kind: c, pos });
      pos++;
    } else if (c === "'") {
      const { value, end } = readQuoted(text, pos);
      tokens.push({ kind: "literal", value: { type: "String", value }, text: text.slice(pos, end), pos });
      pos = end;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(text);
      if (!m) throw syntaxError(text, pos, `unexpected '${c}'`);
      const end = pos + m[0].length;
      if (end < text.length && /[A-Za-z0-9_.']/.test(text[end]!)) {
        throw syntaxError(text, pos, `malformed number '${text.slice(pos, end + 1)}'`);
      }
      tokens.push({ kind: "literal", value: numberLiteral(text, pos, m), text: m[0], pos });
      pos = end;
    } else {
      WORD.lastIndex = pos;
      const m = WORD.exec(text);
      if (!m) throw syntaxError(text, pos, `unexpected character '${c}'`);
      const word = m[0];
      const end = pos + word.length;
      if (text[end] === "'") {
        const quoted = readQuoted(text, end);
        tokens.push({
          kind: "literal",
          value: prefixedLiteral(text, pos, word, quoted.value),
          text: text.slice(pos, quoted.end),
          pos,
        });
        pos = quoted.end;
      } else {
        tokens.push({ kind: "word", text: word, pos });
        pos = end;
      }
    }
  }
  tokens.push({ kind: "end", pos: text.length });
  return tokens;
}

/** Reads `'…'` starting at the opening quote; a doubled quote `''` stands for one quote. */
function readQuoted(text: string, start: number): { value: string; end: number } {
  let value = "";
  let pos = start + 1;
  for (;;) {
    const close = text.indexOf("'", pos);
    if (close < 0)
      throw syntaxError(text, start, "unterminated quoted literal (a quote inside is written '')");
    value += text.slice(pos, close);
    if (text[close + 1] === "'") {
      value += "'";
      pos = close + 2;
    } else {
      return { value, end: close + 1 };
    }
  }
}

function numberLiteral(text: string, pos: number, m: RegExpExecArray): EdmValue {
  const [all, fraction, exponent, suffix] = m;
  const digits = suffix ? all.slice(0, -1) : all;
  if (suffix === "L" || suffix === "l") {
    if (fraction || exponent) throw syntaxError(text, pos, `Int64 literal '${all}' must be a whole number`);
    const value = BigInt(digits);
    if (value < ServiceLimits.minInt64 || value > ServiceLimits.maxInt64) {
      throw syntaxError(text, pos, `Int64 literal '${all}' is out of range`);
    }
    return { type: "Int64", value };
  }
  if (suffix || fraction || exponent) return { type: "Double", value: Number(digits) };
  const n = Number(digits);
  if (n >= ServiceLimits.minInt32 && n <= ServiceLimits.maxInt32)
    return { type: "Int32", value: n === 0 ? 0 : n };
  // Too wide for Int32 without an L suffix: read it as Int64 (as OData's literal parser does), then Double.
  const big = BigInt(digits);
  if (big >= ServiceLimits.minInt64 && big <= ServiceLimits.maxInt64) return { type: "Int64", value: big };
  return { type: "Double", value: n };
}

function prefixedLiteral(text: string, pos: number, prefix: string, body: string): EdmValue {
  switch (prefix) {
    case "datetime":
    case "datetimeoffset": {
      const ticks = parseIsoTicks(body);
      if (ticks === undefined) {
        throw syntaxError(
          text,
          pos,
          `'${body}' is not a valid date-time (expected e.g. datetime'2014-07-31T18:00:00Z')`,
        );
      }
      return { type: "DateTime", value: ticks };
    }
    case "guid":
      if (!GUID.test(body)) throw syntaxError(text, pos, `'${body}' is not a valid GUID`);
      return { type: "Guid", value: body.toLowerCase() };
    case "X":
    case "binary":
      if (!HEX.test(body))
        throw syntaxError(text, pos, `'${body}' is not valid hex (an even number of 0-9a-f digits)`);
      return { type: "Binary", value: new Uint8Array(Buffer.from(body, "hex")) };
    default:
      throw syntaxError(
        text,
        pos,
        `unknown literal prefix '${prefix}' (use 'text', datetime'…', guid'…', X'…' or binary'…')`,
      );
  }
}

/** A 400 InvalidInput naming the offset and showing the filter. */
export function syntaxError(text: string, pos: number, detail: string) {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return badRequest("InvalidInput", `invalid $filter at position ${pos}: ${detail}. Filter: ${shown}`);
}
