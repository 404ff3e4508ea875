/**
 * Secret scrubbing for anything tablekit puts into an error message: SAS signatures, account keys,
 * whole SAS tokens in connection strings, and Authorization header values.
 */

const REDACTED = "REDACTED";

const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // SAS signature in a URL or query string (also percent-encoded as sig%3D).
  [/([?&;\s"'(]|^)sig(=|%3D)[^&\s;"')]*/gi, `$1sig$2${REDACTED}`],
  // Connection-string parts that are secrets in full.
  [/(AccountKey|SharedAccessSignature)=[^;\s"']*/gi, `$1=${REDACTED}`],
  // Authorization header values: "SharedKey account:signature", "SharedKeyLite …", "Bearer token".
  [/(SharedKey(?:Lite)?\s+[^:\s]+:)[A-Za-z0-9+/=]+/g, `$1${REDACTED}`],
  [/(Bearer\s+)[A-Za-z0-9\-._~+/]+=*/g, `$1${REDACTED}`],
];

/** Removes SAS signatures, account keys and tokens from `text`; `secrets` are exact values to remove too. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = text;
  for (const secret of secrets) {
    // Short values would redact innocent text; real keys and signatures are long.
    if (secret.length >= 8) result = result.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) result = result.replace(pattern, replacement);
  return result;
}
