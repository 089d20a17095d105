import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig: embeddings', () => {
  it('is off without an endpoint or a model folder', () => {
    expect(loadConfig({}).embeddings).toBeNull();
  });

  it('reads an endpoint', () => {
    expect(loadConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1/', EMBEDDINGS_MODEL: 'nomic-embed-text' }).embeddings).toEqual({
      kind: 'endpoint',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'nomic-embed-text',
      queryTimeoutMs: 800,
      minSimilarity: 0.3,
    });
  });

  it('reads a model folder, with the threads a run may use', () => {
    expect(loadConfig({ EMBEDDINGS_MODEL_DIR: '/models/all-MiniLM-L6-v2' }).embeddings).toEqual({
      kind: 'model-dir',
      dir: '/models/all-MiniLM-L6-v2',
      threads: undefined,
      queryTimeoutMs: 800,
      minSimilarity: 0.3,
    });
    expect(loadConfig({ EMBEDDINGS_MODEL_DIR: '/m', EMBEDDINGS_THREADS: '1' }).embeddings).toMatchObject({ threads: 1 });
    expect(() => loadConfig({ EMBEDDINGS_MODEL_DIR: '/m', EMBEDDINGS_THREADS: '0' })).toThrow(/EMBEDDINGS_THREADS/);
  });

  it('refuses both at once: which one embeds would be a guess', () => {
    expect(() => loadConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1', EMBEDDINGS_MODEL_DIR: '/m' })).toThrow(
      new ConfigError('invalid configuration: EMBEDDINGS_BASE_URL and EMBEDDINGS_MODEL_DIR are both set; set one (an endpoint, or a model folder)'),
    );
  });
});
