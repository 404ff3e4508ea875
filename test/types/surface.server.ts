/**
 * Type tests: `startTableServer` takes only what it serves (a MemoryStore, a numeric port, an optional
 * TLS certificate and key, OAuth's one level) and answers the documented handle.
 */
import { expectTypeOf } from "vitest";
import {
  AzureStore,
  MemoryStore,
  startTableServer,
  type TableServer,
  type TableServerOAuth,
  type TableServerOptions,
} from "../../src/index.js";

export async function serverSurface(): Promise<void> {
  const server = await startTableServer({ port: 0, store: new MemoryStore(), host: "127.0.0.1" });
  expectTypeOf(server).toEqualTypeOf<TableServer>();
  expectTypeOf(server.url).toEqualTypeOf<string>();
  expectTypeOf(server.port).toEqualTypeOf<number>();
  expectTypeOf(server.connectionString).toEqualTypeOf<string>();
  expectTypeOf(server.close()).toEqualTypeOf<Promise<void>>();
  await startTableServer();
  // @ts-expect-error the server serves a MemoryStore, not another store
  await startTableServer({ store: AzureStore.fromConnectionString("UseDevelopmentStorage=true") });
  // @ts-expect-error the port is a number
  await startTableServer({ port: "10002" });
  // @ts-expect-error unknown option
  await startTableServer({ https: true });
  // HTTPS takes a certificate and its key, PEM text or bytes.
  await startTableServer({ tls: { cert: "-----BEGIN CERTIFICATE-----", key: Buffer.from("") } });
  // @ts-expect-error a certificate needs its key
  await startTableServer({ tls: { cert: "pem" } });
  // @ts-expect-error PEM text or bytes, not a path flag
  await startTableServer({ tls: { cert: true, key: "pem" } });
  // OAuth bearer tokens: one level, "basic" (claims checked, signature not), beside TLS.
  await startTableServer({ tls: { cert: "pem", key: "pem" }, oauth: "basic" });
  expectTypeOf<TableServerOAuth>().toEqualTypeOf<"basic">();
  expectTypeOf<TableServerOptions["oauth"]>().toEqualTypeOf<"basic" | undefined>();
  // @ts-expect-error only "basic": no other level exists
  await startTableServer({ tls: { cert: "pem", key: "pem" }, oauth: "full" });
  // @ts-expect-error a level name, not a switch
  await startTableServer({ tls: { cert: "pem", key: "pem" }, oauth: true });
  // Any YYYY-MM-DD x-ms-version, for SDKs newer than serve's list: a switch.
  await startTableServer({ skipApiVersionCheck: true });
  expectTypeOf<TableServerOptions["skipApiVersionCheck"]>().toEqualTypeOf<boolean | undefined>();
  // @ts-expect-error a switch, not a list of versions
  await startTableServer({ skipApiVersionCheck: ["2099-01-01"] });
}
