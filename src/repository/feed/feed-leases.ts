import { randomUUID } from "node:crypto";
import { ConcurrencyError, EntityAlreadyExistsError, EntityNotFoundError } from "../../errors.js";
import { quoteString } from "../../query/odata.js";
import type { StoredEntity, TableStore } from "../../store/table-store.js";
import { isTableNotFound } from "../pipeline/period-table-store.js";
import type { FeedDeps } from "./feed-deps.js";
import { FEED_LEASE_SLOTS } from "./feed-slots.js";

/** tablekit's table of consumer groups (PartitionKey: `<entity table>:<group>`; RowKeys `s:<slot>` and `c:<consumer>`). */
export const FEED_GROUPS_TABLE = "TablekitFeedGroups";
/** How long a consumer holds a slot (and counts as live) without renewing; a consumer that dies is taken over after it. */
export const FEED_LEASE_MS = 30_000;

const SLOT_PREFIX = "s:";
const CONSUMER_PREFIX = "c:";

/**
 * One consumer's leases in its group: the group's rows are one partition of `TablekitFeedGroups`, a
 * slot row per lease slot (`Position`: the slot's checkpoint, `Owner`, `LeaseUntil` in ms of the
 * context's clock) and a heartbeat row per live consumer. Every change of a slot row is conditional
 * on its ETag, so one consumer holds a slot at a time; a consumer takes free or expired slots up to
 * its fair share (the slots over the live consumers, rounded up) and gives back what is over it.
 */
export class GroupLeases {
  readonly #table: string;
  readonly #partitionKey: string;
  readonly #deps: FeedDeps;
  readonly #owner = randomUUID();
  /** The slots this consumer holds, by number: their rows as last written. */
  readonly #held = new Map<number, StoredEntity>();

  constructor(logical: string, group: string, deps: FeedDeps) {
    this.#table = deps.runner.tableName(FEED_GROUPS_TABLE);
    this.#partitionKey = `${logical}:${group}`;
    this.#deps = deps;
  }

