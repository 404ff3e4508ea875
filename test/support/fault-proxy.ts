/**
 * A loopback HTTP proxy in front of Azurite that injects the faults of a `FaultPlan`: service answers
 * (503 with or without Retry-After, 500, 408, and the final 400/403/413), a connection reset before
 * the request is forwarded, and "applied but response lost" (forwarded, Azurite's whole answer read,
 * then the client's connection destroyed without a byte of it). Bodies travel byte for byte.
 */
import {
  Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { StoreMethod } from "./counting-store.js";
import {
  type FaultDecision,
  type FaultKind,
  FaultPlan,
  type FaultPlanOptions,
  RETRY_AFTER_SECONDS,
} from "./faulty-store.js";
import { endToEnd, forwardRequest, listenLoopback } from "./loopback-proxy.js";

export interface FaultProxy {
  /** Azurite's connection string with the TableEndpoint pointing at the proxy. */
  readonly connectionString: string;
  /** The proxy's table endpoint (account path included). */
  readonly endpoint: string;
  readonly port: number;
  /** Decides the faults and counts requests per method and faults per kind. */
  readonly plan: FaultPlan;
  /** Requests received (faulted or not). */
  readonly requests: number;
  /** Requests forwarded to Azurite (everything but injected answers and resets). */
  readonly forwarded: number;
  setRate(rate: number): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of the TableEndpoint of `targetConnectionString`. */
export async function startFaultProxy(
  targetConnectionString: string,
  options: FaultPlanOptions | FaultPlan = {},
): Promise<FaultProxy> {
  const target = new URL(tableEndpointOf(targetConnectionString));
  const plan = options instanceof FaultPlan ? options : new FaultPlan(options);
  const upstream = { target, agent: new Agent({ keepAlive: true, maxSockets: 64 }) };
  let forwarded = 0;
  let closing = false;

  type Answer = { status: number; headers: OutgoingHttpHeaders; body: Buffer };
  const forward = async (request: IncomingMessage, body: Buffer): Promise<Answer> => {
    const { method, url: path, headers } = request;
    const response = await forwardRequest(upstream, { method, path, headers, body }, () => {
      forwarded += 1;
    });
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    return {
      status: response.statusCode ?? 502,
      headers: endToEnd(response.headers),
      body: Buffer.concat(chunks),
    };
  };

  const handle = async (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const method = classifyRequest(request.method ?? "GET", request.url ?? "/", request.headers);
    const identity = identifyRequest(method, request.url ?? "/", body);
    const decision: FaultDecision | undefined = plan.decide(method, identity);
    if (decision === undefined) {
      const answer = await forward(request, body);
      // Content-Length is recomputed from the body; everything else is Azurite's.
      delete answer.headers["transfer-encoding"];
      answer.headers["content-length"] = String(answer.body.length);
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body);
      return;
    }
    const { kind, onFault } = decision;
    if (kind === "lost") {
      await forward(request, body);
      await onFault?.({ method, kind });
      request.socket.destroy();
      return;
    }
    await onFault?.({ method, kind });
    if (kind === "reset") {
      request.socket.destroy();
      return;
    }
    sendFault(response, kind);
  };

  const { port, close } = await listenLoopback((request, response, body) => {
    handle(request, response, body).catch((error: unknown) => {
      // Azurite unreachable or the hook failed: the client sees a dropped connection, the test a failure.
      if (!closing) console.error("fault proxy:", error);
      request.socket.destroy();
    });
  });
  const endpoint = `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, "")}`;
  const connectionString = withTableEndpoint(targetConnectionString, endpoint);

  return {
    connectionString,
    endpoint,
    port,
    plan,
    get requests() {
      return plan.requests;
    },
    get forwarded() {
      return forwarded;
    },
    setRate(rate: number) {
      plan.setRate(rate);
    },
    close() {
      closing = true;
      upstream.agent.destroy();
      return close();
    },
  };
}

/** Which store call an HTTP request of `@azure/data-tables` is. */
export function classifyRequest(method: string, url: string, headers: IncomingHttpHeaders): StoreMethod {
  const path = decodeURIComponent(new URL(url, "http://proxy").pathname);
  const resource = path.slice(path.lastIndexOf("/") + 1);
  const verb = method.toUpperCase();
  if (resource === "$batch") return "submitTransaction";
  if (/^Tables(\(.*\))?$/.test(resource)) return verb === "DELETE" ? "deleteTable" : "createTable";
  const point = /\(PartitionKey=.*\)$/.test(resource);
  switch (verb) {
    case "GET":
      return point ? "getEntity" : "queryPage";
    case "POST":
      return "insert";
    case "DELETE":
      return "delete";
    default:
      // PUT (replace) or PATCH/MERGE (merge): conditional when If-Match is sent.
      return headers["if-match"] === undefined ? "upsert" : "update";
  }
}

/**
 * The identity of a request for the fault plan: its keys (or its query), never the table name (random
 * per run) nor anything else that varies between runs (batch boundaries, dates), so a seed replays.
 */
export function identifyRequest(method: StoreMethod, url: string, body: Buffer): string {
  const parsed = new URL(url, "http://proxy");
  if (method === "createTable" || method === "deleteTable") return "";
  if (method === "queryPage") return parsed.search;
  const text = `${safeDecode(parsed.pathname)}\n${body.toString("utf8")}`;
  const decoded = safeDecode(text);
  const partitionKeys = new Set<string>();
  const rowKeys = new Set<string>();
  for (const source of [text, decoded]) {
    for (const match of source.matchAll(
      /PartitionKey='((?:[^']|'')*)'|"PartitionKey"\s*:\s*"((?:[^"\\]|\\.)*)"/g,
    )) {
      partitionKeys.add(match[1] ?? match[2] ?? "");
    }
    for (const match of source.matchAll(/RowKey='((?:[^']|'')*)'|"RowKey"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) {
      rowKeys.add(match[1] ?? match[2] ?? "");
    }
  }
  return [...[...partitionKeys].sort(), "|", ...[...rowKeys].sort()].join("\u0001");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The Table service's answer for an injected fault. */
