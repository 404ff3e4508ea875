import type { TableTemplate } from "../../keys/table-template.js";
import { quoteString } from "../../query/odata.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { StoreContinuation, StoredEntity, WireEntity } from "../../store/table-store.js";
import {
  COPY_INDEX_PROPERTY,
  COPY_REFS_PROPERTY,
  type CopyRef,
  decodeCopyRefs,
  refKey,
} from "../core/copy-ref.js";
import { listPeriodTables } from "../core/period-tables.js";
import type { Requests, TableNaming } from "../core/requests.js";
import { WideScan } from "../core/wide-reads.js";
import { buildCopy } from "./copy-builder.js";
import {
  compareRefs,
  entityStateOf,
  holdsCopy,
  isCopyRowOf,
  isEntityRowOf,
  isNewerRow,
  keepsCopies,
  ownerOf,
  sameRefSet,
} from "./copy-rows.js";
import { entityMember } from "./list-index.js";
import { type DriftingList, ListTally } from "./list-tally.js";

/** Index drift found by `verifyIndexes`. */
export interface IndexDrift {
  missing: CopyRef[];
  stale: CopyRef[];
  orphans: CopyRef[];
}

/** The entity a drifting copy belongs to, with the refs to reconcile for it. */
export interface DriftingEntity {
  /** The entity's physical table (one of its period tables, for a table per period). */
  table: string;
  partitionKey: string;
  rowKey: string;
  refs: CopyRef[];
}

/** Everything a scan found: the drift report, and what `repairIndexes({ scan: true })` needs to fix it. */
export interface IndexScan {
  drift: IndexDrift;
  /** Entities with missing or stale copies, orphans naming them, or a copy list that disagrees with their values. */
  entities: DriftingEntity[];
  /** Orphan copies that name no entity at all, with the ETag they were read with. */
  unowned: Array<{ ref: CopyRef; etag: string }>;
  /** Index entities (list indexes) whose members disagree with the entities, with the members to reconcile. */
  lists: DriftingList[];
}

/** A copy some entity derives: the row `buildCopy` would write, and who derives it. */
interface Expected {
  ref: CopyRef;
  copy: WireEntity;
  table: string;
  partitionKey: string;
  rowKey: string;
}

/** Compares every entity's derived copies with the copies stored; changes nothing. */
export async function verifyIndexes<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming,
): Promise<IndexDrift> {
  return (await scanIndexes(model, runner)).drift;
}

/** One key for an entity row: its table and keys. */
const entityKey = (table: string, partitionKey: string, rowKey: string): string =>
  `${table}\u0000${partitionKey}\u0000${rowKey}`;

/**
 * Reads the entity's table and every table its indexes write to (each once), derives each
 * entity's copies from its current values and compares them with the copy rows found: a derived
 * copy with no row is `missing`, one whose row holds other values is `stale`, a copy row of this
 * type's indexes that no entity derives is an `orphan`. Index entities (list indexes, in the
 * entity's partition or elsewhere) are judged by their members: one absent while an entity has its
 * value is `missing`, one that lacks such an entity or lists an entity without its value (or gone)
 * is `stale`, one listing only such entities is an `orphan`. Reads only. For a table per period (of
 * the entity or of an index), every existing period table is read (listed as `db.tablesOf` lists them).
 */
export async function scanIndexes<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming,
): Promise<IndexScan> {
  const entityTables = await physicalTables(runner, model);
  const indexTables = await indexTablesOf(model, runner);
  const scanner = new IndexScanner(model, runner);
  for (const entityTable of entityTables)
    await scanner.scanEntityTable(entityTable, indexTables.get(entityTable));
  for (const [table, names] of indexTables) {
    if (entityTables.includes(table)) continue;
    await scanner.scanIndexTable(table, names);
  }
  return scanner.result();
}

/** The indexes keeping copies in a table and the list indexes keeping index entities in it. */
interface TableIndexes {
  copies: Set<string>;
  lists: Set<string>;
}

