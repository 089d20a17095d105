/**
 * The worker thread of OnnxEmbedder: loads the model folder once, then answers each request with
 * its texts' vectors (their buffers moved, not copied). Inference blocks this thread, never the
 * service's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SentenceEncoder } from './sentence-encoder.js';
import type { ThreadReply, ThreadRequest, ThreadStart } from './onnx-thread-protocol.js';

const port = parentPort;
if (!port) throw new Error('onnx-thread runs as a worker thread of OnnxEmbedder');
const start = workerData as ThreadStart;

const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);
const describe = (error: unknown): { name: string; message: string } =>
  error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };

try {
  const encoder = await SentenceEncoder.open(start.dir, start.options);
  // One request at a time, in arrival order: a run already uses every thread it is given.
  let queue = Promise.resolve();
  port.on('message', (request: ThreadRequest) => {
    queue = queue.then(async () => {
      try {
        const vectors = await encoder.encode(request.texts);
        post(
          { type: 'vectors', id: request.id, vectors },
          vectors.map((vector) => vector.buffer as ArrayBuffer),
        );
      } catch (error) {
        post({ type: 'error', id: request.id, error: describe(error) });
      }
    });
  });
  post({ type: 'ready', model: encoder.model, dimensions: encoder.dimensions, maxTokens: encoder.folder.maxTokens, pooling: encoder.pooling });
} catch (error) {
  post({ type: 'failed', error: describe(error) });
}
