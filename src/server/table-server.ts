import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { createSecureContext, type SecureContextOptions } from "node:tls";
import { ValidationError } from "../errors.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import type { ServableStore, ServedStore } from "../store/served-store.js";
import type { TableServerOAuth } from "./bearer-token.js";
import { ExplorerGate, isLoopbackHost } from "./explorer/explorer-gate.js";
import { TableService } from "./table-service.js";

/** The emulator account every Azure Storage emulator accepts (`UseDevelopmentStorage=true`). */
export const DEV_STORE_ACCOUNT = "devstoreaccount1";
/** The emulator account's well-known key (published by Microsoft; not a secret). */
export const DEV_STORE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** Options of `startTableServer`. */
export interface TableServerOptions {
  /** Interface to listen on (default `127.0.0.1`). */
  host?: string | undefined;
  /** Port to listen on (default 10002, Azurite's table port; 0 picks a free one). */
  port?: number | undefined;
  /** The store to serve (default a new in-memory `MemoryStore`); the `"azure"` flavour only. */
  store?: MemoryStore | undefined;
  /** Account name in the path and the signatures (default `devstoreaccount1`). */
  account?: string | undefined;
  /** The account key, base64 (default the emulator's well-known key). */
  key?: string | undefined;
  /** Serve HTTPS with this certificate and private key (PEM text or bytes) instead of HTTP. */
  tls?: TableServerTls | undefined;
  /**
   * Accept OAuth bearer tokens (Microsoft Entra ID) beside Shared Key and SAS. `"basic"` checks a token's
   * lifetime, issuer and audience but NOT its signature, as Azurite's `--oauth basic`: for local testing
   * only. Needs `tls` (the SDKs send bearer tokens over HTTPS only). Default off.
   */
  oauth?: TableServerOAuth | undefined;
  /**
   * Accept any `x-ms-version` of the form YYYY-MM-DD, as Azurite's `--skipApiVersionCheck` does: for an
   * SDK newer than the versions serve knows. Default off: a version Azure does not know is refused with
   * 400 `InvalidHeaderValue`, as Azure refuses it.
   */
  skipApiVersionCheck?: boolean | undefined;
  /**
   * For this many milliseconds after a table is deleted, creating the same name answers 409
   * `TableBeingDeleted`, as Azure does (about 40 s there). Default 0. Applies to the store the server
   * creates; a `store` you pass takes it from its own options (`new MemoryStore({ tableDeleteDelayMs })`).
   */
  tableDeleteDelayMs?: number | undefined;
  /**
   * Serve the explorer web page at `/` (tables and entities in the browser; its API calls carry a
   * per-process token). Default: on when `host` is a loopback address, off otherwise.
   */
  explorer?: boolean | undefined;
}

/** The certificate and private key `tablekit serve` answers HTTPS with (PEM, as read from the files). */
export interface TableServerTls {
  /** The certificate chain, PEM. */
  cert: string | Buffer;
  /** The certificate's private key, PEM (unencrypted). */
  key: string | Buffer;
}

/** A running table server. */
export interface TableServer {
  /** The account's table endpoint, e.g. `http://127.0.0.1:10002/devstoreaccount1` (`https://` with `tls`). */
  readonly url: string;
  /** The port it listens on (the chosen one when `port: 0` was given). */
  readonly port: number;
  /** A connection string for any Azure Tables client. */
  readonly connectionString: string;
  /** The explorer page's address (e.g. `http://127.0.0.1:10002/`) when the explorer is on. */
  readonly explorerUrl?: string | undefined;
  /** Stops accepting connections and resolves when open ones are closed. */
  close(): Promise<void>;
}

/**
 * Serves a `MemoryStore` over the Azure Table service REST protocol (path-style URLs, SharedKey and
 * SharedKeyLite), so the official SDKs and `AzureStore` can use it as an emulator.
 */