/** The physical tables of an entity or index: its one table, or every existing period table. */
async function physicalTables(
  runner: Requests & TableNaming,
  owner: { readonly table: string; readonly tableTemplate?: TableTemplate | undefined },
): Promise<string[]> {
  return owner.tableTemplate
    ? (await listPeriodTables(runner, owner.tableTemplate)).map((t) => t.name)
    : [runner.tableName(owner.table)];
}

/** Per table, the indexes writing to it (listed index by index, in the model's order). */
async function indexTablesOf<T extends object>(
  model: EntityModel<T>,
  runner: Requests & TableNaming,
): Promise<Map<string, TableIndexes>> {
  const indexTables = new Map<string, TableIndexes>();
  for (const index of model.indexes.values()) {
    for (const table of await physicalTables(runner, index)) {
      const names = indexTables.get(table) ?? { copies: new Set<string>(), lists: new Set<string>() };
      (keepsCopies(index) ? names.copies : names.lists).add(index.name);
      indexTables.set(table, names);
    }
  }
  return indexTables;
}

/** What one scan gathers table by table, and the drift it then judges. */
class IndexScanner<T extends object> {
  readonly #model: EntityModel<T>;
  readonly #runner: Requests & TableNaming;
  readonly #lists: ListTally;
  /** Per copy ref key, the entities deriving that copy. */
  readonly #expected = new Map<string, Expected[]>();
  /** Per copy ref key, the copy row stored. */
  readonly #present = new Map<string, { ref: CopyRef; row: StoredEntity }>();
  readonly #entities = new Map<string, DriftingEntity>();
  // Entities written by a newer version of the class: neither they nor their copies are judged here.
  readonly #newer = new Set<string>();

  constructor(model: EntityModel<T>, runner: Requests & TableNaming) {
    this.#model = model;
    this.#runner = runner;
    this.#lists = new ListTally(model as EntityModel<object>);
  }

