import { MemoryPattern } from '@engram/contracts';
import { JobName } from '@engram/jobs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because, eventually } from '@engram/testing';
import { ScriptedOpenAiUpstream, say, type ChatReply } from '../support/scripted-openai-upstream.js';
import { startWorkerStack, type WorkerStack } from './worker-stack.js';

const MODEL = 'gpt-scripted';
const FACTS = [
  'Project uses Node 18',
  'User prefers concise answers',
  'Deploys go through GitHub Actions',
  'Project upgraded to Node 20',
  'The user prefers concise answers.',
];

interface Listed {
  readonly id: string;
  readonly content: string;
}

/** The entries the worker sent the model, from its request. */
function entriesOf(body: Record<string, unknown>): Listed[] {
  const messages = body['messages'] as { role: string; content: string }[];
  const user = messages.find((message) => message.role === 'user');
  return (JSON.parse(user?.content ?? '{}') as { entries: Listed[] }).entries;
}

function idOf(entries: readonly Listed[], content: string): string {
  const found = entries.find((entry) => entry.content === content);
  if (!found) throw new Error(`no entry ${content}`);
  return found.id;
}

/** What a good model answers: the Node facts folded into the current one, the duplicate preference merged. */
function goodPlan(entries: readonly Listed[], keep: boolean = true): string {
  return JSON.stringify({
    merges: [
      {
        supersedes: [idOf(entries, FACTS[0] ?? ''), idOf(entries, FACTS[3] ?? '')],
        content: 'Project uses Node 20 (upgraded from 18)',
        type: 'MEMORY',
        category: 'project',
      },
      {
        supersedes: [idOf(entries, FACTS[1] ?? ''), idOf(entries, FACTS[4] ?? '')],
        content: 'User prefers concise answers',
        type: 'MEMORY',
        category: 'preference',
      },
    ],
    keep: keep ? [idOf(entries, FACTS[2] ?? '')] : [],
  });
}