export async function startTableServer(options: TableServerOptions = {}): Promise<TableServer> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 10002;
  const account = options.account ?? DEV_STORE_ACCOUNT;
  const key = options.key ?? DEV_STORE_KEY;
  checkEndpoint(port, account, key);
  const oauth = checkOAuth(options);
  const served = servedStoreOf(options);
  requireBoolean(options.skipApiVersionCheck, "skipApiVersionCheck", "server-skip-api-version-check");
  const service = new TableService(
    served,
    { name: account, key: Buffer.from(key, "base64") },
    { oauth, skipApiVersionCheck: options.skipApiVersionCheck },
  );
  requireBoolean(options.explorer, "explorer", "server-explorer");
  const explorer =
    (options.explorer ?? isLoopbackHost(host))
      ? new ExplorerGate({ account, key: Buffer.from(key, "base64"), host })
      : undefined;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    // The explorer answers its page and refused calls; admitted calls go on to the Table service.
    if (explorer?.intercept(req, res) === true) return;
    void service.handle(req, res);
  };
  const server = await listen(options.tls, handler, port, host);
  const chosen = (server.address() as AddressInfo).port;
  const hostInUrl = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  const protocol = options.tls === undefined ? "http" : "https";
  const url = `${protocol}://${hostInUrl}:${chosen}/${account}`;
  service.base = url;
  return {
    url,
    port: chosen,
    connectionString: `DefaultEndpointsProtocol=${protocol};AccountName=${account};AccountKey=${key};TableEndpoint=${url};`,
    explorerUrl: explorer === undefined ? undefined : `${protocol}://${hostInUrl}:${chosen}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/** Checks the port, the account name and the key (base64) the server answers with. */
function checkEndpoint(port: number, account: string, key: string): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ValidationError(
      "server-port",
      `startTableServer: port must be an integer from 0 to 65535, got ${String(port)}`,
      { field: "port" },
    );
  }
  if (typeof account !== "string" || !/^[a-z0-9]{3,24}$/.test(account)) {
    throw new ValidationError(
      "server-account",
      "startTableServer: account must be 3-24 lower-case letters and digits",
      { field: "account" },
    );
  }
  if (typeof key !== "string" || key === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) {
    throw new ValidationError("server-key", "startTableServer: key must be base64", { field: "key" });
  }
}

/** The OAuth mode, `"basic"` or none; it needs TLS. */
function checkOAuth(options: TableServerOptions): TableServerOAuth | undefined {
  const oauth = options.oauth;
  if (oauth !== undefined && oauth !== "basic") {
    throw new ValidationError(
      "server-oauth",
      `startTableServer: oauth must be "basic" (or left out), got ${JSON.stringify(oauth)}`,
      { field: "oauth" },
    );
  }
  // Azure refuses bearer tokens over HTTP, and the SDKs will not send them there.
  if (oauth !== undefined && options.tls === undefined) {
    throw new ValidationError(
      "server-oauth",
      "startTableServer: oauth needs tls (bearer tokens are accepted over HTTPS only)",
      { field: "oauth" },
    );
  }
  return oauth;
}

/** The store to serve (the one given, or a new one), through the served-store port. */
function servedStoreOf(options: TableServerOptions): ServedStore {
  if (options.store !== undefined && options.tableDeleteDelayMs !== undefined) {
    throw new ValidationError(
      "server-table-delete-delay",
      "startTableServer: give tableDeleteDelayMs to the store you pass (new MemoryStore({ tableDeleteDelayMs })), not beside it",
      { field: "tableDeleteDelayMs" },
    );
  }
  const store = options.store ?? new MemoryStore({ tableDeleteDelayMs: options.tableDeleteDelayMs });
  // The server speaks to the store through the served-store port only.
  const served = typeof (store as Partial<ServableStore>).served === "function" ? store.served() : undefined;
  if (served === undefined) {
    throw new ValidationError(
      "server-store",
      'startTableServer: store must be a MemoryStore of the "azure" flavour',
      { field: "store" },
    );
  }
  return served;
}

function requireBoolean(value: unknown, field: string, code: string): void {
  if (value !== undefined && typeof value !== "boolean") {
    throw new ValidationError(code, `startTableServer: ${field} must be a boolean`, { field });
  }
}

/** Listens with HTTP, or HTTPS with `tls`; resolves once listening, rejects if it cannot. */
async function listen(
  tls: TableServerTls | undefined,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  port: number,
  host: string,
): Promise<Server> {
  const server = tls === undefined ? createServer(handler) : createTlsServer(tlsOptions(tls), handler);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

/** Checks the TLS option before anything listens: PEM text or bytes that Node's TLS accepts as a pair. */
function tlsOptions(tls: TableServerTls): SecureContextOptions {
  const pem = (value: unknown) => typeof value === "string" || Buffer.isBuffer(value);
  if (typeof tls !== "object" || tls === null || !pem(tls.cert) || !pem(tls.key)) {
    throw new ValidationError("server-tls", "startTableServer: tls needs cert and key, PEM text or bytes", {
      field: "tls",
    });
  }
  const options = { cert: tls.cert, key: tls.key };
  try {
    createSecureContext(options);
  } catch (error) {
    throw new ValidationError(
      "server-tls",
      `startTableServer: tls cert and key are not a usable PEM pair (${error instanceof Error ? error.message : String(error)})`,
      { field: "tls", cause: error },
    );
  }
  return options;
}
