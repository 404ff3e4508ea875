import { InvalidArgumentError } from "commander";

/** A command line that cannot run as given: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** A commander argument parser for a whole number of at least `min`. */
export function integerOption(name: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`${name} takes a whole number >= ${min}, got '${value}'`);
    }
    return n;
  };
}

/** A commander argument parser for a positive number (fractions allowed). */
export function positiveNumberOption(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
      throw new InvalidArgumentError(`${name} takes a positive number, got '${value}'`);
    }
    return n;
  };
}
