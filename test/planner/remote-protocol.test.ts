/**
 * The remote-copy protocol as data (`planRemoteProtocol`): the steps of a write whose copies live in
 * other partitions or tables, each derived here by hand from the protocol's rules (copy-stamp.ts,
 * issue 34): an intent naming every remote copy old and new; a claim before the commit for each
 * unique value the entity does not hold yet; after it, each copy written (a unique value's replaced
 * conditional on its claim, or on the copy read first when kept), each copy the replaced version made
 * read and removed, list entities elsewhere brought in line, the settle read, the intent removed.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity } from "../../src/index.js";
import type { CopyRef } from "../../src/repository/core/copy-ref.js";
import { planRemoteProtocol, type RemoteWrite } from "../../src/repository/index/remote-protocol.js";
import { getEntityModel } from "../../src/schema/entity-model.js";

@Entity({
  table: "ProtoItems",
  partitionKey: "{group}",
  rowKey: "{id}",
  indexes: {
    byCode: { table: "ProtoCodes", partitionKey: "c", rowKey: "{code}", unique: true },
    byTag: { partitionKey: "tag_{tag}", rowKey: "{group}_{id}", unique: false },
    byCity: { list: true, table: "ProtoCities", partitionKey: "{city}", rowKey: "city" },
  },
})
class Item {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) code!: string;
  @Column({ type: "String" }) tag!: string;
  @Column({ type: "String" }) city!: string;
}

const model = getEntityModel(Item);
const naming = { tableName: (table: string) => `x${table}` };
const code = (value: string): CopyRef => ({
  index: "byCode",
  table: "xProtoCodes",
  partitionKey: "c",
  rowKey: value,
});
const tag = (value: string): CopyRef => ({
  index: "byTag",
  table: "xProtoItems",
  partitionKey: `tag_${value}`,
  rowKey: "g_1",
});
const city: CopyRef = { index: "byCity", table: "xProtoCities", partitionKey: "Paris", rowKey: "city" };
const intents = { request: "insert intent", table: "xTablekitIntents" };
const at = (request: string, ref: CopyRef) => ({
  request,
  table: ref.table,
  partitionKey: ref.partitionKey,
  rowKey: ref.rowKey,
});
const settle = {
  kind: "settle",
  target: { request: "get (settle race)", table: "xProtoItems", partitionKey: "g", rowKey: "1" },
};
const dropIntent = { kind: "delete intent", target: { request: "delete intent", table: "xTablekitIntents" } };

function plan(write: Partial<RemoteWrite>) {
  return planRemoteProtocol({
    model,
    naming,
    table: "xProtoItems",
    partitionKey: "g",
    rowKey: "1",
    before: [],
    next: [],
    lists: [],
    priorEtag: undefined,
    unknown: false,
    ...write,
  });
}

describe("the remote-copy protocol as data", () => {
  it("an insert with a unique value: intent, claim; its copies, its list, settle, intent removed", () => {
    const change = { ref: city, add: "member" };
    const protocol = plan({ next: [code("C1"), tag("t"), city], lists: [change] });
    expect(protocol?.before).toEqual([
      { kind: "insert intent", refs: [code("C1"), tag("t"), city], target: intents },
      { kind: "claim", ref: code("C1"), target: at("claim (byCode)", code("C1")) },
    ]);
    expect(protocol?.after).toEqual([
      { kind: "replace copy", ref: code("C1"), target: at("replace copy (byCode)", code("C1")) },
      { kind: "upsert copy", ref: tag("t"), target: at("upsert copy (byTag)", tag("t")) },
      { kind: "update list", change, target: at("update list (byCity)", city) },
      settle,
      dropIntent,
    ]);
    expect(protocol?.onRefusal).toBe("reconcile");
  });

  it("an update keeping its unique value: no claim, the kept copy read before it is replaced", () => {
    const protocol = plan({ before: [code("C1"), tag("t")], next: [code("C1"), tag("u")], priorEtag: "W/1" });
    expect(protocol?.before).toEqual([
      { kind: "insert intent", refs: [code("C1"), tag("t"), tag("u")], target: intents },
    ]);
    expect(protocol?.after).toEqual([
      { kind: "get kept copy", ref: code("C1"), target: at("get kept copy (byCode)", code("C1")) },
      { kind: "replace copy", ref: code("C1"), target: at("replace copy (byCode)", code("C1")) },
      { kind: "upsert copy", ref: tag("u"), target: at("upsert copy (byTag)", tag("u")) },
      { kind: "get replaced copy", ref: tag("t"), target: at("get replaced copy (byTag)", tag("t")) },
      { kind: "remove replaced copy", ref: tag("t"), target: at("delete replaced copy (byTag)", tag("t")) },
      settle,
      dropIntent,
    ]);
    expect(protocol?.priorEtag).toBe("W/1");
  });

  it("an update changing its unique value: the new one claimed, the old one's copy read and removed", () => {
    const protocol = plan({ before: [code("C1")], next: [code("C2")], priorEtag: "W/1" });
    expect(protocol?.before).toEqual([
      { kind: "insert intent", refs: [code("C1"), code("C2")], target: intents },
      { kind: "claim", ref: code("C2"), target: at("claim (byCode)", code("C2")) },
    ]);
    expect(protocol?.after).toEqual([
      { kind: "replace copy", ref: code("C2"), target: at("replace copy (byCode)", code("C2")) },
      { kind: "get replaced copy", ref: code("C1"), target: at("get replaced copy (byCode)", code("C1")) },
      {
        kind: "remove replaced copy",
        ref: code("C1"),
        target: at("delete replaced copy (byCode)", code("C1")),
      },
      settle,
      dropIntent,
    ]);
  });

  it("a delete: every copy read and removed, its list left, and a refusal only drops the intent", () => {
    const change = { ref: city, remove: "member" };
    const protocol = plan({
      before: [code("C1"), tag("t"), city],
      lists: [change],
      priorEtag: "W/1",
      deletes: true,
    });
    expect(protocol?.before).toEqual([
      { kind: "insert intent", refs: [code("C1"), tag("t"), city], target: intents },
    ]);
    expect(protocol?.after).toEqual([
      { kind: "get replaced copy", ref: code("C1"), target: at("get replaced copy (byCode)", code("C1")) },
      { kind: "remove replaced copy", ref: code("C1"), target: at("delete copy (byCode)", code("C1")) },
      { kind: "get replaced copy", ref: tag("t"), target: at("get replaced copy (byTag)", tag("t")) },
      { kind: "remove replaced copy", ref: tag("t"), target: at("delete copy (byTag)", tag("t")) },
      { kind: "update list", change, target: at("update list (byCity)", city) },
      settle,
      dropIntent,
    ]);
    expect(protocol?.onRefusal).toBe("drop");
  });

  it("a delete of a state not known: each remote index may hold a copy; no copies at all: no protocol", () => {
    const protocol = plan({ unknown: true, deletes: true });
    const removals = protocol?.after.slice(0, -2).map((step) => [step.kind, step.target]);
    expect(removals).toEqual([
      ["get replaced copy", { request: "get replaced copy (byCode)", table: "xProtoCodes" }],
      ["remove replaced copy", { request: "delete copy (byCode)", table: "xProtoCodes" }],
      ["get replaced copy", { request: "get replaced copy (byTag)", table: "xProtoItems" }],
      ["remove replaced copy", { request: "delete copy (byTag)", table: "xProtoItems" }],
      ["get replaced copy", { request: "get replaced copy (byCity)", table: "xProtoCities" }],
      ["remove replaced copy", { request: "delete copy (byCity)", table: "xProtoCities" }],
    ]);
    expect(plan({})).toBeUndefined();
  });
});
