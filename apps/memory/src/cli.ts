/**
 * `npx engram <command>`: the operator CLI (docs/DESIGN.md, "Commands"). Answers go to stdout, logs and
 * errors to stderr. Exit codes: 0 success, 1 failure (including `verify` finding a difference and a
 * data dir held by another process), 2 bad usage.
 */
import { Command, CommanderError } from 'commander';
import { backupCommand } from './cli/backup.js';
import { compactCommand } from './cli/compact.js';
import { decryptCommand, encryptCommand, rekeyCommand } from './cli/convert.js';
import { exportCommand } from './cli/export.js';
import { importFlatCommand } from './cli/import-flat.js';
import { keygenCommand } from './cli/keygen.js';
import { logCommand } from './cli/log-copy.js';
import { replayCommand } from './cli/replay.js';
import { restoreCommand } from './cli/restore.js';
import { statsCommand } from './cli/stats.js';
import { verifyCommand } from './cli/verify.js';

// `engram export ... | head`: the reader leaving early is not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const program = new Command('engram')
  .description('Engram operator commands: rebuild, check, recover and inspect the memory data dir; mcp, the stdio MCP bridge')
  // `engram mcp` is the gateway's (apps/gateway/src/cli.ts): the launcher, bin/engram.js, sends it there.
  .addHelpText('after', "\nThe gateway's command:\n  mcp [options]   serve Engram memory to an MCP client over stdio, through a running gateway")
  .showHelpAfterError()
  .exitOverride();
for (const command of [
  replayCommand(),
  verifyCommand(),
  compactCommand(),
  importFlatCommand(),
  exportCommand(),
  statsCommand(),
  backupCommand(),
  restoreCommand(),
  keygenCommand(),
  encryptCommand(),
  decryptCommand(),
  rekeyCommand(),
  logCommand(),
]) {
  program.addCommand(command.exitOverride());
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`engram: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
