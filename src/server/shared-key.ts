import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { AUTHENTICATION_FAILED, ServiceFailureError } from "./service-error.js";

/** An account the server accepts requests for: its name and its base64 key. */
export interface AccountCredentials {
  readonly name: string;
  readonly key: Buffer;
}

// The service refuses requests whose date is more than 15 minutes away from its clock.
const MAX_SKEW_MS = 15 * 60 * 1000;

/**
 * Checks a request's `Authorization` header the way the Table service does (Shared Key for the
 * Table service and Shared Key Lite, "Authorize with Shared Key"):
 * - SharedKey signs `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource`;
 * - SharedKeyLite signs `Date\nCanonicalizedResource`;
 * where Date is `x-ms-date` when present, else `Date`, and the resource is `/account/path` plus
 * `?comp=…` only. Anything else (no header, another account, a bad signature or date) is 403.
 */
export function checkSharedKey(
  account: AccountCredentials,
  method: string,
  rawPath: string,
  comp: string | null,
  headers: IncomingHttpHeaders,
  now: number,
): undefined {
  const authorization = headers.authorization;
  if (authorization === undefined) throw refused("the request carries no Authorization header");
  const match = /^(SharedKey|SharedKeyLite) ([^:]+):(.+)$/.exec(authorization);
  if (match === null) throw refused("the Authorization header is malformed");
  const [, scheme, name, signature] = match as unknown as [string, string, string, string];
  if (name !== account.name) throw refused(`the request is signed for account '${name}'`);
  const date = header(headers, "x-ms-date") || header(headers, "date");
  const dateMs = parseDate(date);
  if (date === "" || Number.isNaN(dateMs)) throw refused("the request has no valid x-ms-date or Date header");
  if (Math.abs(now - dateMs) > MAX_SKEW_MS) throw refused("the request date is more than 15 minutes off");
  const resource = `/${account.name}${rawPath}${comp === null ? "" : `?comp=${comp}`}`;
  const toSign =
    scheme === "SharedKey"
      ? `${method}\n${header(headers, "content-md5")}\n${header(headers, "content-type")}\n${date}\n${resource}`
      : `${date}\n${resource}`;
  const expected = createHmac("sha256", secretKey(account)).update(toSign, "utf8").digest();
  const given = Buffer.from(signature, "base64");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw refused(`the signature does not match; the string to sign was '${toSign.replaceAll("\n", "\\n")}'`);
  }
  return undefined;
}

const keys = new WeakMap<AccountCredentials, KeyObject>();

/** The account key as a `KeyObject`, made once per account (cheaper to sign with than the raw bytes). */
export function secretKey(account: AccountCredentials): KeyObject {
  let key = keys.get(account);
  if (key === undefined) {
    key = createSecretKey(account.key);
    keys.set(account, key);
  }
  return key;
}

// Clients sign a date that changes once a second: parse each text once.
let lastDateText = "";
let lastDateMs = Number.NaN;

function parseDate(text: string): number {
  if (text !== lastDateText) {
    lastDateMs = Date.parse(text);
    lastDateText = text;
  }
  return lastDateMs;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

function refused(detail: string): ServiceFailureError {
  return new ServiceFailureError(403, "AuthenticationFailed", `${AUTHENTICATION_FAILED}\n${detail}`);
}
