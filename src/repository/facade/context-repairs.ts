import { type RepairKind, RepairLock, type RepairReport, runRepairPass } from "../core/repair-kind.js";
import { type RepairWorker, type RepairWorkerOptions, startWorker } from "../core/repair-worker.js";
import type { TableKitEvent } from "../core/table-kit-event.js";
import { checkMinAge } from "./eventual/repair-eventual.js";

/**
 * A context's repair passes: the kinds of unfinished work in order, one pass at a time (across
 * `db.repair` calls and workers), and the workers to stop on `close`.
 */
export class ContextRepairs {
  readonly #kinds: RepairKind[] = [];
  readonly #lock = new RepairLock();
  readonly #workers = new Set<RepairWorker>();
  readonly #emit: (event: TableKitEvent) => void;

  constructor(kinds: readonly RepairKind[], emit: (event: TableKitEvent) => void) {
    this.#kinds.push(...kinds);
    this.#emit = emit;
  }

  add(kind: RepairKind): void {
    this.#kinds.push(kind);
  }

  /** One pass; rejects with the first error after the whole pass ran. */
  async repair(minIntentAgeMs: number | undefined): Promise<RepairReport> {
    const { counts, errors } = await this.#pass(checkMinAge(minIntentAgeMs));
    if (errors.length > 0) throw errors[0];
    return counts;
  }

  startWorker(options: RepairWorkerOptions): RepairWorker {
    const minAge = checkMinAge(options?.minIntentAgeMs);
    const worker = startWorker(
      options,
      () => this.#pass(minAge),
      ({ counts, errors }) => this.#emit({ type: "repair-pass", counts, errors }),
    );
    this.#workers.add(worker);
    return worker;
  }

  /** Stops every worker started here, waiting for their running passes. */
  async stopWorkers(): Promise<void> {
    const workers = [...this.#workers];
    this.#workers.clear();
    await Promise.all(workers.map((worker) => worker.stop()));
  }

  #pass(minIntentAgeMs: number): Promise<{ counts: RepairReport; errors: unknown[] }> {
    return this.#lock.exclusive(() => runRepairPass(this.#kinds, minIntentAgeMs));
  }
}
