import { ValidationError } from "../../errors.js";
import { propertyValueBytes } from "../../util/entity-size.js";
import { assertValidKey } from "../../util/key-rules.js";
import { PROPERTY_NAME, ServiceLimits } from "../../util/service-limits.js";
import type { PackedProperties } from "./property-shape.js";
import { badRequest } from "./service-errors.js";

/**
 * Checks a PartitionKey or RowKey with the shared key rules, answering as the service does: a missing
 * key is 400 PropertiesNeedValue, a non-string key InvalidInput, a forbidden character or a key over
 * 1 KiB OutOfRangeInput (the code Azure returns for both, e.g. for '?' in a PartitionKey).
 */
export function checkKey(which: "PartitionKey" | "RowKey", key: unknown): string {
  if (key === undefined || key === null) {
    throw badRequest("PropertiesNeedValue", `${which} is required`);
  }
  if (typeof key !== "string") {
    throw badRequest("InvalidInput", `${which} must be a string, got ${typeof key}`);
  }
  try {
    assertValidKey(which, key);
  } catch (error) {
    if (error instanceof ValidationError) {
      const code = error.rule === "key-type" ? "InvalidInput" : "OutOfRangeInput";
      throw badRequest(code, error.message, error);
    }
    throw error;
  }
  return key;
}

/** Checks a user property name: C# identifier rules, at most 255 characters, not a system property. */
export function checkPropertyName(name: string): void {
  if (name.length > ServiceLimits.maxPropertyNameLength) {
    throw badRequest(
      "PropertyNameTooLong",
      `property name '${name.slice(0, 40)}…' has ${name.length} characters; at most ${ServiceLimits.maxPropertyNameLength} are allowed`,
    );
  }
  if (!PROPERTY_NAME.test(name) || name === "PartitionKey" || name === "RowKey") {
    throw badRequest(
      "PropertyNameInvalid",
      `property name '${name}' is invalid: names must start with a letter or '_' and hold only letters, digits and '_' (and may not be PartitionKey or RowKey)`,
    );
  }
}

/**
 * Checks the entity-wide limits on the properties that will be stored (for a merge: the merged result):
 * at most 252 user properties (TooManyProperties) and at most 1 MiB by the service's size formula
 * `4 + (len(PK) + len(RK)) * 2 + Σ (8 + len(name) * 2 + size(value))` (EntityTooLarge).
 */
export function checkEntityLimits(partitionKey: string, rowKey: string, properties: PackedProperties): void {
  const { names, types } = properties.shape;
  if (names.length > ServiceLimits.maxProperties) {
    throw badRequest(
      "TooManyProperties",
      `the entity has ${names.length} properties; at most ${ServiceLimits.maxProperties} user properties are allowed`,
    );
  }
  let size = 4 + (partitionKey.length + rowKey.length) * 2;
  for (let i = 0; i < names.length; i++) {
    const type = types[i] as (typeof types)[number];
    const value = properties.values[i];
    const length =
      type === "String" ? (value as string).length : type === "Binary" ? (value as Uint8Array).byteLength : 0;
    size += 8 + (names[i] as string).length * 2 + propertyValueBytes(type, length);
  }
  if (size > ServiceLimits.maxEntityBytes) {
    throw badRequest(
      "EntityTooLarge",
      `the entity is ${size} bytes by the service's size formula; at most ${ServiceLimits.maxEntityBytes} are allowed`,
    );
  }
}
