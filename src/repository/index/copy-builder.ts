import type { EntityModel } from "../../schema/entity-model.js";
import type { WireEntity } from "../../store/table-store.js";
import {
  COPY_INDEX_PROPERTY,
  COPY_SOURCE_PK_PROPERTY,
  COPY_SOURCE_RK_PROPERTY,
  type CopyRef,
  indexOf,
} from "../core/copy-ref.js";
import { COPY_STAMP_PROPERTY, type Stamp } from "./copy-stamp.js";

/**
 * The row of one index copy: the entity's (projected; for a wide entity, its keys and the index's key
 * fields besides) properties, its key fields (always, so a
 * copy reads back as an entity with its keys), the discriminator, and which index and entity it
 * belongs to (so verification can tell copies from entities, and orphans from live copies); a copy
 * elsewhere also carries its `stamp` (which write made it, see copy-stamp.ts).
 */
export function buildCopy<T extends object>(
  model: EntityModel<T>,
  entityWire: WireEntity,
  ref: CopyRef,
  stamp?: Stamp,
): WireEntity {
  const index = indexOf(model, ref);
  const copy: WireEntity = { partitionKey: ref.partitionKey, rowKey: ref.rowKey };
  // Key fields always; so are period fields: a copy names its entity's period table (and its own).
  // A wide entity's columns do not fit one row: its copies hold its keys, the index's key fields
  // and the projected fields only (read the entity by its key for the rest).
  const keep =
    index.project || model.wide
      ? new Set([
          ...(index.project ?? []),
          ...(model.wide ? [...index.partitionKey.fields, ...index.rowKey.fields] : []),
          ...model.partitionKey.fields,
          ...model.rowKey.fields,
          ...(model.tableTemplate ? [model.tableTemplate.field] : []),
          ...(index.tableTemplate ? [index.tableTemplate.field] : []),
        ])
      : undefined;
  for (const column of model.columns) {
    if (keep && !keep.has(column.field)) continue;
    // A large value stays with its entity: a copy would point at a blob its entity's next write removes.
    if (column.large) continue;
    for (const property of column.properties) {
      const value = entityWire[property];
      if (value !== undefined) copy[property] = value;
    }
  }
  copy.EntityType = entityWire.EntityType;
  copy[COPY_INDEX_PROPERTY] = ref.index;
  copy[COPY_SOURCE_PK_PROPERTY] = entityWire.partitionKey;
  copy[COPY_SOURCE_RK_PROPERTY] = entityWire.rowKey;
  if (stamp !== undefined) copy[COPY_STAMP_PROPERTY] = stamp;
  return copy;
}
