/**
 * The LoCoMo retrieval protocol of ../shared/data/README.md: every turn one memory
 * `"<speaker> (<session date>): <text>"`, every question of categories 1-4 with evidence searched
 * with limit 10, recall@k = share of questions with an evidence turn among the first k results.
 * The data set is read where it lives (never copied into this repository).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocomoTurn {
  readonly diaId: string;
  readonly content: string;
}

export interface LocomoQuestion {
  readonly question: string;
  readonly category: number;
  readonly evidence: readonly string[];
}

export interface LocomoConversation {
  readonly id: string;
  readonly turns: readonly LocomoTurn[];
  readonly questions: readonly LocomoQuestion[];
}

interface RawTurn {
  readonly speaker: string;
  readonly dia_id: string;
  readonly text: string;
}

interface RawSample {
  readonly sample_id: string;
  readonly conversation: Readonly<Record<string, unknown>>;
  readonly qa: readonly { question: string; category: number; evidence?: readonly string[] }[];
}

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Where the dev set is: `ENGRAM_LOCOMO`, else `../shared/data/locomo-dev.json` beside the repository. */
export function locomoPath(): string {
  return process.env['ENGRAM_LOCOMO'] ?? resolve(repoRoot, '../shared/data/locomo-dev.json');
}

/** The conversations of a LoCoMo file, or null when the file is absent. */
export function loadLocomo(path = locomoPath()): LocomoConversation[] | null {
  if (!existsSync(path)) return null;
  const samples = JSON.parse(readFileSync(path, 'utf8')) as RawSample[];
  return samples.map((sample) => ({
    id: sample.sample_id,
    turns: turnsOf(sample.conversation),
    questions: sample.qa
      .filter((qa) => qa.category >= 1 && qa.category <= 4 && (qa.evidence?.length ?? 0) > 0)
      .map((qa) => ({ question: String(qa.question), category: qa.category, evidence: qa.evidence ?? [] })),
  }));
}

function turnsOf(conversation: Readonly<Record<string, unknown>>): LocomoTurn[] {
  const sessions = Object.keys(conversation)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  return sessions.flatMap((n) => {
    const date = String(conversation[`session_${n}_date_time`] ?? '');
    return (conversation[`session_${n}`] as RawTurn[]).map((turn) => ({
      diaId: turn.dia_id,
      content: `${turn.speaker} (${date}): ${turn.text}`,
    }));
  });
}

export const CATEGORY_NAMES: Readonly<Record<number, string>> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

export interface QuestionOutcome {
  readonly category: number;
  /** 1-based rank of the first evidence turn among the results, or null when none is there. */
  readonly firstHit: number | null;
}

export function firstHit(resultDiaIds: readonly (string | undefined)[], evidence: readonly string[]): number | null {
  const index = resultDiaIds.findIndex((diaId) => diaId !== undefined && evidence.includes(diaId));
  return index < 0 ? null : index + 1;
}

export function recallAt(outcomes: readonly QuestionOutcome[], k: number): number {
  if (outcomes.length === 0) return Number.NaN;
  return outcomes.filter((outcome) => outcome.firstHit !== null && outcome.firstHit <= k).length / outcomes.length;
}
