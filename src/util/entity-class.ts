/** A class whose instances are entities; constructors are never called by tablekit when reading. */
export type EntityClass<T extends object = object> = abstract new (...args: never[]) => T;
