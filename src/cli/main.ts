#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { TableKitError } from "../errors.js";
import { addMovementCommands } from "./movement-commands.js";
import { UsageError } from "./options.js";
import { addServeCommand } from "./serve.js";

/**
 * The version of the installed package: the nearest package.json named "tablekit" above this file
 * (src/cli and dist/esm/cli sit two folders below it; a bundle may sit elsewhere in the tree).
 */
function packageVersion(): string {
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
    if (parent === dir) return "unknown";
    dir = parent;
  }
}

/** The `tablekit` program: every command, with help, version and option errors. */
export function createProgram(): Command {
  const program = new Command("tablekit")
    .description("tablekit: Azure Table Storage tools (an emulator and data movement)")
    .version(packageVersion(), "-v, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .showHelpAfterError()
    // Set before the commands are added, so each inherits it: errors come back as CommanderError.
    .exitOverride()
    .configureHelp({ sortSubcommands: false });
  addServeCommand(program);
  addMovementCommands(program);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  if (argv.length === 0) {
    // `tablekit` alone prints the help and succeeds.
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end the run with code 0; an option error (already printed with the usage) with 2.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`tablekit: ${error.message}\n`);
      return 2;
    }
    const message = error instanceof TableKitError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`tablekit: ${message}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`tablekit: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
