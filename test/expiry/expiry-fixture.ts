import { Column, Entity, type TableContext, type TableContextOptions } from "../../src/index.js";
import { freshContext } from "../fixtures/context.js";
import type { StoreKind } from "../support/stores.js";
import { VirtualClock } from "../support/virtual-clock.js";

/**
 * A session that expires: a same-partition index, an index in another table, a list index and a
 * summary, so every read form and the summary see expiry. The clock is a `VirtualClock` (starting
 * at the epoch), moved by virtual sleeps: nothing waits for real time.
 */
@Entity({
  table: "ExpSessions",
  partitionKey: "{user}",
  rowKey: "s_{id}",
  expiresAt: "validUntil",
  indexes: {
    byToken: { rowKey: "tok_{token}" },
    byDevice: {
      table: "ExpSessionsByDevice",
      partitionKey: "{device}",
      rowKey: "{user}_{id}",
      project: ["token"],
    },
    byKind: { table: "ExpSessionsByKind", partitionKey: "{kind}", rowKey: "k", list: true },
  },
  summaries: { perUser: { rowKey: "summary", count: "sessions", sum: { weight: "weights" } } },
})
export class Session {
  @Column({ type: "String" }) user!: string;
  @Column({ type: "String" }) id!: string;
  @Column({ type: "String" }) token!: string;
  @Column({ type: "String" }) device!: string;
  @Column({ type: "String" }) kind!: string;
  @Column({ type: "Int32" }) weight!: number;
  @Column({ type: "DateTime" }) validUntil?: Date;
}

/** A session of `user` expiring at `at` ms on the virtual clock (never when `at` is undefined). */
export function session(user: string, id: string, at: number | undefined): Session {
  return Object.assign(new Session(), {
    user,
    id,
    token: `t-${user}-${id}`,
    device: `d-${id}`,
    kind: "web",
    weight: 1,
    ...(at === undefined ? {} : { validUntil: new Date(at) }),
  });
}

/** A context on fresh tables whose clock is a virtual one. */
export async function expiryContext(
  kind: StoreKind,
  entities: Function[] = [Session],
  options: Partial<TableContextOptions> = {},
) {
  const clock = new VirtualClock();
  const fresh = await freshContext(kind, entities as never, { ...options, now: clock.now });
  return { ...fresh, clock, advance: (ms: number) => advance(clock, ms) };
}

/** Moves the virtual clock `ms` on. */
export function advance(clock: VirtualClock, ms: number): Promise<void> {
  return clock.run(() => clock.sleep(ms));
}

export type { TableContext };