  /** Reads an entity table: its entities, and the copies and index entities stored beside them. */
  async scanEntityTable(entityTable: string, tableIndexes: TableIndexes | undefined): Promise<void> {
    const model = this.#model;
    // A wide entity's rows are gathered into the whole entity (its copies derive from all its columns).
    await scanTable(this.#runner, entityTable, undefined, model.wide, (row) => {
      if (isEntityRowOf(model, row) && isNewerRow(model, row)) {
        this.#newer.add(entityKey(entityTable, row.partitionKey, row.rowKey));
        this.#lists.newer(entityMember(model, this.#runner, entityTable, row.partitionKey, row.rowKey));
      } else if (isEntityRowOf(model, row)) {
        this.#expectFrom(entityTable, row);
      } else if (tableIndexes && !this.#lists.collect(entityTable, tableIndexes.lists, row)) {
        this.#collectCopy(entityTable, tableIndexes.copies, row);
      }
    });
  }

  /** Reads a table only indexes write to, just the rows of this type's indexes. */
  async scanIndexTable(table: string, names: TableIndexes): Promise<void> {
    const filter = [...names.copies, ...names.lists]
      .map((name) => `${COPY_INDEX_PROPERTY} eq ${quoteString(name)}`)
      .join(" or ");
    await scanTable(this.#runner, table, filter, false, (row) => {
      if (!this.#lists.collect(table, names.lists, row)) this.#collectCopy(table, names.copies, row);
    });
  }

  /** Records what an entity derives: its list memberships and its copies, and a copy list that disagrees. */
  #expectFrom(entityTable: string, row: StoredEntity): void {
    const model = this.#model;
    const state = entityStateOf(model, this.#runner, row);
    const member = entityMember(model, this.#runner, entityTable, row.partitionKey, row.rowKey);
    for (const ref of state.refs)
      if (!keepsCopies(model.indexes.get(ref.index))) this.#lists.expect(ref, member);
    for (const ref of state.copies) {
      const key = refKey(ref);
      const claimants = this.#expected.get(key) ?? [];
      claimants.push({
        ref,
        copy: buildCopy(model, state.wire, ref),
        table: entityTable,
        partitionKey: row.partitionKey,
        rowKey: row.rowKey,
      });
      this.#expected.set(key, claimants);
    }
    // A copy list that disagrees with the values: the next write would miss stale copies.
    const recorded = decodeCopyRefs(row[COPY_REFS_PROPERTY]);
    if (recorded === undefined || !sameRefSet(recorded, state.refs))
      this.#entityOf(entityTable, row.partitionKey, row.rowKey);
  }

  #collectCopy(table: string, names: ReadonlySet<string>, row: StoredEntity): void {
    if (!isCopyRowOf(this.#model, row, names)) return;
    const ref: CopyRef = {
      index: String(row[COPY_INDEX_PROPERTY]),
      table,
      partitionKey: row.partitionKey,
      rowKey: row.rowKey,
    };
    this.#present.set(refKey(ref), { ref, row });
  }

  #entityOf(table: string, partitionKey: string, rowKey: string): DriftingEntity {
    const key = entityKey(table, partitionKey, rowKey);
    let entity = this.#entities.get(key);
    if (!entity) {
      entity = { table, partitionKey, rowKey, refs: [] };
      this.#entities.set(key, entity);
    }
    return entity;
  }

  /** The drift found, each list sorted, with the entities, unowned copies and lists to reconcile. */
  result(): IndexScan {
    const drift: IndexDrift = { missing: [], stale: [], orphans: [] };
    this.#judgeExpected(drift);
    const unowned = this.#judgeUnexpected(drift);
    const verdict = this.#lists.verdict();
    drift.missing.push(...verdict.missing);
    drift.stale.push(...verdict.stale);
    drift.orphans.push(...verdict.orphans);
    drift.missing.sort(compareRefs);
    drift.stale.sort(compareRefs);
    drift.orphans.sort(compareRefs);
    return { drift, entities: [...this.#entities.values()], unowned, lists: verdict.lists };
  }

  /** Each derived copy is `missing` without a row, `stale` when its row holds other values. */
  #judgeExpected(drift: IndexDrift): void {
    for (const [key, claimants] of this.#expected) {
      const found = this.#present.get(key);
      // Two entities deriving one key (a unique violation): the one the row names is compared, the others miss it.
      const holder =
        (found &&
          claimants.find((c) => {
            const owner = ownerOf(this.#model, this.#runner, found.ref.table, found.row);
            return (
              owner?.table === c.table && owner.partitionKey === c.partitionKey && owner.rowKey === c.rowKey
            );
          })) ??
        claimants[0];
      for (const claimant of claimants) {
        if (found && claimant === holder) {
          if (holdsCopy(claimant.copy, found.row)) continue;
          drift.stale.push(claimant.ref);
        } else {
          drift.missing.push(claimant.ref);
        }
        this.#entityOf(claimant.table, claimant.partitionKey, claimant.rowKey).refs.push(claimant.ref);
      }
    }
  }

  /** A copy row no entity derives is an `orphan` (unless its owner is newer); returns those naming no entity. */
  #judgeUnexpected(drift: IndexDrift): IndexScan["unowned"] {
    const unowned: IndexScan["unowned"] = [];
    for (const [key, { ref, row }] of this.#present) {
      if (this.#expected.has(key)) continue;
      const owner = ownerOf(this.#model, this.#runner, ref.table, row);
      if (owner && this.#newer.has(entityKey(owner.table, owner.partitionKey, owner.rowKey))) continue;
      drift.orphans.push(ref);
      if (owner) this.#entityOf(owner.table, owner.partitionKey, owner.rowKey).refs.push(ref);
      else unowned.push({ ref, etag: row.etag });
    }
    return unowned;
  }
}

/** Reads every row of a table (optionally filtered), page by page. */
async function scanTable(
  runner: Requests,
  table: string,
  filter: string | undefined,
  wide: boolean,
  visit: (row: StoredEntity) => void,
): Promise<void> {
  const parts = wide ? new WideScan(runner, table) : undefined;
  let continuation: StoreContinuation | undefined;
  do {
    const page = await runner.run("verifyScan", table, (s) =>
      s.queryPage(table, {
        ...(filter ? { filter } : {}),
        top: 1000,
        ...(continuation ? { continuation } : {}),
      }),
    );
    for (const item of page.items) for (const row of parts ? await parts.add(item) : [item]) visit(row);
    continuation = page.continuation;
  } while (continuation);
  for (const row of parts ? await parts.end() : []) visit(row);
}
