import { BEARER_CHALLENGE, BEARER_CHALLENGE_VERSION } from "./anonymous-request.js";
import { AUTHENTICATION_FAILED, SEE_CHALLENGE, ServiceFailureError } from "./service-error.js";

/**
 * How `tablekit serve` checks OAuth bearer tokens (Microsoft Entra ID): `"basic"`, as Azurite's
 * `--oauth basic`, reads the token's claims without verifying its signature (local testing only).
 */
export type TableServerOAuth = "basic";

/** What a bearer token is checked against: the served account, the server's clock, the transport. */
export interface BearerCheck {
  /** The account the request addresses (a per-account audience must name it). */
  readonly account: string;
  /** The server's time, ms since the epoch. */
  readonly now: number;
  /** Whether the request came over TLS (bearer tokens are refused over HTTP). */
  readonly https: boolean;
  /** The request's `x-ms-version`: from 2019-12-12 a failure is a 401 bearer challenge. */
  readonly version: string;
  /** The request's `comp` query parameter (`acl` names the Get/Set Table ACL operations). */
  readonly comp: string | null;
}

// Entra ID validates token lifetimes with five minutes of clock skew (IdentityModel's default).
const CLOCK_SKEW_MS = 5 * 60 * 1000;

// The storage resource a token may be issued for: the resource id (with or without its slash), the
// Azure Storage application id, or this account's table endpoint in one of the clouds (Azurite's list).
const STORAGE_AUDIENCES = new Set([
  "https://storage.azure.com",
  "https://storage.azure.com/",
  "e406a681-f3d4-42a8-90b6-c2b029497af1",
]);
const ACCOUNT_AUDIENCE =
  /^https:\/\/([^./]+)\.table\.core\.(?:windows\.net|chinacloudapi\.cn|usgovcloudapi\.net|cloudapi\.de)\/?$/;

