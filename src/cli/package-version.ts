import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The version of the installed package: the nearest package.json named "tablekit" above this file
 * (src/cli and dist/esm/cli sit two folders below it; a bundle chunk may sit elsewhere in the tree).
 * `undefined` when none is found.
 */
export function packageVersion(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "tablekit" && manifest.version !== undefined) return manifest.version;
    } catch {
      // No manifest here: look further up.
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
