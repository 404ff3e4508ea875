/**
 * A Double as every store keeps it: a negative zero becomes `0`, every other value (NaN included) is
 * itself. Written through the Azure SDK, `-0` never reaches the service: `@azure/data-tables` sends
 * the entity as JSON text made by `JSON.stringify`, which writes `-0` as `0` (ECMAScript
 * Number::toString), so `AzureStore` stores `0`; and Azurite answers a stored `-0` as `0.0`
 * (`EdmDouble.toJsonPropertyValueString`: `(-0).toFixed(1)`). `MemoryStore`, `tablekit serve` and
 * `tablekit import` normalise the same way, so `-0` reads back as `0` on every store.
 */
export function storedDouble(value: number): number {
  return value === 0 ? 0 : value; // -0 === 0: both become +0
}
