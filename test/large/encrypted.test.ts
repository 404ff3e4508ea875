/**
 * A large column that is encrypted (`@Column({ large: true, encrypt: true })`): its bytes are sealed
 * in the envelope of encrypted properties before the blob upload and opened after the download; the
 * row's reference is sealed like any encrypted property. Neither the blob nor the row holds the value.
 */
import { describe, expect, it } from "vitest";
import {
  Column,
  EncryptionError,
  Entity,
  localKeys,
  TableContext,
  ValidationError,
} from "../../src/index.js";
import type { TableStore } from "../../src/store/table-store.js";
import { blobStores, uniquePrefix } from "../fixtures/context.js";
import { CountingStore } from "../support/counting-store.js";
import { readAll } from "../support/read-all.js";
import { failureOf } from "../support/rejection.js";

@Entity({ table: "LgSealed", partitionKey: "{folder}", rowKey: "d_{name}" })
class SealedDoc {
  @Column({ type: "String" }) folder!: string;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "Binary", large: true, encrypt: true }) scan?: Uint8Array;
  @Column({ type: "String", large: true, encrypt: true }) notes?: string;
  @Column({ type: "String", large: true }) open?: string;
}

const MARKER = "confidential-marker";
const keys = localKeys({ k1: Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) % 256) }, "k1");

/** A value bigger than a row could hold, with the marker text in it (so clear text would show). */
const scanOf = (n: number) =>
  Uint8Array.from(Buffer.from(`${MARKER} ${n} `.repeat(5000) + "é".repeat(40_000), "utf8"));
const notesOf = (n: number) => `${MARKER} notes ${n} — ${"ü".repeat(70_000)}`;

const docOf = (name: string, n: number) =>
  Object.assign(new SealedDoc(), {
    folder: "f",
    name,
    scan: scanOf(n),
    notes: notesOf(n),
    open: `${MARKER} open ${n}`,
  });

async function blobsOf(raw: TableStore, prefix: string): Promise<Map<string, Uint8Array>> {
  const container = `tablekit-${prefix.toLowerCase()}lgsealed`;
  const blobs = raw.blobs;
  if (!blobs) throw new Error("no blob side");
  const found = new Map<string, Uint8Array>();
  let continuation: string | undefined;
  do {
    const page = await blobs.list(container, { continuation });
    for (const item of page.items)
      found.set(item.name, (await blobs.get(container, item.name)) as Uint8Array);
    continuation = page.continuation;
  } while (continuation);
  return found;
}

const holdsMarker = (bytes: Uint8Array) => Buffer.from(bytes).includes(MARKER);

