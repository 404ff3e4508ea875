// A URL whose path needs no normalization: http(s), then a path of characters WHATWG URL keeps as they are.
const PLAIN_URL = /^(https?:\/\/[^/?#\\]+)(\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*)$/;
// "." and ".." segments (also percent-encoded) are resolved by URL parsing.
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|$)/i;
const MAX_ORIGINS = 64;
const validOrigins = new Set<string>();

/**
 * The path of a batch operation's request URL, exactly as `new URL(url, "http://batch.invalid").pathname`
 * gives it (a `TypeError` when that throws). A batch repeats one origin in up to 100 operations, so a
 * plain absolute URL with an origin already seen valid is answered without parsing it again.
 */
export function operationPath(url: string): string {
  const match = PLAIN_URL.exec(url);
  if (match !== null && !DOT_SEGMENT.test(match[2] as string)) {
    const origin = match[1] as string;
    if (validOrigins.has(origin)) return match[2] as string;
    new URL(`${origin}/`); // throws for an invalid host, as parsing the whole URL would
    if (validOrigins.size >= MAX_ORIGINS) validOrigins.clear();
    validOrigins.add(origin);
    return match[2] as string;
  }
  return new URL(url, "http://batch.invalid").pathname;
}
