import { SchemaError } from "../errors.js";
import { FORBIDDEN_KEY_CHARACTERS, ServiceLimits } from "../util/service-limits.js";
import { createCodec } from "./create-codec.js";
import { HashCodec } from "./hash-codec.js";
import type { KeyCodec, KeyFieldType } from "./key-codec.js";

/** Answers a field's key type: `undefined` for an unknown field, `"unsupported"` for a type keys cannot hold. */
export type FieldTypeLookup = (field: string) => KeyFieldType | undefined | "unsupported";

/** One placeholder with the literal text that follows it (possibly empty). */
export interface TemplatePart {
  readonly field: string;
  readonly token: string;
  readonly codec: KeyCodec;
  readonly after: string;
  /** A DateTime in ascending order (`{at}`, `{at:ticks}`, a period): keys grow with time. */
  readonly ascendingTime: boolean;
  /** A DateTime in descending order (`{at:desc}`, inverted ticks): keys shrink with time. */
  readonly descendingTime: boolean;
}

/** What a template may contain beyond the common placeholders. */
export interface TemplateOptions {
  /** Allows `{field:hash:N}` (an entity's PartitionKey template). */
  readonly allowHash?: boolean;
}

/** A template compiled into its leading literal and its placeholders, in order. */
export interface ParsedTemplate {
  readonly prefix: string;
  readonly parts: readonly TemplatePart[];
}

/** Compiles a key template, throwing `SchemaError` for any mistake so none survives to query time. */
export function parseTemplate(
  source: string,
  fieldType: FieldTypeLookup,
  what: string,
  options: TemplateOptions = {},
): ParsedTemplate {
  const fail = (reason: string, token?: string): SchemaError =>
    new SchemaError(
      `${what}: key template '${source}'${token === undefined ? "" : `, placeholder ${token}`}: ${reason}`,
    );

  const { literals, tokens } = split(source, fail);
  for (const literal of literals) checkLiteral(literal, fail);

  const parts: TemplatePart[] = [];
  const seen = new Set<string>();
  let fixedLength = literals.join("").length;
  for (const [i, token] of tokens.entries()) {
    const inner = token.slice(1, -1);
    const colon = inner.indexOf(":");
    const field = colon < 0 ? inner : inner.slice(0, colon);
    const format = colon < 0 ? undefined : inner.slice(colon + 1);
    if (field === "") throw fail("the field name is empty", token);
    if (seen.has(field)) throw fail(`field '${field}' appears twice; each field may appear once`, token);
    seen.add(field);

    const type = fieldType(field);
    if (type === undefined) throw fail(`unknown field '${field}'`, token);
    if (type === "unsupported") {
      throw fail(
        `field '${field}' has a type that cannot be part of a key; keys hold String, Guid, Int32, Int64 and DateTime fields`,
        token,
      );
    }
    const result = createCodec(type, format, { what, field, token }, options);
    if (result.problem !== undefined) throw fail(result.problem, token);
    const codec = result.codec;

    const after = literals[i + 1] ?? "";
    if (codec.width === undefined && after === "" && i < tokens.length - 1) {
      throw fail(
        `variable-width field '${field}' is followed directly by ${tokens[i + 1]}, so keys could not be decoded; ` +
          "put literal text between them",
        token,
      );
    }
    fixedLength += codec.width ?? 0;
    // Any DateTime format but a descending one or a hash bucket keeps the keys in time order.
    const time = type === "DateTime" && !(codec instanceof HashCodec);
    const descendingTime = time && (format ?? "").split(":").includes("desc");
    const ascendingTime = time && !descendingTime;
    parts.push({ field, token, codec, after, ascendingTime, descendingTime });
  }

  const maxLength = ServiceLimits.maxKeyBytes / 2;
  if (fixedLength > maxLength) {
    throw fail(
      `its fixed text is ${fixedLength} characters, over the service's ${maxLength}-character key limit`,
    );
  }
  return { prefix: literals[0] ?? "", parts };
}

/** Splits a template into literals and `{…}` tokens; there is always one more literal than tokens. */
function split(
  source: string,
  fail: (reason: string) => SchemaError,
): { literals: string[]; tokens: string[] } {
  const literals: string[] = [];
  const tokens: string[] = [];
  let literalStart = 0;
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === "}") throw fail(`unbalanced '}' at position ${i}`);
    if (c !== "{") {
      i++;
      continue;
    }
    const close = source.indexOf("}", i + 1);
    const open = source.indexOf("{", i + 1);
    if (close < 0 || (open >= 0 && open < close)) throw fail(`unbalanced '{' at position ${i}`);
    literals.push(source.slice(literalStart, i));
    tokens.push(source.slice(i, close + 1));
    i = close + 1;
    literalStart = i;
  }
  literals.push(source.slice(literalStart));
  return { literals, tokens };
}

function checkLiteral(literal: string, fail: (reason: string) => SchemaError): void {
  const bad = FORBIDDEN_KEY_CHARACTERS.exec(literal);
  if (!bad) return;
  const code = bad[0].charCodeAt(0).toString(16).padStart(4, "0");
  throw fail(
    `literal text contains the forbidden key character U+${code}; keys may not contain / \\ # ? or control characters`,
  );
}
