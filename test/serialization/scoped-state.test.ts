import { describe, expect, it } from "vitest";
import { ScopedState } from "../../src/util/scoped-state.js";

describe("ScopedState", () => {
  const scopeA = {};
  const scopeB = {};

  it("keeps its state out of the instance's keys, JSON, spreads and equality", () => {
    const state = new ScopedState<string>();
    const instance = { id: 1 };
    state.set(instance, scopeA, "v1");
    expect(Object.keys(instance)).toEqual(["id"]);
    expect(JSON.stringify(instance)).toBe('{"id":1}');
    expect({ ...instance }).toEqual({ id: 1 });
    expect(instance).toEqual({ id: 1 });
    expect(state.get(instance, scopeA)).toBe("v1");
  });

  it("records per scope, the latest last, and forgets", () => {
    const state = new ScopedState<string>();
    const instance = {};
    state.set(instance, scopeA, "a");
    state.set(instance, scopeB, "b");
    expect([state.get(instance, scopeA), state.get(instance, scopeB), state.latest(instance)]).toEqual([
      "a",
      "b",
      "b",
    ]);
    state.set(instance, scopeB, undefined);
    expect([state.get(instance, scopeB), state.latest(instance)]).toEqual([undefined, "a"]);
    state.set(instance, scopeA, undefined);
    expect(state.latest(instance)).toBeUndefined();
  });

  it("works on frozen instances too", () => {
    const state = new ScopedState<string>();
    const frozen = Object.freeze({ id: 2 });
    state.set(frozen, scopeA, "f");
    expect(state.get(frozen, scopeA)).toBe("f");
    state.set(frozen, scopeA, undefined);
    expect(state.latest(frozen)).toBeUndefined();
    // Recorded first, frozen later (a read entity the caller freezes before writing it).
    const later: { id: number } = { id: 3 };
    state.set(later, scopeA, "before");
    Object.freeze(later);
    state.set(later, scopeA, "after");
    expect(state.get(later, scopeA)).toBe("after");
    state.set(later, scopeA, undefined);
    expect(state.latest(later)).toBeUndefined();
  });

  it("two states on one instance do not see each other", () => {
    const etags = new ScopedState<string>();
    const copies = new ScopedState<number>();
    const instance = {};
    etags.set(instance, scopeA, "e");
    copies.set(instance, scopeA, 3);
    expect([etags.get(instance, scopeA), copies.get(instance, scopeA)]).toEqual(["e", 3]);
  });
});
