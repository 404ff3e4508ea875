import { describe, expect, it } from "vitest";
import { TableContext } from "../../src/index.js";
import { stores } from "../fixtures/context.js";
import type { CrashMode } from "../indexes/crash-store.js";
import { expectNoDrift } from "../indexes/helpers.js";
import { RxEmployee } from "../indexes/models.js";
import { sweepModes } from "../support/sweep-modes.js";
import { eventualContext, expectNoIntents, MOVE } from "./harness.js";

/**
 * The archive move (delete + insert in another table + an indexed update + a blind upsert)
 * interrupted at every one of its requests: `crash` (the process dies before request N),
 * `refused` (request N alone fails, nothing applied), `lost` (request N applied, its answer lost).
 * After each, `repair` in a fresh context must leave no intent and no index drift, and the four
 * entities exactly as before the move or exactly as after it: nothing lost, nothing duplicated,
 * no step applied twice with a different result (no conflicts met by repair).
 */
describe.each(stores)("db.eventually interrupted at each request, then db.repair, on %s", (name, kind) => {
  for (const mode of sweepModes(name, ["crash", "refused", "lost"] as CrashMode[])) {
    it(`${mode}: every request of the archive move`, async () => {
      const { db, store, fresh, intents } = await eventualContext(kind);
      let id = 0;
      await MOVE.prepare(db, ++id);
      const clean = await MOVE.plan(db, id);
      store.reset();
      await clean();
      const total = store.requests;
      await expect(MOVE.state(db, id)).resolves.toEqual(MOVE.after(id));
      const totals = { replayed: 0, applied: 0, alreadyDone: 0 };
      const last = mode === "crash" ? total + 1 : total;
      for (let at = 1; at <= last; at++) {
        await MOVE.prepare(db, ++id);
        const move = await MOVE.plan(db, id);
        store.arm(at, mode);
        let succeeded = true;
        try {
          await move();
        } catch {
          succeeded = false;
        }
        store.reset();
        const where = `${mode} at request ${at} of ${total}`;
        const restarted = fresh();
        // A fresh process knows only the indexed class: the plain steps replay from their record alone.
        const report = await restarted.repair({ entities: [RxEmployee] });
        await expectNoIntents(restarted, intents, where);
        expect(report.eventually?.conflicts, where).toBe(0);
        expect(report.eventually?.poisoned, where).toBe(0);
        await expectNoDrift(restarted);
        const state = await MOVE.state(restarted, id);
        if (succeeded) expect(state, where).toEqual(MOVE.after(id));
        else expect([MOVE.before(id), MOVE.after(id)], where).toContainEqual(state);
        if (mode === "crash" && at === last) expect(succeeded, where).toBe(true);
        totals.replayed += report.eventually?.replayed ?? 0;
        totals.applied += report.eventually?.applied ?? 0;
        totals.alreadyDone += report.eventually?.alreadyDone ?? 0;
      }
      // Repairs did finish moves, applying missing steps and recognising steps already applied.
      expect(totals.replayed).toBeGreaterThan(0);
      expect(totals.applied).toBeGreaterThan(0);
      expect(totals.alreadyDone).toBeGreaterThan(0);
    });
  }
});

/**
 * The repair itself interrupted at every one of its requests (after a move that died right after
 * recording its intent), then a second repair once the first one's claim has run out: the move
 * ends complete, with no conflict met (a step replayed twice finds its own earlier effect).
 */
describe.each(stores)("db.repair interrupted at each request, then repaired again, on %s", (name, kind) => {
  for (const mode of sweepModes(name, ["crash", "lost"] as CrashMode[])) {
    it(`${mode}: every request of the repair`, async () => {
      const { db, store, prefix, intents } = await eventualContext(kind);
      let now = 1_000_000_000_000;
      const at = () => new TableContext({ store, tablePrefix: prefix, retry: false, now: () => now });
      const crashedMove = async (id: number) => {
        await MOVE.prepare(db, id);
        const move = await MOVE.plan(at(), id);
        // Two version reads, then the intent; the process dies before the first step.
        store.arm(4, "crash");
        await expect(move()).rejects.toThrow();
        store.reset();
      };
      let id = 0;
      await crashedMove(++id);
      await at().repair({ entities: [RxEmployee] });
      const total = store.requests;
      await expect(MOVE.state(db, id)).resolves.toEqual(MOVE.after(id));
      for (let n = 1; n <= total; n++) {
        await crashedMove(++id);
        store.arm(n, mode);
        await at()
          .repair({ entities: [RxEmployee] })
          .catch(() => undefined);
        store.reset();
        now += 61_000;
        const where = `${mode} at request ${n} of ${total}`;
        const second = await at().repair({ entities: [RxEmployee] });
        expect(second.eventually?.conflicts, where).toBe(0);
        await expectNoIntents(db, intents, where);
        await expectNoDrift(at());
        expect(await MOVE.state(db, id), where).toEqual(MOVE.after(id));
      }
    });
  }
});
