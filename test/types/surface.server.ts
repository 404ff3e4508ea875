/**
 * Type tests: `startTableServer` takes only what it serves (a MemoryStore, a numeric port) and
 * answers the documented handle.
 */
import { expectTypeOf } from "vitest";
import { AzureStore, MemoryStore, startTableServer, type TableServer } from "../../src/index.js";

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
}
