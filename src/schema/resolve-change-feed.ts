import { SchemaError } from "../errors.js";
import { MAX_WIDE_PARTS } from "../serialization/wide-rows.js";
import { ServiceLimits } from "../util/service-limits.js";
import { ENTITY_TYPE_PROPERTY } from "../wire/system-properties.js";
import type { ChangeFeedModel } from "./entity-model.js";
import type { EntityOptions } from "./entity-options.js";

/** How long changes are kept when `changeFeed: true` (as long as Cosmos DB's default lease-free window: 7 days). */
export const DEFAULT_FEED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The property a change-fed entity's row keeps its version in (one of the service's 252). */
export const FEED_VERSION_PROPERTY = "_tkVer";

/**
 * Validates `@Entity({ changeFeed })`: `true` or `{ retentionMs }` (a positive whole number of
 * milliseconds). `properties` is the count of the entity's column properties.
 */
export function resolveChangeFeed(
  name: string,
  options: EntityOptions,
  properties: number,
): ChangeFeedModel | undefined {
  const feed = options.changeFeed;
  if (feed === undefined || feed === false) return undefined;
  if (feed !== true && (typeof feed !== "object" || feed === null)) {
    throw new SchemaError(`${name}: changeFeed must be true, false or { retentionMs }`);
  }
  const retentionMs =
    feed === true ? DEFAULT_FEED_RETENTION_MS : (feed.retentionMs ?? DEFAULT_FEED_RETENTION_MS);
  if (!Number.isSafeInteger(retentionMs) || retentionMs <= 0) {
    throw new SchemaError(
      `${name}: changeFeed.retentionMs must be a positive whole number of milliseconds, got ${String(retentionMs)}`,
    );
  }
  if (options.wide === true) {
    // By design: a wide entity may fill its entity group transaction (100 operations, the service's
    // limit) with its own rows, leaving no room for the change's journal and head rows.
    throw new SchemaError(
      `${name}: a wide entity cannot have changeFeed: its rows may fill the ${MAX_WIDE_PARTS} operations of one entity group transaction (the service's limit), leaving none for the change's rows`,
    );
  }
  // The version rides on the entity's row: one more property of the service's budget.
  if (properties + 2 > ServiceLimits.maxProperties) {
    throw new SchemaError(
      `${name} has ${properties} column properties; with changeFeed its row also keeps '${ENTITY_TYPE_PROPERTY}' and '${FEED_VERSION_PROPERTY}', over the service's ${ServiceLimits.maxProperties} properties per entity`,
    );
  }
  return { retentionMs };
}
