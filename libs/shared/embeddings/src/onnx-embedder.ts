import { Worker } from 'node:worker_threads';
import type { Embedder } from './embedder.js';
import { ModelFolderError, type Pooling } from './model-folder.js';
import type { ThreadError, ThreadReply, ThreadStart } from './onnx-thread-protocol.js';
import type { SentenceEncoderOptions } from './sentence-encoder.js';
import { vectorToBase64 } from './vector-codec.js';

export interface OnnxEmbedderOptions extends SentenceEncoderOptions {
  /**
   * The thread's script; default: onnx-thread.js beside this module, as built into dist/ (run from source,
   * under jest or tsx, pass the built one: worker threads do not get their TypeScript loaders).
   */
  readonly script?: URL;
}

interface Pending {
  readonly worker: Worker;
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout | undefined;
}

interface Thread {
  readonly worker: Worker;
  readonly model: string;
  readonly dimensions: number;
  readonly maxTokens: number;
  readonly pooling: Pooling;
}

const fromThread = (error: ThreadError): Error => {
  const made = error.name === 'ModelFolderError' ? new ModelFolderError(error.message) : new Error(error.message);
  if (made.name !== error.name) made.name = error.name;
  return made;
};

/**
 * Embeds in this process with a sentence-embedding model folder (EMBEDDINGS_MODEL_DIR), in a worker
 * thread: ONNX Runtime's runs block the thread that calls them, and a search must not wait behind
 * a batch of entries, nor the RPC loop behind either. A query's deadline (`timeoutMs`) is real
 * (the caller stops waiting; the run finishes and is dropped). When the thread dies, waiting calls
 * fail and the next call starts a new one.
 */
export class OnnxEmbedder implements Embedder {
  /** The thread answering calls; null after it died (or before the next one is up). */
  private live: Thread | null;
  private starting: Promise<Thread> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  readonly model: string;
  readonly dimensions: number;
  readonly maxTokens: number;
  readonly pooling: Pooling;

  private constructor(
    private readonly dir: string,
    private readonly options: OnnxEmbedderOptions,
    first: Thread,
  ) {
    this.live = first;
    this.model = first.model;
    this.dimensions = first.dimensions;
    this.maxTokens = first.maxTokens;
    this.pooling = first.pooling;
  }

  /** Loads the model folder in a new thread; rejects (ModelFolderError for a bad folder) when it cannot. */
  static async open(dir: string, options: OnnxEmbedderOptions = {}): Promise<OnnxEmbedder> {
    // The thread's messages go to the embedder made from it (none arrive before it exists: no call is made yet).
    const to: { embedder?: OnnxEmbedder } = {};
    const first = await startThread(
      dir,
      options,
      (reply) => to.embedder?.settle(reply),
      (worker, error) => to.embedder?.threadDied(worker, error),
    );
    to.embedder = new OnnxEmbedder(dir, options, first);
    return to.embedder;
  }

  async embed(texts: readonly string[], options: { readonly timeoutMs?: number } = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const { worker } = await this.thread();
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.forget(id, worker);
              const error = new Error(`embedding timed out after ${options.timeoutMs} ms`);
              error.name = 'TimeoutError';
              reject(error);
            }, options.timeoutMs);
      // While calls wait, the thread keeps the process alive; idle, it does not.
      if (!this.waitsOn(worker)) worker.ref();
      this.pending.set(id, { worker, resolve, reject, timer });
      worker.postMessage({ id, texts: [...texts] });
    });
  }

  /** The same vectors as base64 float32s, as they travel over the memory RPC. */
  async embedBase64(texts: readonly string[]): Promise<string[]> {
    return (await this.embed(texts)).map(vectorToBase64);
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = [this.live?.worker, await this.starting?.then((thread) => thread.worker).catch(() => undefined)];
    this.live = null;
    this.failAll(new Error('the embedder is closed'));
    await Promise.all(workers.map((worker) => worker?.terminate()));
  }

  private async thread(): Promise<Thread> {
    if (this.closed) throw new Error('the embedder is closed');
    if (this.live) return this.live;
    this.starting ??= startThread(
      this.dir,
      this.options,
      (reply) => this.settle(reply),
      (worker, error) => this.threadDied(worker, error),
    )
      .then(async (thread) => {
        // The folder is read again: if its files changed, their vectors would be stored under the old name.
        if (thread.model !== this.model) {
          await thread.worker.terminate();
          throw new ModelFolderError(
            `${this.dir}: the model files changed since the start (now ${thread.model}, was ${this.model}); restart to use them`,
          );
        }
        this.live = thread;
        return thread;
      })
      .finally(() => (this.starting = null));
    return this.starting;
  }

  private settle(reply: ThreadReply): void {
    if (reply.type !== 'vectors' && reply.type !== 'error') return;
    const pending = this.pending.get(reply.id);
    if (!pending) return; // timed out: dropped
    this.forget(reply.id, pending.worker);
    clearTimeout(pending.timer);
    if (reply.type === 'vectors') pending.resolve(reply.vectors);
    else pending.reject(fromThread(reply.error));
  }

  private waitsOn(worker: Worker): boolean {
    return [...this.pending.values()].some((pending) => pending.worker === worker);
  }

  private forget(id: number, worker: Worker): void {
    this.pending.delete(id);
    if (!this.waitsOn(worker)) worker.unref();
  }

  /** Fails the calls waiting on that thread; the next call starts another. */
  private threadDied(worker: Worker, error: Error): void {
    if (this.live?.worker === worker) this.live = null;
    this.failAll(error, worker);
  }

  private failAll(error: Error, worker?: Worker): void {
    for (const [id, pending] of this.pending) {
      if (worker && pending.worker !== worker) continue;
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}

function startThread(
  dir: string,
  options: OnnxEmbedderOptions,
  onReply: (reply: ThreadReply) => void,
  onDeath: (worker: Worker, error: Error) => void,
): Promise<Thread> {
  const { script = new URL('./onnx-thread.js', import.meta.url), ...encoderOptions } = options;
  const start: ThreadStart = { dir, options: encoderOptions };
  const worker = new Worker(script, { workerData: start });
  return new Promise<Thread>((resolve, reject) => {
    let ready = false;
    worker.on('message', (reply: ThreadReply) => {
      if (reply.type === 'ready') {
        ready = true;
        worker.unref();
        resolve({ worker, model: reply.model, dimensions: reply.dimensions, maxTokens: reply.maxTokens, pooling: reply.pooling });
      } else if (reply.type === 'failed') {
        void worker.terminate();
        reject(fromThread(reply.error));
      } else {
        onReply(reply);
      }
    });
    worker.on('error', (error) => (ready ? onDeath(worker, error) : reject(error)));
    worker.on('exit', (code) => {
      const error = new Error(`the embedding thread stopped (exit code ${code})`);
      if (ready) onDeath(worker, error);
      else reject(error);
    });
  });
}
