import type { TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "./store-wrapper.js";

/** One request held at the door: `reached` resolves when it arrives, `release` lets it go on. */
export interface Hold {
  readonly reached: Promise<void>;
  release(): void;
}

/**
 * A store that lets every request through except the ones a test chose to hold: each `hold` catches
 * the next request that matches (once) and keeps it until released, so a test forces an interleaving
 * of concurrent writers request by request (hold one writer's step, let the others pass, release).
 */
export class HoldingStore extends StoreWrapper {
  readonly #armed: Array<{
    matches: (request: StoreRequest) => boolean;
    arrive: () => void;
    gate: Promise<void>;
  }> = [];

  constructor(inner: TableStore) {
    super(inner);
  }

  /** Holds the next request that `matches`. */
  hold(matches: (request: StoreRequest) => boolean): Hold {
    let arrive = () => {};
    let release = () => {};
    const reached = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#armed.push({ matches, arrive, gate });
    return { reached, release };
  }

  protected override async around<T>(request: StoreRequest, send: () => Promise<T>): Promise<T> {
    const at = this.#armed.findIndex((armed) => armed.matches(request));
    if (at >= 0) {
      const [armed] = this.#armed.splice(at, 1);
      armed?.arrive();
      await armed?.gate;
    }
    return send();
  }
}
