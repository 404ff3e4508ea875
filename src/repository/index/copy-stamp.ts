import { createHash } from "node:crypto";
import type { StoredEntity } from "../../store/table-store.js";
import { COPY_STAMP_PROPERTY } from "../../wire/system-properties.js";
import type { Intent } from "../core/intent-log.js";

export { COPY_STAMP_PROPERTY } from "../../wire/system-properties.js";

/**
 * Which write made a copy elsewhere, stamped on it: the entity version it reflects (a digest of the
 * entity's ETag, written after the commit: fixed in size, a wide entity's ETag lists its rows'), or, for a unique value claimed before the entity is written,
 * `claim:<intent id>`. Copies written before stamps existed have none.
 *
 * The one rule that reads it: a copy elsewhere is removed only by the write that made it or by the
 * write that replaced the version it reflects (a cleanup's or a reconciliation's request lands late:
 * it must not take away a copy another write made or claimed meanwhile), always conditional on the
 * copy's ETag as read with its stamp.
 */
export type Stamp = string;

const CLAIM_PREFIX = "claim:";

/** The stamp of a copy that reflects the entity version `etag`. */
export function versionStamp(etag: string): Stamp {
  return `v:${createHash("sha256").update(etag).digest("base64url")}`;
}

/** The stamp of a unique value claimed by the write that recorded `intent` (before its commit). */
export function claimStamp(intent: Pick<Intent, "rowKey">): Stamp {
  return `${CLAIM_PREFIX}${intent.rowKey}`;
}

/** The stamp a copy row carries, if any. */
export function stampOf(row: StoredEntity): Stamp | undefined {
  const stamp = row[COPY_STAMP_PROPERTY];
  return typeof stamp === "string" ? stamp : undefined;
}

function isClaim(stamp: Stamp | undefined): boolean {
  return stamp?.startsWith(CLAIM_PREFIX) === true;
}

/** Decides whether a copy with this stamp may be removed by the caller. */
export type Removable = (stamp: Stamp | undefined) => boolean;

/**
 * A write's removals: copies stamped by one of `own` (its claim, its committed version, the
 * version it replaced), or unstamped (written before stamps: nobody's claim in progress).
 */
export function stampedBy(...own: ReadonlyArray<Stamp | undefined>): Removable {
  const stamps = new Set(own.filter((s): s is Stamp => s !== undefined));
  return (stamp) => stamp === undefined || stamps.has(stamp);
}

/**
 * A repair's removals (an intent's replay, a scan): any copy but a claim of another write, which
 * only that write (or the replay of its intent) takes back. `intent`: the intent replayed.
 */
export function notClaimedByOthers(intent?: Pick<Intent, "rowKey">): Removable {
  const own = intent && claimStamp(intent);
  return (stamp) => !isClaim(stamp) || stamp === own;
}

/** True when a copy's stamp is one `writeCopy` leaves (another write's claim in progress). */
export function isOthersClaim(stamp: Stamp | undefined, removable: Removable): boolean {
  return isClaim(stamp) && !removable(stamp);
}
