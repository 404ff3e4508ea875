#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { connectionStringSecrets, redactSecrets } from "../util/redact-secrets.js";
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
  // Messages name the command once: "tablekit export: …" (a message never starts with "tablekit …").
  const command = program.commands.find((c) => c.name() === argv[0]);
  const prefix = command === undefined ? "tablekit" : `tablekit ${command.name()}`;
  try {
    await program.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end the run with code 0; an option error (already printed with the usage) with 2.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`${prefix}: ${printable(error, argv)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

/**
 * An error's message as the command line prints it: its secrets (those of the connection strings given
 * on the command line or in the environment, and any key, signature or token) as `***`.
 */
function printable(error: unknown, argv: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const given = [...argv, process.env.TABLEKIT_CONNECTION_STRING ?? ""];
  return redactSecrets(message, given.flatMap(connectionStringSecretsIn));
}

/** The secrets of an argument that is (or holds, as `--to=…`) a connection string; none otherwise. */
function connectionStringSecretsIn(argument: string): string[] {
  const value = argument.replace(/^--[a-z-]+=/, "");
  // A connection string is Name=value parts: a filter such as "Name eq 'a;b'" is not one.
  return /^\s*[A-Za-z]+\s*=/.test(value) ? connectionStringSecrets(value) : [];
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`tablekit: ${printable(error, process.argv.slice(2))}\n`);
    process.exit(1);
  },
);
