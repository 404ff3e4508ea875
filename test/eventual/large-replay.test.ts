/**
 * A `db.eventually` upsert of an entity with large (Blob-backed) columns, crashed before each of its
 * requests (table and blob alike), then `db.repair` in a fresh context: the entity reads back
 * byte-exact as the version before or the one written (the written one once its intent was
 * recorded), and its container holds exactly one blob per large value. A repair pass that leaves
 * the intent for later (another repairer holds its claim) keeps the blobs the intent points at.
 */
import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { CrashAfterStore } from "../compose/crash-after-store.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { rowsOf } from "../indexes/helpers.js";
import { CrashDoc, crashDoc } from "../large/crash-models.js";

/** The blob names in the container of `CrashDocs` under `prefix`. */
async function blobNames(store: TableStore, prefix: string): Promise<string[]> {
  const container = `tablekit-${prefix.toLowerCase()}crashdocs`;
  const names: string[] = [];
  let continuation: string | undefined;
  do {
    const page = await (store.blobs as NonNullable<TableStore["blobs"]>).list(container, { continuation });
    names.push(...page.items.map((item) => item.name));
    continuation = page.continuation;
  } while (continuation !== undefined);
  return names;
}

/** The blobs of the document `f/<name>`. */
async function ownedBlobs(store: TableStore, prefix: string, name: string): Promise<string[]> {
  const owner = `k${Buffer.from("f").toString("base64url")}/k${Buffer.from(name).toString("base64url")}/`;
  return (await blobNames(store, prefix)).filter((blob) => blob.startsWith(owner));
}

/** What the test compares: every value, bytes as plain arrays (byte-exact, readable on failure). */
function view(doc: CrashDoc | undefined) {
  if (doc === undefined) return undefined;
  return {
    version: doc.version,
    text: doc.text,
    content: doc.content === undefined ? undefined : Array.from(doc.content),
  };
}

/** Large values a version holds (v1 has text and content; v3 has text only, so content's blob goes). */
const valuesOf = (doc: CrashDoc) => (doc.text === undefined ? 0 : 1) + (doc.content === undefined ? 0 : 1);

