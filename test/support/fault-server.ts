import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { azuriteConnectionStringFor } from "../../scripts/azurite-process.js";

/** How the fault server answers every request. */
export type FaultMode = "503" | "500" | "hang" | "reset";

/** A local HTTP server that fails every request in a chosen way and counts what reaches it. */
export interface FaultServer {
  /** Table endpoint URL (account path included), e.g. for `new AzureStore(url, credential)`. */
  endpoint: string;
  /** Connection string pointing at the server with the emulator's account. */
  connectionString: string;
  /** Requests received since start or the last `reset()`. */
  readonly requests: number;
  mode: FaultMode;
  reset(): void;
  close(): Promise<void>;
}

/** Starts a fault server on a free loopback port. */
export async function startFaultServer(mode: FaultMode): Promise<FaultServer> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const state = { mode };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests += 1;
    request.resume();
    // One connection per request: a pooled socket the server closes while idle would be reset on reuse,
    // and the request would never be counted.
    response.shouldKeepAlive = false;
    switch (state.mode) {
      case "503":
        // Retry-After 0 invites an immediate retry: any retry would show in the count.
        response.writeHead(503, { "retry-after": "0", "content-type": "application/json" });
        response.end(JSON.stringify({ "odata.error": { code: "ServerBusy", message: { value: "busy" } } }));
        break;
      case "500":
        response.writeHead(500);
        response.end();
        break;
      case "reset":
        request.socket.destroy();
        break;
      case "hang":
        break;
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const endpoint = `http://127.0.0.1:${port}/devstoreaccount1`;
  return {
    endpoint,
    connectionString: azuriteConnectionStringFor("127.0.0.1", port),
    get requests() {
      return requests;
    },
    get mode() {
      return state.mode;
    },
    set mode(value: FaultMode) {
      state.mode = value;
    },
    reset() {
      requests = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
