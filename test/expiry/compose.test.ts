import { describe, expect, it } from "vitest";
import { Column, Entity, localKeys } from "../../src/index.js";
import { blobStores } from "../fixtures/context.js";
import { expiryContext } from "./expiry-fixture.js";

const encryption = {
  keys: localKeys({ k1: Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + 3) % 256) }, "k1"),
};

/** Expiry with a table per month, hash buckets, a large value and an encrypted column, all at once. */
@Entity({
  table: "ExpLogs{at:month}",
  partitionKey: "{device}_{seq:hash:4}",
  rowKey: "l_{seq:8}",
  expiresAt: "until",
  summaries: { perBucket: { rowKey: "summary", count: "n" } },
})
class LogLine {
  @Column({ type: "String" }) device!: string;
  @Column({ type: "Int32" }) seq!: number;
  @Column({ type: "DateTime" }) at!: Date;
  @Column({ type: "Binary", large: true }) payload?: Uint8Array;
  @Column({ type: "String", encrypt: true }) note?: string;
  @Column({ type: "DateTime" }) until?: Date;
}

const line = (seq: number, until: number | undefined) =>
  Object.assign(new LogLine(), {
    device: "d1",
    seq,
    at: new Date(Date.UTC(2026, seq % 2, 3)),
    payload: Uint8Array.from({ length: 64 }, (_, i) => (seq + i) % 256),
    note: `secret ${seq}`,
    ...(until === undefined ? {} : { until: new Date(until) }),
  });

describe.each(blobStores)("expiry composes (%s)", (_name, kind) => {
  it("a table per period, hash buckets, large and encrypted values: hidden, then swept in every period", async () => {
    const { db, advance } = await expiryContext(kind, [LogLine], { encryption });
    const logs = db.repository(LogLine);
    for (let seq = 0; seq < 8; seq++) await logs.insert(line(seq, seq < 5 ? 100 : undefined));
    await advance(100);
    const key = (seq: number) => ({ device: "d1", seq, at: new Date(Date.UTC(2026, seq % 2, 3)) });
    expect(await logs.get(key(0))).toBeUndefined();
    expect((await logs.get(key(6)))?.note).toBe("secret 6");
    expect(await db.sweepExpired(LogLine)).toEqual({ deleted: 5 });
    expect(await db.sweepExpired(LogLine)).toEqual({ deleted: 0 });
    for (let seq = 0; seq < 8; seq++) {
      const found = await logs.get(key(seq));
      expect(found?.seq, `seq ${seq}`).toBe(seq < 5 ? undefined : seq);
    }
    expect(await db.verifyIndexes(LogLine)).toMatchObject({ missing: [], stale: [], orphans: [] });
    expect(await db.verifySummaries(LogLine)).toEqual([]);
    // The deleted entities' blobs went with them.
    expect((await db.repair()).largeValues).toMatchObject({ blobsDeleted: 0 });
  });
});
