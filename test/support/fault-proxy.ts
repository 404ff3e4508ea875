/**
 * A loopback HTTP proxy in front of Azurite that injects the faults of a `FaultPlan`: service answers
 * (503 with or without Retry-After, 500, 408, and the final 400/403/413), a connection reset before
 * the request is forwarded, and "applied but response lost" (forwarded, Azurite's whole answer read,
 * then the client's connection destroyed without a byte of it). Bodies travel byte for byte.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";
import type { StoreMethod } from "./counting-store.js";
import {
  type FaultDecision,
  type FaultKind,
  FaultPlan,
  type FaultPlanOptions,
  RETRY_AFTER_SECONDS,
} from "./faulty-store.js";

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

/** Hop-by-hop headers: each side of the proxy manages its own connection. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"]);

/** Starts a proxy on a free loopback port in front of the TableEndpoint of `targetConnectionString`. */
export async function startFaultProxy(
  targetConnectionString: string,
  options: FaultPlanOptions | FaultPlan = {},
): Promise<FaultProxy> {
  const target = new URL(tableEndpointOf(targetConnectionString));
  const targetPort = Number(target.port || 80);
  const plan = options instanceof FaultPlan ? options : new FaultPlan(options);
  const upstream = new Agent({ keepAlive: true, maxSockets: 64 });
  const sockets = new Set<Socket>();
  let forwarded = 0;
  let closing = false;

  type Answer = { status: number; headers: OutgoingHttpHeaders; body: Buffer };
  const forward = (request: IncomingMessage, body: Buffer, reuse = true): Promise<Answer> =>
    new Promise<Answer>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: targetPort,
          method: request.method,
          path: request.url,
          headers: endToEnd(request.headers),
          agent: upstream,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 502,
              headers: endToEnd(response.headers),
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      outgoing.on("error", (error: NodeJS.ErrnoException) => {
        // A kept-alive socket Azurite closed meanwhile: the request never reached it, send it once more.
        if (reuse && outgoing.reusedSocket && error.code === "ECONNRESET") {
          forward(request, body, false).then(resolve, reject);
        } else {
          reject(error);
        }
      });
      forwarded += 1;
      outgoing.end(body);
    });

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

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      handle(request, response, Buffer.concat(chunks)).catch((error: unknown) => {
        // Azurite unreachable or the hook failed: the client sees a dropped connection, the test a failure.
        if (!closing) console.error("fault proxy:", error);
        request.socket.destroy();
      });
    });
  });
  // Never close an idle client socket while a test runs: a client reusing a socket the server closes at
  // that moment sees a reset that never reached the plan, and request counts would drift by luck.
  server.keepAliveTimeout = 0;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
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
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const socket of sockets) socket.destroy();
        upstream.destroy();
      });
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

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const result: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) result[name] = value;
  }
  return result;
}

function tableEndpointOf(connectionString: string): string {
  const match = /(?:^|;)\s*TableEndpoint=([^;]+)/i.exec(connectionString);
  if (!match) throw new Error("the target connection string has no TableEndpoint");
  return match[1]!.trim();
}

function withTableEndpoint(connectionString: string, endpoint: string): string {
  return connectionString.replace(/((?:^|;)\s*TableEndpoint=)[^;]+/i, `$1${endpoint}`);
}
