import { SchemaError } from "../../../errors.js";
import { type ColumnModel, type EntityModel, encryptedModelsOfType } from "../../../schema/entity-model.js";
import type { WireEntity } from "../../../store/table-store.js";
import { ENTITY_TYPE_PROPERTY } from "../../../wire/system-properties.js";

/** The encrypted columns of the model a row belongs to. */
export interface EncryptedColumns {
  readonly model: EntityModel;
  readonly columns: readonly ColumnModel[];
}

/**
 * Tells which rows hold encrypted columns, and which: a row belongs to the model whose `type` its
 * `EntityType` names and that lives in the row's table (its own table, a period table of its template,
 * or an index table: copies are encrypted under their own keys). Models used by the context come
 * first, so a plain class of this context is never mistaken for an encrypted class elsewhere; any
 * other encrypted model of that type and table is found too, so no write path can send plaintext.
 * A row without `EntityType` belongs to the one encrypted model living in its table, if there is one.
 * Lookups run per row on every read, so answers are cached per table and tag.
 */
export class EncryptedRowTypes {
  readonly #prefix: string;
  readonly #claimed = new Map<string, EntityModel[]>();
  readonly #cache = new Map<string, Map<string, EncryptedColumns | null>>();

  constructor(tablePrefix: string) {
    this.#prefix = tablePrefix;
  }

  /** Records a model this context uses (encrypted or not). */
  claim(model: EntityModel): void {
    const list = this.#claimed.get(model.type) ?? [];
    if (list.includes(model)) return;
    list.push(model);
    this.#claimed.set(model.type, list);
    this.#cache.clear();
  }

  /** The table name without the context's prefix: what the associated data binds. */
  logicalTable(table: string): string {
    return table.startsWith(this.#prefix) ? table.slice(this.#prefix.length) : table;
  }

  /** The encrypted columns of the row's model in this (physical) table; `undefined` when it has none. */
  lookup(table: string, row: WireEntity): EncryptedColumns | undefined {
    const tag = row[ENTITY_TYPE_PROPERTY];
    const key = typeof tag === "string" ? tag : "";
    let byTag = this.#cache.get(table);
    if (byTag === undefined) {
      byTag = new Map();
      this.#cache.set(table, byTag);
    }
    let found = byTag.get(key);
    if (found === undefined) {
      found = this.#resolve(this.logicalTable(table), key) ?? null;
      byTag.set(key, found);
    }
    return found ?? undefined;
  }

  #resolve(table: string, tag: string): EncryptedColumns | undefined {
    if (tag === "") {
      const models = new Set<EntityModel>();
      for (const list of this.#claimed.values()) for (const m of list) if (livesIn(m, table)) models.add(m);
      const encrypted = [...models].filter(hasEncrypted);
      return encrypted.length === 1 ? columnsOf(encrypted[0] as EntityModel) : undefined;
    }
    const at = tag.lastIndexOf("@");
    const type = at < 0 ? tag : tag.slice(0, at);
    const claimed = (this.#claimed.get(type) ?? []).find((m) => livesIn(m, table));
    if (claimed !== undefined) return hasEncrypted(claimed) ? columnsOf(claimed) : undefined;
    const others = encryptedModelsOfType(type).filter((m) => livesIn(m, table));
    if (others.length > 1) {
      throw new SchemaError(
        `${others.map((m) => m.name).join(" and ")} both store type '${type}' with encrypted columns in table '${table}': ` +
          "use one of them through db.repository(…) first so this context knows which",
      );
    }
    return others[0] === undefined ? undefined : columnsOf(others[0]);
  }
}

function hasEncrypted(model: EntityModel): boolean {
  return model.columns.some((column) => column.encrypted);
}

function columnsOf(model: EntityModel): EncryptedColumns {
  return { model, columns: model.columns.filter((column) => column.encrypted) };
}

/** True when rows of the model (entities or index copies) may live in this table (without prefix). */
function livesIn(model: EntityModel, table: string): boolean {
  const lower = table.toLowerCase();
  if (model.tableTemplate !== undefined) {
    if (model.tableTemplate.periodOf(table) !== undefined) return true;
  } else if (model.table.toLowerCase() === lower) return true;
  for (const index of model.indexes.values()) if (index.table.toLowerCase() === lower) return true;
  return false;
}
