/**
 * `tablekit/testing`: a context per test (`createTestContext`) and seeded transient faults
 * (`faultyStore`) for your own tests. It imports tablekit only through its public entry, so the
 * entities your tests declare and the context it makes share one `tablekit`.
 */
export {
  type FaultCounts,
  type FaultyStoreOptions,
  type FaultyTableStore,
  faultyStore,
  STORE_FAULT_KINDS,
  type StoreFaultKind,
} from "./faulty-store.js";
export {
  createTestContext,
  TEST_CONNECTION_STRING_VARIABLE,
  type TestContext,
  type TestContextOptions,
} from "./test-context.js";
