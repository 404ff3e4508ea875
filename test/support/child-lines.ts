/**
 * How a crash-test child talks to its parent: one line per request on stdout, written synchronously so
 * the parent has every line before the kill, and a freeze at the chosen request so the kill lands there.
 */
import { writeSync } from "node:fs";

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Writes one line to stdout synchronously; a full pipe (EAGAIN) is waited out, never skipped. */
export function writeLineSync(line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
}

/** Blocks this thread for good: no timer, no I/O callback, no further request runs before the kill. */
export function freezeForKill(): never {
  for (;;) Atomics.wait(PAUSE, 0, 0);
}

/** The store with every method call passed to `announce(method, firstArgument)` before it runs. */
export function announcing<S extends object>(
  store: S,
  announce: (method: string, target: string) => void,
): S {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || property === "constructor") return value;
      return (...args: unknown[]) => {
        announce(String(property), String(args[0]));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
