/**
 * JSON.parse reads `1.0` and `1` alike, but the Table service writes a Double whose value is whole as
 * `1.0` with no type annotation (Azure and Azurite with minimal metadata; Azurite even with full
 * metadata), and an Int32 as `1`. To keep the type, every number whose JSON text has a fraction or an
 * exponent is wrapped in an array (`[1.0]`) before parsing: entity values are never arrays, so
 * `rowFromJson(…, true)` reads an array of one number as a Double.
 */
export function markDoubles(text: string): string {
  let out = "";
  let copied = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    // A number token: digits, sign, fraction, exponent.
    let end = i + 1;
    let fractional = false;
    while (end < length) {
      const d = text.charCodeAt(end);
      if (d === 0x2e || d === 0x65 || d === 0x45) fractional = true;
      else if (!((d >= 0x30 && d <= 0x39) || d === 0x2b || d === 0x2d)) break;
      end++;
    }
    if (fractional) {
      out += `${text.slice(copied, i)}[${text.slice(i, end)}]`;
      copied = end;
    }
    i = end - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** The index of the quote that closes the JSON string opened at `start` (one not escaped by a backslash). */
function stringEnd(text: string, start: number): number {
  let at = text.indexOf('"', start + 1);
  while (at > 0) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}
