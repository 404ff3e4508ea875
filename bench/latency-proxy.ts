/**
 * A loopback TCP proxy that holds every chunk of the server's answer for a fixed delay before passing it
 * on: the round trip a client in the same Azure region sees, which a loopback Azurite does not have.
 * Parallel reads (getMany, hash-bucket fan-out) win by overlapping those waits; without them, on a
 * 2-core machine, both sides are bound by the same CPU and the comparison says little.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

/** A running latency proxy. */
export interface LatencyProxy {
  /** The target's connection string with its TableEndpoint moved to the proxy. */
  readonly connectionString: string;
  close(): Promise<void>;
}

/** Starts a proxy in front of the TableEndpoint of `connectionString`, delaying answers by `delayMs`. */
export async function startLatencyProxy(connectionString: string, delayMs: number): Promise<LatencyProxy> {
  const endpoint = /TableEndpoint=([^;]+)/.exec(connectionString)?.[1];
  if (endpoint === undefined) throw new Error("the connection string has no TableEndpoint");
  const target = new URL(endpoint);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    // Each chunk keeps its order: every one waits the same fixed delay from its own arrival.
    upstream.on("data", (chunk) => setTimeout(() => client.write(chunk), delayMs));
    upstream.on("end", () => setTimeout(() => client.end(), delayMs));
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const proxied = new URL(endpoint);
  proxied.port = String(port);
  return {
    connectionString: connectionString.replace(endpoint, proxied.toString().replace(/\/$/, "")),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
