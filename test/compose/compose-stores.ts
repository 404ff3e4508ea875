import { MemoryStore } from "../../src/index.js";
import { createServeStore } from "../support/azurite.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";
import { allStoreKinds, type StoreKind, selectedStoreNames } from "../support/stores.js";

/**
 * The selected stores of the test kit, each with a blob side for large values: `tablekit serve`
 * speaks the Table protocol only, so its store gets an in-process blob side (a MemoryStore's).
 */
export const composeStoreKinds: StoreKind[] = allStoreKinds
  .filter((kind) => selectedStoreNames().includes(kind.name))
  .map((kind) =>
    kind.name === "serve" ? { name: kind.name, create: () => new WithBlobs(createServeStore()) } : kind,
  );

/** A table store whose blob side is a MemoryStore's (the store has none of its own). */
class WithBlobs extends StoreWrapper {
  readonly #blobs = new MemoryStore().blobs;

  override get blobs() {
    return this.#blobs;
  }

  protected override around<T>(_request: StoreRequest, send: () => Promise<T>): Promise<T> {
    return send();
  }
}
