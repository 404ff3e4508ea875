import { type AzureErrorContext, translateAzureError } from "./azure-errors.js";
import { keepTimerList } from "./timer-list-keeper.js";

/** SDK options of a point operation. */
export interface PointOptions {
  requestOptions?: { timeout: number };
}

/** Runs `AzureStore`'s requests under its timeout and translates their failures to tablekit errors. */
export class AzureCalls {
  readonly #timeoutMs: number;
  readonly #secrets: readonly string[];
  /** Options of every point operation: the pipeline's own per-request timeout (see `runPoint`). */
  readonly pointOptions: PointOptions;

  /** `timeoutMs`: 0 disables the timeout; `secrets` are scrubbed from error messages. */
  constructor(timeoutMs: number, secrets: readonly string[]) {
    this.#timeoutMs = timeoutMs;
    this.#secrets = secrets;
    this.pointOptions = timeoutMs > 0 ? { requestOptions: { timeout: timeoutMs } } : {};
    // Every request arms a timer of this duration: keep its list, so each one is cheap.
    if (timeoutMs > 0) keepTimerList(timeoutMs);
  }

  /**
   * Runs a single-entity or table call under the pipeline's own per-request timeout
   * (`requestOptions.timeout`) and translates its failure. That timer stops at the response headers,
   * which for these small responses is nearly the whole wait. An AbortSignal would also cover the body,
   * but costs ~25 µs of CPU per call in the SDK's HTTP client (listener bookkeeping): measured at ~4%
   * of a loopback point read, against a 5% budget.
   */
  async runPoint<T>(context: AzureErrorContext, call: (options: PointOptions) => Promise<T>): Promise<T> {
    try {
      return await call(this.pointOptions);
    } catch (error) {
      throw this.translate(error, context);
    }
  }

  /**
   * Runs a query page or a transaction under an AbortSignal with the timeout, which also covers reading
   * the (possibly large) body, and translates its failure.
   */
  async runWhole<T>(context: AzureErrorContext, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = this.#timeoutMs > 0 ? setTimeout(() => controller.abort(), this.#timeoutMs) : undefined;
    try {
      return await call(controller.signal);
    } catch (error) {
      throw this.translate(error, context);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The tablekit error of a failed request. */
  translate(error: unknown, context: AzureErrorContext): Error {
    return translateAzureError(error, { ...context, timeoutMs: this.#timeoutMs, secrets: this.#secrets });
  }
}
