import { CATEGORIES, MEMORY_SOURCES, MEMORY_TYPES, type Category, type MemoryType } from '@engram/domain';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ListedEntry, type MemoryFilters } from '../api.js';
import { PurgeDialog } from '../components/purge-dialog.js';
import { ago, percent, when } from '../format.js';
import { href } from '../router.js';

const PAGE_SIZE = 100;

/** A pool's entries: server-side paging and search, filters, inline edits, adding by hand. */
export function MemoriesPage({ pool }: { pool: string }) {
  const [filters, setFilters] = useState<MemoryFilters>({ sort: 'created' });
  const [query, setQuery] = useState('');
  const [rows, setRows] = useState<ListedEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [purging, setPurging] = useState<ListedEntry | null>(null);
  const generation = useRef(0);

  const load = async (next: string | null): Promise<void> => {
    const mine = next === null ? ++generation.current : generation.current;
    setLoading(true);
    try {
      const page = await api.memories(pool, filters, next, PAGE_SIZE);
      if (mine !== generation.current) return;
      setRows((previous) => (next === null ? page.data : [...previous, ...page.data]));
      setCursor(page.nextCursor);
      setError(null);
    } catch (failure) {
      if (mine === generation.current) setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  };
  useEffect(() => {
    void load(null);
  }, [pool, filters]);

  const replace = (entry: ListedEntry | null, id: string) =>
    setRows((previous) => (entry ? previous.map((row) => (row.id === id ? { ...row, ...entry } : row)) : previous.filter((row) => row.id !== id)));
  const act = async (id: string, change: Promise<unknown>, stays: (entry: ListedEntry) => boolean): Promise<void> => {
    try {
      const entry = (await change) as ListedEntry;
      replace(stays(entry) ? entry : null, id);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };
  const set = (patch: Partial<Record<keyof MemoryFilters, string>>) => {
    const next: Record<string, unknown> = { ...filters };
    for (const [name, value] of Object.entries(patch)) {
      if (value === '' || value === undefined) delete next[name];
      else next[name] = value === 'true' ? true : value === 'false' ? false : value;
    }
    setFilters(next as MemoryFilters);
  };
  const matchesView = (entry: ListedEntry) => entry.isArchived === (filters.archived === true);

  return (
    <section aria-labelledby="memories-title">
      <div class="heading">
        <h1 id="memories-title">Memories of {pool}</h1>
      </div>
      <AddEntry pool={pool} onAdded={(entry) => setRows((previous) => [{ ...entry, effectiveConfidence: entry.confidence }, ...previous])} />
      <form
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          set({ q: query.trim() });
        }}
      >
        <label>
          Search
          <input type="search" value={query} onInput={(event) => setQuery(event.currentTarget.value)} placeholder="the same search the model uses" />
        </label>
        <button type="submit">Search</button>
        <Select label="Type" value={filters.type} options={MEMORY_TYPES} any="any type" onChange={(type) => set({ type })} />
        <Select label="Category" value={filters.category} options={CATEGORIES} any="any category" onChange={(category) => set({ category })} />
        <Select
          label="Confirmed"
          value={bool(filters.confirmed)}
          options={['true', 'false']}
          names={['confirmed', 'not confirmed']}
          any="confirmed or not"
          onChange={(confirmed) => set({ confirmed })}
        />
        <Select
          label="Shown"
          value={bool(filters.archived) ?? 'false'}
          options={['false', 'true']}
          names={['active', 'archived']}
          onChange={(archived) => set({ archived })}
        />
        <Select label="Source" value={filters.source} options={MEMORY_SOURCES} any="any source" onChange={(source) => set({ source })} />
        <Select
          label="Sort by"
          value={filters.sort}
          options={['created', 'last_used', 'confidence']}
          names={['newest first', 'last used', 'effective confidence']}
          onChange={(sort) => set({ sort })}
        />
      </form>
      {filters.q && (
        <p class="note">
          Best matches for “{filters.q}”, ranked as the model’s memory_search ranks them.{' '}
          <button
            type="button"
            class="link"
            onClick={() => {
              setQuery('');
              set({ q: '' });
            }}
          >
            Clear search
          </button>
        </p>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table class="memories" aria-busy={loading}>
          <caption class="visually-hidden">Entries of {pool}</caption>
          <thead>
            <tr>
              <th scope="col">Content</th>
              <th scope="col">Category</th>
              <th scope="col">Confidence</th>
              <th scope="col">Last used</th>
              <th scope="col">Created</th>
              <th scope="col">Source</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((entry) => (
              <Row
                key={entry.id}
                pool={pool}
                entry={entry}
                onSave={(change) => act(entry.id, api.update(pool, entry.id, change), matchesView)}
                onConfirm={() =>
                  act(
                    entry.id,
                    api.update(pool, entry.id, { confirmed: !entry.isConfirmed }),
                    (next) => matchesView(next) && (filters.confirmed === undefined || next.isConfirmed === filters.confirmed),
                  )
                }
                onArchive={(archived) => act(entry.id, api.update(pool, entry.id, { archived }), matchesView)}
                onPurge={() => setPurging(entry)}
              />
            ))}
          </tbody>
        </table>
      </div>
      <p class="status" aria-live="polite">
        {loading ? 'Loading…' : rows.length === 0 ? 'No entries match.' : `${rows.length} shown${cursor ? ', more below' : ''}.`}
      </p>
      {cursor && !loading && (
        <button type="button" onClick={() => void load(cursor)}>
          Load {PAGE_SIZE} more
        </button>
      )}
      {purging && (
        <PurgeDialog
          entry={purging}
          onCancel={() => setPurging(null)}
          onPurge={async () => {
            const id = purging.id;
            setPurging(null);
            try {
              await api.purge(pool, id);
              replace(null, id);
            } catch (failure) {
              setError(failure instanceof Error ? failure.message : String(failure));
            }
          }}
        />
      )}
    </section>
  );
}

function bool(value: boolean | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}

function Select({
  label,
  value,
  options,
  names,
  any,
  onChange,
}: {
  label: string;
  value: string | undefined;
  options: readonly string[];
  names?: readonly string[];
  any?: string;
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <select value={value ?? ''} onChange={(event) => onChange(event.currentTarget.value)}>
        {any && <option value="">{any}</option>}
        {options.map((option, index) => (
          <option key={option} value={option}>
            {names?.[index] ?? option}
          </option>
        ))}
      </select>
    </label>
  );
}

function Row({
  pool,
  entry,
  onSave,
  onConfirm,
  onArchive,
  onPurge,
}: {
  pool: string;
  entry: ListedEntry;
  onSave: (change: { content: string; category: Category | null }) => Promise<void>;
  onConfirm: () => Promise<void>;
  onArchive: (archived: boolean) => Promise<void>;
  onPurge: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [content, setContent] = useState(entry.content);
  const [category, setCategory] = useState<Category | ''>(entry.category ?? '');
  const low = entry.effectiveConfidence < 0.3;
  return (
    <tr data-id={entry.id} class={entry.isArchived ? 'archived' : undefined}>
      <td class="content">
        {editing ? (
          <form
            class="edit"
            onSubmit={(event) => {
              event.preventDefault();
              void onSave({ content, category: category === '' ? null : category }).then(() => setEditing(false));
            }}
          >
            <label class="visually-hidden" for={`content-${entry.id}`}>
              Content
            </label>
            <textarea id={`content-${entry.id}`} value={content} rows={3} onInput={(event) => setContent(event.currentTarget.value)} />
            <label>
              Category
              <select value={category} onChange={(event) => setCategory(event.currentTarget.value as Category | '')}>
                <option value="">none</option>
                {CATEGORIES.map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Save</button>
            <button
              type="button"
              class="quiet"
              onClick={() => {
                setEditing(false);
                setContent(entry.content);
                setCategory(entry.category ?? '');
              }}
            >
              Cancel
            </button>
          </form>
        ) : (
          <>
            <span class="text">{entry.content}</span>
            <span class="meta">
              <code>{entry.id}</code> · {typeLabel(entry.type)}
              {entry.isConfirmed && <span class="chip ok">confirmed</span>}
              {entry.isArchived && <span class="chip">archived</span>}
            </span>
          </>
        )}
      </td>
      <td>{entry.category ?? '—'}</td>
      <td class={low ? 'num low' : 'num'} title={`stored ${percent(entry.confidence)}`}>
        {percent(entry.effectiveConfidence)}
      </td>
      <td title={when(entry.lastReferenced)}>{ago(entry.lastReferenced)}</td>
      <td title={when(entry.createdAt)}>{ago(entry.createdAt)}</td>
      <td>{entry.source}</td>
      <td class="actions">
        {!editing && (
          <button type="button" onClick={() => setEditing(true)} aria-label={`Edit ${entry.id}`}>
            Edit
          </button>
        )}
        <button type="button" onClick={() => void onConfirm()} aria-label={`${entry.isConfirmed ? 'Unconfirm' : 'Confirm'} ${entry.id}`}>
          {entry.isConfirmed ? 'Unconfirm' : 'Confirm'}
        </button>
        <button
          type="button"
          onClick={() => void onArchive(!entry.isArchived)}
          aria-label={`${entry.isArchived ? 'Restore' : 'Archive'} ${entry.id}`}
        >
          {entry.isArchived ? 'Restore' : 'Archive'}
        </button>
        <button type="button" class="danger" onClick={onPurge} aria-label={`Purge ${entry.id}`}>
          Purge
        </button>
        <a href={href({ page: 'history', pool, id: entry.id })} aria-label={`History of ${entry.id}`}>
          History
        </a>
      </td>
    </tr>
  );
}

function typeLabel(type: MemoryType): string {
  return type === 'USER' ? 'about you' : 'about the work';
}

function AddEntry({ pool, onAdded }: { pool: string; onAdded: (entry: ListedEntry) => void }) {
  const [content, setContent] = useState('');
  const [type, setType] = useState<MemoryType | ''>('');
  const [category, setCategory] = useState<Category | ''>('');
  const [error, setError] = useState<string | null>(null);
  return (
    <details class="add">
      <summary>Add an entry by hand</summary>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          api
            .create(pool, { content, ...(type ? { type } : {}), ...(category ? { category } : {}) })
            .then((entry) => {
              onAdded({ ...entry, effectiveConfidence: entry.confidence });
              setContent('');
              setError(null);
            })
            .catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
        }}
      >
        <label for="new-content">What should Engram remember?</label>
        <textarea id="new-content" rows={2} value={content} onInput={(event) => setContent(event.currentTarget.value)} required />
        <label>
          Type
          <select value={type} onChange={(event) => setType(event.currentTarget.value as MemoryType | '')}>
            <option value="">from the category</option>
            <option value="USER">USER (about you)</option>
            <option value="MEMORY">MEMORY (about the work)</option>
          </select>
        </label>
        <label>
          Category
          <select value={category} onChange={(event) => setCategory(event.currentTarget.value as Category | '')}>
            <option value="">none</option>
            {CATEGORIES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Add</button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </details>
  );
}
