/**
 * How a crash-test child talks to its parent: one line per request on stdout, written synchronously so
 * the parent has every line before the kill, and a freeze at the chosen request so the kill lands there.
 */
import { writeSync } from "node:fs";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { TableStore } from "../../src/store/table-store.js";

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

/**
 * A crash-test child's arguments, in the order `names` gives them; a usage line on stderr and exit
 * code 2 when one is missing.
 */
export function childArguments(script: string, names: readonly string[]): string[] {
  const values = process.argv.slice(2, 2 + names.length);
  if (values.length < names.length || values.some((value) => value === "")) {
    process.stderr.write(`usage: ${script} ${names.map((name) => `<${name}>`).join(" ")}\n`);
    process.exit(2);
  }
  return values;
}

/** The store a crash-test child writes to: Azure (Azurite) for a connection string, else a MemoryStore file. */
export async function openChildStore(target: string): Promise<TableStore> {
  if (/TableEndpoint=|UseDevelopmentStorage=/i.test(target)) {
    const { AzureStore } = await import("../../src/store/azure/azure-store.js");
    return AzureStore.fromConnectionString(target);
  }
  return new MemoryStore({ file: target });
}

let linesSaid = 0;
let freezeAt = 0;

/** Makes `say` freeze the child once it has written line `stopAt` (0: never), so the kill lands there. */
export function freezeAtLine(stopAt: number): void {
  freezeAt = stopAt;
}

/** Writes one line to stdout synchronously, and freezes for the kill once it was the line `freezeAtLine` set. */
export function say(line: string): void {
  writeLineSync(line);
  linesSaid += 1;
  if (freezeAt > 0 && linesSaid >= freezeAt) freezeForKill();
}
