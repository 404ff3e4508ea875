import { SchemaError } from "../errors.js";
import type { FieldTypeLookup, KeyTemplate } from "../keys/key-template.js";
import type { TableTemplate } from "../keys/table-template.js";
import type { ColumnModel, ExpiryModel, IndexModel } from "./entity-model.js";
import { parseTemplate } from "./template-checks.js";

/** The name of the implicit index that lists the entities of an `expiresAt` entity by expiry time. */
export const EXPIRY_INDEX = "~expiry";

/** The tablekit-owned table holding every entity type's expiry index (the context's prefix applies). */
export const EXPIRY_TABLE = "TablekitExpiry";

/** What `resolveExpiry` needs of the entity being built. */
export interface ExpirySite {
  readonly name: string;
  readonly type: string;
  readonly wide: boolean;
  readonly partitionKey: KeyTemplate;
  readonly rowKey: KeyTemplate;
  readonly tableTemplate: TableTemplate | undefined;
  readonly fieldType: (what: string) => FieldTypeLookup;
}

/**
 * Resolves `@Entity({ expiresAt })`: the column it names (a clear `DateTime` of one property) and the
 * implicit expiry index that lets a sweep read only what is due. The index keeps one copy per entity
 * with an expiry (sparse: none without) in `TablekitExpiry`, under the PartitionKey
 * `<type>~<ticks of expiresAt>~<entity PartitionKey>` and the entity's RowKey, so the due entries of
 * a type are one PartitionKey range (`<type>~` up to the ticks of now) and never a scan of the table.
 * It is an ordinary index kept elsewhere: every write form maintains it and `db.repair` repairs it.
 */
export function resolveExpiry(
  site: ExpirySite,
  field: unknown,
  columnsByField: ReadonlyMap<string, ColumnModel>,
): { expiry: ExpiryModel; index: IndexModel } | undefined {
  if (field === undefined) return undefined;
  const what = `${site.name}.expiresAt`;
  if (typeof field !== "string") throw new SchemaError(`${what}: name a DateTime column (a field name)`);
  const column = columnsByField.get(field);
  if (!column) throw new SchemaError(`${what} names '${field}', which is not a column of ${site.name}`);
  if (column.type !== "DateTime") {
    throw new SchemaError(
      `${what} names '${field}', a ${column.type} column; expiry needs a DateTime column`,
    );
  }
  if (column.encrypted) {
    // By design: the expiry index is keyed by the instant, and reads compare it in clear.
    throw new SchemaError(
      `${what} names the encrypted column '${field}': the expiry index keys entities by that instant in clear, so an expiry cannot be encrypted`,
    );
  }
  if (column.series !== undefined) {
    throw new SchemaError(`${what} names '${field}', a data series; expiry needs one DateTime value`);
  }
  if (site.wide) {
    // By design: a wide entity keeps no indexes, and expiry is found through one.
    throw new SchemaError(
      `${what}: a wide entity keeps no indexes, and a sweep finds what is due through an expiry index; expiry is not available for wide entities`,
    );
  }
  const index = `${site.name}.expiresAt (expiry index)`;
  const partitionKey = parseTemplate(
    `${site.type}~{${field}:ticks}~${site.partitionKey.source}`,
    site.fieldType(index),
    index,
    { allowHash: true },
  );
  const rowKey = parseTemplate(site.rowKey.source, site.fieldType(index), index);
  // Copies carry their entity's keys; a table per period needs the period field to find the entity's table.
  const project = [field, ...(site.tableTemplate ? [site.tableTemplate.field] : [])];
  const property = column.properties[0] as string;
  return {
    expiry: { field, property },
    index: {
      name: EXPIRY_INDEX,
      table: EXPIRY_TABLE,
      partitionKey,
      rowKey,
      intraPartition: false,
      unique: false,
      list: false,
      project: [...new Set(project)],
      when: (entity: never) => (entity as Record<string, unknown>)[field] instanceof Date,
    },
  };
}
