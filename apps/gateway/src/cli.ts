/**
 * `npx engram mcp`: the gateway's command, MCP over stdio relayed to a running gateway. The `engram`
 * launcher (apps/memory/bin/engram.js) starts it for `mcp`; the memory service's operator commands are
 * apps/memory/src/cli.ts. Exit codes as there: 0 success, 1 failure, 2 bad usage.
 */
import { Command, CommanderError } from 'commander';
import { mcpCommand } from './cli/mcp-bridge.js';

const program = new Command('engram').showHelpAfterError().exitOverride().addCommand(mcpCommand().exitOverride());

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