// Entra ID's token issuers: v1 tokens `https://sts.<cloud>/<tenant>/`, v2 tokens
// `https://login.<cloud>/<tenant>/v2.0`, in the public, US government, China, Germany and test clouds.
// The tenant is not checked: the emulator has none of its own.
const ISSUERS = [
  /^https:\/\/(?:sts\.windows\.net|sts\.chinacloudapi\.cn|sts\.microsoftonline\.de|sts\.windows-ppe\.net)\/[^?#\s]+$/,
  /^https:\/\/(?:login\.microsoftonline\.com|login\.microsoftonline\.us|login\.chinacloudapi\.cn|login\.microsoftonline\.de|login\.windows-ppe\.net)\/[^?#\s]+\/v2\.0\/?$/,
];

/** Whether an `Authorization` header uses the Bearer scheme (case-insensitive, RFC 6750). */
export function isBearer(authorization: string): boolean {
  return /^bearer(?:\s|$)/i.test(authorization);
}

/**
 * Checks an `Authorization: Bearer <jwt>` header as Azurite's basic OAuth level does: the JWT's claims
 * are read but its signature is NOT verified; the lifetime (`exp`, and `nbf` when present, with five
 * minutes of skew), the issuer (an Entra ID token issuer) and the audience (the storage resource or this
 * account's endpoint) are. A valid token grants what the account key grants, except Get/Set Table ACL,
 * which only the account owner (Shared Key) may call: 403 AuthorizationFailure. A bad token is 403
 * AuthenticationFailed, or from version 2019-12-12 401 InvalidAuthenticationInfo with a bearer challenge,
 * the failure named on the message's second line (`AuthenticationErrorDetail`) as Azure names it.
 */
export function checkBearerToken(authorization: string, check: BearerCheck): undefined {
  if (!check.https) throw refused(check, "Authentication scheme Bearer is not allowed with HTTP.");
  const token = authorization.replace(/^bearer\s*/i, "");
  const claims = decodeClaims(token);
  if (typeof claims === "string") throw refused(check, `JWT is not well formed: ${claims}.`);
  const { exp, nbf, iss, aud } = claims;
  if (exp === undefined)
    throw refused(check, "Lifetime validation failed. The token is missing an Expiration Time.");
  if (typeof exp !== "number" || (nbf !== undefined && typeof nbf !== "number")) {
    throw refused(check, "JWT is not well formed: its exp and nbf claims must be NumericDate numbers.");
  }
  if (typeof nbf === "number" && check.now + CLOCK_SKEW_MS < nbf * 1000) {
    throw refused(
      check,
      `Lifetime validation failed. The token is not yet valid.\nValidFrom: '${isoOf(nbf)}', current time: '${new Date(check.now).toISOString()}'.`,
    );
  }
  if (check.now - CLOCK_SKEW_MS > exp * 1000) {
    throw refused(
      check,
      `Lifetime validation failed. The token is expired.\nValidTo: '${isoOf(exp)}', current time: '${new Date(check.now).toISOString()}'.`,
    );
  }
  if (typeof iss !== "string" || !ISSUERS.some((issuer) => issuer.test(iss))) {
    throw refused(
      check,
      `Issuer validation failed. Issuer did not match.\nThe token's issuer ${show(iss)} is not a Microsoft Entra ID token issuer (https://sts.windows.net/<tenant>/, https://login.microsoftonline.com/<tenant>/v2.0 or another cloud's).`,
    );
  }
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  if (!audiences.some((a) => typeof a === "string" && audienceMatches(a, check.account))) {
    throw refused(
      check,
      `Audience validation failed. Audience did not match.\nThe token's audience ${show(aud)} is not https://storage.azure.com, the Azure Storage application id or https://${check.account}.table.core.windows.net.`,
    );
  }
  // "Get Table ACL", "Set Table ACL": only the account owner may call this operation.
  if (check.comp === "acl") {
    throw new ServiceFailureError(
      403,
      "AuthorizationFailure",
      "This request is not authorized to perform this operation.\nGet and Set Table ACL are not available with a bearer token: only the account owner (Shared Key) may call them.",
    );
  }
  return undefined;
}

function audienceMatches(audience: string, account: string): boolean {
  if (STORAGE_AUDIENCES.has(audience)) return true;
  const match = ACCOUNT_AUDIENCE.exec(audience);
  return match !== null && match[1] === account;
}

/** The JWT's payload claims, or why the token is not a JWT (compact JWS: header.payload.signature). */
function decodeClaims(token: string): Record<string, unknown> | string {
  const parts = token.split(".");
  if (parts.length !== 3) return "a JWT has three dot-separated parts";
  const [header, payload] = parts as [string, string, string];
  const headerJson = jsonObject(header);
  const claims = jsonObject(payload);
  if (headerJson === undefined) return "its header is not base64url-encoded JSON";
  if (claims === undefined) return "its payload is not base64url-encoded JSON";
  return claims;
}

function jsonObject(part: string): Record<string, unknown> | undefined {
  if (part === "" || !/^[A-Za-z0-9_-]+$/.test(part)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function isoOf(seconds: number): string {
  const ms = seconds * 1000;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(seconds);
}

function show(value: unknown): string {
  return value === undefined ? "(none)" : `'${typeof value === "string" ? value : JSON.stringify(value)}'`;
}

/**
 * A refused token: 403 AuthenticationFailed before version 2019-12-12; from it, the storage front end's
 * 401 InvalidAuthenticationInfo with a `WWW-Authenticate` bearer challenge. The detail is the message's
 * second line, where Azure's JSON error bodies carry `AuthenticationErrorDetail`.
 */
function refused(check: BearerCheck, detail: string): ServiceFailureError {
  if (check.version >= BEARER_CHALLENGE_VERSION) {
    return new ServiceFailureError(401, "InvalidAuthenticationInfo", `${SEE_CHALLENGE}\n${detail}`, {
      "WWW-Authenticate": BEARER_CHALLENGE,
    });
  }
  return new ServiceFailureError(403, "AuthenticationFailed", `${AUTHENTICATION_FAILED}\n${detail}`);
}
