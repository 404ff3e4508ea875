import { ServiceFailureError } from "./service-error.js";

/** One CORS rule as Set Table Service Properties stores it (comma-separated lists, as given). */
export interface CorsRule {
  readonly allowedOrigins: string;
  readonly allowedMethods: string;
  readonly allowedHeaders: string;
  readonly exposedHeaders: string;
  readonly maxAgeInSeconds: number;
}

/** The headers a CORS evaluation adds to an answer. */
export type CorsHeaders = Record<string, string>;

const listOf = (text: string): string[] =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

// "CORS rule evaluation logic": the origin must match exactly (case-sensitive) or the rule allows '*'.
function allowsOrigin(rule: CorsRule, origin: string | undefined): boolean {
  const origins = listOf(rule.allowedOrigins);
  if (origins.includes("*")) return true;
  return origin !== undefined && origins.includes(origin);
}

function allowsMethod(rule: CorsRule, method: string): boolean {
  const wanted = method.toUpperCase();
  return listOf(rule.allowedMethods).some((m) => m.toUpperCase() === wanted);
}

/** Whether a header name matches a rule's list: literal names, `prefix*` names, or `*` for any. */
function headerMatches(patterns: readonly string[], name: string): boolean {
  const lower = name.toLowerCase();
  return patterns.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.endsWith("*") ? lower.startsWith(p.slice(0, -1)) : lower === p;
  });
}

const allowsAllOrigins = (rule: CorsRule) => listOf(rule.allowedOrigins).includes("*");

/**
 * Answers a preflight `OPTIONS` request ("CORS support for the Azure Storage services"): it needs
 * `Origin` and `Access-Control-Request-Method` (else 400); the first rule matching the origin and the
 * method is the only one evaluated, and every requested header must be allowed by it; no such rule,
 * or a header it does not allow, is 403 CorsPreflightFailure. Preflights carry no authorization.
 */
export function preflight(
  rules: readonly CorsRule[],
  origin: string | undefined,
  requestMethod: string | undefined,
  requestHeaders: string | undefined,
): CorsHeaders {
  if (origin === undefined || origin === "" || requestMethod === undefined || requestMethod === "") {
    throw new ServiceFailureError(400, "InvalidHeaderValue", "A required CORS header is not present.");
  }
  const rule = rules.find((r) => allowsOrigin(r, origin) && allowsMethod(r, requestMethod));
  const headers = requestHeaders === undefined ? [] : listOf(requestHeaders);
  if (rule === undefined || !headers.every((h) => headerMatches(listOf(rule.allowedHeaders), h))) {
    throw new ServiceFailureError(
      403,
      "CorsPreflightFailure",
      "CORS not enabled or no matching rule found for this request.",
    );
  }
  const out: CorsHeaders = {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": requestMethod,
    "Access-Control-Max-Age": String(rule.maxAgeInSeconds),
    "Access-Control-Allow-Credentials": "true",
  };
  if (headers.length > 0) out["Access-Control-Allow-Headers"] = headers.join(",");
  return out;
}

/**
 * The CORS headers of an actual request's answer (the service's "Vary header" table): a matching
 * rule that allows all origins gives `Access-Control-Allow-Origin: *`; one naming the origin echoes it
 * with `Access-Control-Allow-Credentials: true`; both expose the answer's headers the rule lists.
 * GET and HEAD answers vary by `Origin` whenever rules exist and no allow-all rule matched. Without
 * rules nothing is added.
 */
export function corsResponseHeaders(
  rules: readonly CorsRule[],
  method: string,
  origin: string | undefined,
  responseHeaderNames: readonly string[],
): CorsHeaders {
  if (rules.length === 0) return {};
  const cacheable = method === "GET" || method === "HEAD";
  const rule = rules.find(
    (r) => allowsMethod(r, method) && (origin === undefined ? allowsAllOrigins(r) : allowsOrigin(r, origin)),
  );
  if (rule === undefined) return cacheable ? { Vary: "Origin" } : {};
  const out: CorsHeaders = {};
  const exposed = exposedHeaders(rule, responseHeaderNames);
  if (exposed !== "") out["Access-Control-Expose-Headers"] = exposed;
  if (allowsAllOrigins(rule)) {
    out["Access-Control-Allow-Origin"] = "*";
  } else {
    out["Access-Control-Allow-Origin"] = origin as string;
    out["Access-Control-Allow-Credentials"] = "true";
    if (cacheable) out.Vary = "Origin";
  }
  return out;
}

/** The answer's header names a rule exposes, then the literal names it lists that the answer lacks. */
function exposedHeaders(rule: CorsRule, responseHeaderNames: readonly string[]): string {
  const patterns = listOf(rule.exposedHeaders);
  if (patterns.length === 0) return "";
  const names = responseHeaderNames.filter((name) => headerMatches(patterns, name));
  const present = new Set(names.map((n) => n.toLowerCase()));
  for (const p of patterns) {
    if (!p.endsWith("*") && !present.has(p.toLowerCase())) names.push(p);
  }
  return names.join(",");
}
