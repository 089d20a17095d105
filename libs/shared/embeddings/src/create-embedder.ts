import { ConfigError, type EmbeddingsConfig } from '@engram/config';
import { ModelFolderError } from './model-folder.js';
import { OnnxEmbedder } from './onnx-embedder.js';
import { OpenAiEmbeddingsClient } from './openai-embeddings-client.js';

/** What the memory service and the worker embed with; both kinds also give vectors as base64 and close. */
export type ServiceEmbedder = OpenAiEmbeddingsClient | OnnxEmbedder;

/**
 * The embedder a service runs with, from its configuration: the endpoint's client, or the model
 * folder loaded in a worker thread. A folder that cannot be used is a ConfigError naming
 * EMBEDDINGS_MODEL_DIR and the file (the service stops at start, as for any bad setting).
 */
export async function openEmbedder(config: EmbeddingsConfig): Promise<ServiceEmbedder> {
  switch (config.kind) {
    case 'endpoint':
      return new OpenAiEmbeddingsClient(config);
    case 'model-dir':
      try {
        return await OnnxEmbedder.open(config.dir, config.threads === undefined ? {} : { threads: config.threads });
      } catch (error) {
        if (error instanceof ModelFolderError) throw new ConfigError(`invalid configuration: EMBEDDINGS_MODEL_DIR: ${error.message}`);
        throw error;
      }
    default: {
      const unknown: never = config;
      throw new Error(`unknown embeddings configuration ${JSON.stringify(unknown)}`);
    }
  }
}

/** The fields a service logs at start about what it embeds with. */
export function describeEmbedder(embedder: ServiceEmbedder): Record<string, unknown> {
  if (embedder instanceof OnnxEmbedder) {
    return { model: embedder.model, dimensions: embedder.dimensions, pooling: embedder.pooling, maxTokens: embedder.maxTokens, in: 'process' };
  }
  return { model: embedder.model, in: 'endpoint' };
}
