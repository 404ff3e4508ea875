import type { EntityModel } from "../../schema/entity-model.js";
import type { StoredEntity, WireEntity } from "../../store/table-store.js";
import { isUserProperty } from "../../wire/system-properties.js";

/**
 * The stored properties the class has no column for (written by other clients or older
 * versions), so a merge done by reading and replacing keeps them like the service's merge would.
 * They are passed on as read; a whole Double among them comes back without its annotation and is
 * then stored as Int32 (the service does not tell them apart on read).
 */
export function foreignProperties<T extends object>(
  model: EntityModel<T>,
  stored: StoredEntity,
): Partial<WireEntity> {
  // A large column's reference is kept as stored too: the mapper leaves large columns out, and a
  // merge that does not send the value keeps its blob.
  const known = new Set(model.columns.filter((c) => !c.large).flatMap((c) => c.properties));
  const foreign: Partial<WireEntity> = {};
  for (const name in stored) if (isUserProperty(name) && !known.has(name)) foreign[name] = stored[name];
  return foreign;
}
