import type { Tier1Reason } from '@engram/domain';
import { useEffect, useState } from 'preact/hooks';
import { api, type Tier1Plan } from '../api.js';
import { href } from '../router.js';

const REASONS: Readonly<Record<Tier1Reason, string>> = {
  included: 'In the block',
  budget: 'Left out: the block was full',
  category: 'Never in Tier 1: decision, gotcha or uncategorized fact (found by memory_search)',
  decayed: 'Left out: confidence decayed too low',
  not_recent: 'Left out: environment/project fact not used in the last 7 days',
  archived: 'Archived',
};
const ORDER: readonly Tier1Reason[] = ['included', 'budget', 'decayed', 'not_recent', 'category'];

/** The Tier 1 block byte for byte as injected into the system prompt, and why each entry is or is not in it. */
export function Tier1Page({ pool }: { pool: string }) {
  const [plan, setPlan] = useState<Tier1Plan | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setPlan(null);
    api.tier1(pool).then(setPlan, (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
  }, [pool]);
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!plan) return <p aria-busy="true">Loading…</p>;
  return (
    <section aria-labelledby="tier1-title">
      <h1 id="tier1-title">What the model sees in {pool}</h1>
      <p>
        Every request through Engram gets this block in its system message, exactly these bytes:{' '}
        <strong data-testid="tier1-size">
          {plan.chars} of {plan.maxChars} characters
        </strong>
        , {plan.tokens} tokens (o200k), {plan.ids.length} entries. With the memory tools, memory adds {plan.promptTokens} tokens to each request.
      </p>
      {plan.block === '' ? (
        <p class="note">The block is empty: nothing in this pool qualifies, so nothing is injected.</p>
      ) : (
        <pre class="block" aria-label="Tier 1 block as injected" tabIndex={0}>
          {plan.block}
        </pre>
      )}
      {ORDER.map((reason) => {
        const entries = plan.entries.filter((decision) => decision.reason === reason);
        const count = plan.counts[reason] ?? 0;
        if (count === 0) return null;
        return (
          <section key={reason} class="reason" data-reason={reason} aria-labelledby={`reason-${reason}`}>
            <h2 id={`reason-${reason}`}>
              {REASONS[reason]} <span class="count">({count})</span>
            </h2>
            <ul>
              {entries.map(({ entry, confidence }) => (
                <li key={entry.id} data-id={entry.id}>
                  <a href={href({ page: 'history', pool, id: entry.id })}>{entry.content}</a>{' '}
                  <span class="meta">
                    {entry.category ?? entry.type.toLowerCase()}, {confidence.toFixed(1)}
                  </span>
                </li>
              ))}
              {count > entries.length && <li class="meta">…and {count - entries.length} more</li>}
            </ul>
          </section>
        );
      })}
    </section>
  );
}
