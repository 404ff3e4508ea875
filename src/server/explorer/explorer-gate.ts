import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { renderExplorerPage } from "./explorer-page.js";

/** The request header the explorer page sends its per-process token in (never a cookie). */
export const EXPLORER_TOKEN_HEADER = "x-tablekit-explorer-token";
/** The path prefix of the explorer's API: `/_explorer/api/<Table REST path>`. */
export const EXPLORER_API_PREFIX = "/_explorer/api/";

/** What the explorer needs to know about the server it lives in. */
export interface ExplorerGateOptions {
  /** The account the server serves. */
  readonly account: string;
  /** The account key (bytes): requests the token admits are signed with it (Shared Key Lite). */
  readonly key: Buffer;
  /** The interface the server listens on: a loopback one admits only loopback `Host` names. */
  readonly host: string;
}

/**
 * The explorer's front door in `tablekit serve`: answers `GET /` with the page, and turns an API request
 * that carries the page's per-process token (from the page's own origin) into a Shared Key request for
 * the Table service, so the page speaks the same REST API as every client and the server adds no second
 * data path. `intercept` returns true when it answered the request itself.
 */
export class ExplorerGate {
  readonly #account: string;
  readonly #key: Buffer;
  readonly #loopback: boolean;
  readonly #host: string;
  // One token per server: the page embeds it; a page of another origin cannot read it (same-origin
  // policy), and the server accepts it only from requests that say they come from its own origin.
  readonly #token = randomBytes(32).toString("hex");

  constructor(options: ExplorerGateOptions) {
    this.#account = options.account;
    this.#key = options.key;
    this.#host = options.host.toLowerCase();
    this.#loopback = isLoopbackHost(options.host);
  }

  /** Answers the page and refused API calls; prepares admitted API calls for the Table service. */
  intercept(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (path === "/" && (req.method === "GET" || req.method === "HEAD")) {
      if (!this.#hostAllowed(req)) return refuse(res, 403, "the Host header is not this server's address");
      this.#servePage(req, res);
      return true;
    }
    if (!path.startsWith(EXPLORER_API_PREFIX)) return false;
    const refusal = this.#check(req);
    if (refusal !== undefined) return refuse(res, refusal.status, refusal.reason);
    // The Table service sees an ordinary Shared Key Lite request for the same path.
    const rest = url.slice(EXPLORER_API_PREFIX.length);
    req.url = `/${this.#account}/${rest}`;
    this.#sign(req);
    return false;
  }

  /** Why an API request is refused (401 without the token, 403 with a wrong one or from elsewhere). */
  #check(req: IncomingMessage): { status: number; reason: string } | undefined {
    if (!this.#hostAllowed(req))
      return { status: 403, reason: "the Host header is not this server's address" };
    const given = req.headers[EXPLORER_TOKEN_HEADER];
    if (typeof given !== "string" || given === "") {
      return { status: 401, reason: `the request carries no ${EXPLORER_TOKEN_HEADER} header` };
    }
    const expected = Buffer.from(this.#token, "utf8");
    const actual = Buffer.from(given, "utf8");
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
      return { status: 403, reason: "the explorer token is not this server's" };
    }
    // Browsers send Sec-Fetch-Site and (on writes) Origin: both must name this server's own origin.
    const site = header(req, "sec-fetch-site");
    if (site !== undefined && site !== "same-origin") {
      return { status: 403, reason: `the request comes from another site (${site})` };
    }
    const origin = header(req, "origin");
    if (origin !== undefined && origin !== this.#originOf(req)) {
      return { status: 403, reason: "the request comes from another origin" };
    }
    return undefined;
  }

  /**
   * A page loaded through a DNS name that resolves to this machine (DNS rebinding) would be same-origin
   * with its attacker: on a loopback interface only loopback names and IP literals are this server.
   */
  #hostAllowed(req: IncomingMessage): boolean {
    if (!this.#loopback) return true;
    const host = header(req, "host");
    if (host === undefined) return false;
    const name = hostnameOf(host);
    return name === "localhost" || name === this.#host || isIP(name) !== 0;
  }

  #originOf(req: IncomingMessage): string {
    const https = "encrypted" in req.socket && req.socket.encrypted === true;
    return `${https ? "https" : "http"}://${header(req, "host") ?? ""}`;
  }

  /** Signs the request with Shared Key Lite: `x-ms-date\n/account/path` (plus `?comp=`), as the service checks. */
  #sign(req: IncomingMessage): void {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const rawPath = q < 0 ? url : url.slice(0, q);
    const comp = new URLSearchParams(q < 0 ? "" : url.slice(q + 1)).get("comp");
    const date = new Date().toUTCString();
    const toSign = `${date}\n/${this.#account}${rawPath}${comp === null ? "" : `?comp=${comp}`}`;
    const signature = createHmac("sha256", this.#key).update(toSign, "utf8").digest("base64");
    req.headers["x-ms-date"] = date;
    req.headers.authorization = `SharedKeyLite ${this.#account}:${signature}`;
    delete req.headers[EXPLORER_TOKEN_HEADER];
  }

  #servePage(req: IncomingMessage, res: ServerResponse): void {
    const nonce = randomBytes(16).toString("base64");
    const body = Buffer.from(
      renderExplorerPage({ token: this.#token, account: this.#account, nonce }),
      "utf8",
    );
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Length": String(body.length),
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      "X-Frame-Options": "DENY",
      "Referrer-Policy": "no-referrer",
      // Only the page's own script and style run, and it talks to this origin only.
      "Content-Security-Policy": [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }
}

/** Whether an interface name or address is a loopback one (the explorer is on by default there). */
export function isLoopbackHost(host: string): boolean {
  const name = hostnameOf(host.toLowerCase());
  if (name === "localhost" || name === "::1") return true;
  const v4 = name.startsWith("::ffff:") ? name.slice(7) : name;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

/** The host name of a `Host` header value: without the port, IPv6 without its brackets. */
function hostnameOf(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith("[")) {
    const end = lower.indexOf("]");
    return end < 0 ? lower : lower.slice(1, end);
  }
  // An unbracketed IPv6 address (an interface name, not a Host header) has several colons.
  if (lower.indexOf(":") !== lower.lastIndexOf(":")) return lower;
  const colon = lower.indexOf(":");
  return colon < 0 ? lower : lower.slice(0, colon);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Answers a refused explorer request with the service's JSON error shape. */
function refuse(res: ServerResponse, status: number, reason: string): true {
  const code = status === 401 ? "NoAuthenticationInformation" : "AuthenticationFailed";
  const body = Buffer.from(
    JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: `Explorer: ${reason}.` } } }),
    "utf8",
  );
  res.writeHead(status, {
    "Content-Type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
    "Content-Length": String(body.length),
    "x-ms-error-code": code,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(body);
  return true;
}