function sendFault(response: ServerResponse, kind: Exclude<FaultKind, "reset" | "lost">): void {
  const answers: Record<typeof kind, [number, string, string]> = {
    busy: [503, "ServerBusy", "The server is busy."],
    busyRetryAfter: [503, "ServerBusy", "The server is busy."],
    internal: [500, "InternalError", "The server encountered an internal error. Please retry the request."],
    timeout: [408, "RequestTimeout", "The request timed out."],
    badRequest: [400, "InvalidInput", "One of the request inputs is not valid."],
    forbidden: [403, "AuthorizationFailure", "This request is not authorized to perform this operation."],
    tooLarge: [413, "RequestBodyTooLarge", "The request body is too large."],
  };
  const [status, code, message] = answers[kind];
  const body = Buffer.from(
    JSON.stringify({
      "odata.error": { code, message: { lang: "en-US", value: `${message}\nRequestId:injected` } },
    }),
  );
  const headers: OutgoingHttpHeaders = {
    "content-type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
    "content-length": String(body.length),
    "x-ms-error-code": code,
  };
  if (kind === "busyRetryAfter") headers["retry-after"] = String(RETRY_AFTER_SECONDS);
  response.writeHead(status, headers);
  response.end(body);
}

function tableEndpointOf(connectionString: string): string {
  const match = /(?:^|;)\s*TableEndpoint=([^;]+)/i.exec(connectionString);
  if (!match) throw new Error("the target connection string has no TableEndpoint");
  return match[1]!.trim();
}

function withTableEndpoint(connectionString: string, endpoint: string): string {
  return connectionString.replace(/((?:^|;)\s*TableEndpoint=)[^;]+/i, `$1${endpoint}`);
}
