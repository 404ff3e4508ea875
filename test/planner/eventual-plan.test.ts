/**
 * An eventual transaction (`db.eventually`) runs one plan: the versions read, the large values
 * uploaded and the intent recorded before; the steps applied in order as its commit (each through
 * its class); the intent removed after. The requests it sends, recorded in order, follow the plan
 * `explainEventually` renders from the same steps before anything is sent.
 */
import { describe, expect, it } from "vitest";
import { Column, Entity, StoreError, TableContext, type WriteStep } from "../../src/index.js";
import { INTENTS_TABLE } from "../../src/repository/core/intent-log.js";
import { explainEventually } from "../../src/repository/facade/eventual/eventual-plan.js";
import type { EventualTransaction } from "../../src/repository/facade/eventual/eventual-transaction.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { RecordingStore } from "../support/recording-store.js";
import type { StoreRequest } from "../support/store-wrapper.js";

@Entity({ table: "EvPlanPlain", partitionKey: "{group}", rowKey: "{id}" })
class Plain {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Int32" }) n!: number;
}

@Entity({
  table: "EvPlanIndexed",
  partitionKey: "{group}",
  rowKey: "item_{id}",
  indexes: { byColor: { rowKey: "color_{color}_{id}" } },
})
class Indexed {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) color!: string;
}

@Entity({ table: "EvPlanLarge", partitionKey: "{group}", rowKey: "{id}" })
class Large {
  @Column({ type: "String" }) group!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "Binary", large: true }) body?: Uint8Array;
}

/** The store request a step outside the commit stands for. */
function methodOf(step: WriteStep): string {
  if (step.request.startsWith("get")) return "getEntity";
  if (step.request.startsWith("putBlob")) return "putBlob";
  // An intent is recorded with an upsert (its id is random: a retry must not fail on its own row).
  if (step.request === "insert intent") return "upsert";
  if (step.request === "delete intent") return "delete";
  return step.request;
}

/** A recording store that fails one request (a fault: the eventual call rejects and leaves its intent). */
class FailingStore extends RecordingStore {
  fail: ((request: StoreRequest) => boolean) | undefined;

  protected override around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    if (this.fail?.(request)) {
      this.fail = undefined;
      this.sent.push({ method: request.method, table: request.table });
      return Promise.reject(new StoreError("injected fault", { statusCode: 503 }));
    }
    return super.around(request, send);
  }
}

type Kind = (typeof blobStores)[number][1];

const plain = (id: string, n: number) => Object.assign(new Plain(), { group: "g", id, n });
const large = (id: string) => Object.assign(new Large(), { group: "g", id, body: Uint8Array.from([1, 2]) });

async function setup(kind: Kind) {
  const store = new FailingStore(kind.create());
  const prefix = uniquePrefix();
  const db = new TableContext({ store, tablePrefix: prefix, retry: false });
  await db.ensureTables(Plain, Indexed, Large);
  // Creates the intents table and the blob container; a stored entity for the upsert to replace.
  await db.eventually((tx) => {
    tx.insert(large("warm"));
  });
  await db.repository(Plain).insert(plain("2", 1));
  store.sent.length = 0;
  // Each operation is its class's write: the plain ones one request each (the upsert of a stored
  // entity an update on the version read), the indexed one its entity group transaction (with its
  // copy), the large one its row (the blob was uploaded before the intent).
  const applied = [
    { method: "insert", table: `${prefix}EvPlanPlain` },
    { method: "update", table: `${prefix}EvPlanPlain` },
    { method: "submitTransaction", table: `${prefix}EvPlanIndexed` },
    { method: "insert", table: `${prefix}EvPlanLarge` },
  ];
  const expand = (steps: WriteStep[]) =>
    steps.flatMap((step) =>
      step.phase === "commit" ? applied : [{ method: methodOf(step), table: step.table }],
    );
  return { store, prefix, db, intents: `${prefix}${INTENTS_TABLE}`, expand };
}

/** Four steps: a plain insert, an upsert of a stored entity, an indexed insert, a large insert; explained first. */
function build(tx: EventualTransaction, intents: string, store: RecordingStore): WriteStep[] {
  tx.insert(plain("1", 1));
  // Not read by this context: conditional on the version read before the intent.
  tx.upsert(plain("2", 2));
  tx.insert(Object.assign(new Indexed(), { group: "g", id: "1", color: "red" }));
  tx.insert(large("1"));
  const { steps } = explainEventually(tx.steps, intents);
  expect(store.sent, "explaining sends nothing").toEqual([]);
  return steps;
}

describe.each(blobStores)(
  "the plan of an eventual transaction is the requests it sends, on %s",
  (_name, kind) => {
    it("versions read, blob uploaded, intent recorded; each step through its class; intent removed", async () => {
      const { store, prefix, db, intents, expand } = await setup(kind);
      let steps: WriteStep[] = [];
      const result = await db.eventually((tx) => {
        steps = build(tx, intents, store);
      });
      expect(result.outcomes).toEqual(["applied", "applied", "applied", "applied"]);
      expect(steps.map((s) => `${s.phase} ${s.request} ${s.table}`)).toEqual([
        `before get (version) ${prefix}EvPlanPlain`,
        `before putBlob (body) tablekit-${prefix.toLowerCase()}evplanlarge`,
        `before insert intent ${intents}`,
        `commit eventual steps ${intents}`,
        `after delete intent ${intents}`,
      ]);
      const commit = steps[3] as WriteStep;
      // The intent's shard is drawn when the transaction runs: the plan names no partition the run may not use.
      expect(commit.partitionKey).toBeUndefined();
      expect(commit.operations).toEqual([
        { kind: "insert", rowKey: "1" },
        { kind: "upsert", rowKey: "2" },
        { kind: "insert", rowKey: "item_1" },
        { kind: "insert", rowKey: "1" },
      ]);
      expect(store.sent).toEqual(expand(steps));
      expect((await db.repository(Large).get({ group: "g", id: "1" }))?.body).toEqual(
        Uint8Array.from([1, 2]),
      );
    });

    it("a replay by repair: the same plan without the reads, uploads and record", async () => {
      const { store, prefix, db, intents, expand } = await setup(kind);
      let steps: WriteStep[] = [];
      // The first step's write fails: the call rejects and leaves its intent.
      store.fail = (request) => request.method === "insert" && request.table === `${prefix}EvPlanPlain`;
      await expect(
        db.eventually((tx) => {
          steps = build(tx, intents, store);
        }),
      ).rejects.toThrow("injected fault");
      store.sent.length = 0;
      const report = await db.repair();
      expect(report.eventually).toMatchObject({ replayed: 1, applied: 4, failed: 0 });
      // After the claim (a conditional merge of the intent row): the steps, then the intent removed.
      const claim = store.sent.findIndex((c) => c.method === "update" && c.table === intents);
      const end = store.sent.findIndex((c, i) => i > claim && c.method === "delete" && c.table === intents);
      expect(claim).toBeGreaterThanOrEqual(0);
      expect(store.sent.slice(claim + 1, end + 1)).toEqual(expand(steps.filter((s) => s.phase !== "before")));
      expect((await db.repository(Plain).get({ group: "g", id: "2" }))?.n).toBe(2);
    });
  },
);