describe.each(blobStores)(
  "db.eventually upsert with large columns, crashed, then repaired, on %s",
  (_n, kind) => {
    it("reads back byte-exact with one blob per value after a crash before each request", async () => {
      const store = new CrashAfterStore(kind.create());
      const prefix = uniquePrefix("evl");
      const open = () => new TableContext({ store, tablePrefix: prefix, retry: false });
      await open().ensureTables(CrashDoc);
      const oldDoc = (k: number) => crashDoc("f", `n${k}`, 1);
      const newDoc = (k: number) => crashDoc("f", `n${k}`, 3);
      const move = (db: TableContext, k: number) => db.eventually((tx) => tx.upsert(newDoc(k)));

      // The intents table is made by the first eventual write (a refused upsert, the table, the upsert
      // again): made here, so the shape counted below is the one every write of the loop sends.
      await open().eventually((tx) => tx.upsert(crashDoc("f", "warm", 3)));
      // The request shape when nothing fails.
      await open().repository(CrashDoc).insert(oldDoc(0));
      store.disarm();
      await move(open(), 0);
      const total = store.requests;
      const shape = [...store.log];
      const intentAt = shape.findIndex((what) => what.endsWith("TablekitIntents"));
      expect(intentAt, `the intent is recorded: ${shape.join(", ")}`).toBeGreaterThan(0);
      // Uploaded once, before the intent; the replaced blobs removed by the live write itself.
      expect(shape.filter((what) => what.startsWith("blob.put")).length, shape.join(", ")).toBe(1);
      expect(shape.findIndex((what) => what.startsWith("blob.put"))).toBeLessThan(intentAt);
      expect(await ownedBlobs(store.inner, prefix, "n0"), shape.join(", ")).toHaveLength(1);

      for (let k = 0; k <= total; k++) {
        store.disarm();
        await open()
          .repository(CrashDoc)
          .insert(oldDoc(k + 1));
        store.arm(k);
        await move(open(), k + 1).catch(() => undefined);
        const where = `crash before request ${k + 1} of ${total} (${shape.join(", ")})`;
        // The crash point was reached (the last pass, k = total, is the write that does not crash).
        if (k < total) expect(store.requests, `${where}: sent ${store.log.join(", ")}`).toBeGreaterThan(k);
        store.disarm();
        const repairer = new TableContext({ store: store.inner, tablePrefix: prefix });
        await repairer.repair({ minIntentAgeMs: 0, entities: [CrashDoc] });
        const got = await repairer.repository(CrashDoc).get({ folder: "f", name: `n${k + 1}` });
        // Once the intent is recorded the upsert happens; before, it may not.
        const allowed = k > intentAt ? [newDoc(k + 1)] : [oldDoc(k + 1), newDoc(k + 1)];
        expect(allowed.map(view), where).toContainEqual(view(got));
        const owned = await ownedBlobs(store.inner, prefix, `n${k + 1}`);
        expect(owned, `${where}: one blob per large value`).toHaveLength(valuesOf(got as CrashDoc));
      }
    });

    it("the instance an eventual step wrote, written again, uploads its values again", async () => {
      const store = new CrashAfterStore(kind.create());
      const prefix = uniquePrefix("eva");
      const open = () => new TableContext({ store, tablePrefix: prefix, retry: false });
      await open().ensureTables(CrashDoc);
      const db = open();
      const doc = crashDoc("f", "again", 3);
      await db.eventually((tx) => tx.upsert(doc));
      const [uploaded] = await ownedBlobs(store.inner, prefix, "again");
      expect(uploaded).toBeDefined();
      // The step's row, uploaded ahead, is taken once: this write prepares its own (a new blob name).
      store.disarm();
      await db.repository(CrashDoc).upsert(doc);
      expect(
        store.log.filter((what) => what.startsWith("blob.put")),
        store.log.join(", "),
      ).toHaveLength(1);
      const owned = await ownedBlobs(store.inner, prefix, "again");
      expect(owned).toHaveLength(1);
      expect(owned).not.toContain(uploaded);
      const got = await open().repository(CrashDoc).get({ folder: "f", name: "again" });
      expect(view(got)).toEqual(view(crashDoc("f", "again", 3)));
    });

    it("a repair pass that leaves the intent (claimed by another repairer) keeps the blobs it points at", async () => {
      const store = new CrashAfterStore(kind.create());
      const prefix = uniquePrefix("evk");
      const open = () => new TableContext({ store, tablePrefix: prefix, retry: false });
      await open().ensureTables(CrashDoc);
      await open()
        .repository(CrashDoc)
        .insert(crashDoc("f", "kept", 1));
      store.disarm();
      await open().eventually((tx) => tx.upsert(crashDoc("f", "kept", 3)));
      const intentAt = store.log.findIndex((what) => what.endsWith("TablekitIntents"));
      store.disarm();
      await open()
        .repository(CrashDoc)
        .insert(crashDoc("f", "kept2", 1));
      // The process dies right after recording the intent: the blobs are uploaded, no step applied.
      store.arm(intentAt + 1);
      await expect(open().eventually((tx) => tx.upsert(crashDoc("f", "kept2", 3)))).rejects.toThrow();
      store.disarm();
      // Another repairer holds the intent's claim: this pass leaves the intent, and must leave its blobs.
      const intents = `${prefix}TablekitIntents`;
      const [intent] = await rowsOf(store.inner, intents);
      expect(intent?.partitionKey).toMatch(/^~eventually~/);
      const claim = { partitionKey: intent?.partitionKey as string, rowKey: intent?.rowKey as string };
      await store.inner.update(
        intents,
        { ...claim, leaseUntil: new Date(Date.now() + 3_600_000) },
        "merge",
        "*",
      );
      const repairer = new TableContext({ store: store.inner, tablePrefix: prefix });
      const first = await repairer.repair({ minIntentAgeMs: 0, entities: [CrashDoc] });
      expect(first.eventually?.skipped).toBe(1);
      // The claim runs out: the next pass replays the intent onto blobs that are still there.
      await store.inner.update(intents, { ...claim, leaseUntil: new Date(0) }, "merge", "*");
      const second = await repairer.repair({ minIntentAgeMs: 0, entities: [CrashDoc] });
      expect(second.eventually?.replayed).toBe(1);
      const got = await repairer.repository(CrashDoc).get({ folder: "f", name: "kept2" });
      expect(view(got)).toEqual(view(crashDoc("f", "kept2", 3)));
    });
  },
);
