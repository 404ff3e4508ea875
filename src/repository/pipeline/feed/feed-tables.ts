import { changeFedModels, type EntityModel } from "../../../schema/entity-model.js";
import type { WireEntity } from "../../../store/table-store.js";
import {
  COPY_INDEX_PROPERTY,
  ENTITY_TYPE_PROPERTY,
  SUMMARY_PROPERTY,
} from "../../../wire/system-properties.js";

/** The change-fed models whose entities live in one physical table. */
export interface FeedTable {
  readonly models: readonly EntityModel[];
  /** The directory's name for the table: the models' table (or period template) without the prefix. */
  readonly logical: string;
}

/**
 * Tells which rows belong to change-fed entities: a row of a table where a model with `changeFeed`
 * lives (its own table or a period table of its template), that is no index copy or summary row,
 * and whose `EntityType` names a change-fed type (a row without one counts). Answers are cached per table.
 */
export class FeedTables {
  readonly #prefix: string;
  readonly #cache = new Map<string, FeedTable | null>();
  #known = 0;

  constructor(tablePrefix: string) {
    this.#prefix = tablePrefix;
  }

  /** The change-fed models of a physical table; `undefined` when it has none. */
  lookup(table: string): FeedTable | undefined {
    const all = changeFedModels();
    // Classes defined after the first lookup (lazy imports) are seen too.
    if (all.length !== this.#known) {
      this.#cache.clear();
      this.#known = all.length;
    }
    if (all.length === 0) return undefined;
    let found = this.#cache.get(table);
    if (found === undefined) {
      found = this.#resolve(table, all) ?? null;
      this.#cache.set(table, found);
    }
    return found ?? undefined;
  }

  /** True when a written row is a change-fed entity's row (not a copy, summary, or another type's row). */
  isFedRow(feed: FeedTable, row: Readonly<WireEntity>): boolean {
    if (row[COPY_INDEX_PROPERTY] !== undefined || row[SUMMARY_PROPERTY] !== undefined) return false;
    const tag = row[ENTITY_TYPE_PROPERTY];
    if (typeof tag !== "string") return true;
    const at = tag.lastIndexOf("@");
    const type = at < 0 ? tag : tag.slice(0, at);
    return feed.models.some((model) => model.type === type);
  }

  /** Whether the feed may copy rows of this table (large values live in blobs a later write replaces). */
  copies(feed: FeedTable): boolean {
    return feed.models.every((model) => !model.columns.some((column) => column.large));
  }

  #resolve(table: string, all: readonly EntityModel[]): FeedTable | undefined {
    if (!table.startsWith(this.#prefix)) return undefined;
    const name = table.slice(this.#prefix.length);
    const models = all.filter((model) =>
      model.tableTemplate !== undefined
        ? model.tableTemplate.periodOf(name) !== undefined
        : model.table.toLowerCase() === name.toLowerCase(),
    );
    const first = models[0];
    if (first === undefined) return undefined;
    return { models, logical: first.table };
  }
}
