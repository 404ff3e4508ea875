import { ValidationError } from "../../errors.js";
import { contextTelemetry } from "../../telemetry/context-telemetry.js";
import { StoreRunner } from "../core/store-runner.js";
import { assertEncryptionOptions } from "../pipeline/encryption/key-resolver.js";
import { Pacer } from "../pipeline/pacing/pacer.js";
import { readThroughput } from "../pipeline/pacing/throughput-options.js";
import { defaultSleep, RetryPolicy } from "../pipeline/retry-policy.js";
import type { TableContextOptions } from "./context-options.js";

/** How the pacer reports its pace (the context emits it as a `throughput` event). */
export type PaceReport = ConstructorParameters<typeof Pacer>[2];

/**
 * The request path of a context from its options, each checked before any request: retries, the
 * table prefix, pacing, encryption keys and telemetry around the store.
 */
export function buildRunner(
  options: TableContextOptions,
  report: PaceReport,
): { runner: StoreRunner; telemetry: ReturnType<typeof contextTelemetry> } {
  const retry = new RetryPolicy(
    options.retry === false ? { retries: 0 } : options.retry,
    options.sleep,
    options.random,
    options.now,
  );
  const prefix = options.tablePrefix ?? "";
  if (prefix !== "" && !/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) {
    throw new ValidationError(
      "table-prefix",
      `tablePrefix '${prefix}' must be letters and digits, starting with a letter`,
    );
  }
  const limits = options.throughput === undefined ? undefined : readThroughput(options.throughput);
  const pacer =
    limits === undefined || (limits.perPartition === undefined && limits.perAccount === undefined)
      ? undefined
      : new Pacer(
          limits,
          { now: options.now ?? (() => performance.now()), sleep: options.sleep ?? defaultSleep },
          report,
        );
  if (options.encryption !== undefined) assertEncryptionOptions(options.encryption);
  const telemetry = contextTelemetry(options.tracing);
  retry.observer = telemetry?.retries;
  const runner = new StoreRunner(
    options.store,
    retry,
    options.onEvent,
    prefix,
    options.maxConcurrentRequests,
    pacer,
    options.encryption?.keys,
    telemetry?.instrument,
  );
  return { runner, telemetry };
}
