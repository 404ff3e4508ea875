/**
 * Blind indexes (issue 32): a lookup by an encrypted email through a same-partition unique index whose
 * key holds its blind value, against the same lookup through an index over the email in clear; the
 * same for `where({ email })` in a 1,000-row partition (filtered on the blind value, decrypted, exact);
 * and what one blind-indexed column adds to a write (an HMAC) over the same column encrypted only.
 * Measured on MemoryStore (the client's own cost) and on loopback Azurite (a real round trip).
 */
import "reflect-metadata";
import {
  AzureStore,
  Column,
  Entity,
  localKeys,
  MemoryStore,
  TableContext,
  type TableStore,
} from "../src/index.js";
import { compare, compareSamples, sampleAsync, timeAsync } from "./measure.js";
import type { Recorder } from "./parallel-reads.js";

const USERS = 1_000;

@Entity({
  table: "BenchBlindUsers",
  partitionKey: "{tenant}",
  rowKey: "u_{id:6}",
  indexes: { byEmail: { rowKey: "e_{email}" } },
})
class BlindUser {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", encrypt: true, blindIndex: true }) email!: string;
}

@Entity({
  table: "BenchPlainUsers",
  partitionKey: "{tenant}",
  rowKey: "u_{id:6}",
  indexes: { byEmail: { rowKey: "e_{email}" } },
})
class PlainUser {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String" }) email!: string;
}

/** Write cost: one encrypted column with a blind index… */
@Entity({ table: "BenchBlindWrites", partitionKey: "{tenant}", rowKey: "u_{id:6}" })
class BlindWrite {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", encrypt: true, blindIndex: true }) email!: string;
}

/** …and the same column encrypted without one. */
@Entity({ table: "BenchSealedWrites", partitionKey: "{tenant}", rowKey: "u_{id:6}" })
class SealedWrite {
  @Column({ type: "String" }) tenant!: string;
  @Column({ type: "Int32" }) id!: number;
  @Column({ type: "String" }) name!: string;
  @Column({ type: "String", encrypt: true }) email!: string;
}

const ms = (v: number) => `${v.toFixed(3)} ms`;
const us = (v: number) => `${v.toFixed(1)} µs`;

const emailOf = (i: number) => `user${i}@example.com`;
const values = (i: number) => ({ tenant: "t", id: i, name: `User ${i}`, email: emailOf(i) });

async function measureOn(label: string, store: TableStore, record: Recorder, quick: boolean): Promise<void> {
  const encryption = {
    keys: localKeys({ k1: new Uint8Array(32).fill(7) }, "k1"),
    blindIndexKey: new Uint8Array(32).fill(9),
  };
  const db = new TableContext({ store, encryption, tablePrefix: `bi${Date.now().toString(36)}` });
  await db.ensureTables(BlindUser, PlainUser, BlindWrite, SealedWrite);
  const blind = db.repository(BlindUser);
  const plain = db.repository(PlainUser);
  await blind.bulkUpsert(Array.from({ length: USERS }, (_, i) => Object.assign(new BlindUser(), values(i))));
  await plain.bulkUpsert(Array.from({ length: USERS }, (_, i) => Object.assign(new PlainUser(), values(i))));
  const n = quick ? 200 : 1_000;
  const rounds = quick ? 3 : 5;
  const pick = (i: number) => emailOf((i * 7919) % USERS);

  const get = await compareSamples(
    rounds,
    () => sampleAsync(n, (i) => blind.index("byEmail").get({ tenant: "t", email: pick(i) })),
    () => sampleAsync(n, (i) => plain.index("byEmail").get({ tenant: "t", email: pick(i) })),
  );
  record(
    `${label}: index get by blind value / by plain same-partition index`,
    get.a.wall,
    get.b.wall,
    ms,
    1.3,
  );
  record(`${label}: the same, client CPU`, get.a.cpu, get.b.cpu, us, undefined);

  const scans = quick ? 20 : 100;
  const where = await compare(
    rounds,
    () =>
      timeAsync(scans, (i) =>
        blind
          .find({ tenant: "t" })
          .where({ email: pick(i) })
          .toArray(),
      ),
    () =>
      timeAsync(scans, (i) =>
        plain
          .find({ tenant: "t" })
          .where({ email: pick(i) })
          .toArray(),
      ),
  );
  record(`${label}: where({ email }) in a 1,000-row partition, blind / plain`, where.a, where.b, ms, 1.3);

  const writes = await compareSamples(
    rounds,
    () =>
      sampleAsync(n, (i) =>
        db.repository(BlindWrite).upsert(Object.assign(new BlindWrite(), values(i % 500))),
      ),
    () =>
      sampleAsync(n, (i) =>
        db.repository(SealedWrite).upsert(Object.assign(new SealedWrite(), values(i % 500))),
      ),
  );
  record(
    `${label}: upsert, 1 encrypted column with / without blind index`,
    writes.a.wall,
    writes.b.wall,
    ms,
    undefined,
  );
  record(`${label}: the same, client CPU`, writes.a.cpu, writes.b.cpu, us, undefined);
}

/** `npm run bench -- --only blind-index`. */
export async function blindIndexBench(
  connectionString: string,
  record: Recorder,
  quick: boolean,
): Promise<void> {
  console.log("\n[blind-index] lookups by an encrypted email, and the write cost of its blind index");
  await measureOn("MemoryStore", new MemoryStore(), record, quick);
  await measureOn("Azurite", AzureStore.fromConnectionString(connectionString), record, quick);
}
