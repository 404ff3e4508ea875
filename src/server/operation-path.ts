// A path of characters WHATWG URL keeps as they are (no query, no fragment).
const PATH = String.raw`\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*`;
// A URL whose path needs no normalization: http(s), then such a path.
const PLAIN_URL = new RegExp(String.raw`^(https?:\/\/[^/?#\\]+)(${PATH})$`);
// "." and ".." segments (also percent-encoded) are resolved by URL parsing.
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|$)/i;
// Such a path alone, for a URL whose origin is already known valid.
const PLAIN_PATH = new RegExp(`^${PATH}$`);
const SLASH = 47;
const MAX_ORIGINS = 64;
// Never a prefix of a URL until a valid origin has been seen (a URL has no NUL).
let lastOrigin = "\u0000";
const validOrigins = new Set<string>();

/**
 * The path of a batch operation's request URL, exactly as `new URL(url, "http://batch.invalid").pathname`
 * gives it (a `TypeError` when that throws). A batch repeats one origin in up to 100 operations, so a
 * plain absolute URL with an origin already seen valid is answered without parsing it again.
 */
export function operationPath(url: string): string {
  // The origin of the previous operation, when this URL repeats it: only the path is left to check.
  if (url.startsWith(lastOrigin) && url.charCodeAt(lastOrigin.length) === SLASH) {
    const path = url.slice(lastOrigin.length);
    if (PLAIN_PATH.test(path) && !(path.includes("/.") || path.includes("/%"))) return path;
  }
  const match = PLAIN_URL.exec(url);
  if (match !== null && !DOT_SEGMENT.test(match[2] as string)) {
    const origin = match[1] as string;
    if (validOrigins.has(origin)) {
      lastOrigin = origin;
      return match[2] as string;
    }
    new URL(`${origin}/`); // throws for an invalid host, as parsing the whole URL would
    if (validOrigins.size >= MAX_ORIGINS) validOrigins.clear();
    validOrigins.add(origin);
    lastOrigin = origin;
    return match[2] as string;
  }
  return new URL(url, "http://batch.invalid").pathname;
}
