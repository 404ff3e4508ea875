import { ValidationError } from "../../errors.js";
import type { WriteMode } from "../../store/table-store.js";

/** Checks a write mode option: `replace` (the default) or `merge`. */
export function writeMode(mode: WriteMode | undefined): WriteMode {
  if (mode === undefined) return "replace";
  if (mode !== "replace" && mode !== "merge") {
    throw new ValidationError("mode", `mode must be "replace" or "merge", got '${String(mode)}'`, {
      field: "mode",
    });
  }
  return mode;
}
