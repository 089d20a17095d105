import type { PoolSummary } from '../api.js';
import { ago, when } from '../format.js';
import { href } from '../router.js';

export function PoolsPage({ pools, onRefresh }: { pools: PoolSummary[]; onRefresh: () => void }) {
  return (
    <section aria-labelledby="pools-title">
      <div class="heading">
        <h1 id="pools-title">Pools</h1>
        <button type="button" class="quiet" onClick={onRefresh}>
          Refresh
        </button>
      </div>
      {pools.length === 0 ? (
        <p>No pool has memories yet. Talk to a tool through Engram, or add an entry by hand in a pool.</p>
      ) : (
        <ul class="cards">
          {pools.map((pool) => (
            <li key={pool.pool} class="card" data-pool={pool.pool}>
              <h2>
                <a href={href({ page: 'memories', pool: pool.pool })}>{pool.pool}</a>
              </h2>
              <dl>
                <dt>Active</dt>
                <dd>{pool.active}</dd>
                <dt>Archived</dt>
                <dd>{pool.archived}</dd>
                <dt>Last change</dt>
                <dd title={when(pool.lastChangedAt)}>{ago(pool.lastChangedAt)}</dd>
                <dt>Tier 1</dt>
                <dd>
                  {pool.tier1.chars} chars, {pool.tier1.tokens} tokens, {pool.tier1.ids} entries
                </dd>
              </dl>
              {Object.keys(pool.byCategory).length > 0 && (
                <p class="categories" aria-label="Active entries per category">
                  {Object.entries(pool.byCategory)
                    .sort(([a], [b]) => a.localeCompare(b))
                    .map(([category, count]) => (
                      <span key={category} class="chip">
                        {category} {count}
                      </span>
                    ))}
                </p>
              )}
              <p class="links">
                <a href={href({ page: 'tier1', pool: pool.pool })}>What the model sees</a>
                <a href={href({ page: 'activity', pool: pool.pool })}>Activity</a>
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
