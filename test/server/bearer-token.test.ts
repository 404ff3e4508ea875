import { describe, expect, test } from "vitest";
import { type BearerCheck, checkBearerToken, isBearer } from "../../src/server/bearer-token.js";
import { ServiceFailureError } from "../../src/server/service-error.js";

// The bearer check alone, with the clock and transport injected: lifetime bounds with Entra ID's five
// minutes of clock skew (IdentityModel's default), and Bearer over plain HTTP (refused by Azurite with
// "Authentication scheme Bearer is not allowed with HTTP."; `startTableServer` never serves oauth without
// TLS, so only a proxy terminating TLS in front of it could meet this).
const NOW = Date.UTC(2030, 5, 15, 12, 0, 0);
const SKEW_S = 5 * 60;
const check: BearerCheck = {
  account: "devstoreaccount1",
  now: NOW,
  https: true,
  version: "2019-02-02",
  comp: null,
};

function bearer(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `Bearer ${part({ alg: "none" })}.${part({
    aud: "https://storage.azure.com/",
    iss: "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
    ...claims,
  })}.`;
}

function failure(action: () => unknown): { status: number; code: string; message: string } {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceFailureError);
    return (error as ServiceFailureError).failure;
  }
  throw new Error("expected a refusal");
}

describe("checkBearerToken", () => {
  const nowS = NOW / 1000;

  test("exp and nbf are honoured up to five minutes of skew, and refused one second past it", () => {
    expect(checkBearerToken(bearer({ exp: nowS - SKEW_S }), check)).toBeUndefined();
    expect(checkBearerToken(bearer({ exp: nowS + 3600, nbf: nowS + SKEW_S }), check)).toBeUndefined();
    expect(failure(() => checkBearerToken(bearer({ exp: nowS - SKEW_S - 1 }), check)).message).toContain(
      "Lifetime validation failed. The token is expired.",
    );
    expect(
      failure(() => checkBearerToken(bearer({ exp: nowS + 3600, nbf: nowS + SKEW_S + 1 }), check)).message,
    ).toContain("Lifetime validation failed. The token is not yet valid.");
  });

  test("a bearer token over plain HTTP is refused before it is read", () => {
    const refused = failure(() => checkBearerToken(bearer({ exp: nowS + 3600 }), { ...check, https: false }));
    expect(refused).toMatchObject({ status: 403, code: "AuthenticationFailed" });
    expect(refused.message).toContain("not allowed with HTTP");
    expect(failure(() => checkBearerToken("Bearer junk", { ...check, https: false })).message).toContain(
      "HTTP",
    );
  });

  test("the scheme name is case-insensitive; other schemes are not Bearer", () => {
    expect([isBearer("Bearer x"), isBearer("bearer x"), isBearer("BEARER"), isBearer("Bearerx")]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(isBearer("SharedKey devstoreaccount1:abc")).toBe(false);
    expect(checkBearerToken(bearer({ exp: nowS + 60 }).replace("Bearer", "bearer"), check)).toBeUndefined();
  });
});
