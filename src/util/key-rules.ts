import { ValidationError } from "../errors.js";
import { FORBIDDEN_KEY_CHARACTERS, ServiceLimits } from "./service-limits.js";

/** True for the usual key: a string within the size limit with no character that needs a closer look. */
export function isPlainKey(key: string): boolean {
  return key.length * 2 <= ServiceLimits.maxKeyBytes && !NEEDS_A_CLOSER_LOOK.test(key);
}

/** Checks a PartitionKey or RowKey against the service's character and size rules. */
export function assertValidKey(which: "PartitionKey" | "RowKey", key: string, field?: string): void {
  // The usual key: a short string of ordinary characters, checked by one regex test.
  if (typeof key === "string" && isPlainKey(key)) return;
  if (typeof key !== "string") {
    throw new ValidationError("key-type", `${which} must be a string, got ${typeof key}`, {
      field: field ?? which,
    });
  }
  const bad = FORBIDDEN_KEY_CHARACTERS.exec(key);
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).padStart(4, "0");
    throw new ValidationError(
      "key-characters",
      `${which} '${printable(key)}' contains a forbidden character (U+${code}); keys may not contain / \\ # ? or control characters`,
      { field: field ?? which },
    );
  }
  if (LONE_SURROGATE.test(key)) {
    throw new ValidationError(
      "key-characters",
      `${which} '${printable(key)}' contains a lone UTF-16 surrogate, which cannot be sent`,
      {
        field: field ?? which,
      },
    );
  }
  if (key.length * 2 > ServiceLimits.maxKeyBytes) {
    throw new ValidationError(
      "key-size",
      `${which} is ${key.length * 2} bytes; the service allows at most ${ServiceLimits.maxKeyBytes} bytes (${ServiceLimits.maxKeyBytes / 2} characters)`,
      { field: field ?? which },
    );
  }
}

/**
 * Any character of a key that needs a closer look: / \ # ?, a control character (U+0000–U+001F,
 * U+007F–U+009F) or a surrogate (pairs are allowed, lone halves are not: the checks below tell them
 * apart). One regex test is cheaper than a loop over the characters or the two precise regexes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what the service forbids
const NEEDS_A_CLOSER_LOOK = /[/\\#?\u0000-\u001f\u007f-\u009f\uD800-\uDFFF]/;

/** Half of a surrogate pair on its own: not valid Unicode, so it cannot travel in a request URL or body. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function printable(key: string): string {
  const shown = key.length > 60 ? `${key.slice(0, 60)}…` : key;
  return shown.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: we render control characters visibly
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