  /**
   * Renews this consumer's heartbeat, gives back slots over its fair share, renews the rest and takes
   * free or expired ones up to its share. Returns the held slots' numbers and checkpoints.
   */
  async balance(): Promise<Map<number, string | undefined>> {
    const now = this.#deps.runner.now();
    await this.#heartbeat(now);
    const slots = new Map<number, StoredEntity>();
    let live = 0;
    for (const row of await this.#rows()) {
      if (row.rowKey.startsWith(CONSUMER_PREFIX)) {
        if (leaseUntilOf(row) > now) live++;
        // A dead consumer's heartbeat is dropped by whoever sees it (conditional: a revived one keeps it).
        else await this.#delete(row);
      } else if (row.rowKey.startsWith(SLOT_PREFIX))
        slots.set(Number(row.rowKey.slice(SLOT_PREFIX.length)), row);
    }
    const share = Math.ceil(FEED_LEASE_SLOTS / Math.max(live, 1));
    this.#held.clear();
    const mine = [...slots.entries()].filter(([, row]) => row.Owner === this.#owner);
    for (const [slot, row] of mine.slice(share)) await this.#write(slot, row, { Owner: "", LeaseUntil: 0 });
    for (const [slot, row] of mine.slice(0, share)) {
      // Renewed once half the lease has passed (a conflict: another consumer took it meanwhile).
      if (leaseUntilOf(row) - now < FEED_LEASE_MS / 2) await this.#take(slot, row, now);
      else this.#held.set(slot, row);
    }
    for (let slot = 0; slot < FEED_LEASE_SLOTS && this.#held.size < share; slot++) {
      const row = slots.get(slot);
      if (row === undefined) await this.#take(slot, undefined, now);
      else if (row.Owner !== this.#owner && leaseUntilOf(row) <= now) await this.#take(slot, row, now);
    }
    const held = new Map<number, string | undefined>();
    for (const [slot, row] of [...this.#held.entries()].sort(([a], [b]) => a - b))
      held.set(slot, positionOf(row));
    return held;
  }

  /** Stores a slot's position after a handled batch, if this consumer still holds the slot. */
  async checkpoint(slot: number, position: string): Promise<void> {
    const row = this.#held.get(slot);
    if (row === undefined) return;
    const now = this.#deps.runner.now();
    if (
      !(await this.#write(slot, row, {
        Position: position,
        Owner: this.#owner,
        LeaseUntil: now + FEED_LEASE_MS,
      }))
    )
      this.#held.delete(slot);
  }

  /** Gives every slot and the heartbeat up (so others take over at once); failures leave them to expire. */
  async release(): Promise<void> {
    const held = [...this.#held.entries()];
    this.#held.clear();
    await Promise.all(
      held.map(([slot, row]) => this.#write(slot, row, { Owner: "", LeaseUntil: 0 }).catch(() => false)),
    );
    const table = this.#table;
    await this.#deps.runner
      .run("deleteEntity", table, (s) =>
        s.delete(table, this.#partitionKey, CONSUMER_PREFIX + this.#owner, "*"),
      )
      .catch(() => undefined);
  }

  /** Takes (or renews) a slot: inserted when it has no row yet, else updated on the ETag read. */
  async #take(slot: number, row: StoredEntity | undefined, now: number): Promise<void> {
    const lease = { Owner: this.#owner, LeaseUntil: now + FEED_LEASE_MS };
    if (row !== undefined) {
      await this.#write(slot, row, lease);
      return;
    }
    const table = this.#table;
    const created = { partitionKey: this.#partitionKey, rowKey: slotKey(slot), Position: "", ...lease };
    try {
      const { etag } = await this.#deps.runner.run("createEntity", table, (s) => s.insert(table, created));
      this.#held.set(slot, { ...created, etag });
    } catch (error) {
      if (!(error instanceof EntityAlreadyExistsError)) throw error;
    }
  }

  /** Merges `values` into a slot row on its ETag; `false` (and the slot dropped) when another consumer changed it. */
  async #write(slot: number, row: StoredEntity, values: LeaseValues): Promise<boolean> {
    const table = this.#table;
    const update = { partitionKey: this.#partitionKey, rowKey: slotKey(slot), ...values };
    try {
      const { etag } = await this.#deps.runner.run("updateEntity", table, (s) =>
        s.update(table, update, "merge", row.etag),
      );
      if (values.Owner === this.#owner) this.#held.set(slot, { ...row, ...update, etag });
      return true;
    } catch (error) {
      if (!(error instanceof ConcurrencyError) && !(error instanceof EntityNotFoundError)) throw error;
      this.#held.delete(slot);
      return false;
    }
  }

  async #heartbeat(now: number): Promise<void> {
    const table = this.#table;
    const row = {
      partitionKey: this.#partitionKey,
      rowKey: CONSUMER_PREFIX + this.#owner,
      LeaseUntil: now + FEED_LEASE_MS,
    };
    const send = () => this.#deps.runner.run("upsertEntity", table, (s) => s.upsert(table, row, "replace"));
    try {
      await send();
    } catch (error) {
      if (!isTableNotFound(error)) throw error;
      await this.#deps.runner.run("createTable", table, (s) => s.createTable(table));
      await send();
    }
  }

  async #rows(): Promise<StoredEntity[]> {
    const table = this.#table;
    const rows: StoredEntity[] = [];
    let continuation: Awaited<ReturnType<TableStore["queryPage"]>>["continuation"];
    do {
      const page = await this.#deps.runner.run("listEntities", table, (s) =>
        s.queryPage(table, { filter: `PartitionKey eq ${quoteString(this.#partitionKey)}`, continuation }),
      );
      rows.push(...page.items);
      continuation = page.continuation;
    } while (continuation !== undefined);
    return rows;
  }

  async #delete(row: StoredEntity): Promise<void> {
    const table = this.#table;
    await this.#deps.runner
      .run("deleteEntity", table, (s) => s.delete(table, row.partitionKey, row.rowKey, row.etag))
      .catch(() => undefined);
  }
}

/** What a slot row's update sets: its lease, and after a handled batch its checkpoint. */
interface LeaseValues {
  Owner: string;
  LeaseUntil: number;
  Position?: string;
}

function slotKey(slot: number): string {
  return SLOT_PREFIX + String(slot).padStart(2, "0");
}

function leaseUntilOf(row: StoredEntity): number {
  const value = row.LeaseUntil;
  return typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : 0;
}

function positionOf(row: StoredEntity): string | undefined {
  const position = row.Position;
  return typeof position === "string" && position !== "" ? position : undefined;
}
