import { describe, expect, it } from '@jest/globals';
import { categorizeContent } from './categorizer.js';

describe('categorizeContent', () => {
  it.each([
    ['User prefers concise bullet-point responses', 'preference'],
    ['My colleague Anna is the manager of the infra team', 'person'],
    ['User runs zsh on macOS with Homebrew', 'environment'],
    ['The project uses Express and a SQLite database', 'project'],
    ['We decided to use SQLite instead of Postgres because it is simpler', 'decision'],
    ['Docker daemon crashed on M1', 'gotcha'],
    ['The deploy fails when the CI cache is stale', 'gotcha'],
  ] as const)('%s -> %s', (content, category) => {
    expect(categorizeContent(content).category).toBe(category);
  });

  it('leaves the category null when nothing points anywhere', () => {
    const verdict = categorizeContent('hello world');
    expect(verdict.category).toBeNull();
    expect(verdict.margin).toBe(0);
  });

  it('leaves the category null when two categories tie', () => {
    // One strong project cue, one strong decision cue.
    const verdict = categorizeContent('The repository was rejected');
    expect(verdict.scores.project).toBe(verdict.scores.decision);
    expect(verdict.category).toBeNull();
  });

  it('leaves the category null below the minimum score', () => {
    expect(categorizeContent('it uses something').category).toBeNull();
    expect(categorizeContent('it uses something', { minScore: 1 }).category).toBe('project');
  });

  it('counts a cue once, so repeating a word does not win', () => {
    expect(categorizeContent('bug bug bug bug').scores.gotcha).toBe(categorizeContent('bug').scores.gotcha);
  });

  it('matches whole words only', () => {
    expect(categorizeContent('debugging the architecture').scores.gotcha).toBe(0);
  });
});