describe('consolidation with a model, through the official SDK to a scripted upstream', () => {
  let stack: WorkerStack;
  let upstream: ScriptedOpenAiUpstream;
  /** What the upstream answers next; each test sets it. */
  let script: (entries: Listed[], call: number) => ChatReply = () => say('{}');
  let calls = 0;

  beforeAll(async () => {
    upstream = await ScriptedOpenAiUpstream.start((request) => script(entriesOf(request.body), calls++));
    stack = await startWorkerStack({
      // The memory service's own trigger stays out of the way: these tests enqueue the jobs.
      memoryEnv: { CONSOLIDATION_THRESHOLD: '1000' },
      workerEnv: {
        CONSOLIDATION_MODEL: MODEL,
        CONSOLIDATION_THRESHOLD: '4',
        UPSTREAM_BASE_URL: upstream.baseUrl,
        UPSTREAM_API_KEY: 'sk-test',
      },
    });
  });

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  async function seed(pool: string): Promise<{ ids: string[]; data: { pool: string; seq: number; eventId: string } }> {
    const ids: string[] = [];
    for (const content of FACTS) {
      ids.push((await stack.client.call(MemoryPattern.Store, { pool, actor: 'user', content, type: 'MEMORY' })).id);
    }
    const events = await stack.events(pool);
    calls = 0;
    return { ids, data: { pool, seq: events.at(-1)?.seq ?? 0, eventId: `ev-threshold-${pool}` } };
  }

  async function expectNothingLost(pool: string, ids: readonly string[]): Promise<void> {
    const active = await stack.client.call(MemoryPattern.List, { pool });
    for (const id of ids) because(id, () => expect(active.some((entry) => entry.id === id || entry.supersedes.includes(id))).toBe(true));
  }

  async function consolidated(pool: string) {
    return (await stack.events(pool)).filter((event) => event.type === 'memory.consolidated');
  }

  it('applies a good plan: merged entries record what they supersede, the rest is archived, nothing vanishes', async () => {
    const { ids, data } = await seed('good');
    const requestsBefore = upstream.chatRequests.length;
    script = (entries) => say(goodPlan(entries));
    const job = await stack.enqueue({ name: JobName.ConsolidatePool, data });
    expect(await stack.finished(job)).toMatchObject({ outcome: 'consolidated', planner: MODEL, before: 5, after: 3 });

    const [request] = upstream.chatRequests.slice(requestsBefore);
    expect(request?.body).toMatchObject({ model: MODEL, response_format: { type: 'json_object' } });
    expect(request?.headers['authorization']).toBe('Bearer sk-test');
    expect(JSON.stringify(request?.body.messages)).toMatch(/Merge related facts, remove stale ones/);

    const active = await stack.client.call(MemoryPattern.List, { pool: 'good' });
    expect(active.map((entry) => entry.content).sort()).toEqual([
      'Deploys go through GitHub Actions',
      'Project uses Node 20 (upgraded from 18)',
      'User prefers concise answers',
    ]);
    expect((await stack.client.call(MemoryPattern.List, { pool: 'good', archived: true })).length).toBe(4);
    expect(await consolidated('good')).toEqual([
      expect.objectContaining({ actor: 'worker:consolidate', causationId: data.eventId, data: expect.objectContaining({ model: MODEL }) }),
      expect.objectContaining({ actor: 'worker:consolidate', causationId: data.eventId }),
    ]);
    await expectNothingLost('good', ids);

    // Delivered again (another id, as after a crash between the write and the ack): already applied, no model call.
    const again = await stack.enqueue({ name: JobName.ConsolidatePool, data }, { jobId: 'consolidate-redelivery' });
    expect(await stack.finished(again)).toMatchObject({ outcome: 'already-applied' });
    expect(upstream.chatRequests.length).toBe(requestsBefore + 1);
  });

  it('retries once after malformed JSON, telling the model why, then applies the plan', async () => {
    const { ids, data } = await seed('malformed');
    const requestsBefore = upstream.chatRequests.length;
    script = (entries, call) => (call === 0 ? say('{"merges": [{"supersedes": [') : say(goodPlan(entries)));
    const job = await stack.enqueue({ name: JobName.ConsolidatePool, data });
    expect(await stack.finished(job)).toMatchObject({ outcome: 'consolidated', planner: MODEL, refused: [expect.stringMatching(/not valid JSON/)] });
    const retry = upstream.chatRequests[requestsBefore + 1];
    expect(JSON.stringify(retry?.body.messages)).toMatch(/That plan was refused: the answer is not valid JSON/);
    await expectNothingLost('malformed', ids);
  });

  it('refuses a plan that drops an id, twice, and falls back to the deterministic merge', async () => {
    const { ids, data } = await seed('dropped');
    script = (entries) => say(goodPlan(entries, false));
    const job = await stack.enqueue({ name: JobName.ConsolidatePool, data });
    const outcome = await stack.finished(job);
    expect(outcome).toMatchObject({ outcome: 'consolidated', planner: 'deterministic', before: 5, after: 4 });
    expect((outcome as { refused: string[] }).refused).toEqual([expect.stringMatching(/missing/), expect.stringMatching(/missing/)]);
    // Only the near-duplicate preference merged; the Node facts differ and both stay, as does the dropped one.
    const active = await stack.client.call(MemoryPattern.List, { pool: 'dropped' });
    expect(active.map((entry) => entry.content).sort()).toEqual([
      'Deploys go through GitHub Actions',
      'Project upgraded to Node 20',
      'Project uses Node 18',
      // The most detailed wording of the duplicates survives.
      'The user prefers concise answers.',
    ]);
    await expectNothingLost('dropped', ids);
  });

  it('finishes a job whose worker was killed with SIGKILL mid-job, exactly once, after a restart', async () => {
    const { ids, data } = await seed('killed');
    const requestsBefore = upstream.chatRequests.length;
    script = () => ({ kind: 'hang' });
    const job = await stack.enqueue({ name: JobName.ConsolidatePool, data });
    // The worker is inside the job: it has asked the model and waits for the answer.
    await eventually(async () => expect(upstream.chatRequests.length).toBe(requestsBefore + 1), { timeout: 15_000 });
    await stack.worker.process.kill9();
    expect(await consolidated('killed')).toEqual([]);

    script = (entries) => say(goodPlan(entries));
    await stack.restartWorker();
    expect(await stack.finished(job, 45_000)).toMatchObject({ outcome: 'consolidated', planner: MODEL });
    expect(await consolidated('killed')).toHaveLength(2);
    expect((await stack.client.call(MemoryPattern.List, { pool: 'killed' })).length).toBe(3);
    await expectNothingLost('killed', ids);
  });
});
