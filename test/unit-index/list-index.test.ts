import { describe, expect, it } from "vitest";
import type { CopyRef } from "../../src/repository/core/copy-ref.js";
import { type ListState, memberOf, planListChange, shardsOf } from "../../src/repository/index/list-index.js";
import type { StoredEntity, WireEntity } from "../../src/store/table-store.js";
import { ServiceLimits } from "../../src/util/service-limits.js";

const ref: CopyRef = { index: "byName", table: "T", partitionKey: "Sales", rowKey: "lastname_Jones" };
const member = (i: number) => memberOf("Sales", `empid_${String(i).padStart(6, "0")}`);
const members = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => member(from + i));

/** The service's entity size formula for the string properties of a row. */
function entityBytes(row: WireEntity): number {
  let bytes = 4 + (row.partitionKey.length + row.rowKey.length) * 2;
  for (const [name, value] of Object.entries(row)) {
    if (typeof value === "string" && name !== "partitionKey" && name !== "rowKey")
      bytes += 8 + name.length * 2 + 4 + value.length * 2;
  }
  return bytes;
}

describe("index entity lists", () => {
  it("splits a large list over properties within the 64 KiB limit and the entity under 1 MiB", () => {
    const state: ListState = {
      ref,
      shards: [{ rowKey: ref.rowKey, etag: "e1", members: members(0, 15_000) }],
    };
    const [action] = planListChange(state, "E@1", { add: member(15_000) });
    expect(action?.kind).toBe("update");
    const row = (action as { entity: WireEntity }).entity;
    const chunks = Object.keys(row).filter((k) => /^m\d+$/.test(k));
    expect(chunks.length).toBeGreaterThan(1);
    for (const k of chunks)
      expect((row[k] as string).length).toBeLessThanOrEqual(ServiceLimits.maxStringLength);
    expect(entityBytes(row)).toBeLessThan(ServiceLimits.maxEntityBytes);
    // Reading the row back gives every member, in order.
    const read = shardsOf(ref, [{ ...row, etag: "e2" } as StoredEntity]);
    expect(read[0]?.members).toEqual(members(0, 15_001));
  });

  it("opens a new shard entity when the last one is full", () => {
    const state: ListState = {
      ref,
      shards: [{ rowKey: ref.rowKey, etag: "e1", members: members(0, 30_000) }],
    };
    const actions = planListChange(state, "E@1", { add: member(30_000) });
    expect(actions).toHaveLength(1);
    expect(actions[0]?.kind).toBe("insert");
    expect((actions[0] as { entity: WireEntity }).entity.rowKey).toBe(`${ref.rowKey}~001`);
  });

  it("removes a member, deletes a shard that becomes empty, and ignores members already there", () => {
    const a = member(1);
    const b = member(2);
    const two: ListState = { ref, shards: [{ rowKey: ref.rowKey, etag: "e1", members: [a, b] }] };
    expect(planListChange(two, "E@1", { add: a })).toEqual([]);
    const removeA = planListChange(two, "E@1", { remove: a });
    expect(removeA.map((x) => x.kind)).toEqual(["update"]);
    expect(removeA[0]).toMatchObject({ ifMatch: "e1" });
    const one: ListState = { ref, shards: [{ rowKey: ref.rowKey, etag: "e2", members: [b] }] };
    expect(planListChange(one, "E@1", { remove: b })).toEqual([
      { kind: "delete", partitionKey: "Sales", rowKey: ref.rowKey, ifMatch: "e2" },
    ]);
    // Moving a member between shards of two values is a remove on one list and an add on another.
    const empty: ListState = { ref, shards: [] };
    expect(planListChange(empty, "E@1", { add: a }).map((x) => x.kind)).toEqual(["insert"]);
  });
});
