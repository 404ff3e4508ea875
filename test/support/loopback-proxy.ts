/**
 * What the test proxies share (`fault-proxy.ts`, `recording-proxy.ts`): a loopback HTTP server that
 * reads each request's whole body before handing it on, and forwarding to the target byte for byte.
 */
import {
  type Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";

/** Hop-by-hop headers: each side of the proxy manages its own connection. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"]);

/** The headers without the hop-by-hop ones. */
export function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const result: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) result[name] = value;
  }
  return result;
}

/** Where a proxy forwards to: the target's host and port, through one kept-alive agent. */
export interface Upstream {
  readonly target: URL;
  readonly agent: Agent;
}

/** One request to forward, as the proxy received it. */
export interface Forwarded {
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Sends `request` to the target and resolves its answer (unread). A kept-alive socket the target
 * closed meanwhile never carried the request: it is sent once more on a fresh one, so the client never
 * retries (a test counting requests would see it twice). `sent` is called for each send.
 */
export function forwardRequest(
  upstream: Upstream,
  request: Forwarded,
  sent?: () => void,
  reuse = true,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const { target, agent } = upstream;
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: Number(target.port || 80),
        method: request.method,
        path: request.path,
        headers: endToEnd(request.headers),
        agent,
      },
      resolve,
    );
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (reuse && outgoing.reusedSocket && error.code === "ECONNRESET") {
        forwardRequest(upstream, request, sent, false).then(resolve, reject);
      } else {
        reject(error);
      }
    });
    sent?.();
    outgoing.end(request.body);
  });
}

/** A loopback server of a proxy: its port, and `close` (which drops every client connection). */
export interface Loopback {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts a server on a free loopback port; `handle` gets each request once its body is read whole. */
export async function listenLoopback(
  handle: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void,
): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handle(request, response, Buffer.concat(chunks)));
  });
  // Never close an idle client socket while a test runs: a client reusing a socket the server closes at
  // that moment sees a reset the proxy never saw, and request counts would drift by luck.
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
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const socket of sockets) socket.destroy();
      }),
  };
}
