import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity } from "../../store/table-store.js";
import { COPY_INDEX_PROPERTY, type CopyRef, refKey } from "../core/copy-ref.js";
import { rowType } from "./copy-rows.js";
import { LIST_BASE_PROPERTY, shardsOf } from "./list-index.js";

/** An index entity (list index) whose members disagree with the entities, and the members to reconcile. */
export interface DriftingList {
  ref: CopyRef;
  /** Members missing from the index entity or listed in it without reason (each is re-read by the repair). */
  members: string[];
}

/** How a scan judged the index entities (list indexes) of one model. */
export interface ListVerdict {
  /** Index entities absent while some entity has their value. */
  missing: CopyRef[];
  /** Index entities present whose members differ from the entities with their value. */
  stale: CopyRef[];
  /** Index entities listing members while no entity has their value. */
  orphans: CopyRef[];
  lists: DriftingList[];
}

interface Tally {
  ref: CopyRef;
  expected: Set<string>;
  present: Set<string> | undefined;
}

/**
 * The index entities (`list: true`) a scan meets, against the members the scanned entities call for:
 * an entity is expected in the index entity of each of its current values (the refs its values
 * derive), and an index entity should list exactly those entities.
 */
export class ListTally {
  readonly #model: EntityModel;
  readonly #lists = new Map<string, Tally>();
  /** Members naming entities written by a newer version of the class: not judged. */
  readonly #newer = new Set<string>();

  constructor(model: EntityModel) {
    this.#model = model;
  }

  #tally(ref: CopyRef): Tally {
    const key = `${ref.index}\u0000${refKey(ref)}`;
    let tally = this.#lists.get(key);
    if (!tally) {
      tally = { ref, expected: new Set(), present: undefined };
      this.#lists.set(key, tally);
    }
    return tally;
  }

  /** An entity with the value `ref` names, listed as `member`. */
  expect(ref: CopyRef, member: string): void {
    this.#tally(ref).expected.add(member);
  }

  /** An entity of a newer version of the class, listed as `member`. */
  newer(member: string): void {
    this.#newer.add(member);
  }

  /** Takes a row of `table` if it is a shard of one of this model's `lists`; resolves whether it was. */
  collect(table: string, lists: ReadonlySet<string>, row: StoredEntity): boolean {
    const index = row[COPY_INDEX_PROPERTY];
    const base = row[LIST_BASE_PROPERTY];
    if (typeof index !== "string" || typeof base !== "string" || !lists.has(index)) return false;
    if (rowType(row) !== this.#model.type) return false;
    const tally = this.#tally({ index, table, partitionKey: row.partitionKey, rowKey: base });
    tally.present ??= new Set();
    for (const shard of shardsOf(tally.ref, [row]))
      for (const member of shard.members) tally.present.add(member);
    return true;
  }

  /** The drifting index entities. */
  verdict(): ListVerdict {
    const verdict: ListVerdict = { missing: [], stale: [], orphans: [], lists: [] };
    for (const { ref, expected, present } of this.#lists.values()) {
      const absent = [...expected].filter((member) => !present?.has(member));
      const extra = [...(present ?? [])].filter((m) => !expected.has(m) && !this.#newer.has(m));
      if (absent.length === 0 && extra.length === 0) continue;
      if (present === undefined) verdict.missing.push(ref);
      else if (expected.size === 0) verdict.orphans.push(ref);
      else verdict.stale.push(ref);
      verdict.lists.push({ ref, members: [...absent, ...extra] });
    }
    return verdict;
  }
}
