import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './compose.js';

export interface ReadmeBlock {
  readonly lang: string;
  readonly text: string;
}

/** The fenced code blocks of a Markdown text, in order. */
export function fencedBlocks(markdown: string): ReadmeBlock[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1] ?? '', text: match[2] ?? '' }));
}

/** The fenced code blocks of README.md, in order. */
export function readmeBlocks(): ReadmeBlock[] {
  return fencedBlocks(readFileSync(join(repoRoot, 'README.md'), 'utf8'));
}

/** Every shell command of the README's `sh` blocks: continuation lines joined, trailing comments cut. */
export function readmeCommands(): string[] {
  return readmeBlocks()
    .filter((block) => block.lang === 'sh')
    .flatMap((block) =>
      block.text
        .replace(/\\\n\s*/g, '')
        .split('\n')
        .map((line) => line.replace(/\s+#\s.*$/, '').trim())
        .filter((line) => line !== '' && !line.startsWith('#')),
    );
}
