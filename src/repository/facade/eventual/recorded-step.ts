import type { WriteMode } from "../../../store/table-store.js";
import type { StepOp } from "./eventual-transaction.js";
import type { EncodedWire } from "./wire-json.js";

/** One step as recorded in the intent: enough to replay it without the caller's instance. */
export interface RecordedStep {
  op: StepOp;
  /** The entity's logical table and type: how repair finds its class in the context's registry. */
  table: string;
  type: string;
  /** The physical table (prefix and period applied). */
  at: string;
  /**
   * Entities with secondary indexes or summaries can only be replayed through their class (copies and
   * summary rows derive from it).
   */
  indexed: boolean;
  mode: WriteMode;
  /** The version the step is conditional on: an ETag, or `null` for "absent". */
  expect: string | null;
  wire: EncodedWire;
}
