import { StoreError } from "../../src/errors.js";
import type { TableStore } from "../../src/store/table-store.js";
import { type StoreRequest, StoreWrapper } from "../support/store-wrapper.js";

/**
 * How the armed request fails:
 * - `crash`: the process dies before request N is sent: it and every later request fail, nothing
 *   of them is applied (so the writer's clean-up code cannot run either);
 * - `refused`: only request N fails, before it is sent (a final 403, so nothing applied);
 * - `lost`: request N is applied, then its answer is lost (a 500 the context does not retry); later
 *   requests succeed, so the writer's error handling runs against a write that did happen.
 */
export type CrashMode = "crash" | "refused" | "lost";

/** A store that counts requests and fails the Nth one (and, for `crash`, all after it). */
export class CrashStore extends StoreWrapper {
  /** Requests made since the last `arm` or `reset`. */
  requests = 0;
  /** Method of each request since the last `arm` or `reset`. */
  readonly log: string[] = [];
  #at: number | undefined;
  #mode: CrashMode = "crash";
  #hook: { when: (method: string, table: string) => boolean; run: () => Promise<void> } | undefined;

  constructor(inner: TableStore) {
    super(inner);
  }

  /** Fails request number `at` (1-based, counted from now) as `mode` says. */
  arm(at: number, mode: CrashMode): void {
    this.reset();
    this.#at = at;
    this.#mode = mode;
  }

  /**
   * Runs `run` once, just before the first request `when` selects (e.g. a concurrent writer
   * slipping in between two requests of a repair); the request then goes ahead.
   */
  before(when: (method: string, table: string) => boolean, run: () => Promise<void>): void {
    this.#hook = { when, run };
  }

  /** Back to a healthy store; counting starts again. */
  reset(): void {
    this.#at = undefined;
    this.requests = 0;
    this.log.length = 0;
  }

  protected override async around<T>({ method, table }: StoreRequest, request: () => Promise<T>): Promise<T> {
    const hook = this.#hook;
    if (hook?.when(method, table)) {
      this.#hook = undefined;
      await hook.run();
    }
    this.requests += 1;
    this.log.push(method);
    const n = this.requests;
    const at = this.#at;
    if (at !== undefined) {
      if (this.#mode === "crash" && n >= at) {
        throw new StoreError(`simulated crash before request ${n} (${method})`, {
          statusCode: 403,
          serviceCode: "SimulatedCrash",
        });
      }
      if (this.#mode === "refused" && n === at) {
        throw new StoreError(`simulated refusal of request ${n} (${method})`, {
          statusCode: 403,
          serviceCode: "SimulatedRefusal",
        });
      }
      if (this.#mode === "lost" && n === at) {
        await request();
        throw new StoreError(`simulated lost answer of request ${n} (${method})`, {
          statusCode: 500,
          serviceCode: "InternalError",
        });
      }
    }
    return request();
  }
}