describe.each(blobStores)("an encrypted large column on %s", (_name, kind) => {
  /** A fresh prefix on a store of this kind, its `SealedDoc` table made, a context holding `keys`. */
  async function sealedWorld() {
    const raw = kind.create();
    const prefix = uniquePrefix("le");
    const db = new TableContext({ store: raw, tablePrefix: prefix, encryption: { keys } });
    await db.ensureTables(SealedDoc);
    return { raw, prefix, docs: db.repository(SealedDoc) };
  }

  it("round-trips byte-exact; the blob and the row hold only ciphertext; replaced blobs are removed", async () => {
    const { raw, prefix, docs } = await sealedWorld();
    await docs.insert(docOf("a", 1));
    const read = await docs.getOrThrow({ folder: "f", name: "a" });
    expect(Buffer.from(read.scan as Uint8Array).equals(Buffer.from(scanOf(1)))).toBe(true);
    expect(read.notes).toBe(notesOf(1));
    expect(read.open).toBe(`${MARKER} open 1`);

    const blobs = await blobsOf(raw, prefix);
    expect(blobs.size).toBe(3);
    // Only the plain large column's blob holds the text; the encrypted ones are envelopes (version 1).
    const clear = [...blobs].filter(([, bytes]) => holdsMarker(bytes)).map(([name]) => name.split("/")[2]);
    expect(clear).toEqual(["open"]);
    for (const [name, bytes] of blobs)
      if (!name.includes("/open/")) expect(bytes[0], `${name} is an envelope`).toBe(1);
    // The row's references of encrypted columns are sealed too (Binary), not `tkblob1:` text.
    const [row] = (await readAll(raw, `${prefix}LgSealed`)).filter((r) => r.rowKey === "d_a");
    expect(row?.scan).toBeInstanceOf(Uint8Array);
    expect(row?.notes).toBeInstanceOf(Uint8Array);
    expect(String(row?.open)).toMatch(/^tkblob1:/);

    // A replace uploads new sealed blobs and removes the old ones; a query reads them back too.
    await docs.upsert(docOf("a", 2));
    await docs.insert(docOf("b", 3));
    const all = await docs.find({ folder: "f" }).toArray();
    expect(all.map((d) => [d.name, d.notes])).toEqual([
      ["a", notesOf(2)],
      ["b", notesOf(3)],
    ]);
    expect((await blobsOf(raw, prefix)).size).toBe(6);
    expect(await docs.delete({ folder: "f", name: "a" })).toBe(true);
    expect((await blobsOf(raw, prefix)).size).toBe(3);
  });

  it("a sealed blob moved under another value's name does not open: EncryptionError", async () => {
    const { raw, prefix, docs } = await sealedWorld();
    await docs.insert(docOf("a", 1));
    await docs.insert(docOf("b", 2));
    const blobs = await blobsOf(raw, prefix);
    const scanOfA = [...blobs.keys()].find(
      (n) => n.includes("/scan/") && n.startsWith(`k${b64("f")}/k${b64("d_a")}`),
    );
    const scanOfB = [...blobs.keys()].find(
      (n) => n.includes("/scan/") && n.startsWith(`k${b64("f")}/k${b64("d_b")}`),
    );
    if (!scanOfA || !scanOfB) throw new Error(`no scan blob of a or b: ${[...blobs.keys()].join(", ")}`);
    const container = `tablekit-${prefix.toLowerCase()}lgsealed`;
    await raw.blobs?.put(container, scanOfB, blobs.get(scanOfA) as Uint8Array);
    const error = await failureOf(() => docs.get({ folder: "f", name: "b" }));
    expect(error).toBeInstanceOf(EncryptionError);
    expect(error.message).toMatch(/does not verify/);
  });

  it("reencrypt re-seals the blobs too: after it, a context without the old key reads every value", async () => {
    const raw = kind.create();
    const prefix = uniquePrefix("le");
    const k1 = Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) % 256);
    const k2 = Uint8Array.from({ length: 32 }, (_, i) => (i * 11 + 5) % 256);
    const old = new TableContext({
      store: raw,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k1 }, "k1") },
    });
    await old.ensureTables(SealedDoc);
    await old.repository(SealedDoc).insert(docOf("a", 1));
    await old.repository(SealedDoc).insert(docOf("b", 2));
    const before = await blobsOf(raw, prefix);

    const rotated = new TableContext({
      store: raw,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k2, k1 }, "k2") },
    });
    // Two documents, two encrypted large values each (the plain large column's blob is not sealed).
    expect(await rotated.reencrypt(SealedDoc, { scan: true })).toEqual({
      scanned: 2,
      reencrypted: 2,
      skipped: 0,
      blobsResealed: 4,
    });
    // Same names, new bytes: rows still point at them, and no blob was added or lost.
    const after = await blobsOf(raw, prefix);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const changed = [...after].filter(
      ([name, bytes]) => !Buffer.from(bytes).equals(Buffer.from(before.get(name) as Uint8Array)),
    );
    expect(changed.map(([name]) => name.split("/")[2]).sort()).toEqual(["notes", "notes", "scan", "scan"]);

    const onlyNew = new TableContext({
      store: raw,
      tablePrefix: prefix,
      encryption: { keys: localKeys({ k2 }, "k2") },
    });
    const docs = await onlyNew.repository(SealedDoc).find({ folder: "f" }).toArray();
    expect(
      docs.map((d) => [
        d.name,
        d.notes,
        Buffer.from(d.scan as Uint8Array).equals(Buffer.from(scanOf(d.name === "a" ? 1 : 2))),
      ]),
    ).toEqual([
      ["a", notesOf(1), true],
      ["b", notesOf(2), true],
    ]);
    // Nothing is stale any more: a second run re-seals nothing.
    expect(await rotated.reencrypt(SealedDoc, { scan: true })).toMatchObject({
      reencrypted: 0,
      blobsResealed: 0,
    });
  });

  it("without keys, a write is refused before any request", async () => {
    const counter = new CountingStore(kind.create());
    const db = new TableContext({ store: counter, tablePrefix: uniquePrefix("le") });
    const docOnlyScan = Object.assign(new SealedDoc(), { folder: "f", name: "x", scan: scanOf(1) });
    const error = await failureOf(() => db.repository(SealedDoc).insert(docOnlyScan));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toMatch(/encrypt/);
    expect(counter.requests).toBe(0);
  });
});

function b64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}
