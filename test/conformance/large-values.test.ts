/**
 * Large values (`@Column({ large: true })`): kept in Blob Storage (MemoryStore's own blobs, or
 * Azurite's Blob service), read back byte-exact, the old blob removed after a replace or delete,
 * and the blobs a crash leaves removed by repair, never a referenced one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  Column,
  Entity,
  MemoryStore,
  SchemaError,
  StoreError,
  TableContext,
  ValidationError,
} from "../../src/index.js";
import type { BlobStore, TableStore } from "../../src/store/table-store.js";
import { blobStores as stores, uniquePrefix } from "../fixtures/context.js";
import { expectRejection, failureOf } from "../support/rejection.js";
import { seededRandom, testSeed } from "../support/seeded-random.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

@Entity({ table: "LargeDocs", partitionKey: "{folder}", rowKey: "{name}" })
class Doc {
  @Column({ type: "String" }) folder!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Int32" }) version!: number;
  @Column({ type: "Binary", large: true }) content?: Uint8Array;
  @Column({ type: "String", large: true }) text?: string;
  @Column({ type: "Json", large: true, name: "meta" }) metadata?: { tags: string[]; n: number };
}

const doc = (name: string, values: Partial<Doc> = {}): Doc =>
  Object.assign(new Doc(), { folder: "f+1 ü", name, version: 1, ...values });

const seed = testSeed(9107);

/** Seeded bytes, so a failure can be replayed. */
function bytes(size: number, salt: number): Uint8Array {
  const random = seededRandom(seed + salt);
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = Math.floor(random() * 256);
  return out;
}

const KIB = 1024;
const SIZES = [0, 1, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 5 * KIB * KIB];
const TEXT = `naïve café — 東京 🚀 ${"ü€𝄞".repeat(50_000)} end`;

/**
 * A store whose blobs the test can watch and break: counts downloads (and how many run at once),
 * fails blob deletes or the next table write on demand (a crash between a write's requests).
 */
class BlobHookStore extends StoreWrapper {
  gets = 0;
  getsInFlight = 0;
  maxGetsInFlight = 0;
  failBlobDeletes = false;
  failNextWrite = false;
  noBlobs = false;
  #held: Array<() => void> = [];
  #holdGets = false;
  #whenHeld: { count: number; resolve: () => void } | undefined;

  constructor(inner: TableStore) {
    super(inner);
  }

