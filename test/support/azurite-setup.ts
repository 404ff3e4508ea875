/**
 * Vitest globalSetup: starts one in-memory Azurite Table service for the whole run (or uses
 * `TABLEKIT_TEST_CONNECTION_STRING`) and hands its connection string to tests via `provide`.
 * With `TABLEKIT_STORES` leaving Azurite out (e.g. `TABLEKIT_STORES=memory`), nothing is started.
 */
import type { TestProject } from "vitest/node";
import { startAzurite } from "../../scripts/azurite-process.js";
import { startTableServer } from "../../src/server/table-server.js";
import { selectedStoreNames } from "./store-selection.js";

/** Starts Azurite and `tablekit serve` (each when selected) and returns the teardown of both. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let stopServe = async () => {};
  if (selectedStoreNames().includes("serve")) {
    const server = await startTableServer({ port: 0 });
    project.provide("serveConnectionString", server.connectionString);
    stopServe = () => server.close();
  } else {
    project.provide("serveConnectionString", "");
  }
  const stopAzurite = await setupAzurite(project);
  return async () => {
    await stopServe();
    await stopAzurite();
  };
}

async function setupAzurite(project: TestProject): Promise<() => Promise<void>> {
  if (!selectedStoreNames().includes("azurite")) {
    // Tests that need Azurite are skipped with a reason (see stores.ts); an empty string makes a stray use fail loudly.
    project.provide("azuriteConnectionString", "");
    return async () => {};
  }
  const external = process.env.TABLEKIT_TEST_CONNECTION_STRING;
  if (external) {
    project.provide("azuriteConnectionString", external);
    return async () => {};
  }
  const azurite = await startAzurite({ root: project.config.root });
  project.provide("azuriteConnectionString", azurite.connectionString);
  return () => azurite.stop();
}
