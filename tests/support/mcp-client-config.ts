import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './compose.js';
import { fencedBlocks, readmeCommands } from './readme.js';

/** Where the README's recipes point; tests swap it for the gateway under test. */
export const README_ORIGIN = 'http://localhost:8080';
/** The placeholder the README uses for the path of a clone. */
const CLONE_PLACEHOLDER = '/path/to/engram';

/** What an MCP client configured over HTTP sends: the endpoint and its headers. */
export interface HttpRecipe {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What an MCP client that launches a local command runs. */
export interface StdioRecipe {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** `open`: the recipe as the README says to use it in open mode (its key left out). */
export interface RecipeOptions {
  readonly origin: string;
  readonly env: Readonly<Record<string, string>>;
  readonly open?: boolean;
}

function mcpSection(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('### MCP: ');
  if (start < 0) throw new Error('README.md has no "### MCP: ..." section');
  return readme.slice(start, readme.indexOf('\n## ', start));
}

function block(lang: string, ...markers: string[]): string {
  const found = fencedBlocks(mcpSection()).find((candidate) => candidate.lang === lang && markers.every((marker) => candidate.text.includes(marker)));
  if (!found) throw new Error(`the README's MCP section lost its ${lang} block with ${markers.join(' and ')}`);
  return found.text;
}

const at = (url: string, origin: string): string => url.replaceAll(README_ORIGIN, origin);

/** The README's `claude mcp add` lines, in order (the first for open mode, the second with keys). */
export function claudeCodeMcpCommands(): string[] {
  return readmeCommands().filter((command) => command.startsWith('claude mcp add '));
}

/** Runs a README `claude mcp add ...` line in a real shell, with a `claude` that hands back what it was given. */
export function claudeCodeRecipe(command: string, { origin, env }: RecipeOptions): HttpRecipe {
  const argv = execFileSync('sh', ['-c', `claude() { printf '%s\\0' "$@"; }; ${command}`], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    encoding: 'utf8',
  })
    .split('\0')
    .slice(0, -1);
  const [mcp, add, ...rest] = argv;
  if (mcp !== 'mcp' || add !== 'add') throw new Error(`not a claude mcp add command: ${command}`);
  const headers: Record<string, string> = {};
  const positional: string[] = [];
  let transport: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--transport') transport = rest[++i];
    else if (arg === '--header') {
      const [name, ...value] = rest[++i]!.split(':');
      headers[name!.trim()] = value.join(':').trim();
    } else if (arg === '--scope') i++;
    else positional.push(arg);
  }
  if (transport !== 'http' || positional.length !== 2) throw new Error(`expected --transport http <name> <url>: ${command}`);
  return { url: at(positional[1]!, origin), headers };
}

/** `~/.cursor/mcp.json`'s server, its `${env:NAME}` values filled in as Cursor does. */
export function cursorRecipe({ origin, env, open = false }: RecipeOptions): HttpRecipe {
  const server = (JSON.parse(block('json', '"mcpServers"', '"url"')) as { mcpServers: { engram: { url: string; headers?: Record<string, string> } } })
    .mcpServers.engram;
  const headers = open
    ? {}
    : Object.fromEntries(
        Object.entries(server.headers ?? {}).map(([name, value]) => [
          name,
          value.replace(/\$\{env:(\w+)\}/g, (_, variable: string) => env[variable] ?? ''),
        ]),
      );
  return { url: at(server.url, origin), headers };
}

/** `opencode.json`'s `mcp.engram`: a remote server, its `{env:NAME}` values filled in as OpenCode does. */
export function openCodeRecipe({ origin, env, open = false }: RecipeOptions): HttpRecipe {
  const server = (
    JSON.parse(block('json', '"mcp"', '"type": "remote"')) as { mcp: { engram: { type: string; url: string; headers?: Record<string, string> } } }
  ).mcp.engram;
  if (server.type !== 'remote') throw new Error('the OpenCode MCP server must be of type remote');
  const headers = open
    ? {}
    : Object.fromEntries(
        Object.entries(server.headers ?? {}).map(([name, value]) => [
          name,
          value.replace(/\{env:(\w+)\}/g, (_, variable: string) => env[variable] ?? ''),
        ]),
      );
  return { url: at(server.url, origin), headers };
}

/** Codex's `[mcp_servers.engram]`: `url`, and `bearer_token_env_var` naming the variable Codex sends as a bearer. */
export function codexRecipe({ origin, env, open = false }: RecipeOptions): HttpRecipe {
  const table = block('toml', '[mcp_servers.engram]').split('[mcp_servers.engram]')[1] ?? '';
  const pairs = Object.fromEntries([...table.matchAll(/^(\w+) = "([^"]*)"$/gm)].map((match) => [match[1], match[2]]));
  if (!pairs['url']) throw new Error('the Codex MCP table lost its url');
  const variable = pairs['bearer_token_env_var'];
  return { url: at(pairs['url'], origin), headers: !open && variable ? { Authorization: `Bearer ${env[variable] ?? ''}` } : {} };
}

/** `claude_desktop_config.json`'s server: the command Claude Desktop launches, in this clone. */
export function claudeDesktopRecipe({ origin, env, open = false }: RecipeOptions): StdioRecipe {
  const server = (
    JSON.parse(block('json', '"command"')) as { mcpServers: { engram: { command: string; args: string[]; env?: Record<string, string> } } }
  ).mcpServers.engram;
  const root = repoRoot.replace(/\/$/, '');
  return {
    command: server.command === 'node' ? process.execPath : server.command,
    args: server.args.map((arg) => at(arg.replace(CLONE_PLACEHOLDER, root), origin)),
    // Claude Desktop passes `env` as written: the test puts its own key in place of the placeholder.
    env: open ? {} : Object.fromEntries(Object.keys(server.env ?? {}).map((name) => [name, env[name] ?? ''])),
  };
}
