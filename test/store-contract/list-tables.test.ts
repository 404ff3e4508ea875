import { describe, expect, test } from "vitest";
import { uniquePrefix } from "../support/table-names.js";
import { storeKinds } from "./contract.js";

describe.each(storeKinds)("store contract (listTables) on $name", (kind) => {
  test("lists the existing tables with a prefix, ascending, case as created", async () => {
    const store = kind.create();
    // The trailing letter keeps this prefix from being a prefix of another test's (`…1` vs `…10`).
    const prefix = `${uniquePrefix("L")}x`;
    const names = [`${prefix}Logs202612`, `${prefix}Logs202601`, `${prefix}Logs202611`, `${prefix}Other`];
    for (const name of names) await store.createTable(name);
    try {
      expect(await store.listTables(`${prefix}Logs`)).toEqual([
        `${prefix}Logs202601`,
        `${prefix}Logs202611`,
        `${prefix}Logs202612`,
      ]);
      expect(await store.listTables(prefix)).toEqual([...names].sort());
      expect(await store.listTables(`${prefix}Nothing`)).toEqual([]);
      await store.deleteTable(`${prefix}Logs202611`);
      expect(await store.listTables(`${prefix}Logs`)).toEqual([`${prefix}Logs202601`, `${prefix}Logs202612`]);
      // Without a prefix every table is listed, ours among them.
      expect(await store.listTables()).toEqual(expect.arrayContaining([`${prefix}Other`]));
    } finally {
      for (const name of names) await store.deleteTable(name);
    }
  });
});
