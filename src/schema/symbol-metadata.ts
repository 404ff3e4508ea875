// Standard decorators get a `context.metadata` object (shared by a class's member and class decorators,
// and inherited by subclasses) only where `Symbol.metadata` exists: TypeScript's emit checks for it at
// class definition, and Node 20 lacks it. Defining it here, before any entity class is evaluated, is
// the polyfill TypeScript's 5.2 release notes suggest; `Symbol.for` matches esbuild's own fallback.
(Symbol as { metadata?: symbol }).metadata ??= Symbol.for("Symbol.metadata");
