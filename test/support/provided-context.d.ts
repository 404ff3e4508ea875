import "vitest";

declare module "vitest" {
  /** Values the global setup hands to tests through `inject`. */
  export interface ProvidedContext {
    /** Connection string of the Azurite Table service (or of `TABLEKIT_TEST_CONNECTION_STRING`). */
    azuriteConnectionString: string;
    /** Connection string of the `tablekit serve` started for the run ("" when not selected). */
    serveConnectionString: string;
  }
}
