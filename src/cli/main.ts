#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { TableKitError } from "../errors.js";
import { runInit } from "./init.js";
import { addMovementCommands } from "./movement-commands.js";
import { UsageError } from "./options.js";
import { packageVersion } from "./package-version.js";
import { addReshardCommand } from "./reshard.js";
import { addServeCommand } from "./serve.js";

/** The `tablekit` program: every command, with help, version and option errors. */
export function createProgram(): Command {
  const program = new Command("tablekit")
    .description("tablekit: Azure Table Storage tools (an emulator and data movement)")
    .version(packageVersion() ?? "unknown", "-v, --version", "print the version")
    .helpOption("-h, --help", "print this help")
    .showHelpAfterError()
    // Set before the commands are added, so each inherits it: errors come back as CommanderError.
    .exitOverride()
    .configureHelp({ sortSubcommands: false });
  addServeCommand(program);
  program
    .command("init")
    .description("Writes a runnable tablekit project (npm install && npm start && npm test need no server).")
    .argument("[dir]", "the project folder (created if missing; must be empty)", ".")
    .option("--force", "write into a folder that is not empty")
    .action((dir: string, flags: { force?: boolean }) => {
      const result = runInit(dir, { force: flags.force });
      process.stdout.write(
        `tablekit init: wrote ${result.files.length} files to ${result.dir}\n` +
          `Next: cd ${dir} && npm install && npm start && npm test\n`,
      );
    });
  addMovementCommands(program);
  addReshardCommand(program);
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