  override get blobs(): BlobStore | undefined {
    const inner = this.inner.blobs;
    if (inner === undefined || this.noBlobs) return undefined;
    return {
      put: (c, n, d) => inner.put(c, n, d),
      list: (c, o) => inner.list(c, o),
      deleteContainer: (c) => inner.deleteContainer(c),
      delete: async (c, n) => {
        if (this.failBlobDeletes) throw new StoreError("crash before the old blob's removal");
        return inner.delete(c, n);
      },
      get: async (c, n) => {
        this.gets++;
        this.getsInFlight++;
        this.maxGetsInFlight = Math.max(this.maxGetsInFlight, this.getsInFlight);
        if (this.#holdGets) {
          await new Promise<void>((resolve) => {
            this.#held.push(resolve);
            if (this.#whenHeld && this.#held.length >= this.#whenHeld.count) this.#whenHeld.resolve();
          });
        }
        try {
          return await inner.get(c, n);
        } finally {
          this.getsInFlight--;
        }
      },
    };
  }

  /** Holds every download until `release`; resolves once `count` are held at once. */
  holdGets(count: number): Promise<void> {
    this.#holdGets = true;
    return new Promise((resolve) => {
      this.#whenHeld = { count, resolve };
    });
  }

  release(): void {
    this.#holdGets = false;
    for (const go of this.#held.splice(0)) go();
  }

  protected override around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    const write = ["insert", "upsert", "update", "delete"].includes(request.method);
    if (write && this.failNextWrite) {
      this.failNextWrite = false;
      // Not a service answer: the process "died" after the blob upload, before the row write.
      return Promise.reject(new SchemaError("crash after the blob upload"));
    }
    return send();
  }
}

async function setup(kind: (typeof stores)[number][1]) {
  const store = new BlobHookStore(kind.create());
  const prefix = uniquePrefix("lg");
  const db = new TableContext({ store, tablePrefix: prefix });
  await db.ensureTables(Doc);
  const table = `${prefix}LargeDocs`;
  const container = `tablekit-${table.toLowerCase()}`;
  const blobs = store.inner.blobs as BlobStore;
  const listBlobs = async (): Promise<string[]> => (await blobs.list(container)).items.map((b) => b.name);
  const row = (name: string) => store.inner.getEntity(table, "f+1 ü", name);
  return { store, db, docs: db.repository(Doc), table, container, blobs, listBlobs, row };
}

describe.each(stores)("large values on %s", (_name, kind) => {
  it(`read back byte-exact: Binary of ${SIZES.join(", ")} bytes, multi-byte text, Json (seed ${seed})`, async () => {
    const { docs, row } = await setup(kind);
    const written = SIZES.map((size, i) => doc(`b${i}`, { content: bytes(size, i) }));
    written.push(doc("text", { text: TEXT, metadata: { tags: ["ä", "🚀"], n: 3 } }));
    written.push(doc("empty-text", { text: "" }));
    for (const d of written) await docs.insert(d);

    for (const d of written) {
      const read = (await docs.get(d)) as Doc;
      // Compared as bytes, not element by element (5 MiB through a deep equality would crawl).
      expect(read.content === undefined).toBe(d.content === undefined);
      if (d.content !== undefined) {
        const same = Buffer.from(read.content as Uint8Array).equals(Buffer.from(d.content));
        expect(same, `${d.name}: ${d.content.byteLength} bytes`).toBe(true);
      }
      expect(read.text).toBe(d.text);
      expect(read.metadata).toEqual(d.metadata);
      expect(read.version).toBe(1);
    }
    const all = await docs.find({ folder: "f+1 ü" }).toArray();
    expect(all.map((d) => d.name).sort()).toEqual(written.map((d) => d.name).sort());
    const five = all.find((d) => d.name === `b${SIZES.length - 1}`) as Doc;
    expect(
      Buffer.from(five.content as Uint8Array).equals(Buffer.from(bytes(5 * KIB * KIB, SIZES.length - 1))),
    ).toBe(true);
    const many = await docs.getMany([
      { folder: "f+1 ü", name: "text" },
      { folder: "f+1 ü", name: "b1" },
    ]);
    expect(many[0]?.text).toBe(TEXT);
    expect(Buffer.from(many[1]?.content as Uint8Array)).toEqual(Buffer.from(bytes(1, 1)));

    // The row keeps a reference, never the value.
    const stored = await row(`b${SIZES.length - 1}`);
    expect(String(stored?.content)).toMatch(
      /^tkblob1:5242880:k[A-Za-z0-9_-]*\/k[A-Za-z0-9_-]*\/content\/[0-9a-f-]{36}$/,
    );
    expect(String((await row("text"))?.meta)).toMatch(/^tkblob1:\d+:.*\/meta\//);
  });

  it("a replace writes a new blob and removes the old one; a merge without the column keeps it; delete removes all", async () => {
    const { docs, listBlobs, row } = await setup(kind);
    const first = doc("a", { content: bytes(10, 1), text: "one" });
    await docs.insert(first);
    const before = await listBlobs();
    expect(before).toHaveLength(2);

    await docs.upsert(doc("a", { content: bytes(20, 2), text: "two" }));
    const afterUpsert = await listBlobs();
    expect(afterUpsert).toHaveLength(2);
    expect(afterUpsert.filter((name) => before.includes(name))).toEqual([]);

    // A replace without `text` drops it: its blob goes too.
    const read = (await docs.get(first)) as Doc;
    read.text = undefined;
    read.version = 2;
    await docs.update(read);
    expect(await listBlobs()).toHaveLength(1);
    expect((await row("a"))?.text).toBeUndefined();

    // patch of a small column merges: the large value stays.
    await docs.patch({ folder: "f+1 ü", name: "a" }, { version: 3 });
    expect(await listBlobs()).toHaveLength(1);
    expect(Buffer.from((await docs.get(first))?.content as Uint8Array)).toEqual(Buffer.from(bytes(20, 2)));
    // patch of the large column replaces its blob.
    await docs.patch({ folder: "f+1 ü", name: "a" }, { content: bytes(5, 5) });
    const [only] = await listBlobs();
    expect(only).toBeDefined();
    expect(String((await row("a"))?.content)).toContain(only as string);

    expect(await docs.delete({ folder: "f+1 ü", name: "a" })).toBe(true);
    expect(await listBlobs()).toEqual([]);
  });

  it("a failed insert (key taken) and a stale update remove their new blobs", async () => {
    const { docs, listBlobs } = await setup(kind);
    await docs.insert(doc("a", { text: "first" }));
    const stale = (await docs.get(doc("a"))) as Doc;
    await docs.upsert(doc("a", { text: "second" }));
    await failureOf(() => docs.insert(doc("a", { text: "dup" })));
    stale.text = "stale";
    await failureOf(() => docs.update(stale));
    expect(await listBlobs()).toHaveLength(1);
    expect((await docs.get(doc("a")))?.text).toBe("second");
  });

  it("crashes between a write's requests leave only unreferenced blobs, which repair removes", async () => {
    const { store, db, docs, listBlobs, row } = await setup(kind);
    await docs.insert(doc("keep", { text: "kept", content: bytes(3, 3) }));
    await docs.insert(doc("old", { text: "old" }));

    // Crash after the blob upload, before the row: the new blob is unreferenced, the old row intact.
    store.failNextWrite = true;
    await failureOf(() => docs.upsert(doc("old", { text: "never" })));
    // Crash after the row, before the old blob's removal.
    store.failBlobDeletes = true;
    await docs.upsert(doc("old", { text: "new" }));
    store.failBlobDeletes = false;
    // Crash after the blob upload of an insert.
    store.failNextWrite = true;
    await failureOf(() => docs.insert(doc("ghost", { text: "ghost" })));

    expect(await listBlobs()).toHaveLength(3 + 3);
    // Blobs younger than minIntentAgeMs (an hour) may belong to writes in flight: untouched.
    expect(await db.repairLargeValues(Doc, { minIntentAgeMs: 3_600_000 })).toEqual({
      blobsChecked: 0,
      blobsDeleted: 0,
    });
    // db.repair() runs the large-value kind over the classes this context has seen.
    const report = await db.repair();
    expect(report.largeValues).toEqual({ blobsChecked: 6, blobsDeleted: 3 });

    // Every remaining blob is referenced, and every reference has its blob.
    const remaining = await listBlobs();
    const references = await Promise.all(
      ["keep", "old"].flatMap((name) => ["text", "content"].map(async (p) => (await row(name))?.[p])),
    );
    const referenced = references
      .filter((r) => r !== undefined)
      .map((r) => String(r).split(":").slice(2).join(":"));
    expect(remaining.sort()).toEqual(referenced.sort());
    expect((await docs.get(doc("old")))?.text).toBe("new");
    expect((await docs.get(doc("keep")))?.text).toBe("kept");
    expect(await docs.get(doc("ghost"))).toBeUndefined();
    expect((await db.repairLargeValues(Doc)).blobsDeleted).toBe(0);
  });

  it("reads of many entities download at most 8 blobs at once; a select without the large columns downloads none", async () => {
    const { store, docs } = await setup(kind);
    for (let i = 0; i < 20; i++) await docs.insert(doc(`d${String(i).padStart(2, "0")}`, { text: `t${i}` }));

    const held = store.holdGets(8);
    const reading = docs.find({ folder: "f+1 ü" }).toArray();
    await held;
    store.release();
    const all = await reading;
    expect(all.map((d) => d.text)).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`));
    expect(store.maxGetsInFlight).toBe(8);

    const gets = store.gets;
    const small = await docs.find({ folder: "f+1 ü" }).select("name", "version").toArray();
    expect(small).toHaveLength(20);
    await docs.get(doc("d01"), { select: ["version"] });
    expect(store.gets).toBe(gets);
    const selected = await docs.get(doc("d01"), { select: ["text"] });
    expect(selected?.text).toBe("t1");
    expect(store.gets).toBe(gets + 1);
  });

  it("bulk writes and db.transaction carry large values: each blob uploaded before its row", async () => {
    const { docs, db, listBlobs } = await setup(kind);
    const result = await docs.bulkInsert([doc("b1", { text: "one" }), doc("b2", { content: bytes(10, 1) })]);
    expect(result).toMatchObject({ written: 2, failed: [] });
    await db.transaction((tx) => {
      tx.insert(doc("t1", { text: "in a transaction" }));
      tx.delete(Doc, { folder: "f+1 ü", name: "b1" });
    });
    expect((await docs.get(doc("t1")))?.text).toBe("in a transaction");
    expect((await docs.get(doc("b2")))?.content).toEqual(bytes(10, 1));
    expect(await docs.get(doc("b1"))).toBeUndefined();
    // One blob per value still referenced: b1's was removed after the transaction committed.
    expect(await listBlobs()).toHaveLength(2);
    await docs.bulkDelete([doc("b2"), doc("t1")]);
    expect(await listBlobs()).toEqual([]);
  });

  it("refuses what cannot carry large values, before any request", async () => {
    const { docs, store } = await setup(kind);
    const filtered = await failureOf(() => docs.find({ folder: "f+1 ü" }).where("text", "eq", "x"));
    expect(filtered).toBeInstanceOf(ValidationError);
    expect(filtered).toMatchObject({ rule: "large-filter" });
    await expectRejection(docs.insert(doc("x", { text: "\uD800 lone" })), ValidationError);
    await expectRejection(docs.insert(doc("x", { content: "not bytes" as never })), ValidationError);
    store.noBlobs = true;
    expect(() => new TableContext({ store, tablePrefix: uniquePrefix("nb") }).repository(Doc)).toThrow(
      ValidationError,
    );
    const long = new TableContext({ store: kind.create(), tablePrefix: `P${"x".repeat(45)}` });
    expect(() => long.repository(Doc)).toThrow(SchemaError);
  });
});

@Entity({ table: "LargeLogs{at:month}", partitionKey: "{source}", rowKey: "{id}" })
class LargeLog {
  @Column({ type: "String" }) source!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "String", large: true }) body!: string;
}

describe.each(stores)("large values in tables per period on %s", (_name, kind) => {
  it("each period's table has its container; dropTables removes the table, then its blobs", async () => {
    const store = kind.create();
    const prefix = uniquePrefix("lp");
    const db = new TableContext({ store, tablePrefix: prefix });
    const logs = db.repository(LargeLog);
    const log = (id: string, at: string) =>
      Object.assign(new LargeLog(), {
        source: "web",
        id,
        at: new Date(at),
        body: `${id} ${"x".repeat(70_000)}`,
      });
    await logs.insert(log("a", "2026-10-05T00:00:00Z"));
    await logs.insert(log("b", "2026-11-05T00:00:00Z"));
    const blobs = store.blobs as BlobStore;
    const october = `tablekit-${prefix.toLowerCase()}largelogs202610`;
    const novemberContainer = `tablekit-${prefix.toLowerCase()}largelogs202611`;
    expect((await blobs.list(october)).items).toHaveLength(1);
    const november = await logs.period(new Date("2026-11-01T00:00:00Z")).find({ source: "web" }).toArray();
    expect(november.map((l) => l.body)).toEqual([`b ${"x".repeat(70_000)}`]);
    expect(await db.dropTables(LargeLog, { before: new Date("2026-11-01T00:00:00Z") })).toEqual([
      `${prefix}LargeLogs202610`,
    ]);
    expect((await blobs.list(october)).items).toEqual([]);
    expect((await blobs.list(novemberContainer)).items).toHaveLength(1);
    expect((await db.repairLargeValues(LargeLog)).blobsDeleted).toBe(0);
  });
});

describe("large values: schema rules", () => {
  it("large is for Binary, Json and String columns outside keys and indexes", () => {
    expect(() => {
      @Entity({ table: "LargeBad1", partitionKey: "{id}", rowKey: "" })
      class Bad {
        @Column({ type: "String" }) id!: string;
        // @ts-expect-error an Int32 column cannot be large
        @Column({ type: "Int32", large: true }) n!: number;
      }
      return Bad;
    }).toThrow(SchemaError);
    expect(() => {
      @Entity({ table: "LargeBad2", partitionKey: "{id}", rowKey: "" })
      class Bad {
        @Column({ type: "String", large: true }) id!: string;
      }
      return Bad;
    }).toThrow(SchemaError);
    // A large column in an index key is refused; next to an index, it composes.
    expect(() => {
      @Entity({
        table: "LargeBad3",
        partitionKey: "{id}",
        rowKey: "e_",
        indexes: { byX: { rowKey: "x_{body}" } },
      })
      class Bad {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "String", large: true }) body!: string;
      }
      return Bad;
    }).toThrow(SchemaError);
    expect(() => {
      @Entity({
        table: "LargeOk3",
        partitionKey: "{id}",
        rowKey: "e_",
        indexes: { byX: { rowKey: "x_{x}" } },
      })
      class Ok {
        @Column({ type: "String" }) id!: string;
        @Column({ type: "String" }) x!: string;
        @Column({ type: "String", large: true }) body!: string;
      }
      return Ok;
    }).not.toThrow();
  });

  it("a large column cannot be a data series (named in the error)", () => {
    const messageOf = (define: () => unknown): string => {
      try {
        define();
      } catch (error) {
        expect(error).toBeInstanceOf(SchemaError);
        return (error as SchemaError).message;
      }
      throw new Error("expected a SchemaError");
    };
    expect(
      messageOf(() => {
        @Entity({ table: "LargeBad6", partitionKey: "{id}", rowKey: "" })
        class Bad {
          @Column({ type: "String" }) id!: string;
          @Column({ type: "String", large: true, series: 3 }) parts!: string[];
        }
        return Bad;
      }),
    ).toContain("series");
  });

  it("MemoryStore keeps blobs in its file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tablekit-large-"));
    try {
      const file = join(dir, "store.jsonl");
      const first = new TableContext({ store: new MemoryStore({ file }) });
      await first.ensureTables(Doc);
      const value = bytes(100_000, 77);
      await first.repository(Doc).insert(doc("persisted", { content: value, text: TEXT }));
      await first.repository(Doc).upsert(doc("replaced", { text: "v1" }));
      await first.repository(Doc).upsert(doc("replaced", { text: "v2" }));

      const reopened = new TableContext({ store: new MemoryStore({ file }) });
      const read = (await reopened.repository(Doc).get(doc("persisted"))) as Doc;
      expect(Buffer.from(read.content as Uint8Array).equals(Buffer.from(value))).toBe(true);
      expect(read.text).toBe(TEXT);
      expect((await reopened.repository(Doc).get(doc("replaced")))?.text).toBe("v2");
      expect((await reopened.repairLargeValues(Doc)).blobsDeleted).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
