/**
 * The one place that scrubs secrets from anything tablekit prints or puts into an error: SAS
 * signatures, account keys, whole SAS tokens in connection strings, and Authorization header values
 * all print as `***`.
 */

export const REDACTED = "***";

const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // SAS signature in a URL or query string (also percent-encoded as sig%3D).
  [/([?&;\s"'(]|^)sig(=|%3D)[^&\s;"')]*/gi, `$1sig$2${REDACTED}`],
  // Connection-string parts that are secrets in full.
  [/(AccountKey|SharedAccessSignature)=[^;\s"']*/gi, `$1=${REDACTED}`],
  // Authorization header values: "SharedKey account:signature", "SharedKeyLite …", "Bearer token".
  [/(SharedKey(?:Lite)?\s+[^:\s]+:)[A-Za-z0-9+/=]+/g, `$1${REDACTED}`],
  [/(Bearer\s+)[A-Za-z0-9\-._~+/]+=*/g, `$1${REDACTED}`],
  // The service's 403 for a wrong key quotes the request's Authorization signature.
  [/(MAC signature found in the HTTP request ')[^']*/g, `$1${REDACTED}`],
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

/** Connection-string settings that are never secret; every other value counts as one (misspelt keys too). */
const PUBLIC_SETTINGS = new Set([
  "defaultendpointsprotocol",
  "accountname",
  "endpointsuffix",
  "tableendpoint",
  "blobendpoint",
  "queueendpoint",
  "fileendpoint",
  "tablesecondaryendpoint",
  "blobsecondaryendpoint",
  "queuesecondaryendpoint",
  "filesecondaryendpoint",
  "usedevelopmentstorage",
  "developmentstorageproxyuri",
]);

/**
 * Whether `text` can be printed as the name of a connection-string setting: letters only, at most 32
 * (the longest setting has 26); a base64 key, even a piece of one, is longer or has digits or `+/=`.
 */
export function isSettingName(text: string): boolean {
  return /^[A-Za-z]{1,32}$/.test(text);
}

/**
 * The values in a connection string that must not be printed, as given and percent-encoded: every
 * setting that is not a public one (`AccountKey`, `SharedAccessSignature`, a misspelt `AcountKey`),
 * a part without `=` (it may be a pasted key), and every `sig` inside.
 */
export function connectionStringSecrets(connectionString: string): string[] {
  const secrets: string[] = [];
  const add = (value: string) => {
    if (value === "") return;
    secrets.push(value);
    const encoded = encodeURIComponent(value);
    if (encoded !== value) secrets.push(encoded);
    try {
      const decoded = decodeURIComponent(value);
      if (decoded !== value) secrets.push(decoded);
    } catch {
      // Not percent-encoded text: the value as given is enough.
    }
  };
  for (const part of connectionString.split(";")) {
    const trimmed = part.trim();
    const at = trimmed.indexOf("=");
    if (at < 0) {
      if (!isSettingName(trimmed)) add(trimmed);
    } else if (!PUBLIC_SETTINGS.has(trimmed.slice(0, at).trim().toLowerCase())) add(trimmed.slice(at + 1));
    for (const match of trimmed.matchAll(/(?:^|[?&])sig=([^&]*)/gi)) add(match[1] ?? "");
  }
  // Longest first, so a whole value goes before a part of it.
  return secrets.sort((a, b) => b.length - a.length);
}
