/**
 * The wire vocabulary every layer shares: the service's EDM types and entities in the shape
 * `@azure/data-tables` uses. It sits below every other module (it imports nothing), so keys,
 * serialization, queries and both stores can speak it without depending on the store port.
 */

/** The service's property types (EDM). */
export type EdmType = "String" | "Int32" | "Int64" | "Double" | "Boolean" | "DateTime" | "Guid" | "Binary";

/** Every EDM type name, for checking a type named in untyped input (a dynamic row, a request body). */
export const EDM_TYPES: ReadonlySet<string> = new Set<EdmType>([
  "String",
  "Int32",
  "Int64",
  "Double",
  "Boolean",
  "DateTime",
  "Guid",
  "Binary",
]);

/** An explicitly typed value, as `@azure/data-tables` accepts and returns it (e.g. `{ type: "Guid", value: "…" }`). */
export interface TypedValue {
  type: EdmType;
  value: string | number | boolean;
}

/**
 * A property value on the wire, in `@azure/data-tables`' conventions:
 * - written: `string` (String), `boolean` (Boolean), integer `number` (Int32, no annotation),
 *   `{ type: "Double", value }` (Double, always annotated), `bigint` or `{ type: "Int64", value: "…" }` (Int64),
 *   `Date` (DateTime), `{ type: "Guid", value }` (Guid), `Uint8Array` (Binary);
 * - read: `string`, `boolean`, `number` (Int32 and Double), `bigint` (Int64), `Date` (DateTime),
 *   `{ type: "Guid", value }` (Guid), `Uint8Array` (Binary).
 */
export type WireValue = string | number | boolean | bigint | Date | Uint8Array | TypedValue | null;

/** An entity as written through the port: keys plus user properties. */
export interface WireEntity {
  partitionKey: string;
  rowKey: string;
  [property: string]: WireValue | undefined;
}

/** An entity as read through the port: also carries the server's `etag` and `timestamp`. */
export interface StoredEntity extends WireEntity {
  etag: string;
  timestamp?: Date;
}

/**
 * The EDM type of each property a typed reader expects (its entity model's columns). With it a store
 * may ask for payloads without type annotations (`odata=nometadata`) and type the values itself;
 * properties not named here arrive as their plain JSON values.
 */
export type PropertyTypes = Readonly<Record<string, EdmType>>;

/** Where the next page of a query starts (the service's NextPartitionKey / NextRowKey). */
export interface StoreContinuation {
  nextPartitionKey: string;
  nextRowKey?: string;
}

/** How an update or upsert treats properties absent from the entity: remove them (replace) or keep them (merge). */
export type WriteMode = "replace" | "merge";

/** The outcome of a successful write. */
export interface WriteResult {
  etag: string;
}

/** One operation of an entity group transaction. */
export type TransactionAction =
  | { kind: "insert"; entity: WireEntity }
  | { kind: "upsert"; entity: WireEntity; mode: WriteMode }
  | { kind: "update"; entity: WireEntity; mode: WriteMode; ifMatch: string }
  | { kind: "delete"; partitionKey: string; rowKey: string; ifMatch: string };
