import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { refKey } from "../core/copy-ref.js";
import type { Intent } from "../core/intent-log.js";
import { claimStamp, stampedBy, versionStamp } from "./copy-stamp.js";
import type { IndexedTarget } from "./indexed-target.js";
import { syncList } from "./list-membership.js";
import type { RemoteProtocol, RemoteStep } from "./remote-protocol.js";
import { claimOne, readCopy, removeCopy, upsertCopy, writeUniqueCopy } from "./unique-claims.js";
import { isDefinitive } from "./write-errors.js";
import { abandonIntent, settleRace, writeRemovable } from "./write-settling.js";

/**
 * Sends the remote-copy protocol of one write (`planRemoteProtocol`), step by step, holding what its
 * steps learn: the intent recorded, each claim's ETag, each copy as read after the commit. `row` is
 * the entity as written (only its keys for a delete); `left` is what the commit left: the version
 * committed, `undefined` after a delete (no entity).
 */
export class RemoteProtocolRun {
  readonly #target: IndexedTarget;
  readonly #row: WireEntity;
  readonly #protocol: RemoteProtocol;
  readonly #left: () => string | undefined;
  #intent: Intent | undefined;
  /** Set once the write's before-steps were undone (or found not safe to undo): never twice. */
  #abandoned = false;
  readonly #claimEtags = new Map<string, string>();
  /** The copies read after the commit (a kept value's, a replaced one's), by `refKey`. */
  readonly #read = new Map<string, StoredEntity | undefined>();

  constructor(
    target: IndexedTarget,
    row: WireEntity,
    protocol: RemoteProtocol,
    left: () => string | undefined,
  ) {
    this.#target = target;
    this.#row = row;
    this.#protocol = protocol;
    this.#left = left;
  }

  /** Sends one step (a step of an explained, unknown state has nothing to send). */
  async run(step: RemoteStep): Promise<void> {
    const { model, table, runner, intents } = this.#target;
    const row = this.#row;
    const { priorEtag } = this.#protocol;
    switch (step.kind) {
      case "insert intent":
        this.#intent = await intents.record(model.type, table, row.partitionKey, row.rowKey, step.refs);
        return;
      case "claim":
        this.#claimEtags.set(
          refKey(step.ref),
          await claimOne(model, runner, row, step.ref, claimStamp(this.#own())),
        );
        return;
      case "upsert copy":
        return upsertCopy(model, runner, row, step.ref, versionStamp(this.#version()));
      case "get kept copy":
      case "get replaced copy":
        if (step.ref !== undefined) this.#read.set(refKey(step.ref), await readCopy(runner, step.ref));
        return;
      case "replace copy": {
        // Conditional on the claim's ETag (a new value), or on the copy as read after the commit (a kept one).
        const key = refKey(step.ref);
        const claimEtag = this.#claimEtags.get(key);
        const version = this.#version();
        return writeUniqueCopy(
          model,
          runner,
          row,
          step.ref,
          versionStamp(version),
          writeRemovable(this.#own(), version, priorEtag),
          claimEtag === undefined ? { read: this.#read.get(key) } : { claimEtag },
        );
      }
      case "remove replaced copy": {
        if (step.ref === undefined) return;
        // Only a copy the replaced version made (copy-stamp.ts): the entity written again meanwhile may have made it again.
        const replaced = stampedBy(priorEtag === undefined ? undefined : versionStamp(priorEtag));
        return removeCopy(model, runner, row, step.ref, this.#read.get(refKey(step.ref)), replaced);
      }
      case "update list":
        return syncList(model, runner, step.change);
      case "settle":
        return settleRace(this.#target, row.partitionKey, row.rowKey, this.#left(), this.#own(), priorEtag);
      case "delete intent":
        return intents.complete(this.#own());
    }
  }

  /**
   * The steps before the commit, in order. A failure after the intent was recorded abandons the write
   * (see `abandon`) and is rethrown: a write whose copies elsewhere are begun with others' (a bulk
   * batch) undoes its own as it fails.
   */
  async begin(): Promise<void> {
    try {
      for (const step of this.#protocol.before) await this.run(step);
    } catch (error) {
      await this.abandon(error);
      throw error;
    }
  }

  /** The steps after the commit, in order. */
  async finish(): Promise<void> {
    for (const step of this.#protocol.after) await this.run(step);
  }

  /**
   * The write failed after its intent was recorded: only a definite refusal proves nothing was written
   * (a claim or commit whose answer was lost may have been), and only then is it undone (`onRefusal`);
   * otherwise the intent stays for repair.
   */
  async abandon(error: unknown): Promise<void> {
    const intent = this.#intent;
    if (intent === undefined || this.#abandoned) return;
    this.#abandoned = true;
    if (!isDefinitive(error)) return;
    if (this.#protocol.onRefusal === "drop") await this.#target.intents.complete(intent);
    else await abandonIntent(this.#target, this.#row, intent);
  }

  #own(): Intent {
    return this.#intent as Intent;
  }

  #version(): string {
    return this.#left() as string;
  }
}
