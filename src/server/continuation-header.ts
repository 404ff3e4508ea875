import { badRequest } from "./service-error.js";

// Printable ASCII other than space: safe in a header as it is.
const PLAIN = /^[\x21-\x7e]+$/;

/**
 * Continuation keys travel in headers, which must be ASCII, while keys may hold any character.
 * A printable ASCII key goes out as it is (readable, and what hand-made tokens look like); any other
 * key, and one that starts with `1!`, as `1!<length>!<base64 of UTF-8>` like the service's own tokens.
 * Clients treat the tokens as opaque either way.
 */
export function encodeContinuationKey(key: string): string {
  if (PLAIN.test(key) && !key.startsWith("1!")) return key;
  const base64 = Buffer.from(key, "utf8").toString("base64");
  return `1!${base64.length}!${base64}`;
}

/** Reads a token written by `encodeContinuationKey`; anything else is 400 InvalidInput. */
export function decodeContinuationKey(token: string): string {
  if (!token.startsWith("1!")) {
    if (PLAIN.test(token)) return token;
    throw badRequest("InvalidInput", "the continuation token is malformed");
  }
  const match = /^1!(\d+)!([A-Za-z0-9+/]*={0,2})$/.exec(token);
  if (match === null || Number(match[1]) !== (match[2] as string).length) {
    throw badRequest("InvalidInput", "the continuation token is malformed");
  }
  const key = Buffer.from(match[2] as string, "base64").toString("utf8");
  if (encodeContinuationKey(key) !== token)
    throw badRequest("InvalidInput", "the continuation token is malformed");
  return key;
}
