import type { StoredEntity, TransactionAction, WireEntity, WriteResult } from "../../store/table-store.js";

/** One entity write as a companion sees it: the state it is conditional on and the row it leaves. */
export interface CompanionWrite {
  partitionKey: string;
  rowKey: string;
  /** The ETag the entity's action is conditional on; undefined for an insert (the entity is absent). */
  condition: string | undefined;
  /** The stored row at `condition`, when the writer has read it already (saves the companion a read). */
  before: StoredEntity | undefined;
  /** The row the write stores (replace semantics); undefined for a delete. */
  after: WireEntity | undefined;
}

/**
 * Rows that ride in an entity's own entity group transaction besides its copies (e.g. summary rows):
 * planned afresh each round from what is stored, appended last, each conditional on its own ETag, so
 * another writer's change in between fails the whole transaction and the round is planned again.
 */
export interface GroupCompanion {
  /** The RowKeys of the rows it adds (each once per transaction), for the rules checked before sending. */
  readonly rowKeys: readonly string[];
  /** The actions of this round; round 1 may trust cached state, later rounds (after a lost race) read. */
  plan(round: number): Promise<TransactionAction[]>;
  /** The transaction committed: the results of this round's companion actions (undefined: answer lost). */
  committed(results: readonly WriteResult[] | undefined): void;
  /**
   * A submit failed in a way that is not a definite refusal (lost answer, exhausted retries): whether
   * the transaction committed (`applied`), certainly did not (`retry`), or cannot be told (throws).
   * `undefined` leaves the error to the writer's own rules.
   */
  settle(error: unknown): Promise<"applied" | "retry" | undefined>;
  /** A step before the commit (a remote summary's intent), awaited before the transaction is sent. */
  before?(): Promise<void>;
  /** Steps after the commit (a remote summary's contribution mirrored, its intent removed). */
  after?(): Promise<void>;
  /** The commit failed: undoes what `before` did where that is safe. */
  abandon?(error: unknown): Promise<void>;
  /**
   * What the stage sends, for a write's plan (`explainWrite`): its steps before the commit, the reads
   * of its first round, its rows in the transaction, its steps after it. Without it, the rows are
   * rendered by RowKey only.
   */
  describe?(): StageDescription;
}

/** A stage's part of a rendered plan (see `GroupCompanion.describe`). */
export interface StageDescription {
  /** What `before` sends (the first step runs it), before the commit's first round. */
  before: StepTarget[];
  /**
   * The reads its first round makes (`plan(1)`): sent as the commit's first round is planned, so after
   * every stage's `before`, beside the other stages' reads.
   */
  reads: StepTarget[];
  operations: PlanOperation[];
  /** What `after` sends (the first step runs it). */
  after: StepTarget[];
}

/** What one step of a plan sends: its request, the table (or a blob's container) and the keys it goes to. */
export interface StepTarget {
  request: string;
  table: string;
  partitionKey?: string;
  rowKey?: string;
}

/** One operation of a plan's entity group transaction, as rendered. */
export interface PlanOperation {
  kind: string;
  rowKey: string;
}

/** Where an entity writer gets companions for its writes; `assertKey` refuses entity keys a companion owns. */
export interface CompanionSource {
  /** Most actions one write's companion adds (room the writer leaves in a transaction). */
  readonly reserved: number;
  assertKey(rowKey: string): void;
  companion(write: CompanionWrite): GroupCompanion;
}
