/** Counts of what one kind of repair did in a pass (names are the kind's own). */
export type RepairCounts = Readonly<Record<string, number>>;

/** What `db.repair()` resolves to: the counts of each kind of unfinished work, by kind name. */
export type RepairReport = Record<string, RepairCounts>;

/** What a repair kind is given: the age under which intents are left alone, and where to put errors that did not stop it. */
export interface RepairKindOptions {
  minIntentAgeMs: number;
  /** Failures of single items (an intent whose replay failed): the kind goes on with the rest. */
  errors: unknown[];
}

/**
 * One kind of unfinished work `db.repair()` finishes (index intents, eventual transactions,
 * large-value blobs, ...): a name for its counts and a pass over its work.
 */
export interface RepairKind {
  name: string;
  run(options: RepairKindOptions): Promise<RepairCounts>;
}

/** One pass over every kind, in order; a kind that fails is reported and the others still run. */
export async function runRepairPass(
  kinds: readonly RepairKind[],
  minIntentAgeMs: number,
): Promise<{ counts: RepairReport; errors: unknown[] }> {
  const counts: RepairReport = {};
  const errors: unknown[] = [];
  for (const kind of kinds) {
    try {
      counts[kind.name] = await kind.run({ minIntentAgeMs, errors });
    } catch (error) {
      errors.push(error);
      counts[kind.name] = {};
    }
  }
  return { counts, errors };
}

/** Runs repair passes one at a time (never two at once in one context, whoever asks). */
export class RepairLock {
  #current: Promise<unknown> | undefined;

  /** Runs `pass` once no other pass is running. */
  async exclusive<T>(pass: () => Promise<T>): Promise<T> {
    while (this.#current) await this.#current.catch(() => undefined);
    const running = pass();
    this.#current = running;
    try {
      return await running;
    } finally {
      if (this.#current === running) this.#current = undefined;
    }
  }
}
