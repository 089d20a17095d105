import { isCategory, type Category, type MemoryEntry, type MemoryType } from '@engram/domain';

export const ENTRY_SEPARATOR = '§';
export const FLAT_FILES: Readonly<Record<MemoryType, string>> = { USER: 'USER.md', MEMORY: 'MEMORY.md' };

/** What a flat file says about one entry: enough to restore it when the log is lost. */
export interface FlatEntry {
  readonly id: string;
  readonly category: Category | null;
  readonly content: string;
}

const HEADER_PREFIX = '<!-- engram';
const ENTRY_HEAD = /^\[id:([A-Za-z0-9_-]+)\] \(([a-z]+)\)(?: |$)/;
const UNCATEGORIZED = 'uncategorized';

/**
 * A pool's flat file: a comment line, then the active entries of one type, oldest first, separated
 * by a line holding only `§`. Each entry starts `[id:<id>] (<category>) `. A content line that is
 * itself only backslashes and `§` gets one more backslash, so it never reads as a separator.
 */
export function renderFlatFile(pool: string, type: MemoryType, entries: readonly MemoryEntry[]): string {
  return joinFlatFile(pool, type, entries.map(renderFlatBlock));
}

/** One entry as its flat-file block. */
export function renderFlatBlock(entry: MemoryEntry): string {
  return `[id:${entry.id}] (${entry.category ?? UNCATEGORIZED}) ${escapeContent(entry.content)}`;
}

/** What goes between two blocks. */
export const FLAT_SEPARATOR_LINE = `\n${ENTRY_SEPARATOR}\n`;

/** A whole flat file from blocks already rendered, oldest first. */
export function joinFlatFile(pool: string, type: MemoryType, blocks: Iterable<string>): string {
  return flatFileText(pool, type, [...blocks].join(FLAT_SEPARATOR_LINE));
}

/** A whole flat file from its blocks already joined with FLAT_SEPARATOR_LINE ('' for none). */
export function flatFileText(pool: string, type: MemoryType, body: string): string {
  return Buffer.concat(flatFileParts(pool, type, [Buffer.from(body)])).toString('utf8');
}

/** The same file as encoded parts, so a writer can hand the (large, cached) body chunks over without copying them. */
export function flatFileParts(pool: string, type: MemoryType, body: readonly Buffer[]): Buffer[] {
  const header = Buffer.from(`${HEADER_PREFIX}: pool ${pool}, ${type} entries, rewritten after each change; edit memory through engram -->\n`);
  const chunks = body.filter((chunk) => chunk.length > 0);
  return chunks.length === 0 ? [header] : [header, ...chunks, NEWLINE];
}

const NEWLINE = Buffer.from('\n');

/** Reads entries back from a flat file; unreadable blocks are reported, not guessed. */
export function parseFlatFile(text: string): { entries: FlatEntry[]; skipped: string[] } {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[0]?.startsWith(HEADER_PREFIX)) lines.shift();
  if (lines.at(-1) === '') lines.pop();
  const blocks: string[][] = [[]];
  for (const line of lines) {
    if (line === ENTRY_SEPARATOR) blocks.push([]);
    else blocks.at(-1)?.push(line);
  }
  const entries: FlatEntry[] = [];
  const skipped: string[] = [];
  for (const block of blocks) {
    const text = block.join('\n');
    if (text.trim() === '') continue;
    const head = ENTRY_HEAD.exec(text);
    const category = head?.[2];
    if (!head?.[1] || category === undefined || (category !== UNCATEGORIZED && !isCategory(category))) {
      skipped.push(text.slice(0, 80));
      continue;
    }
    entries.push({
      id: head[1],
      category: category === UNCATEGORIZED ? null : (category as Category),
      content: unescapeContent(text.slice(head[0].length)),
    });
  }
  return { entries, skipped };
}

function escapeContent(content: string): string {
  return content
    .split('\n')
    .map((line) => (/^\\*§$/.test(line) ? `\\${line}` : line))
    .join('\n');
}

function unescapeContent(content: string): string {
  return content
    .split('\n')
    .map((line) => (/^\\+§$/.test(line) ? line.slice(1) : line))
    .join('\n');
}
