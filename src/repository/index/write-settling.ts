import type { WireEntity } from "../../store/table-store.js";
import { type CopyRef, indexOf, refKey } from "../core/copy-ref.js";
import { readEntity } from "../core/entity-layout.js";
import type { Intent } from "../core/intent-log.js";
import { reconcileEntity } from "./copy-reconciler.js";
import { claimStamp, type Removable, stampedBy, versionStamp } from "./copy-stamp.js";
import type { IndexedTarget } from "./indexed-target.js";
import { entityMember } from "./list-index.js";
import { reconcileList } from "./list-reconciler.js";

/**
 * The write was refused: nothing of it stands but the copies it claimed. Those cannot simply be
 * deleted: a concurrent write of the same entity may hold the same values (a claim that found the
 * entity's own copy), and a claim whose answer was lost is in no list. The copies the intent names
 * are brought in line with the entity as stored now instead (removing only this write's claims), then
 * the intent is dropped; if that fails, the intent stays for `repairIndexes`.
 */
export async function abandonIntent(target: IndexedTarget, wire: WireEntity, intent: Intent): Promise<void> {
  const { model, table, runner, intents } = target;
  try {
    await reconcileEntity(
      model,
      runner,
      table,
      wire.partitionKey,
      wire.rowKey,
      intent.refs,
      "remote",
      stampedBy(claimStamp(intent)),
    );
  } catch {
    return;
  }
  await intents.complete(intent);
}

/**
 * The rule that ends every write's work on copies elsewhere (a write's or a delete's): after its last
 * copy request, the entity is read again. Unless it is still the state this write left (`etag`; for
 * a delete `undefined`, no entity), another writer changed it meanwhile, and this write's copy
 * requests may have landed after that writer's (a removal of a copy the newer version made again, a
 * list membership taken back): every copy and index entity elsewhere the intent names is brought
 * in line with the entity as read now (each reconciler reads again after it writes). The writer of
 * the newest version finds its own; any older writer's late request is followed by its own read.
 * The copies it removes are only those this write made or claimed, or that the version it replaced
 * (`priorEtag`) made: a copy another write made or claimed is that write's (copy-stamp.ts).
 */
export async function settleRace(
  target: IndexedTarget,
  partitionKey: string,
  rowKey: string,
  etag: string | undefined,
  intent: Intent,
  priorEtag: string | undefined,
): Promise<void> {
  const { model, table, runner } = target;
  const now = await readEntity(model, runner, table, partitionKey, rowKey);
  if (now?.etag === etag) return;
  await reconcileEntity(
    model,
    runner,
    table,
    partitionKey,
    rowKey,
    intent.refs,
    "remote",
    writeRemovable(intent, etag, priorEtag),
  );
  const member = entityMember(model, runner, table, partitionKey, rowKey);
  for (const ref of intent.refs)
    if (indexOf(model, ref).list) await reconcileList(model, runner, ref, [member]);
}

/** What a write's settling may remove: its claims and its version's copies, and the replaced version's. */
export function writeRemovable(
  intent: Intent,
  etag: string | undefined,
  priorEtag: string | undefined,
): Removable {
  return stampedBy(
    claimStamp(intent),
    etag === undefined ? undefined : versionStamp(etag),
    priorEtag === undefined ? undefined : versionStamp(priorEtag),
  );
}

export function union(a: readonly CopyRef[], b: readonly CopyRef[]): CopyRef[] {
  const seen = new Map<string, CopyRef>();
  for (const ref of [...a, ...b]) seen.set(refKey(ref), ref);
  return [...seen.values()];
}
