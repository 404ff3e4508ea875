/** The store wrapper of `tablekit/testing`, which the test kit's wrappers (counting, faults, crashes) extend too. */
export {
  requestIdentity,
  STORE_METHODS,
  type StoreMethod,
  type StoreRequest,
  StoreWrapper,
} from "../../src/testing/store-wrapper.js";
