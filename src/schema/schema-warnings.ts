import type { KeyTemplate } from "../keys/key-template.js";
import type { SchemaWarning } from "./entity-model.js";

/**
 * A PartitionKey that starts with an ascending time puts every new entity in the newest partition: one
 * hot partition takes all writes (the design guide's prepend/append anti-pattern).
 */
export function schemaWarnings(entity: string, partitionKey: KeyTemplate): SchemaWarning[] {
  const descending = partitionKey.leadingDescendingTime;
  if (descending !== undefined) {
    return [
      {
        rule: "prepend-only-partition",
        message:
          `${entity}: the partitionKey '${partitionKey.source}' begins with the descending time '${descending}' (inverted ` +
          "ticks), so every new entity goes to the lowest partition and one server takes all writes (the " +
          "prepend-only, or prepend/append, anti-pattern; the service's per-partition target is 2,000 entities " +
          `per second). Spread writes over hash buckets: partitionKey "{someId:hash:16}" with '${descending}' at ` +
          "the start of the rowKey; find() without the hashed field then reads every bucket, merged in RowKey order",
      },
    ];
  }
  const field = partitionKey.leadingAscendingTime;
  if (field === undefined) return [];
  return [
    {
      rule: "append-only-partition",
      message:
        `${entity}: the partitionKey '${partitionKey.source}' begins with the ascending time '${field}', so every ` +
        "new entity goes to the newest partition and one server takes all writes (the append-only, or " +
        "prepend/append, anti-pattern; the service's per-partition target is 2,000 entities per second). " +
        `Spread writes over hash buckets: partitionKey "{someId:hash:16}" with '${field}' at the start of the ` +
        "rowKey; find() without the hashed field then reads every bucket, merged in RowKey order",
    },
  ];
}
