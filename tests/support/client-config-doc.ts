import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the documented settings point; tests swap it for the gateway under test. */
export const DOC_ORIGIN = 'http://localhost:8080';

const doc = (): string => readFileSync(fileURLToPath(new URL('../../ops/docs/clients-anthropic-responses.md', import.meta.url)), 'utf8');

function section(title: string): string {
  const text = doc();
  const start = text.indexOf(`## ${title}`);
  if (start < 0) throw new Error(`ops/docs/clients-anthropic-responses.md has no "## ${title}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The `export NAME=value` lines of the documented Claude Code set-up, and the documented pool base URL. */
export function claudeCodeSettings(): { readonly env: Readonly<Record<string, string>>; readonly poolBaseUrl: string } {
  const text = section('Claude Code');
  const env = Object.fromEntries([...text.matchAll(/^export (\w+)=(\S+)$/gm)].map((match) => [match[1], match[2]]));
  const pool = /`ANTHROPIC_BASE_URL=(\S+)`/.exec(text)?.[1];
  if (!env['ANTHROPIC_BASE_URL'] || !pool) throw new Error('the Claude Code section lost its ANTHROPIC_BASE_URL settings');
  return { env: env as Record<string, string>, poolBaseUrl: pool };
}

/** The documented `[model_providers.engram]` of Codex's config.toml, and the documented pool base_url. */
export function codexProvider(): { readonly model: string; readonly provider: Readonly<Record<string, string>>; readonly poolBaseUrl: string } {
  const text = section('Codex CLI');
  const toml = /```toml\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const [top = '', table = ''] = toml.split('[model_providers.engram]');
  const pairs = (block: string) => Object.fromEntries([...block.matchAll(/^(\w+) = "([^"]*)"$/gm)].map((match) => [match[1], match[2]]));
  const pool = /`base_url = "([^"]+)"`/.exec(text)?.[1];
  const model = pairs(top)['model'];
  if (!model || !pool || pairs(top)['model_provider'] !== 'engram') throw new Error('the Codex section lost its provider settings');
  return { model, provider: pairs(table) as Record<string, string>, poolBaseUrl: pool };
}
