import type { Category } from './memory-entry.js';

/** A cue is a whole-word pattern (case-insensitive) and how strongly it points at a category. */
type Cue = readonly [pattern: string, weight: number];

/**
 * Keyword cues per category. Strong cues (2) name the category almost on their own; weak cues (1)
 * only tip the balance. Failure words (3) win over the setting they happened in: "Docker crashed on
 * M1" is a gotcha, not an environment fact. Each cue counts once per entry, so a repeated word cannot dominate.
 */
const CUES: Readonly<Record<Category, readonly Cue[]>> = {
  preference: [
    ['prefer\\w*', 2],
    ['favou?rite', 2],
    ['dislike[sd]?', 2],
    ['hates?', 2],
    ['likes?', 1],
    ['loves?', 1],
    ['style', 1],
    ['tone', 1],
    ['concise', 1],
    ['verbose', 1],
    ['rather', 1],
    ['wants?', 1],
    ['always (?:use|write|answer|reply|respond)', 1],
    ['tabs', 1],
    ['spaces', 1],
    ['formatting', 1],
    ['bullet[- ]?points?', 1],
    ['feedback', 1],
  ],
  person: [
    ['my name', 2],
    ['(?:is )?called', 1],
    ['named', 1],
    ['colleague', 2],
    ['teammate', 2],
    ['manager', 2],
    ['boss', 2],
    ['cto|ceo', 2],
    ['wife|husband|partner|daughter|son', 2],
    ['friend', 1],
    ['birthday', 2],
    ['time ?zone', 2],
    ['lives in', 2],
    ['works (?:at|for|as)', 2],
    ['role', 1],
    ['pronouns?', 2],
    ['email', 1],
    ['(?:he|she|they) (?:is|are)', 1],
  ],
  environment: [
    ['mac ?os|macbook|osx', 2],
    ['linux|ubuntu|debian|fedora|arch', 2],
    ['windows|wsl2?', 2],
    ['zsh|bash|fish', 2],
    ['shell', 1],
    ['terminal', 2],
    ['warp', 1],
    ['homebrew|brew', 2],
    ['vs ?code|neovim|n?vim|emacs|jetbrains|intellij', 2],
    ['editor', 1],
    ['docker', 1],
    ['installed', 1],
    ['laptop|machine|workstation|desktop', 1],
    ['m[1-4]', 1],
    ['arm64|x86(?:_64)?', 2],
    ['gpu|cuda', 1],
    ['path', 1],
    ['env(?:ironment)?(?: variables?)?', 1],
    ['dotfiles', 2],
    ['os', 1],
  ],
  project: [
    ['project', 2],
    ['repo(?:sitory)?', 2],
    ['codebase', 2],
    ['monorepo', 2],
    ['architecture', 2],
    ['uses', 1],
    ['built (?:with|on)', 1],
    ['stack', 1],
    ['framework', 1],
    ['library', 1],
    ['api', 1],
    ['service', 1],
    ['endpoints?', 1],
    ['database|schema', 1],
    ['deploy(?:s|ed|ment)?', 1],
    ['module', 1],
    ['feature', 1],
    ['backend|frontend', 1],
    ['ci', 1],
  ],
  decision: [
    ['decided', 2],
    ['decisions?', 2],
    ['chose|chosen|choose', 2],
    ['went with', 2],
    ['ruled out', 2],
    ['rejected', 2],
    ['agreed', 2],
    ['opted', 2],
    ['settled on', 2],
    ['switched (?:to|from)', 1],
    ['instead of', 1],
    ['because', 1],
    ['trade-?offs?', 1],
    ['we will', 1],
    ['adopt(?:ed)?', 1],
  ],
  gotcha: [
    ['gotchas?', 2],
    ['bugs?', 3],
    ['crash\\w*', 3],
    ['workaround', 3],
    ['pitfall', 2],
    ['caveat', 2],
    ['beware', 2],
    ['watch out', 2],
    ['flaky', 2],
    ["(?:does ?n[o']?t|doesn't|won't|will not) work", 3],
    ['fails?|failing|failed', 3],
    ['broke|broken|breaks', 3],
    ['error', 1],
    ['issue', 1],
    ['careful', 1],
    ['hangs?', 1],
    ['times? out|timeout', 1],
    ['leaks?', 1],
    ['must not|never', 1],
  ],
};

const COMPILED: readonly (readonly [Category, RegExp, number])[] = Object.entries(CUES).flatMap(([category, cues]) =>
  cues.map(([pattern, weight]) => [category as Category, new RegExp(`\\b(?:${pattern})\\b`, 'i'), weight] as const),
);

export interface CategoryVerdict {
  /** The winning category, or null when the evidence is too weak or too close to call. */
  readonly category: Category | null;
  readonly scores: Readonly<Record<Category, number>>;
  /** Best score minus the runner-up's. */
  readonly margin: number;
}

export interface CategorizerOptions {
  /** The best category needs at least this score (one strong cue, or two weak ones). */
  readonly minScore?: number;
  /** ...and must lead the runner-up by at least this much. */
  readonly minMargin?: number;
}

/** Keyword scoring into the six categories; below the margin the category stays null (a person or the model decides). */
export function categorizeContent(content: string, options: CategorizerOptions = {}): CategoryVerdict {
  const minScore = options.minScore ?? 2;
  const minMargin = options.minMargin ?? 1;
  const scores: Record<Category, number> = {
    preference: 0,
    person: 0,
    environment: 0,
    project: 0,
    decision: 0,
    gotcha: 0,
  };
  for (const [category, pattern, weight] of COMPILED) {
    if (pattern.test(content)) scores[category] += weight;
  }
  const ranked = (Object.entries(scores) as [Category, number][]).sort((a, b) => b[1] - a[1]);
  const [bestCategory, bestScore] = ranked[0] ?? ['preference', 0];
  const secondScore = ranked[1]?.[1] ?? 0;
  const margin = bestScore - secondScore;
  const category = bestScore >= minScore && margin >= minMargin ? bestCategory : null;
  return { category, scores, margin };
}
