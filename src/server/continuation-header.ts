import { badRequest } from "../store/memory/service-errors.js";

/**
 * Continuation keys travel in headers, which must be ASCII, while keys may hold any character.
 * Like the service's own tokens (`1!8!cGsx…`), a key goes out as `1!<length>!<base64 of UTF-8>`.
 */
export function encodeContinuationKey(key: string): string {
  const base64 = Buffer.from(key, "utf8").toString("base64");
  return `1!${base64.length}!${base64}`;
}

/** Reads a token written by `encodeContinuationKey`; anything else is 400 InvalidInput. */
export function decodeContinuationKey(token: string): string {
  const match = /^1!(\d+)!([A-Za-z0-9+/]*={0,2})$/.exec(token);
  if (match === null || Number(match[1]) !== (match[2] as string).length) {
    throw badRequest("InvalidInput", "the continuation token is malformed");
  }
  const key = Buffer.from(match[2] as string, "base64").toString("utf8");
  if (encodeContinuationKey(key) !== token)
    throw badRequest("InvalidInput", "the continuation token is malformed");
  return key;
}
