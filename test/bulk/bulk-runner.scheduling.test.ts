import { describe, expect, it } from "vitest";
import { runBulk } from "../../src/repository/core/bulk/bulk-runner.js";
import { grid, type HeldCall, HeldSubmit, type Item, shuffle, toUnit } from "./bulk-helpers.js";

/** Settles the held calls one at a time, in an order `pick` chooses, until the bulk write ends. */
async function drive(
  held: HeldSubmit,
  run: Promise<unknown>,
  pick: (pending: HeldCall[]) => HeldCall,
): Promise<void> {
  let finished = false;
  const ended = run.then(
    () => {
      finished = true;
    },
    () => {
      finished = true;
    },
  );
  while (!finished) {
    if (held.pending.size === 0) {
      await Promise.race([held.calledTimes(held.calls.length + 1), ended]);
      continue;
    }
    await held.succeed(pick([...held.pending]));
  }
}

function seqsOf(call: HeldCall): number[] {
  return call.actions.map((action) => ("entity" in action ? Number(action.entity.seq) : -1));
}

describe("runBulk scheduling", () => {
  it.each([1, 3, 8])(
    "keeps %i batches in flight at most, one per partition, each partition in order",
    async (concurrency) => {
      // Stream order decides write order: seq is the position in the stream, and keys repeat.
      const items = shuffle(grid(20, 250), concurrency).map((item, seq) => ({
        ...item,
        rk: `r${seq % 300}`,
        seq,
      }));
      const held = new HeldSubmit();
      let turn = 0;
      const run = runBulk(items, toUnit, held.submit, { concurrency });
      // Settle in a scrambled order so partitions overtake each other.
      await drive(held, run, (pending) => pending[turn++ % pending.length]!);
      const result = await run;

      expect(held.samePartitionOverlaps).toBe(0);
      expect(held.maxInFlight).toBe(concurrency);
      expect(result.written).toBe(items.length);
      expect(result.batches).toBe(held.calls.length);
      const sent = new Map<string, number[]>();
      for (const call of held.calls)
        sent.set(call.partitionKey, [...(sent.get(call.partitionKey) ?? []), ...seqsOf(call)]);
      for (const [partitionKey, seqs] of sent) {
        expect(seqs, partitionKey).toEqual(items.filter((i) => i.pk === partitionKey).map((i) => i.seq));
      }
    },
  );

  it("sends the minimum number of batches while partitions wait for each other", async () => {
    const items = shuffle(grid(100, 100), 11);
    const held = new HeldSubmit();
    const run = runBulk(items, toUnit, held.submit, { concurrency: 4 });
    await drive(held, run, (pending) => pending.at(-1)!);
    await run;
    expect(held.calls).toHaveLength(100);
    expect(held.maxInFlight).toBeLessThanOrEqual(4);
    expect(held.samePartitionOverlaps).toBe(0);
  });

  it("starts a partition's next batch only after its previous one settles", async () => {
    const items: Item[] = grid(1, 300);
    const held = new HeldSubmit();
    const run = runBulk(items, toUnit, held.submit, { concurrency: 8 });
    await held.calledTimes(1);
    expect(held.calls).toHaveLength(1);
    await held.succeed(held.calls[0]!);
    await held.calledTimes(2);
    expect(held.calls).toHaveLength(2);
    await held.succeed(held.calls[1]!);
    await held.calledTimes(3);
    await held.succeed(held.calls[2]!);
    expect(await run).toMatchObject({ written: 300, batches: 3 });
    expect(held.calls.map((call) => seqsOf(call)[0])).toEqual([0, 100, 200]);
  });
});
